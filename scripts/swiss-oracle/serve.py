"""Black-box oracle for the Dutch differential test.

Reads TRF files from stdin, each as a line `TRF <byte count>` followed by
that many bytes, pairs each with py4swiss's own command-line entry point
(in this one process, to save the interpreter's start-up per round) and
answers with py4swiss's pairings file followed by a line `END`, or a line
`ERROR <message>` then `END`.
"""
import os
import sys
import tempfile

from py4swiss.main import main as py4swiss_main


def pair(trf_text, workdir):
    trf_path = os.path.join(workdir, "round.trf")
    out_path = os.path.join(workdir, "pairings.txt")
    with open(trf_path, "w") as f:
        f.write(trf_text)
    if os.path.exists(out_path):
        os.remove(out_path)
    sys.argv = ["py4swiss", "-t", trf_path, "-p", out_path]
    try:
        py4swiss_main()
    except SystemExit as e:
        if e.code not in (None, 0):
            return "ERROR exit %s\n" % e.code
    except Exception as e:  # the oracle's own failure, reported not hidden
        return "ERROR %s: %s\n" % (type(e).__name__, str(e).replace("\n", " "))
    with open(out_path) as f:
        return f.read()


def serve():
    stdin = sys.stdin.buffer
    with tempfile.TemporaryDirectory() as workdir:
        while True:
            header = stdin.readline()
            if not header:
                return
            parts = header.split()
            if len(parts) != 2 or parts[0] != b"TRF":
                sys.stdout.write("ERROR bad header\nEND\n")
                sys.stdout.flush()
                continue
            body = stdin.read(int(parts[1])).decode()
            answer = pair(body, workdir)
            if not answer.endswith("\n"):
                answer += "\n"
            sys.stdout.write(answer + "END\n")
            sys.stdout.flush()


if __name__ == "__main__":
    serve()
