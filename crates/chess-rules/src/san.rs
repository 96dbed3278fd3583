//! Standard algebraic notation: `Nf3`, `exd5`, `Rad1`, `e8=Q+`, `O-O-O#`.
//!
//! Writing always produces strict SAN with the least disambiguation that
//! works (file, else rank, else both). Reading accepts strict SAN and the
//! common lenient forms people and other programs write: `0-0`, `e8Q`,
//! `e8q`, missing or extra `+`/`#`, `!`/`?` annotations, `ed5` for `exd5`, a
//! missing `x`, `Pe4` for `e4`, and more disambiguation than needed
//! (`Nb1d2`).

use std::fmt;
use std::str::FromStr;

use crate::{CastlingSide, File, Move, MoveKind, Position, Rank, Role, Square};

/// A move as written in SAN: syntax only, not yet legal.
///
/// Check marks and annotations are not kept: they say nothing about which
/// move is meant, and [`Position::san`] writes them from the position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum San {
    /// `O-O` or `O-O-O`.
    Castle(CastlingSide),
    /// Any other move: `Nbd7`, `exd5`, `e8=Q`.
    Normal {
        role: Role,
        /// File of the moving piece, when written (`Nbd7`, `exd5`).
        file: Option<File>,
        /// Rank of the moving piece, when written (`N1d7`).
        rank: Option<Rank>,
        /// Whether an `x` was written.
        capture: bool,
        to: Square,
        promotion: Option<Role>,
    },
}

/// SAN text that is not SAN, or names no single legal move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SanError {
    /// The text is not SAN at all.
    Syntax { san: String },
    /// The text is SAN but no legal move here matches it.
    Illegal { san: String },
    /// More than one legal move here matches the text.
    Ambiguous { san: String },
}

impl fmt::Display for SanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SanError::Syntax { san } => write!(f, "invalid san: {san:?}"),
            SanError::Illegal { san } => write!(f, "illegal san: no legal move matches {san:?}"),
            SanError::Ambiguous { san } => {
                write!(f, "ambiguous san: {san:?} matches more than one legal move")
            }
        }
    }
}

impl std::error::Error for SanError {}

impl San {
    /// The SAN of a legal move `m` in `pos`, without check marks, with the
    /// least disambiguation that makes it unique.
    pub fn from_move(pos: &Position, m: &Move) -> San {
        if let MoveKind::Castle { side } = m.kind() {
            return San::Castle(side);
        }
        let (file, rank) = match m.role() {
            Role::Pawn => (m.is_capture().then(|| m.from().file()), None),
            Role::King => (None, None),
            role => disambiguation(pos, m, role),
        };
        San::Normal {
            role: m.role(),
            file,
            rank,
            capture: m.is_capture(),
            to: m.to(),
            promotion: m.promotion(),
        }
    }

    /// The one legal move in `pos` this SAN names.
    ///
    /// A capture mark is not required to match (`Nf3` may capture); a pawn
    /// written without its file (`e5`) only moves straight ahead; a pawn
    /// reaching the last rank must name its promotion.
    ///
    /// # Errors
    /// [`SanError::Illegal`] when no legal move matches,
    /// [`SanError::Ambiguous`] when several do.
    pub fn to_move(&self, pos: &Position) -> Result<Move, SanError> {
        let legal = pos.legal_moves();
        let mut matching = legal.iter().filter(|m| self.matches(m));
        match (matching.next(), matching.next()) {
            (Some(m), None) => Ok(*m),
            (None, _) => Err(SanError::Illegal {
                san: self.to_string(),
            }),
            (Some(_), Some(_)) => Err(SanError::Ambiguous {
                san: self.to_string(),
            }),
        }
    }

    fn matches(&self, m: &Move) -> bool {
        match *self {
            San::Castle(side) => m.castling_side() == Some(side),
            San::Normal {
                role,
                file,
                rank,
                capture: _,
                to,
                promotion,
            } => {
                // Castling is only ever written `O-O`/`O-O-O`, never `Kg1`.
                if m.castling_side().is_some() || m.role() != role || m.to() != to {
                    return false;
                }
                let from_file = match (file, role) {
                    (Some(file), _) => file,
                    // A pawn written without a file (`e5`) is a push.
                    (None, Role::Pawn) => to.file(),
                    (None, _) => m.from().file(),
                };
                m.from().file() == from_file
                    && rank.is_none_or(|rank| m.from().rank() == rank)
                    && m.promotion() == promotion
            }
        }
    }
}

