//! Whether a game's result follows from its moves: for a finished game
//! that was played elsewhere (in a browser) and is handed over whole, whose
//! moves [`Game::restore`] replays but whose result it takes as saved.

use std::fmt;

use crate::{EndReason, Game};

/// Why a finished game's result does not follow from its moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultMismatch {
    /// The game has no result.
    NotOver,
    /// The board ended the game (mate, stalemate, an automatic draw), with
    /// another result than the one given.
    BoardDisagrees { board: EndReason },
    /// The result names an ending of the board that the final position is not.
    NoSuchPosition { claimed: EndReason },
    /// The winner does not fit the ending (a resignation without one, a
    /// timeout won by a side that cannot mate, a draw with a winner).
    WrongWinner { claimed: EndReason },
    /// A timeout in a game without a clock.
    NoClock,
    /// An ending this game could not have (an agreement with nobody to
    /// agree, an abort, a missed first move).
    NotPossibleHere { claimed: EndReason },
}

impl fmt::Display for ResultMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResultMismatch::NotOver => f.write_str("the game is not over"),
            ResultMismatch::BoardDisagrees { board } => {
                write!(
                    f,
                    "the moves end the game by {}, not as the result says",
                    board.code()
                )
            }
            ResultMismatch::NoSuchPosition { claimed } => {
                write!(f, "the final position is no {}", claimed.code())
            }
            ResultMismatch::WrongWinner { claimed } => {
                write!(
                    f,
                    "the winner does not fit a game ended by {}",
                    claimed.code()
                )
            }
            ResultMismatch::NoClock => f.write_str("a game without a clock cannot end on time"),
            ResultMismatch::NotPossibleHere { claimed } => {
                write!(f, "this game cannot end by {}", claimed.code())
            }
        }
    }
}

impl std::error::Error for ResultMismatch {}

impl Game {
    /// Checks that the result follows from the moves: an ending of the board
    /// is the board's (with its winner), a resignation has a winner, a
    /// timeout happens on a clock and is won only by a side that can mate.
    /// Endings that need the other side's say (`agreement`) or a server's
    /// deadline (`aborted`, `no_start`) are refused: a game played on one
    /// screen or against the computer has neither.
    ///
    /// # Errors
    /// [`ResultMismatch`] naming what does not follow.
    pub fn verify_result(&self) -> Result<(), ResultMismatch> {
        let result = self.result().ok_or(ResultMismatch::NotOver)?;
        let claimed = result.reason;
        let board = self.record.ending();
        if let Some(ending) = board {
            let reason = EndReason::from_ending(ending);
            if reason != claimed || ending.winner() != result.winner {
                return Err(ResultMismatch::BoardDisagrees { board: reason });
            }
            return Ok(());
        }
        let position = self.position();
        match claimed {
            EndReason::Checkmate
            | EndReason::Stalemate
            | EndReason::ThreefoldRepetition
            | EndReason::FiftyMoves
            | EndReason::InsufficientMaterial => Err(ResultMismatch::NoSuchPosition { claimed }),
            EndReason::Resignation => match result.winner {
                Some(_) => Ok(()),
                None => Err(ResultMismatch::WrongWinner { claimed }),
            },
            EndReason::Timeout | EndReason::TimeoutVsInsufficientMaterial
                if !self.spec().time_control().is_real_time() =>
            {
                Err(ResultMismatch::NoClock)
            }
            // Only the side to move has a running clock, so only it can
            // have flagged; the other side wins, if it can mate.
            EndReason::Timeout => match result.winner {
                Some(winner)
                    if winner == position.turn().other()
                        && !position.has_insufficient_material(winner) =>
                {
                    Ok(())
                }
                _ => Err(ResultMismatch::WrongWinner { claimed }),
            },
            // The side that did not flag (the one not to move) cannot mate.
            EndReason::TimeoutVsInsufficientMaterial => {
                let waiting = position.turn().other();
                if result.winner.is_none() && position.has_insufficient_material(waiting) {
                    Ok(())
                } else {
                    Err(ResultMismatch::WrongWinner { claimed })
                }
            }
            EndReason::Agreement | EndReason::Aborted | EndReason::NoStart => {
                Err(ResultMismatch::NotPossibleHere { claimed })
            }
        }
    }
}
