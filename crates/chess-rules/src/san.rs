//! Standard algebraic notation. OWNER: rules-text helper.

use crate::{Move, Position};

/// A move as written in SAN: syntax only, not yet legal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct San;

/// SAN text that names no legal move, or more than one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SanError {
    Invalid,
}

impl std::fmt::Display for SanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("invalid san")
    }
}
impl std::error::Error for SanError {}

impl Position {
    /// The SAN of a legal move, with `+` or `#`.
    pub fn san(&self, _m: &Move) -> String {
        todo!()
    }

    /// Reads SAN (strict and common lenient forms) as a legal move here.
    ///
    /// # Errors
    /// [`SanError`] when the text is not SAN or names no single legal move.
    pub fn parse_san(&self, _san: &str) -> Result<Move, SanError> {
        todo!()
    }
}
