//! A scripted UCI session against the `chess-engine` binary.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use chess_rules::{Position, UciMove};

/// Only a guard against hanging the test run forever if the engine never
/// answers; every expected reply arrives in milliseconds.
const NO_REPLY: Duration = Duration::from_secs(60);

struct EngineProcess {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl EngineProcess {
    fn spawn() -> EngineProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_chess-engine"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start chess-engine");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        EngineProcess {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").expect("write to engine");
        self.stdin.flush().expect("flush");
    }

    fn next_line(&self) -> String {
        match self.lines.recv_timeout(NO_REPLY) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => panic!("engine sent nothing"),
            Err(RecvTimeoutError::Disconnected) => panic!("engine closed its output"),
        }
    }

    /// Reads lines up to and including the first that starts with `prefix`.
    fn read_until(&self, prefix: &str) -> Vec<String> {
        let mut seen = Vec::new();
        loop {
            let line = self.next_line();
            let done = line.starts_with(prefix);
            seen.push(line);
            if done {
                return seen;
            }
        }
    }

    /// Runs `go ...` to the end and returns the info lines and the best move.
    fn go(&mut self, command: &str) -> (Vec<String>, String) {
        self.send(command);
        let mut lines = self.read_until("bestmove");
        let best = lines.pop().expect("bestmove line");
        (lines, best["bestmove ".len()..].trim().to_owned())
    }
}

fn assert_legal(position: &Position, uci: &str) {
    let parsed: UciMove = uci.parse().unwrap_or_else(|_| panic!("bad uci {uci:?}"));
    assert!(
        parsed.to_move(position).is_ok(),
        "{uci} is not legal in {}",
        position.fen()
    );
}

#[test]
fn a_scripted_session() {
    let mut engine = EngineProcess::spawn();

    engine.send("uci");
    let intro = engine.read_until("uciok");
    assert!(intro[0].starts_with("id name chess-engine"), "{intro:?}");
    assert!(
        intro.contains(&"option name Level type spin default 2 min 1 max 2".to_owned()),
        "{intro:?}"
    );

    engine.send("isready");
    assert_eq!(engine.next_line(), "readyok");

    // Bad input is reported, and the session carries on.
    engine.send("setoption name Level value 7");
    assert_eq!(
        engine.next_line(),
        "info string error: bad level \"7\": expected 1 (easy) or 2 (hard)"
    );
    engine.send("position startpos moves e2e5");
    assert_eq!(engine.next_line(), "info string error: illegal move: e2e5");
    engine.send("position startpos moves e2e4 zz");
    assert_eq!(
        engine.next_line(),
        "info string error: not a uci move: \"zz\""
    );
    engine.send("position fen not a fen");
    assert!(
        engine
            .next_line()
            .starts_with("info string error: bad fen \"not a fen\"")
    );
    engine.send("go depth deep");
    assert_eq!(
        engine.next_line(),
        "info string error: go depth needs a non-negative integer value"
    );
    engine.send("dance");
    assert_eq!(
        engine.next_line(),
        "info string error: unknown command \"dance\""
    );

    // A fixed-depth search reports each iteration.
    engine.send("ucinewgame");
    engine.send("position startpos moves e2e4 e7e5");
    let (infos, best) = engine.go("go depth 4");
    assert_eq!(infos.len(), 4, "{infos:?}");
    for (depth, info) in (1..=4).zip(&infos) {
        assert!(info.starts_with(&format!("info depth {depth} ")), "{info}");
        for field in [" score cp ", " nodes ", " nps ", " time ", " pv "] {
            assert!(info.contains(field), "{field} missing from {info}");
        }
    }
    let mut pos = Position::startpos();
    for m in ["e2e4", "e7e5"] {
        let m = m
            .parse::<UciMove>()
            .expect("uci")
            .to_move(&pos)
            .expect("legal");
        pos.play_unchecked(&m);
    }
    assert_legal(&pos, &best);

    // Mate in one from a FEN, at level 1 as well.
    engine.send("setoption name Level value 1");
    engine.send("position fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1");
    let (infos, best) = engine.go("go depth 3");
    assert_eq!(best, "a1a8");
    assert!(
        infos.last().is_some_and(|l| l.contains("score mate 1")),
        "{infos:?}"
    );
    engine.send("setoption name Level value 2");

    // On a clock: answers with a legal move.
    engine.send("position startpos");
    let (_, best) = engine.go("go wtime 1000 btime 1000 winc 10 binc 10");
    assert_legal(&Position::startpos(), &best);
    let (_, best) = engine.go("go movetime 50");
    assert_legal(&Position::startpos(), &best);
    let (_, best) = engine.go("go nodes 5000");
    assert_legal(&Position::startpos(), &best);

    // `go infinite` runs until `stop`, answering `isready` meanwhile; no
    // bestmove comes before the stop, even once the search has a result.
    engine.send("go infinite");
    let first_info = engine.next_line();
    assert!(first_info.starts_with("info depth 1 "), "{first_info}");
    engine.send("isready");
    let before_stop = engine.read_until("readyok");
    assert!(
        before_stop.iter().all(|l| !l.starts_with("bestmove")),
        "{before_stop:?}"
    );
    engine.send("stop");
    let after_stop = engine.read_until("bestmove");
    let best = after_stop.last().expect("bestmove")["bestmove ".len()..].to_owned();
    assert_legal(&Position::startpos(), &best);

    // `go infinite` in a position the search solves outright (a mate) still
    // waits for `stop`.
    engine.send("position fen 6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1");
    engine.send("go infinite");
    engine.send("isready");
    let before_stop = engine.read_until("readyok");
    assert!(before_stop.iter().all(|l| !l.starts_with("bestmove")));
    engine.send("stop");
    let after_stop = engine.read_until("bestmove");
    assert_eq!(after_stop.last().map(String::as_str), Some("bestmove a1a8"));

    // Checkmated: no move to give.
    engine.send("position fen R5k1/5ppp/8/8/8/8/8/6K1 b - - 1 1");
    let (_, best) = engine.go("go depth 2");
    assert_eq!(best, "0000");

    // `quit` during a search ends the process promptly and cleanly.
    engine.send("position startpos");
    engine.send("go infinite");
    engine.send("quit");
    let status = engine.child.wait().expect("engine exits");
    assert!(status.success(), "{status}");
}
