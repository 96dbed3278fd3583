//! The perft command-line tool, run as a separate process.

use std::process::{Command, Output};

fn perft(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perft"))
        .args(args)
        .output()
        .expect("the perft binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn counts_nodes_from_startpos_and_from_a_fen() {
    let output = perft(&["startpos", "3"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("nodes: 8902\n"),
        "{}",
        stdout(&output)
    );
    assert!(stdout(&output).contains("nodes/sec: "));

    let kiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    let output = perft(&[kiwipete, "2"]);
    assert!(
        stdout(&output).contains("nodes: 2039\n"),
        "{}",
        stdout(&output)
    );
    // The FEN may also come as separate words.
    let words: Vec<&str> = kiwipete.split(' ').chain(["2"]).collect();
    assert!(stdout(&perft(&words)).contains("nodes: 2039\n"));
}

#[test]
fn divide_lists_each_move_with_its_count() {
    let output = perft(&["divide", "startpos", "2"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let move_lines: Vec<&str> = text
        .lines()
        .filter(|l| l.ends_with(": 20") && !l.starts_with("moves"))
        .collect();
    assert_eq!(move_lines.len(), 20, "{text}");
    assert!(text.contains("e2e4: 20\n"), "{text}");
    assert!(text.contains("moves: 20\n"), "{text}");
    assert!(text.contains("total: 400\n"), "{text}");
}

#[test]
fn bad_input_exits_with_status_2_and_a_clear_message() {
    let output = perft(&[
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
        "3",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("invalid fen") && stderr(&output).contains("side to move"),
        "{}",
        stderr(&output)
    );

    let output = perft(&["startpos", "three"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("invalid depth \"three\""),
        "{}",
        stderr(&output)
    );

    let output = perft(&[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("usage: perft"),
        "{}",
        stderr(&output)
    );

    let output = perft(&["divide", "5"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("usage: perft"),
        "{}",
        stderr(&output)
    );
}