/// The file and rank to write for a knight, bishop, rook or queen move so
/// that no other legal move of the same role to the same square reads the same.
fn disambiguation(pos: &Position, m: &Move, role: Role) -> (Option<File>, Option<Rank>) {
    let mut rivals = pos
        .legal_moves()
        .iter()
        .filter(|other| other.role() == role && other.to() == m.to() && other.from() != m.from())
        .map(|other| other.from())
        .collect::<Vec<Square>>();
    if rivals.is_empty() {
        return (None, None);
    }
    let from = m.from();
    if rivals.iter().all(|sq| sq.file() != from.file()) {
        return (Some(from.file()), None);
    }
    rivals.retain(|sq| sq.rank() == from.rank());
    if rivals.is_empty() {
        (None, Some(from.rank()))
    } else {
        (Some(from.file()), Some(from.rank()))
    }
}

impl fmt::Display for San {
    /// Strict SAN without check marks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            San::Castle(side) => f.write_str(side.san()),
            San::Normal {
                role,
                file,
                rank,
                capture,
                to,
                promotion,
            } => {
                if role != Role::Pawn {
                    write!(f, "{}", role.upper_char())?;
                }
                if let Some(file) = file {
                    write!(f, "{file}")?;
                }
                if let Some(rank) = rank {
                    write!(f, "{rank}")?;
                }
                if capture {
                    f.write_str("x")?;
                }
                write!(f, "{to}")?;
                if let Some(promotion) = promotion {
                    write!(f, "={}", promotion.upper_char())?;
                }
                Ok(())
            }
        }
    }
}

impl FromStr for San {
    type Err = SanError;

    /// Reads strict SAN and the lenient forms listed in the module docs.
    ///
    /// # Errors
    /// [`SanError::Syntax`] when the text is not SAN.
    fn from_str(text: &str) -> Result<San, SanError> {
        let syntax = || SanError::Syntax {
            san: text.to_owned(),
        };
        // Check marks and annotations (`+`, `#`, `!`, `?`) carry no meaning for
        // which move is meant, and other programs write them loosely.
        let core = text.trim_end_matches(['+', '#', '!', '?']);
        if !core.is_ascii() || core.is_empty() {
            return Err(syntax());
        }
        match core {
            "O-O" | "0-0" => return Ok(San::Castle(CastlingSide::KingSide)),
            "O-O-O" | "0-0-0" => return Ok(San::Castle(CastlingSide::QueenSide)),
            _ => {}
        }
        let bytes = core.as_bytes();

        // The piece letter is uppercase: a lowercase `b` is the b-file. Some
        // programs write pawns with a `P`.
        let (role, rest) = match bytes[0] {
            b'P' => (Role::Pawn, &bytes[1..]),
            b'N' => (Role::Knight, &bytes[1..]),
            b'B' => (Role::Bishop, &bytes[1..]),
            b'R' => (Role::Rook, &bytes[1..]),
            b'Q' => (Role::Queen, &bytes[1..]),
            b'K' => (Role::King, &bytes[1..]),
            _ => (Role::Pawn, bytes),
        };

        // A promotion: `=Q`, `Q` or `q` after the destination.
        let (rest, promotion) = match rest.split_last() {
            Some((&last, init)) if last.is_ascii_alphabetic() => {
                let promotion = Role::from_char(char::from(last))
                    .filter(|r| r.is_promotion_target())
                    .ok_or_else(syntax)?;
                (init.strip_suffix(b"=").unwrap_or(init), Some(promotion))
            }
            _ => (rest, None),
        };
        if promotion.is_some() && role != Role::Pawn {
            return Err(syntax());
        }

        // The destination square is the last two characters.
        if rest.len() < 2 {
            return Err(syntax());
        }
        let (prefix, to) = rest.split_at(rest.len() - 2);
        let to = square_from_bytes(to).ok_or_else(syntax)?;

        // What is left: an optional file, an optional rank, an optional `x`.
        let (prefix, capture) = match prefix.strip_suffix(b"x") {
            Some(prefix) => (prefix, true),
            None => (prefix, false),
        };
        let mut rest = prefix;
        let file = rest.first().and_then(|&ch| File::from_char(char::from(ch)));
        if file.is_some() {
            rest = &rest[1..];
        }
        let rank = rest.first().and_then(|&ch| Rank::from_char(char::from(ch)));
        if rank.is_some() {
            rest = &rest[1..];
        }
        if !rest.is_empty() {
            return Err(syntax());
        }
        Ok(San::Normal {
            role,
            file,
            rank,
            capture,
            to,
            promotion,
        })
    }
}

