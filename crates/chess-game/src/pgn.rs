//! A game's moves as PGN, with their clocks: what every export of a game
//! writes (the server's, and the browser's for its own games).

use chess_rules::pgn::PgnGame;

use crate::{SavedMove, TimeControl};

/// Appends `moves` to `pgn`, whose record is empty at the game's initial
/// position, each with its mover's clock after it (`[%clk]`) when timed.
///
/// # Errors
/// The ply of the first move that does not replay (moves were legal when
/// played, so this is corruption); the moves before it are kept.
pub fn push_moves(pgn: &mut PgnGame, moves: &[SavedMove]) -> Result<(), usize> {
    let first_mover = pgn.record.initial().turn();
    for (ply, saved) in moves.iter().enumerate() {
        if pgn.record.push_uci(&saved.uci).is_err() {
            return Err(ply);
        }
        if let Some(remaining) = saved.remaining_ms {
            let mover = if ply % 2 == 0 {
                first_mover
            } else {
                first_mover.other()
            };
            pgn.annotation_mut(ply).clock_ms = Some(*remaining.get(mover));
        }
    }
    Ok(())
}

/// The PGN `TimeControl` tag: `300+3` (seconds), or `-` for no clock.
pub fn time_control_tag(tc: TimeControl) -> String {
    match (tc.initial_ms(), tc.increment_ms()) {
        (Some(initial), Some(increment)) => format!("{}+{}", initial / 1000, increment / 1000),
        _ => "-".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_control_tag_is_in_seconds() {
        assert_eq!(time_control_tag("5+3".parse().expect("preset")), "300+3");
        assert_eq!(time_control_tag(TimeControl::Correspondence), "-");
    }
}
