//! The game record: pushing and taking back moves, SAN, threefold repetition
//! (placement, side to move, castling rights and en passant possibilities)
//! and how the record says the game ended.

use chess_rules::{
    Color, Ending, GameRecord, IllegalMoveError, Move, MoveKind, Position, Role, SanError, Square,
    UciError, UciMoveError,
};

fn record_from(fen: &str) -> GameRecord {
    GameRecord::new(Position::from_fen(fen).unwrap_or_else(|err| panic!("{fen}: {err}")))
}

/// Pushes SAN moves and returns the repetition count after each.
fn counts_after(record: &mut GameRecord, sans: &str) -> Vec<usize> {
    sans.split_whitespace()
        .map(|san| {
            record
                .push_san(san)
                .unwrap_or_else(|err| panic!("{san}: {err}"));
            record.repetition_count()
        })
        .collect()
}

#[test]
fn knight_shuffles_repeat_the_start_three_times() {
    let mut record = GameRecord::default();
    assert_eq!(record.repetition_count(), 1);
    assert_eq!(
        counts_after(&mut record, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1"),
        [1, 1, 1, 2, 2, 2, 2]
    );
    assert!(!record.is_threefold_repetition());
    assert_eq!(record.ending(), None);
    assert_eq!(counts_after(&mut record, "Ng8"), [3]);
    assert!(record.is_threefold_repetition());
    assert_eq!(record.ending(), Some(Ending::ThreefoldRepetition));

    // Taking back the last move takes back the repetition.
    let ply = record.pop().expect("a move to take back");
    assert_eq!(ply.san, "Ng8");
    assert_eq!(record.repetition_count(), 2);
    assert_eq!(record.ending(), None);
}

#[test]
fn a_legal_en_passant_capture_makes_a_position_different() {
    // After ...d5 White may take en passant on d6; after the knight and king
    // shuffles the same placement recurs without that possibility.
    let mut record = record_from("4k3/3p4/8/4P3/8/8/8/4K1N1 b - - 0 1");
    assert_eq!(counts_after(&mut record, "d5"), [1]);
    assert_eq!(record.position().legal_ep_square(), Some(Square::D6));
    // The placement after ...d5 is back after each `Ke8`, but the first
    // time it had a legal en passant capture, so it only counts from the
    // first `Ke8` on (python-chess agrees on every count here).
    assert_eq!(
        counts_after(&mut record, "Nf3 Kd8 Ng1 Ke8 Nf3 Kd8 Ng1 Ke8"),
        [1, 1, 1, 1, 2, 2, 2, 2]
    );
    assert!(!record.is_threefold_repetition());
    assert_eq!(counts_after(&mut record, "Nf3 Kd8 Ng1 Ke8"), [3, 3, 3, 3]);
}

#[test]
fn an_en_passant_square_without_a_legal_capture_changes_nothing() {
    // ...d5 sets an en passant square, but exd6 would expose the king on a5
    // to the rook on h5, so the position after ...d5 is the same as later.
    let mut record = record_from("4k3/3p4/8/K3P2r/8/8/8/8 b - - 0 1");
    assert_eq!(counts_after(&mut record, "d5"), [1]);
    assert_eq!(record.position().legal_ep_square(), None);
    assert_eq!(
        counts_after(&mut record, "Ka4 Kd8 Ka5 Ke8 Ka4 Kd8 Ka5 Ke8"),
        [1, 1, 1, 2, 2, 2, 2, 3]
    );
    assert!(record.is_threefold_repetition());
}

#[test]
fn lost_castling_rights_make_a_position_different() {
    let mut record = record_from("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
    // The rooks go and come back: the placement after `Ra8` is the initial
    // one, but without queenside rights, so it is new. Only from the second
    // `Rb8` on do positions repeat with the same rights.
    assert_eq!(
        counts_after(&mut record, "Rb1 Rb8 Ra1 Ra8 Rb1 Rb8 Ra1 Ra8"),
        [1, 1, 1, 1, 1, 2, 2, 2]
    );
    assert_eq!(record.position().castling_rights().to_string(), "Kk");
}

#[test]
fn positions_before_a_pawn_move_or_capture_are_not_compared() {
    let mut record = GameRecord::default();
    counts_after(&mut record, "Nf3 Nf6 Ng1 Ng8 e4 e5 Nf3 Nf6 Ng1 Ng8");
    assert_eq!(record.repetition_count(), 2);
}

#[test]
fn the_record_keeps_moves_san_and_positions() {
    let mut record = GameRecord::default();
    assert!(record.is_empty());
    assert_eq!(record.initial(), &Position::startpos());
    record.push_uci("e2e4").expect("e4");
    record.push_san("c5").expect("c5");
    let knight = record.position().parse_uci("g1f3").expect("Nf3");
    let ply = record.push(knight).expect("Nf3");
    assert_eq!(ply.san, "Nf3");
    assert_eq!(ply.mv, knight);
    assert_eq!(record.len(), 3);
    assert_eq!(record.sans().collect::<Vec<_>>(), ["e4", "c5", "Nf3"]);
    assert_eq!(
        record.moves().map(|m| m.to_string()).collect::<Vec<_>>(),
        ["e2e4", "c7c5", "g1f3"]
    );
    assert_eq!(
        record.position().fen(),
        "rnbqkbnr/pp1ppppp/8/2p5/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2"
    );
    assert_eq!(record.plies()[0].position.turn(), Color::Black);
    assert_eq!(record.initial(), &Position::startpos());
}

#[test]
fn rejected_moves_leave_the_record_unchanged() {
    let mut record = GameRecord::default();
    record.push_san("e4").expect("e4");
    let before = record.clone();

    let illegal = Move::new(Role::Pawn, Square::E2, Square::E4, MoveKind::Normal);
    assert_eq!(
        record.push(illegal).map(|ply| ply.san.clone()),
        Err(IllegalMoveError { uci: "e2e4".into() })
    );
    assert_eq!(
        record.push_uci("e7e4").map(|ply| ply.san.clone()),
        Err(UciMoveError::Illegal(IllegalMoveError {
            uci: "e7e4".into()
        }))
    );
    assert_eq!(
        record.push_uci("e7").map(|ply| ply.san.clone()),
        Err(UciMoveError::Syntax(UciError::WrongLength { len: 2 }))
    );
    assert_eq!(
        record.push_san("Nf3").map(|ply| ply.san.clone()),
        Err(SanError::Illegal { san: "Nf3".into() })
    );
    assert_eq!(
        record.push_san("N?").map(|ply| ply.san.clone()),
        Err(SanError::Syntax { san: "N?".into() })
    );
    assert_eq!(record, before);
}

#[test]
fn the_record_reports_endings_by_the_board() {
    let mut mate = GameRecord::default();
    counts_after(&mut mate, "f3 e5 g4 Qh4#");
    assert_eq!(mate.sans().last(), Some("Qh4#"));
    assert_eq!(
        mate.ending(),
        Some(Ending::Checkmate {
            winner: Color::Black
        })
    );

    let mut bare_kings = record_from("4k3/8/8/8/8/8/3q4/4K3 w - - 0 1");
    bare_kings.push_san("Kxd2").expect("Kxd2");
    assert_eq!(bare_kings.ending(), Some(Ending::InsufficientMaterial));

    let mut fifty = record_from("4k3/8/8/8/8/8/8/R3K3 w - - 99 80");
    assert_eq!(fifty.ending(), None);
    fifty.push_san("Ra2").expect("Ra2");
    assert_eq!(fifty.ending(), Some(Ending::FiftyMoves));
}
