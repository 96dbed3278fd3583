//! Files, ranks and squares.

use std::fmt;
use std::str::FromStr;

use crate::Color;

/// A column of the board, `a` to `h`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum File {
    A = 0,
    B,
    C,
    D,
    E,
    F,
    G,
    H,
}

/// A row of the board, `1` to `8`, seen from White.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rank {
    First = 0,
    Second,
    Third,
    Fourth,
    Fifth,
    Sixth,
    Seventh,
    Eighth,
}

impl File {
    pub const ALL: [File; 8] = [
        File::A,
        File::B,
        File::C,
        File::D,
        File::E,
        File::F,
        File::G,
        File::H,
    ];

    /// The file with this index (0 is `a`), if any.
    #[inline]
    pub const fn new(index: u32) -> Option<File> {
        if index < 8 {
            Some(File::ALL[index as usize])
        } else {
            None
        }
    }

    #[inline]
    pub const fn index(self) -> u32 {
        self as u32
    }

    /// `a` to `h`.
    pub const fn char(self) -> char {
        (b'a' + self as u8) as char
    }

    pub fn from_char(ch: char) -> Option<File> {
        if ('a'..='h').contains(&ch) {
            File::new(ch as u32 - 'a' as u32)
        } else {
            None
        }
    }

    /// The file `delta` columns away, if still on the board.
    pub const fn offset(self, delta: i32) -> Option<File> {
        let index = self as i32 + delta;
        if 0 <= index && index < 8 {
            File::new(index as u32)
        } else {
            None
        }
    }
}

impl Rank {
    pub const ALL: [Rank; 8] = [
        Rank::First,
        Rank::Second,
        Rank::Third,
        Rank::Fourth,
        Rank::Fifth,
        Rank::Sixth,
        Rank::Seventh,
        Rank::Eighth,
    ];

    /// The rank with this index (0 is the first rank), if any.
    #[inline]
    pub const fn new(index: u32) -> Option<Rank> {
        if index < 8 {
            Some(Rank::ALL[index as usize])
        } else {
            None
        }
    }

    #[inline]
    pub const fn index(self) -> u32 {
        self as u32
    }

    /// `1` to `8`.
    pub const fn char(self) -> char {
        (b'1' + self as u8) as char
    }

    pub fn from_char(ch: char) -> Option<Rank> {
        if ('1'..='8').contains(&ch) {
            Rank::new(ch as u32 - '1' as u32)
        } else {
            None
        }
    }

    /// The same rank seen from `color`'s side: `Rank::First.relative_to(Black)` is the eighth.
    pub const fn relative_to(self, color: Color) -> Rank {
        match color {
            Color::White => self,
            Color::Black => Rank::ALL[7 - self as usize],
        }
    }

    /// The rank `delta` rows away, if still on the board.
    pub const fn offset(self, delta: i32) -> Option<Rank> {
        let index = self as i32 + delta;
        if 0 <= index && index < 8 {
            Rank::new(index as u32)
        } else {
            None
        }
    }
}

impl fmt::Display for File {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.char())
    }
}

impl fmt::Display for Rank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.char())
    }
}

/// One of the 64 squares, numbered `a1 = 0, b1 = 1, ..., h8 = 63`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

macro_rules! square_constants {
    ($($name:ident = $index:expr),* $(,)?) => {
        impl Square {
            $(pub const $name: Square = Square($index);)*
        }
    };
}

square_constants! {
    A1 = 0, B1 = 1, C1 = 2, D1 = 3, E1 = 4, F1 = 5, G1 = 6, H1 = 7,
    A2 = 8, B2 = 9, C2 = 10, D2 = 11, E2 = 12, F2 = 13, G2 = 14, H2 = 15,
    A3 = 16, B3 = 17, C3 = 18, D3 = 19, E3 = 20, F3 = 21, G3 = 22, H3 = 23,
    A4 = 24, B4 = 25, C4 = 26, D4 = 27, E4 = 28, F4 = 29, G4 = 30, H4 = 31,
    A5 = 32, B5 = 33, C5 = 34, D5 = 35, E5 = 36, F5 = 37, G5 = 38, H5 = 39,
    A6 = 40, B6 = 41, C6 = 42, D6 = 43, E6 = 44, F6 = 45, G6 = 46, H6 = 47,
    A7 = 48, B7 = 49, C7 = 50, D7 = 51, E7 = 52, F7 = 53, G7 = 54, H7 = 55,
    A8 = 56, B8 = 57, C8 = 58, D8 = 59, E8 = 60, F8 = 61, G8 = 62, H8 = 63,
}

impl Square {
    /// The square at the crossing of a file and a rank.
    #[inline]
    pub const fn from_coords(file: File, rank: Rank) -> Square {
        Square((rank as u8) << 3 | file as u8)
    }

