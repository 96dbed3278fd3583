//! Insufficient material. OWNER: rules-text helper.

use crate::{Color, Position};

impl Position {
    /// Whether `color` cannot possibly mate (the rule lichess applies on a flag).
    pub fn has_insufficient_material(&self, _color: Color) -> bool {
        todo!()
    }

    /// Whether neither side can mate by any series of legal moves.
    pub fn is_insufficient_material(&self) -> bool {
        todo!()
    }
}
