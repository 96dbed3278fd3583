//! Insufficient material, both kinds: whether one side can still mate (the
//! lichess flag rule) and whether neither can (the automatic draw).

use chess_rules::{Color, Position};

fn pos(fen: &str) -> Position {
    Position::from_fen(fen).unwrap_or_else(|err| panic!("{fen}: {err}"))
}

/// (fen, White cannot mate, Black cannot mate, neither can: automatic draw).
/// The per-colour columns agree with python-chess `has_insufficient_material`.
const CASES: [(&str, bool, bool, bool); 24] = [
    // Bare kings.
    ("4k3/8/8/8/8/8/8/4K3 w - - 0 1", true, true, true),
    // One minor piece in all.
    ("4k3/8/8/8/8/8/8/4KN2 w - - 0 1", true, true, true),
    ("4k3/8/8/8/8/8/8/4KB2 w - - 0 1", true, true, true),
    ("4kb2/8/8/8/8/8/8/4K3 w - - 0 1", true, true, true),
    // Bishops only, all on dark squares (c1, e3, f8), any side.
    ("4kb2/8/8/8/8/8/8/2B1K3 w - - 0 1", true, true, true),
    ("4k3/8/8/8/8/4B3/8/2B1K3 w - - 0 1", true, true, true),
    ("4kb2/8/8/8/8/4B3/8/2B1K3 b - - 0 1", true, true, true),
    // Bishops on both colours: each side could be mated with help.
    ("2b1k3/8/8/8/8/8/8/2B1K3 w - - 0 1", false, false, false),
    ("4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1", false, true, false),
    // Knight against knight, bishop against knight: blockers exist.
    ("4k1n1/8/8/8/8/8/8/4KN2 w - - 0 1", false, false, false),
    ("4k1n1/8/8/8/8/8/8/2B1K3 w - - 0 1", false, false, false),
    // Two knights can mate with the opponent's help.
    ("4k3/8/8/8/8/8/8/3NKN2 w - - 0 1", false, true, false),
    // A knight against a bare king and queens cannot mate ...
    ("3qk3/8/8/8/8/8/8/4KN2 w - - 0 1", true, false, false),
    ("3qkq2/8/8/8/8/8/8/4KN2 w - - 0 1", true, false, false),
    // ... but against a rook or a pawn it can (they can block their king).
    ("3rk3/8/8/8/8/8/8/4KN2 w - - 0 1", false, false, false),
    ("4k3/4p3/8/8/8/8/8/4KN2 w - - 0 1", false, false, false),
    // A bishop against queens and rooks cannot mate (scalachess/python-chess rule) ...
    ("3qk3/8/8/8/8/8/8/2B1K3 w - - 0 1", true, false, false),
    ("r3k3/8/8/8/8/8/8/2B1K3 w - - 0 1", true, false, false),
    // ... but any pawn or knight anywhere gives it a chance.
    ("4k3/4p3/8/8/8/8/8/2B1K3 w - - 0 1", false, false, false),
    ("4k3/8/8/8/8/8/3P4/2B1K3 w - - 0 1", false, true, false),
    // Pawns, rooks and queens can always mate.
    ("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", false, true, false),
    ("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", false, true, false),
    ("4k3/8/8/8/8/8/8/3QK3 w - - 0 1", false, true, false),
    (
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        false,
        false,
        false,
    ),
];

#[test]
fn whether_one_side_can_mate_follows_the_lichess_flag_rule() {
    for (fen, white, black, _) in CASES {
        let position = pos(fen);
        assert_eq!(
            position.has_insufficient_material(Color::White),
            white,
            "white: {fen}"
        );
        assert_eq!(
            position.has_insufficient_material(Color::Black),
            black,
            "black: {fen}"
        );
    }
}

#[test]
fn automatic_draw_needs_at_most_one_minor_or_same_coloured_bishops() {
    for (fen, _, _, neither) in CASES {
        assert_eq!(pos(fen).is_insufficient_material(), neither, "{fen}");
    }
}

#[test]
fn the_automatic_draw_implies_neither_side_can_mate() {
    for (fen, white, black, neither) in CASES {
        if neither {
            assert!(white && black, "{fen}");
        }
    }
}
