//! UCI move notation. OWNER: rules-text helper.

use std::fmt;
use std::str::FromStr;

use crate::{IllegalMoveError, Move, Position, Role, Square};

/// A move as written in UCI (`e2e4`, `e7e8q`): syntax only, not yet legal.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct UciMove {
    from: Square,
    to: Square,
    promotion: Option<Role>,
}

/// Text that is not a UCI move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UciError;

impl fmt::Display for UciError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid uci move")
    }
}
impl std::error::Error for UciError {}

impl UciMove {
    pub const fn new(from: Square, to: Square, promotion: Option<Role>) -> UciMove {
        UciMove {
            from,
            to,
            promotion,
        }
    }
    pub const fn from(&self) -> Square {
        self.from
    }
    pub const fn to(&self) -> Square {
        self.to
    }
    pub const fn promotion(&self) -> Option<Role> {
        self.promotion
    }

    /// The legal move this names in `pos`.
    ///
    /// # Errors
    /// [`IllegalMoveError`] when no legal move matches.
    pub fn to_move(&self, _pos: &Position) -> Result<Move, IllegalMoveError> {
        todo!()
    }
}

impl fmt::Display for UciMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.from, self.to)?;
        if let Some(role) = self.promotion {
            write!(f, "{}", role.char())?;
        }
        Ok(())
    }
}

impl FromStr for UciMove {
    type Err = UciError;
    fn from_str(_s: &str) -> Result<UciMove, UciError> {
        todo!()
    }
}
