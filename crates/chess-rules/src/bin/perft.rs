//! Perft from the command line, for debugging the move generator against
//! another one.
//!
//! ```text
//! perft <fen|startpos> <depth>          nodes and nodes per second
//! perft divide <fen|startpos> <depth>   each move in UCI with its count, then the total
//! ```
//!
//! A FEN is given as one argument (quote it) or as its six words.

use std::process::ExitCode;
use std::time::Instant;

use chess_rules::{Position, divide, perft};

const USAGE: &str = "usage: perft [divide] <fen|startpos> <depth>";

/// A parsed command line.
struct Command {
    divide: bool,
    position: Position,
    depth: u32,
}

fn parse_args(args: &[String]) -> Result<Command, String> {
    let (divide, rest) = match args.split_first() {
        Some((first, rest)) if first == "divide" => (true, rest),
        _ => (false, args),
    };
    let Some((depth_text, position_words)) = rest.split_last() else {
        return Err(USAGE.to_owned());
    };
    if position_words.is_empty() {
        return Err(USAGE.to_owned());
    }
    let depth = depth_text
        .parse::<u32>()
        .map_err(|_| format!("invalid depth {depth_text:?}: expected a non-negative integer"))?;
    let fen = position_words.join(" ");
    let position = if fen == "startpos" {
        Position::startpos()
    } else {
        Position::from_fen(&fen).map_err(|err| format!("invalid fen {fen:?}: {err}"))?
    };
    Ok(Command {
        divide,
        position,
        depth,
    })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command = match parse_args(&args) {
        Ok(command) => command,
        Err(message) => {
            eprintln!("perft: {message}");
            return ExitCode::from(2);
        }
    };

    let start = Instant::now();
    let nodes = if command.divide {
        let mut lines: Vec<(String, u64)> = divide(&command.position, command.depth)
            .into_iter()
            .map(|(m, count)| (m.to_uci().to_string(), count))
            .collect();
        lines.sort();
        for (uci, count) in &lines {
            println!("{uci}: {count}");
        }
        let total = lines.iter().map(|(_, count)| count).sum();
        println!();
        println!("moves: {}", lines.len());
        println!("total: {total}");
        total
    } else {
        let nodes = perft(&command.position, command.depth);
        println!("nodes: {nodes}");
        nodes
    };
    let seconds = start.elapsed().as_secs_f64();
    // Nodes per second, for a rough figure; the criterion bench is the real measure.
    let rate = if seconds > 0.0 {
        nodes as f64 / seconds
    } else {
        0.0
    };
    println!("time: {seconds:.3} s");
    println!("nodes/sec: {rate:.0}");
    ExitCode::SUCCESS
}
