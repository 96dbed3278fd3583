//! FEN: reading and writing positions. OWNER: rules-core helper.

use crate::Position;

/// Why a FEN string does not describe a legal position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FenError {
    /// Placeholder until the rules-core helper lists every kind of bad input.
    Invalid,
}

impl std::fmt::Display for FenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("invalid fen")
    }
}

impl std::error::Error for FenError {}

impl Position {
    /// Reads a FEN string strictly.
    ///
    /// # Errors
    /// A [`FenError`] naming the first problem found.
    pub fn from_fen(_fen: &str) -> Result<Position, FenError> {
        todo!()
    }

    /// Writes the position as FEN.
    pub fn fen(&self) -> String {
        todo!()
    }
}
