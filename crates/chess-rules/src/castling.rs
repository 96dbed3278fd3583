//! Castling sides and castling rights.

use std::fmt;

use crate::{Color, File, Rank, Square};

/// Which way a king castles.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum CastlingSide {
    /// `O-O`, towards the h-file.
    KingSide,
    /// `O-O-O`, towards the a-file.
    QueenSide,
}

impl CastlingSide {
    pub const ALL: [CastlingSide; 2] = [CastlingSide::KingSide, CastlingSide::QueenSide];

    /// Where the king lands: g-file or c-file of its back rank.
    pub const fn king_to(self, color: Color) -> Square {
        let file = match self {
            CastlingSide::KingSide => File::G,
            CastlingSide::QueenSide => File::C,
        };
        Square::from_coords(file, Rank::First.relative_to(color))
    }

    /// Where the rook starts: h-file or a-file of its back rank.
    pub const fn rook_from(self, color: Color) -> Square {
        let file = match self {
            CastlingSide::KingSide => File::H,
            CastlingSide::QueenSide => File::A,
        };
        Square::from_coords(file, Rank::First.relative_to(color))
    }

    /// Where the rook lands: f-file or d-file of its back rank.
    pub const fn rook_to(self, color: Color) -> Square {
        let file = match self {
            CastlingSide::KingSide => File::F,
            CastlingSide::QueenSide => File::D,
        };
        Square::from_coords(file, Rank::First.relative_to(color))
    }

    /// `O-O` or `O-O-O`.
    pub const fn san(self) -> &'static str {
        match self {
            CastlingSide::KingSide => "O-O",
            CastlingSide::QueenSide => "O-O-O",
        }
    }
}

/// The castling rights of both sides, as in the third field of a FEN.
///
/// A right says the king and that rook have not moved; whether castling is
/// possible now also depends on the squares between them and on attacks.
#[derive(Copy, Clone, Default, PartialEq, Eq, Hash)]
pub struct CastlingRights(u8);

impl CastlingRights {
    pub const NONE: CastlingRights = CastlingRights(0);
    pub const ALL: CastlingRights = CastlingRights(0b1111);

    #[inline]
    const fn bit(color: Color, side: CastlingSide) -> u8 {
        1 << (color as u8 * 2 + side as u8)
    }

    #[inline]
    pub const fn has(self, color: Color, side: CastlingSide) -> bool {
        self.0 & Self::bit(color, side) != 0
    }

    /// Whether `color` may still castle on either side.
    #[inline]
    pub const fn has_any(self, color: Color) -> bool {
        self.0 & (0b11 << (color as u8 * 2)) != 0
    }

    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    #[inline]
    pub fn add(&mut self, color: Color, side: CastlingSide) {
        self.0 |= Self::bit(color, side);
    }

    #[inline]
    pub fn remove(&mut self, color: Color, side: CastlingSide) {
        self.0 &= !Self::bit(color, side);
    }

    /// Removes both rights of one side (its king moved).
    #[inline]
    pub fn remove_color(&mut self, color: Color) {
        self.0 &= !(0b11 << (color as u8 * 2));
    }

    /// The four rights as bits `K Q k q` from low to high, for hashing tables.
    #[inline]
    pub const fn bits(self) -> u8 {
        self.0
    }
}

impl fmt::Display for CastlingRights {
    /// The FEN field: `KQkq`, a subset, or `-`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("-");
        }
        for (color, side, ch) in [
            (Color::White, CastlingSide::KingSide, 'K'),
            (Color::White, CastlingSide::QueenSide, 'Q'),
            (Color::Black, CastlingSide::KingSide, 'k'),
            (Color::Black, CastlingSide::QueenSide, 'q'),
        ] {
            if self.has(color, side) {
                write!(f, "{ch}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for CastlingRights {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CastlingRights({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rights_print_as_fen() {
        let mut rights = CastlingRights::ALL;
        assert_eq!(rights.to_string(), "KQkq");
        rights.remove(Color::White, CastlingSide::QueenSide);
        rights.remove_color(Color::Black);
        assert_eq!(rights.to_string(), "K");
        assert!(rights.has_any(Color::White));
        assert!(!rights.has_any(Color::Black));
        assert_eq!(CastlingRights::NONE.to_string(), "-");
    }

    #[test]
    fn castling_squares() {
        assert_eq!(CastlingSide::KingSide.king_to(Color::White), Square::G1);
        assert_eq!(CastlingSide::QueenSide.rook_from(Color::Black), Square::A8);
        assert_eq!(CastlingSide::QueenSide.rook_to(Color::Black), Square::D8);
    }
}
