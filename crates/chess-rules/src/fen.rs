//! FEN: reading and writing positions.
//!
//! Reading is strict: exactly six fields separated by single spaces, a
//! canonical board (no two digits in a row), and a position that could
//! arise in a game as far as can be told locally (one king each, no pawns on
//! the back ranks, the side not to move not in check, castling rights that
//! match the placement, at most two checkers, no more promoted pieces than
//! missing pawns, an en passant square behind a pawn that just moved
//! two squares). [`Position::from_fen_lenient`] also accepts the four-field
//! form used by EPD files.

use std::fmt;

use crate::{
    Bitboard, Board, CastlingRights, CastlingSide, Color, File, Piece, Position, Rank, Role, Square,
};

/// Why a FEN string does not describe a legal position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FenError {
    /// Not six fields separated by single spaces (four or six for the lenient reader).
    WrongFieldCount { found: usize },
    /// The board does not have eight ranks separated by `/`.
    WrongRankCount { found: usize },
    /// A rank describes more than eight squares.
    RankTooLong { rank: Rank },
    /// A rank describes fewer than eight squares.
    RankTooShort { rank: Rank },
    /// A character in the board that is neither a piece letter nor a digit 1-8.
    BadBoardChar { ch: char },
    /// Two digits in a row, such as `44` for `8`.
    AdjacentDigits { rank: Rank },
    /// The side to move is neither `w` nor `b`.
    BadSideToMove { found: String },
    /// The castling field is neither `-` nor distinct letters from `KQkq`.
    BadCastling { found: String },
    /// The en passant field is neither `-` nor a square.
    BadEnPassant { found: String },
    /// The half-move clock is not a non-negative integer.
    BadHalfmoveClock { found: String },
    /// The full-move number is not a positive integer.
    BadFullmoveNumber { found: String },
    /// A side has no king.
    NoKing { color: Color },
    /// A side has more than one king.
    TooManyKings { color: Color },
    /// A side has more than sixteen pieces.
    TooManyPieces { color: Color },
    /// A side has more than eight pawns.
    TooManyPawns { color: Color },
    /// More queens, rooks, bishops or knights than a side starts with, beyond
    /// what its missing pawns could have promoted to.
    TooManyPromotedPieces { color: Color },
    /// A pawn stands on the first or eighth rank.
    PawnOnBackRank { square: Square },
    /// The side that just moved is in check, which no legal move allows.
    OpponentInCheck,
    /// The side to move is checked by more than two pieces, which no move
    /// can bring about.
    TooManyCheckers,
    /// A castling right whose king or rook is not on its home square.
    ImpossibleCastling { color: Color, side: CastlingSide },
    /// An en passant square not on the sixth rank of the side to move.
    EnPassantWrongRank { square: Square },
    /// An en passant square with no enemy pawn in front of it that could
    /// just have moved two squares.
    EnPassantNoPawn { square: Square },
    /// An en passant square, or the square the pawn came from, that is occupied.
    EnPassantNotEmpty { square: Square },
}

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FenError::WrongFieldCount { found } => write!(
                f,
                "expected 6 space-separated fields (board, side, castling, en passant, \
                 half-move clock, full-move number), found {found}"
            ),
            FenError::WrongRankCount { found } => {
                write!(f, "expected 8 ranks separated by '/', found {found}")
            }
            FenError::RankTooLong { rank } => {
                write!(f, "rank {rank} describes more than 8 squares")
            }
            FenError::RankTooShort { rank } => {
                write!(f, "rank {rank} describes fewer than 8 squares")
            }
            FenError::BadBoardChar { ch } => write!(
                f,
                "invalid character {ch:?} in the board: expected one of PNBRQKpnbrqk or 1-8"
            ),
            FenError::AdjacentDigits { rank } => {
                write!(f, "rank {rank} has two digits in a row")
            }
            FenError::BadSideToMove { found } => {
                write!(f, "side to move must be 'w' or 'b', found {found:?}")
            }
            FenError::BadCastling { found } => write!(
                f,
                "castling rights must be '-' or distinct letters of KQkq, found {found:?}"
            ),
            FenError::BadEnPassant { found } => write!(
                f,
                "en passant square must be '-' or a square such as e3, found {found:?}"
            ),
            FenError::BadHalfmoveClock { found } => write!(
                f,
                "half-move clock must be a non-negative integer, found {found:?}"
            ),
            FenError::BadFullmoveNumber { found } => write!(
                f,
                "full-move number must be a positive integer, found {found:?}"
            ),
            FenError::NoKing { color } => write!(f, "{color} has no king"),
            FenError::TooManyKings { color } => write!(f, "{color} has more than one king"),
            FenError::TooManyPieces { color } => write!(f, "{color} has more than 16 pieces"),
            FenError::TooManyPawns { color } => write!(f, "{color} has more than 8 pawns"),
            FenError::TooManyPromotedPieces { color } => {
                write!(f, "{color} has more promoted pieces than missing pawns")
            }
            FenError::PawnOnBackRank { square } => {
                write!(
                    f,
                    "pawn on {square}: pawns cannot stand on the first or eighth rank"
                )
            }
            FenError::OpponentInCheck => f.write_str("the side not to move is in check"),
            FenError::TooManyCheckers => {
                f.write_str("the side to move is checked by more than two pieces")
            }
            FenError::ImpossibleCastling { color, side } => {
                let king = Square::from_coords(File::E, Rank::First.relative_to(*color));
                write!(
                    f,
                    "{color} {} castling right needs the king on {king} and a rook on {}",
                    match side {
                        CastlingSide::KingSide => "king-side",
                        CastlingSide::QueenSide => "queen-side",
                    },
                    side.rook_from(*color)
                )
            }
            FenError::EnPassantWrongRank { square } => write!(
                f,
                "en passant square {square} is not on the sixth rank of the side to move"
            ),
            FenError::EnPassantNoPawn { square } => write!(
                f,
                "en passant square {square} has no pawn in front of it that just moved two squares"
            ),
            FenError::EnPassantNotEmpty { square } => write!(
                f,
                "en passant square {square}, or the square the pawn came from, is occupied"
            ),
        }
    }
}

