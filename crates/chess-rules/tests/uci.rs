//! UCI moves against positions: legal, illegal, and the error for each.

use chess_rules::{IllegalMoveError, MoveKind, Position, Role, UciError, UciMove, UciMoveError};

fn pos(fen: &str) -> Position {
    Position::from_fen(fen).unwrap_or_else(|err| panic!("{fen}: {err}"))
}

#[test]
fn uci_text_names_legal_moves() {
    // (fen, uci, role of the moving piece, kind)
    let cases = [
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "e2e4",
            Role::Pawn,
            MoveKind::Normal,
        ),
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "g1f3",
            Role::Knight,
            MoveKind::Normal,
        ),
        (
            "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
            "e1g1",
            Role::King,
            MoveKind::Castle {
                side: chess_rules::CastlingSide::KingSide,
            },
        ),
        (
            "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1",
            "e8c8",
            Role::King,
            MoveKind::Castle {
                side: chess_rules::CastlingSide::QueenSide,
            },
        ),
        (
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "e5f6",
            Role::Pawn,
            MoveKind::EnPassant,
        ),
        (
            "1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1",
            "a7b8n",
            Role::Pawn,
            MoveKind::Promotion {
                promotion: Role::Knight,
                captured: Some(Role::Knight),
            },
        ),
    ];
    for (fen, uci, role, kind) in cases {
        let position = pos(fen);
        let m = position
            .parse_uci(uci)
            .unwrap_or_else(|err| panic!("{fen} {uci}: {err}"));
        assert_eq!(m.role(), role, "{fen} {uci}");
        assert_eq!(m.kind(), kind, "{fen} {uci}");
        assert_eq!(m.to_uci().to_string(), uci);
        assert_eq!(m.to_string(), uci);
        assert!(position.is_legal(&m));
    }
}

#[test]
fn uci_text_that_names_no_legal_move_is_illegal() {
    let cases = [
        // A pawn three squares, a piece that is not there, the opponent's piece.
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "e2e5",
        ),
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "e3e4",
        ),
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "e7e5",
        ),
        // Castling through pieces; promotion without naming the piece; a
        // promotion letter on a move that does not promote.
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "e1g1",
        ),
        ("1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7a8"),
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "e2e4q",
        ),
        // Castling as king-takes-rook is not this crate's UCI dialect.
        ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1h1"),
        // A pinned piece.
        ("4k3/4r3/8/8/8/8/4N3/4K3 w - - 0 1", "e2c3"),
    ];
    for (fen, uci) in cases {
        assert_eq!(
            pos(fen).parse_uci(uci),
            Err(UciMoveError::Illegal(IllegalMoveError { uci: uci.into() })),
            "{fen} {uci}"
        );
    }
}

#[test]
fn uci_syntax_errors_come_before_legality() {
    let start = Position::startpos();
    assert_eq!(
        start.parse_uci("e2e"),
        Err(UciMoveError::Syntax(UciError::WrongLength { len: 3 }))
    );
    assert_eq!(
        start.parse_uci("e2e4k"),
        Err(UciMoveError::Syntax(UciError::BadPromotion { letter: 'k' }))
    );
    let err = start.parse_uci("z2e4").expect_err("bad square");
    assert_eq!(err.to_string(), "invalid uci move: \"z2\" is not a square");
    let err = start.parse_uci("e2e5").expect_err("illegal");
    assert_eq!(err.to_string(), "illegal move: e2e5");
}

#[test]
fn uci_move_to_move_agrees_with_parse_uci() {
    let start = Position::startpos();
    let uci: UciMove = "b1c3".parse().expect("syntax");
    assert_eq!(
        Ok(uci.to_move(&start).expect("legal")),
        start.parse_uci("b1c3")
    );
}