    /// The square with this index (`a1 = 0`, `h8 = 63`), if any.
    #[inline]
    pub const fn new(index: u32) -> Option<Square> {
        if index < 64 {
            Some(Square(index as u8))
        } else {
            None
        }
    }

    /// The square with this index.
    ///
    /// # Panics
    /// If `index` is 64 or more.
    #[inline]
    pub const fn from_index(index: u32) -> Square {
        assert!(index < 64, "square index out of range");
        Square(index as u8)
    }

    #[inline]
    pub const fn index(self) -> u32 {
        self.0 as u32
    }

    #[inline]
    pub const fn file(self) -> File {
        File::ALL[(self.0 & 7) as usize]
    }

    #[inline]
    pub const fn rank(self) -> Rank {
        Rank::ALL[(self.0 >> 3) as usize]
    }

    /// The square `df` files and `dr` ranks away, if still on the board.
    pub const fn offset(self, df: i32, dr: i32) -> Option<Square> {
        match (self.file().offset(df), self.rank().offset(dr)) {
            (Some(file), Some(rank)) => Some(Square::from_coords(file, rank)),
            _ => None,
        }
    }

    /// The same square mirrored top to bottom (`e2` becomes `e7`).
    #[inline]
    pub const fn flip_vertical(self) -> Square {
        Square(self.0 ^ 56)
    }

    /// Whether the square is a light square (`h1` is light, `a1` is dark).
    #[inline]
    pub const fn is_light(self) -> bool {
        (self.file() as u8 + self.rank() as u8) % 2 == 1
    }

    /// Chebyshev distance: king moves between the two squares.
    pub fn distance(self, other: Square) -> u32 {
        let df = self.file().index().abs_diff(other.file().index());
        let dr = self.rank().index().abs_diff(other.rank().index());
        df.max(dr)
    }

    /// Every square, `a1` first.
    pub fn all() -> impl Iterator<Item = Square> {
        (0..64).map(Square)
    }

    /// The square's name (`"e4"`), without allocating: servers write square
    /// names into every message they send.
    #[inline]
    pub const fn name(self) -> &'static str {
        SQUARE_NAMES[self.0 as usize]
    }
}

const SQUARE_NAMES: [&str; 64] = [
    "a1", "b1", "c1", "d1", "e1", "f1", "g1", "h1", //
    "a2", "b2", "c2", "d2", "e2", "f2", "g2", "h2", //
    "a3", "b3", "c3", "d3", "e3", "f3", "g3", "h3", //
    "a4", "b4", "c4", "d4", "e4", "f4", "g4", "h4", //
    "a5", "b5", "c5", "d5", "e5", "f5", "g5", "h5", //
    "a6", "b6", "c6", "d6", "e6", "f6", "g6", "h6", //
    "a7", "b7", "c7", "d7", "e7", "f7", "g7", "h7", //
    "a8", "b8", "c8", "d8", "e8", "f8", "g8", "h8", //
];

impl fmt::Display for Square {
    /// `e4`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A square name that is not two characters `a`-`h` then `1`-`8`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseSquareError;

impl fmt::Display for ParseSquareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid square name: expected a file a-h and a rank 1-8")
    }
}

impl std::error::Error for ParseSquareError {}

impl FromStr for Square {
    type Err = ParseSquareError;

    fn from_str(s: &str) -> Result<Square, ParseSquareError> {
        let mut chars = s.chars();
        match (chars.next(), chars.next(), chars.next()) {
            (Some(f), Some(r), None) => match (File::from_char(f), Rank::from_char(r)) {
                (Some(file), Some(rank)) => Ok(Square::from_coords(file, rank)),
                _ => Err(ParseSquareError),
            },
            _ => Err(ParseSquareError),
        }
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Square {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Square {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Square, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for sq in Square::all() {
            assert_eq!(sq.to_string().parse::<Square>(), Ok(sq));
        }
        assert_eq!(Square::E4.to_string(), "e4");
        for bad in ["", "e", "e9", "i1", "e44", "E4"] {
            assert_eq!(bad.parse::<Square>(), Err(ParseSquareError), "{bad}");
        }
    }

    #[test]
    fn the_name_table_matches_files_and_ranks() {
        for sq in Square::all() {
            let built: String = [sq.file().char(), sq.rank().char()].into_iter().collect();
            assert_eq!(sq.name(), built);
        }
    }

    #[test]
    fn colours_of_squares() {
        assert!(!Square::A1.is_light());
        assert!(Square::H1.is_light());
        assert!(Square::D1.is_light());
        assert!(!Square::D8.is_light());
    }

    #[test]
    fn offsets_stay_on_board() {
        assert_eq!(Square::E4.offset(1, 2), Some(Square::F6));
        assert_eq!(Square::H4.offset(1, 0), None);
        assert_eq!(Square::A1.offset(0, -1), None);
        assert_eq!(Rank::First.relative_to(Color::Black), Rank::Eighth);
    }
}
