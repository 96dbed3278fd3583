//! How a game ends by the board alone (no clocks, no resignations).

use std::fmt;

use crate::Color;

/// A way the board ends the game, as decided by the rules of chess under
/// the automatic online draw rules (no claims needed).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Ending {
    /// The side to move is in check and has no legal move.
    Checkmate { winner: Color },
    /// The side to move is not in check and has no legal move.
    Stalemate,
    /// Neither side has the material to give mate by any series of legal moves.
    InsufficientMaterial,
    /// The same position (placement, side to move, castling rights and en
    /// passant possibilities) occurred for the third time.
    ThreefoldRepetition,
    /// Fifty moves by each side (100 half-moves) with no pawn move and no capture.
    FiftyMoves,
}

impl Ending {
    /// The winner, or `None` for a draw.
    pub const fn winner(self) -> Option<Color> {
        match self {
            Ending::Checkmate { winner } => Some(winner),
            _ => None,
        }
    }

    /// Whether the ending is a draw.
    pub const fn is_draw(self) -> bool {
        self.winner().is_none()
    }

    /// A stable lowercase code: `checkmate`, `stalemate`, `insufficient_material`,
    /// `threefold_repetition`, `fifty_moves`.
    pub const fn code(self) -> &'static str {
        match self {
            Ending::Checkmate { .. } => "checkmate",
            Ending::Stalemate => "stalemate",
            Ending::InsufficientMaterial => "insufficient_material",
            Ending::ThreefoldRepetition => "threefold_repetition",
            Ending::FiftyMoves => "fifty_moves",
        }
    }
}

impl fmt::Display for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ending::Checkmate { winner } => write!(f, "checkmate, {winner} wins"),
            Ending::Stalemate => f.write_str("stalemate"),
            Ending::InsufficientMaterial => f.write_str("insufficient material"),
            Ending::ThreefoldRepetition => f.write_str("threefold repetition"),
            Ending::FiftyMoves => f.write_str("fifty-move rule"),
        }
    }
}
