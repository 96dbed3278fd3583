//! Scores: centipawns, and mate distances encoded as very large values.

use std::fmt;

/// The score of being mated right now; mate in `n` plies is `MATE - n`.
pub(crate) const MATE: i32 = 32_000;
/// Scores beyond this (in absolute value) are mate scores.
pub(crate) const MATE_BOUND: i32 = MATE - 1_000;
/// Larger than any score, for the initial search window.
pub(crate) const INFINITY: i32 = MATE + 1;

/// How good a position is for the side to move, as the search sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Score {
    /// An evaluation in centipawns (100 is about one pawn up).
    Centipawns(i32),
    /// A forced mate in this many moves: positive when the side to move
    /// mates, negative when it is mated (`Mate(-1)` : mated next move;
    /// `Mate(0)` only for a position that is already checkmate).
    Mate(i32),
}

impl Score {
    /// Converts an internal search value.
    pub(crate) fn from_internal(value: i32) -> Score {
        if value >= MATE_BOUND {
            let plies = MATE - value;
            Score::Mate((plies + 1) / 2)
        } else if value <= -MATE_BOUND {
            let plies = MATE + value;
            Score::Mate(-(plies / 2))
        } else {
            Score::Centipawns(value)
        }
    }

    /// Whether this is a forced mate for either side.
    pub fn is_mate(self) -> bool {
        matches!(self, Score::Mate(_))
    }
}

impl fmt::Display for Score {
    /// The UCI form: `cp 35` or `mate -2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Score::Centipawns(cp) => write!(f, "cp {cp}"),
            Score::Mate(moves) => write!(f, "mate {moves}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mate_distances_count_moves_not_plies() {
        // Mating on our next move is one ply away.
        assert_eq!(Score::from_internal(MATE - 1), Score::Mate(1));
        // Mate in two moves: our move, theirs, our mating move.
        assert_eq!(Score::from_internal(MATE - 3), Score::Mate(2));
        // Being mated after our move and theirs: two plies.
        assert_eq!(Score::from_internal(-(MATE - 2)), Score::Mate(-1));
        assert_eq!(Score::from_internal(-MATE), Score::Mate(0));
        assert_eq!(Score::from_internal(-57), Score::Centipawns(-57));
        assert_eq!(Score::Mate(-1).to_string(), "mate -1");
        assert_eq!(Score::Centipawns(35).to_string(), "cp 35");
    }
}