impl std::error::Error for FenError {}

/// The fields of a FEN once split, before the semantic checks.
struct Fields<'a> {
    board: &'a str,
    side: &'a str,
    castling: &'a str,
    en_passant: &'a str,
    counters: Option<(&'a str, &'a str)>,
}

impl Position {
    /// Reads a FEN string strictly: exactly six fields separated by single spaces.
    ///
    /// ```
    /// use chess_rules::Position;
    /// let pos = Position::from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1")?;
    /// assert_eq!(pos.legal_moves().len(), 20);
    /// # Ok::<(), chess_rules::FenError>(())
    /// ```
    ///
    /// # Errors
    /// A [`FenError`] naming the first problem found: syntax first (field
    /// count, board, side, castling, en passant, counters), then the
    /// position (kings, piece counts, pawns on back ranks, castling rights,
    /// en passant square, the side not to move in check).
    pub fn from_fen(fen: &str) -> Result<Position, FenError> {
        let parts: Vec<&str> = fen.split(' ').collect();
        match parts[..] {
            [board, side, castling, en_passant, halfmove, fullmove] => parse(Fields {
                board,
                side,
                castling,
                en_passant,
                counters: Some((halfmove, fullmove)),
            }),
            _ => Err(FenError::WrongFieldCount { found: parts.len() }),
        }
    }

    /// Reads a FEN string like [`Position::from_fen`], but also accepts the
    /// four-field form without move counters (as in EPD files), which then
    /// default to `0 1`.
    ///
    /// # Errors
    /// As [`Position::from_fen`]; the field count must be four or six.
    pub fn from_fen_lenient(fen: &str) -> Result<Position, FenError> {
        let parts: Vec<&str> = fen.split(' ').collect();
        match parts[..] {
            [board, side, castling, en_passant] => parse(Fields {
                board,
                side,
                castling,
                en_passant,
                counters: None,
            }),
            [_, _, _, _, _, _] => Position::from_fen(fen),
            _ => Err(FenError::WrongFieldCount { found: parts.len() }),
        }
    }

    /// Writes the position as FEN.
    ///
    /// ```
    /// use chess_rules::Position;
    /// assert_eq!(
    ///     Position::startpos().fen(),
    ///     "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
    /// );
    /// ```
    pub fn fen(&self) -> String {
        let mut fen = board_fen(&self.board);
        fen.push(' ');
        fen.push(self.turn.char());
        fen.push(' ');
        fen.push_str(&self.castling.to_string());
        fen.push(' ');
        match self.ep_square {
            Some(sq) => fen.push_str(&sq.to_string()),
            None => fen.push('-'),
        }
        fen.push_str(&format!(
            " {} {}",
            self.halfmove_clock, self.fullmove_number
        ));
        fen
    }
}

