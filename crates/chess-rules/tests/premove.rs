//! Premove patterns: the piece's movement on an empty board, pawns forward
//! (two only from the starting rank, diagonals onto any square), castling
//! only with the matching right.

use chess_rules::{Bitboard, Color, Position, Square};

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
const CASTLING: &str = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";

fn pos(fen: &str) -> Position {
    Position::from_fen(fen).unwrap_or_else(|err| panic!("{fen}: {err}"))
}

fn sq(name: &str) -> Square {
    name.parse().unwrap_or_else(|err| panic!("{name}: {err}"))
}

fn squares(names: &str) -> Bitboard {
    names.split_whitespace().map(sq).collect()
}

/// The premove destinations of the piece on `from`, from `premove_destinations`.
fn destinations(position: &Position, color: Color, from: Square) -> Bitboard {
    position
        .premove_destinations(color)
        .into_iter()
        .find(|(square, _)| *square == from)
        .map_or(Bitboard::EMPTY, |(_, targets)| targets)
}

#[test]
fn premove_patterns_ignore_occupancy_and_check() {
    // (fen, colour, from, every premove destination)
    let cases = [
        // The knight may premove onto its own pawn on d2: it may be captured first.
        (START, Color::White, "b1", "a3 c3 d2"),
        (START, Color::White, "e2", "d3 e3 f3 e4"),
        (START, Color::White, "a2", "a3 b3 a4"),
        (START, Color::Black, "e7", "d6 e6 f6 e5"),
        (START, Color::Black, "g8", "f6 h6 e7"),
        // Blocked paths do not matter: the rook and bishop see the whole board.
        (
            START,
            Color::White,
            "a1",
            "a2 a3 a4 a5 a6 a7 a8 b1 c1 d1 e1 f1 g1 h1",
        ),
        (START, Color::White, "c1", "b2 a3 d2 e3 f4 g5 h6"),
        (
            START,
            Color::White,
            "d1",
            "a1 b1 c1 e1 f1 g1 h1 d2 d3 d4 d5 d6 d7 d8 c2 b3 a4 e2 f3 g4 h5",
        ),
        // Castling rights on both sides and none: the king in the start position
        // keeps its rights but not through pieces, which premoves ignore.
        (START, Color::White, "e1", "d1 d2 e2 f2 f1 c1 g1"),
        (CASTLING, Color::Black, "e8", "d8 d7 e7 f7 f8 c8 g8"),
        (
            "r3k2r/8/8/8/8/8/8/R3K2R w Kq - 0 1",
            Color::White,
            "e1",
            "d1 d2 e2 f2 f1 g1",
        ),
        (
            "r3k2r/8/8/8/8/8/8/R3K2R w Kq - 0 1",
            Color::Black,
            "e8",
            "d8 d7 e7 f7 f8 c8",
        ),
        (
            "r3k2r/8/8/8/8/8/8/R3K2R w - - 0 1",
            Color::White,
            "e1",
            "d1 d2 e2 f2 f1",
        ),
        // A pawn past its starting rank steps one; diagonals may be empty.
        (
            "4k3/8/8/8/8/4P3/8/4K3 b - - 0 1",
            Color::White,
            "e3",
            "d4 e4 f4",
        ),
        (
            "4k3/8/8/8/8/8/P7/4K3 b - - 0 1",
            Color::White,
            "a2",
            "a3 b3 a4",
        ),
        (
            "4k3/7p/8/8/8/8/8/4K3 w - - 0 1",
            Color::Black,
            "h7",
            "g6 h6 h5",
        ),
        // A pawn about to promote premoves onto the last rank.
        (
            "4k3/1P6/8/8/8/8/8/4K3 b - - 0 1",
            Color::White,
            "b7",
            "a8 b8 c8",
        ),
        // A king in check and a pinned knight premove by their patterns.
        (
            "k3r3/8/8/8/8/8/4N3/4K3 b - - 0 1",
            Color::White,
            "e2",
            "c1 g1 c3 g3 d4 f4",
        ),
        (
            "4k3/8/8/8/8/8/8/r3K3 w - - 0 1",
            Color::White,
            "e1",
            "d1 d2 e2 f2 f1",
        ),
    ];
    for (fen, color, from, expected) in cases {
        let position = pos(fen);
        let from = sq(from);
        let expected = squares(expected);
        assert_eq!(
            destinations(&position, color, from),
            expected,
            "{fen} {from}"
        );
        for to in Square::all() {
            assert_eq!(
                position.is_premove(color, from, to),
                expected.contains(to),
                "{fen} {from}{to}"
            );
        }
    }
}

#[test]
fn only_own_pieces_premove() {
    let start = pos(START);
    // Empty square, opponent's piece, and a square onto itself.
    assert!(!start.is_premove(Color::White, sq("e4"), sq("e5")));
    assert!(!start.is_premove(Color::White, sq("e7"), sq("e6")));
    assert!(!start.is_premove(Color::Black, sq("e2"), sq("e3")));
    assert!(!start.is_premove(Color::White, sq("b1"), sq("b1")));
    assert!(!start.is_premove(Color::White, sq("b1"), sq("b3")));
    // Whose turn it is does not matter.
    assert!(start.is_premove(Color::Black, sq("e7"), sq("e5")));
}

#[test]
fn every_piece_of_a_colour_gets_its_destinations() {
    let start = pos(START);
    for color in Color::ALL {
        let all = start.premove_destinations(color);
        let froms: Bitboard = all.iter().map(|(from, _)| *from).collect();
        assert_eq!(froms, start.board().by_color(color), "{color:?}");
        // Sixteen pieces: eight pawns with 3 or 4 targets, and the pieces.
        let total: u32 = all.iter().map(|(_, targets)| targets.count()).sum();
        // Pawns: a/h 3 each, six others 4 each = 30; knights 3 each = 6;
        // bishops 7 each = 14; rooks 14 each = 28; queen 21; king 5 + 2 castles.
        assert_eq!(total, 30 + 6 + 14 + 28 + 21 + 7, "{color:?}");
    }
}
