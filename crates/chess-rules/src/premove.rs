//! Premove patterns. OWNER: rules-text helper.

use crate::{Bitboard, Color, Position, Square};

impl Position {
    /// Whether `color` may prepare the premove `from`-`to` in this position.
    pub fn is_premove(&self, _color: Color, _from: Square, _to: Square) -> bool {
        todo!()
    }

    /// Premove destinations of every piece of `color` that has one.
    pub fn premove_destinations(&self, _color: Color) -> Vec<(Square, Bitboard)> {
        todo!()
    }
}