impl std::str::FromStr for Position {
    type Err = FenError;

    /// Same as [`Position::from_fen`].
    fn from_str(fen: &str) -> Result<Position, FenError> {
        Position::from_fen(fen)
    }
}

/// The board field of a FEN.
fn board_fen(board: &Board) -> String {
    let mut out = String::with_capacity(72);
    for rank in Rank::ALL.into_iter().rev() {
        let mut empty = 0;
        for file in File::ALL {
            match board.piece_at(Square::from_coords(file, rank)) {
                Some(piece) => {
                    if empty > 0 {
                        out.push(char::from(b'0' + empty));
                        empty = 0;
                    }
                    out.push(piece.char());
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            out.push(char::from(b'0' + empty));
        }
        if rank != Rank::First {
            out.push('/');
        }
    }
    out
}

fn parse(fields: Fields<'_>) -> Result<Position, FenError> {
    let board = parse_board(fields.board)?;
    let turn = match fields.side {
        "w" => Color::White,
        "b" => Color::Black,
        other => {
            return Err(FenError::BadSideToMove {
                found: other.to_owned(),
            });
        }
    };
    let castling = parse_castling(fields.castling)?;
    let ep_square = match fields.en_passant {
        "-" => None,
        text => Some(text.parse::<Square>().map_err(|_| FenError::BadEnPassant {
            found: text.to_owned(),
        })?),
    };
    let (halfmove_clock, fullmove_number) = match fields.counters {
        Some((halfmove, fullmove)) => {
            let halfmove_clock =
                parse_counter(halfmove).ok_or_else(|| FenError::BadHalfmoveClock {
                    found: halfmove.to_owned(),
                })?;
            let fullmove_number = parse_counter(fullmove).filter(|&n| n >= 1).ok_or_else(|| {
                FenError::BadFullmoveNumber {
                    found: fullmove.to_owned(),
                }
            })?;
            (halfmove_clock, fullmove_number)
        }
        None => (0, 1),
    };

    check_material(&board)?;
    check_castling(&board, castling)?;
    if let Some(ep) = ep_square {
        check_en_passant(&board, turn, ep)?;
    }
    let pos = Position::from_parts(
        board,
        turn,
        castling,
        ep_square,
        halfmove_clock,
        fullmove_number,
    );
    let their_king = pos
        .board
        .king_of(turn.other())
        .expect("check_material found exactly one king per side");
    if pos.attackers_to(their_king, turn).any() {
        return Err(FenError::OpponentInCheck);
    }
    if pos.checkers().count() > 2 {
        return Err(FenError::TooManyCheckers);
    }
    Ok(pos)
}

/// Digits only (no sign, no spaces), fitting a `u32`.
fn parse_counter(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn parse_board(text: &str) -> Result<Board, FenError> {
    let ranks: Vec<&str> = text.split('/').collect();
    if ranks.len() != 8 {
        return Err(FenError::WrongRankCount { found: ranks.len() });
    }
    let mut board = Board::empty();
    for (rank, rank_text) in Rank::ALL.into_iter().rev().zip(ranks) {
        let mut file = 0u32;
        let mut previous_was_digit = false;
        for ch in rank_text.chars() {
            let width = if let Some(piece) = Piece::from_char(ch) {
                if let Some(f) = File::new(file) {
                    board.set_piece_at(Square::from_coords(f, rank), piece);
                }
                previous_was_digit = false;
                1
            } else if ('1'..='8').contains(&ch) {
                if previous_was_digit {
                    return Err(FenError::AdjacentDigits { rank });
                }
                previous_was_digit = true;
                ch as u32 - '0' as u32
            } else {
                return Err(FenError::BadBoardChar { ch });
            };
            file += width;
            if file > 8 {
                return Err(FenError::RankTooLong { rank });
            }
        }
        if file < 8 {
            return Err(FenError::RankTooShort { rank });
        }
    }
    Ok(board)
}

fn parse_castling(text: &str) -> Result<CastlingRights, FenError> {
    let bad = || FenError::BadCastling {
        found: text.to_owned(),
    };
    if text == "-" {
        return Ok(CastlingRights::NONE);
    }
    if text.is_empty() {
        return Err(bad());
    }
    let mut rights = CastlingRights::NONE;
    for ch in text.chars() {
        let (color, side) = match ch {
            'K' => (Color::White, CastlingSide::KingSide),
            'Q' => (Color::White, CastlingSide::QueenSide),
            'k' => (Color::Black, CastlingSide::KingSide),
            'q' => (Color::Black, CastlingSide::QueenSide),
            _ => return Err(bad()),
        };
        if rights.has(color, side) {
            return Err(bad());
        }
        rights.add(color, side);
    }
    Ok(rights)
}

fn check_material(board: &Board) -> Result<(), FenError> {
    for color in Color::ALL {
        let kings = board.pieces(color, Role::King).count();
        if kings == 0 {
            return Err(FenError::NoKing { color });
        }
        if kings > 1 {
            return Err(FenError::TooManyKings { color });
        }
    }
    for color in Color::ALL {
        if board.by_color(color).count() > 16 {
            return Err(FenError::TooManyPieces { color });
        }
        let pawns = board.pieces(color, Role::Pawn).count();
        if pawns > 8 {
            return Err(FenError::TooManyPawns { color });
        }
        // Pieces beyond the starting set must have been promoted pawns.
        let promoted: u32 = [
            (Role::Queen, 1),
            (Role::Rook, 2),
            (Role::Bishop, 2),
            (Role::Knight, 2),
        ]
        .into_iter()
        .map(|(role, initial)| board.pieces(color, role).count().saturating_sub(initial))
        .sum();
        if pawns + promoted > 8 {
            return Err(FenError::TooManyPromotedPieces { color });
        }
    }
    if let Some(square) = (board.by_role(Role::Pawn) & Bitboard::BACKRANKS).first() {
        return Err(FenError::PawnOnBackRank { square });
    }
    Ok(())
}

fn check_castling(board: &Board, rights: CastlingRights) -> Result<(), FenError> {
    for color in Color::ALL {
        let king_home = Square::from_coords(File::E, Rank::First.relative_to(color));
        for side in CastlingSide::ALL {
            if rights.has(color, side)
                && (board.piece_at(king_home) != Some(Piece::new(color, Role::King))
                    || board.piece_at(side.rook_from(color)) != Some(Piece::new(color, Role::Rook)))
            {
                return Err(FenError::ImpossibleCastling { color, side });
            }
        }
    }
    Ok(())
}

fn check_en_passant(board: &Board, turn: Color, ep: Square) -> Result<(), FenError> {
    if ep.rank() != Rank::Sixth.relative_to(turn) {
        return Err(FenError::EnPassantWrongRank { square: ep });
    }
    let forward = turn.fold(1, -1);
    // The pawn that moved stands one square further from the mover; it came
    // from one square nearer.
    let (Some(pawn_sq), Some(origin)) = (ep.offset(0, -forward), ep.offset(0, forward)) else {
        return Err(FenError::EnPassantWrongRank { square: ep });
    };
    if board.piece_at(pawn_sq) != Some(Piece::new(turn.other(), Role::Pawn)) {
        return Err(FenError::EnPassantNoPawn { square: ep });
    }
    if board.occupied().intersects(Bitboard::from(ep) | origin) {
        return Err(FenError::EnPassantNotEmpty { square: ep });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    #[test]
    fn every_error_variant_has_a_fen_that_triggers_it() {
        let cases: &[(&str, FenError)] = &[
            ("", FenError::WrongFieldCount { found: 1 }),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0",
                FenError::WrongFieldCount { found: 5 },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR  w KQkq - 0 1",
                FenError::WrongFieldCount { found: 7 },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                FenError::WrongRankCount { found: 7 },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                FenError::WrongRankCount { found: 9 },
            ),
            (
                "rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                FenError::RankTooLong {
                    rank: Rank::Seventh,
                },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/7/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                FenError::RankTooShort { rank: Rank::Fourth },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1",
                FenError::BadBoardChar { ch: 'X' },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/0/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                FenError::BadBoardChar { ch: '0' },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/44/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                FenError::AdjacentDigits { rank: Rank::Fourth },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR W KQkq - 0 1",
                FenError::BadSideToMove { found: "W".into() },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkx - 0 1",
                FenError::BadCastling {
                    found: "KQkx".into(),
                },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KK - 0 1",
                FenError::BadCastling { found: "KK".into() },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1",
                FenError::BadEnPassant { found: "e9".into() },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - -1 1",
                FenError::BadHalfmoveClock { found: "-1".into() },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - +3 1",
                FenError::BadHalfmoveClock { found: "+3".into() },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 0",
                FenError::BadFullmoveNumber { found: "0".into() },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 one",
                FenError::BadFullmoveNumber {
                    found: "one".into(),
                },
            ),
            (
                "rnbq1bnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1",
                FenError::NoKing {
                    color: Color::Black,
                },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKKNR w kq - 0 1",
                FenError::TooManyKings {
                    color: Color::White,
                },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/NNNNNNNN/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                FenError::TooManyPieces {
                    color: Color::White,
                },
            ),
            (
                "rnbqkbn1/pppppppp/p7/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1",
                FenError::TooManyPawns {
                    color: Color::Black,
                },
            ),
            (
                "4k3/8/8/8/8/8/PPPPPPPP/QQ2K3 w - - 0 1",
                FenError::TooManyPromotedPieces {
                    color: Color::White,
                },
            ),
            (
                "4k3/8/8/8/1b6/5n2/8/r3K3 w - - 0 1",
                FenError::TooManyCheckers,
            ),
            (
                "4k3/8/8/8/8/8/8/P3K3 w - - 0 1",
                FenError::PawnOnBackRank { square: Square::A1 },
            ),
            ("4k3/4R3/8/8/8/8/8/4K3 w - - 0 1", FenError::OpponentInCheck),
            (
                "4k3/8/8/8/8/8/8/4K3 w K - 0 1",
                FenError::ImpossibleCastling {
                    color: Color::White,
                    side: CastlingSide::KingSide,
                },
            ),
            (
                "r4k2/8/8/8/8/8/8/4K3 w q - 0 1",
                FenError::ImpossibleCastling {
                    color: Color::Black,
                    side: CastlingSide::QueenSide,
                },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e4 0 1",
                FenError::EnPassantWrongRank { square: Square::E4 },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq e3 0 1",
                FenError::EnPassantWrongRank { square: Square::E3 },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq d3 0 1",
                FenError::EnPassantNoPawn { square: Square::D3 },
            ),
            (
                "rnbqkbnr/pppppppp/8/8/4P3/4N3/PPPP1PPP/R1BQKBNR b KQkq e3 0 1",
                FenError::EnPassantNotEmpty { square: Square::E3 },
            ),
        ];
        for (fen, expected) in cases {
            assert_eq!(Position::from_fen(fen).as_ref(), Err(expected), "{fen:?}");
            // Every message is lowercase, as the house style asks.
            let message = expected.to_string();
            assert!(
                !message.starts_with(char::is_uppercase),
                "message {message:?}"
            );
        }
    }

    #[test]
    fn round_trips_valid_fens() {
        for fen in [
            START,
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1",
            "8/8/1k6/2b5/2pP4/8/5K2/8 b - d3 0 1",
            "4k3/8/8/8/8/8/8/4K2R w K - 37 112",
        ] {
            assert_eq!(Position::from_fen(fen).map(|p| p.fen()).as_deref(), Ok(fen));
        }
        assert_eq!(Position::startpos().fen(), START);
    }

    #[test]
    fn lenient_reader_accepts_four_fields_and_strict_does_not() {
        let epd = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -";
        assert_eq!(
            Position::from_fen(epd),
            Err(FenError::WrongFieldCount { found: 4 })
        );
        assert_eq!(Position::from_fen_lenient(epd), Ok(Position::startpos()));
        assert_eq!(
            Position::from_fen_lenient("8/8/8/8 w"),
            Err(FenError::WrongFieldCount { found: 2 })
        );
    }

    #[test]
    fn messages_name_the_problem() {
        assert_eq!(
            FenError::TooManyKings {
                color: Color::White
            }
            .to_string(),
            "white has more than one king"
        );
        assert_eq!(
            FenError::ImpossibleCastling {
                color: Color::Black,
                side: CastlingSide::QueenSide
            }
            .to_string(),
            "black queen-side castling right needs the king on e8 and a rook on a8"
        );
        assert_eq!(
            FenError::OpponentInCheck.to_string(),
            "the side not to move is in check"
        );
    }
}
