//! A move prepared during the opponent's turn.

use chess_rules::{Role, Square, UciMove};

/// A premove: the squares, the promotion piece for a pawn going to the last
/// rank, and the network time its player's clock is charged when it is
/// played (their measured round trip, so a premove is never free).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Premove {
    /// The square of the piece to move.
    pub from: Square,
    /// Where it goes.
    pub to: Square,
    /// `Some` exactly when a pawn premoves to its last rank (queen unless
    /// the player chose otherwise).
    pub promotion: Option<Role>,
    /// Milliseconds charged to the premover's clock when it is played.
    pub charge_ms: u64,
}

impl Premove {
    /// The premove as a UCI move (`e7e8q`).
    pub const fn uci(&self) -> UciMove {
        UciMove::new(self.from, self.to, self.promotion)
    }
}
