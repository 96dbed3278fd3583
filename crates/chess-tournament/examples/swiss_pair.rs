//! Pairs the next round of a TRF16 file with the Dutch system and prints
//! it the way bbpPairings and py4swiss do: the number of pairs, then one
//! `white black` line per board, the bye as `player 0`.
//!
//! `cargo run -p chess-tournament --example swiss_pair -- round.trf`

use chess_tournament::swiss::{pair_round, read_trf};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: swiss_pair <file.trf>");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1);
    });
    let file = read_trf(&text).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1);
    });
    match pair_round(&file.tournament, &file.unavailable()) {
        Ok(round) => {
            println!("{}", round.boards.len() + usize::from(round.bye.is_some()));
            for board in &round.boards {
                println!("{} {}", board.white, board.black);
            }
            if let Some(bye) = round.bye {
                println!("{bye} 0");
            }
        }
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    }
}
