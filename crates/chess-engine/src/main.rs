//! `chess-engine`: the engine over UCI on standard input and output.

use std::io::BufRead;

use chess_engine::uci::{Flow, UciSession};

fn main() {
    // A fixed seed keeps the easy level reproducible from one run to the
    // next; GUIs that want variety can restart with another seed.
    let seed = std::env::var("CHESS_ENGINE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed);
    let mut session = UciSession::new(std::io::stdout(), seed);
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if session.handle_line(&line) == Flow::Quit {
            return;
        }
    }
    // End of input without `quit`: finish the search politely.
    session.finish();
}