fn square_from_bytes(bytes: &[u8]) -> Option<Square> {
    match bytes {
        [f, r] => Some(Square::from_coords(
            File::from_char(char::from(*f))?,
            Rank::from_char(char::from(*r))?,
        )),
        _ => None,
    }
}

impl Position {
    /// The SAN of a legal move, with `+` or `#` when it gives check or mate.
    ///
    /// `m` should come from this position (for example from
    /// [`Position::legal_moves`]); an illegal move gets no check mark.
    pub fn san(&self, m: &Move) -> String {
        match self.play(m) {
            Ok(after) => self.san_with_after(m, &after),
            Err(_) => San::from_move(self, m).to_string(),
        }
    }

    /// The SAN of the legal move `m` that leads to `after`, for callers
    /// that already played it.
    pub(crate) fn san_with_after(&self, m: &Move, after: &Position) -> String {
        let mut text = San::from_move(self, m).to_string();
        if after.is_checkmate() {
            text.push('#');
        } else if after.is_check() {
            text.push('+');
        }
        text
    }

    /// Reads SAN (strict and common lenient forms) as a legal move here.
    ///
    /// # Errors
    /// [`SanError::Syntax`] when the text is not SAN, [`SanError::Illegal`]
    /// when it names no legal move, [`SanError::Ambiguous`] when it names
    /// several.
    pub fn parse_san(&self, san: &str) -> Result<Move, SanError> {
        san.parse::<San>()?.to_move(self).map_err(|err| match err {
            // Report the text as given, not as re-written.
            SanError::Illegal { .. } => SanError::Illegal {
                san: san.to_owned(),
            },
            SanError::Ambiguous { .. } => SanError::Ambiguous {
                san: san.to_owned(),
            },
            syntax @ SanError::Syntax { .. } => syntax,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normal(
        role: Role,
        file: Option<File>,
        rank: Option<Rank>,
        capture: bool,
        to: Square,
    ) -> San {
        San::Normal {
            role,
            file,
            rank,
            capture,
            to,
            promotion: None,
        }
    }

    #[test]
    fn reads_san_syntax() {
        let cases = [
            ("e4", normal(Role::Pawn, None, None, false, Square::E4)),
            (
                "exd5",
                normal(Role::Pawn, Some(File::E), None, true, Square::D5),
            ),
            (
                "ed5",
                normal(Role::Pawn, Some(File::E), None, false, Square::D5),
            ),
            ("Nf3", normal(Role::Knight, None, None, false, Square::F3)),
            (
                "Nbd7",
                normal(Role::Knight, Some(File::B), None, false, Square::D7),
            ),
            (
                "N1d7",
                normal(Role::Knight, None, Some(Rank::First), false, Square::D7),
            ),
            (
                "Nb1xd2+",
                normal(
                    Role::Knight,
                    Some(File::B),
                    Some(Rank::First),
                    true,
                    Square::D2,
                ),
            ),
            ("Pe4", normal(Role::Pawn, None, None, false, Square::E4)),
            (
                "Pexd5",
                normal(Role::Pawn, Some(File::E), None, true, Square::D5),
            ),
            ("Bxc6!?", normal(Role::Bishop, None, None, true, Square::C6)),
            ("Kd1??", normal(Role::King, None, None, false, Square::D1)),
            ("O-O", San::Castle(CastlingSide::KingSide)),
            ("0-0-0+", San::Castle(CastlingSide::QueenSide)),
            ("O-O-O#", San::Castle(CastlingSide::QueenSide)),
        ];
        for (text, expected) in cases {
            assert_eq!(text.parse::<San>(), Ok(expected), "{text:?}");
        }
        for text in ["e8=Q", "e8Q", "e8q", "e8=q+"] {
            let san: San = text.parse().expect(text);
            assert_eq!(san.to_string(), "e8=Q", "{text:?}");
        }
        let capture_promotion: San = "dxc1=N#".parse().expect("capture promotion");
        assert_eq!(capture_promotion.to_string(), "dxc1=N");
    }

    #[test]
    fn rejects_text_that_is_not_san() {
        for text in [
            "", "+", "e", "e9", "i4", "Nf", "Zf3", "nf3x", "Nf3=Q", "e8=K", "e8=", "exx5", "Nbcd7",
            "N11d7", "e4 ", " e4", "O-O-O-O", "e2-e4", "é4", "--",
        ] {
            assert_eq!(
                text.parse::<San>(),
                Err(SanError::Syntax { san: text.into() }),
                "{text:?}"
            );
        }
    }
}
