//! UCI move notation: `e2e4`, `e1g1` (castling as the king's two-square step),
//! `e7e8q`.
//!
//! Parsing is syntax only ([`UciMove`]); turning the text into a legal
//! [`Move`] needs a position ([`UciMove::to_move`], [`Position::parse_uci`]).

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
pub enum UciError {
    /// UCI moves are four characters, or five with a promotion letter.
    WrongLength { len: usize },
    /// One of the two squares is not a file `a`-`h` followed by a rank `1`-`8`.
    BadSquare { square: String },
    /// The fifth character is not one of `q`, `r`, `b`, `n`.
    BadPromotion { letter: char },
}

impl fmt::Display for UciError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UciError::WrongLength { len } => {
                write!(f, "invalid uci move: expected 4 or 5 characters, got {len}")
            }
            UciError::BadSquare { square } => {
                write!(f, "invalid uci move: {square:?} is not a square")
            }
            UciError::BadPromotion { letter } => write!(
                f,
                "invalid uci move: promotion letter {letter:?} is not one of q, r, b, n"
            ),
        }
    }
}

impl std::error::Error for UciError {}

/// Why UCI text is not a legal move in a position: bad syntax, or no such
/// legal move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UciMoveError {
    Syntax(UciError),
    Illegal(IllegalMoveError),
}

impl fmt::Display for UciMoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UciMoveError::Syntax(err) => fmt::Display::fmt(err, f),
            UciMoveError::Illegal(err) => fmt::Display::fmt(err, f),
        }
    }
}

impl std::error::Error for UciMoveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            UciMoveError::Syntax(err) => Some(err),
            UciMoveError::Illegal(err) => Some(err),
        }
    }
}

impl From<UciError> for UciMoveError {
    fn from(err: UciError) -> UciMoveError {
        UciMoveError::Syntax(err)
    }
}

impl From<IllegalMoveError> for UciMoveError {
    fn from(err: IllegalMoveError) -> UciMoveError {
        UciMoveError::Illegal(err)
    }
}

impl UciMove {
    /// A move from `from` to `to`, promoting to `promotion` if given.
    pub const fn new(from: Square, to: Square, promotion: Option<Role>) -> UciMove {
        UciMove {
            from,
            to,
            promotion,
        }
    }

    /// The square the piece leaves (the king's square for castling).
    pub const fn from(&self) -> Square {
        self.from
    }

    /// The square the piece lands on (the king's destination for castling).
    pub const fn to(&self) -> Square {
        self.to
    }

    /// The role a pawn promotes to, if any.
    pub const fn promotion(&self) -> Option<Role> {
        self.promotion
    }

    /// The legal move this names in `pos`.
    ///
    /// A promotion must name its piece: `e7e8` is not `e7e8q`.
    ///
    /// # Errors
    /// [`IllegalMoveError`] when no legal move matches.
    pub fn to_move(&self, pos: &Position) -> Result<Move, IllegalMoveError> {
        pos.legal_moves()
            .iter()
            .find(|m| m.from() == self.from && m.to() == self.to && m.promotion() == self.promotion)
            .copied()
            .ok_or_else(|| IllegalMoveError {
                uci: self.to_string(),
            })
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

    /// Reads `e2e4` or `e7e8q` (the promotion letter in either case).
    fn from_str(s: &str) -> Result<UciMove, UciError> {
        let chars: Vec<char> = s.chars().collect();
        if !(chars.len() == 4 || chars.len() == 5) {
            return Err(UciError::WrongLength { len: chars.len() });
        }
        let square = |pair: &[char]| {
            let text: String = pair.iter().collect();
            text.parse::<Square>()
                .map_err(|_| UciError::BadSquare { square: text })
        };
        let from = square(&chars[0..2])?;
        let to = square(&chars[2..4])?;
        let promotion = match chars.get(4) {
            None => None,
            Some(&letter) => match Role::from_char(letter) {
                Some(role) if role.is_promotion_target() => Some(role),
                _ => return Err(UciError::BadPromotion { letter }),
            },
        };
        Ok(UciMove::new(from, to, promotion))
    }
}

/// Written as its UCI text (`"e7e8q"`).
#[cfg(feature = "serde")]
impl serde::Serialize for UciMove {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Read from UCI text; text that is not UCI fails with the [`UciError`] message.
#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for UciMove {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<UciMove, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl Position {
    /// Reads UCI text as a legal move here.
    ///
    /// # Errors
    /// [`UciMoveError::Syntax`] when the text is not UCI,
    /// [`UciMoveError::Illegal`] when it names no legal move.
    pub fn parse_uci(&self, uci: &str) -> Result<Move, UciMoveError> {
        Ok(uci.parse::<UciMove>()?.to_move(self)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_uci_syntax() {
        for text in ["e2e4", "e7e8q", "a7b8n", "h2h1r", "e1g1"] {
            let parsed: UciMove = text.parse().expect(text);
            assert_eq!(parsed.to_string(), text);
        }
        let upper: UciMove = "e7e8Q".parse().expect("uppercase promotion letter");
        assert_eq!(upper.promotion(), Some(Role::Queen));
        assert_eq!(upper.to_string(), "e7e8q");
    }

    #[test]
    fn rejects_bad_uci_syntax_exactly() {
        let cases = [
            ("", UciError::WrongLength { len: 0 }),
            ("e2e", UciError::WrongLength { len: 3 }),
            ("e2e4qq", UciError::WrongLength { len: 6 }),
            (
                "e2é4",
                UciError::BadSquare {
                    square: "é4".into(),
                },
            ),
            (
                "e9e4",
                UciError::BadSquare {
                    square: "e9".into(),
                },
            ),
            (
                "e2i4",
                UciError::BadSquare {
                    square: "i4".into(),
                },
            ),
            (
                "0000",
                UciError::BadSquare {
                    square: "00".into(),
                },
            ),
            ("e7e8k", UciError::BadPromotion { letter: 'k' }),
            ("e7e8p", UciError::BadPromotion { letter: 'p' }),
            ("e7e8x", UciError::BadPromotion { letter: 'x' }),
        ];
        for (text, expected) in cases {
            assert_eq!(text.parse::<UciMove>(), Err(expected), "{text:?}");
        }
    }
}
