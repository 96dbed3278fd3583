//! SAN writing (disambiguation, captures, promotions, castling, check marks)
//! and reading (strict and lenient forms), with the error for each failure.

use chess_rules::{Position, SanError};

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
/// Knights on b1 and f1 both reach d2.
const TWO_KNIGHTS: &str = "4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1";
/// Rooks on a1 and a5 both reach a3.
const TWO_ROOKS: &str = "4k3/8/8/R7/8/8/8/R3K3 w - - 0 1";
/// Queens on a1, c1 and a3 all reach b2.
const THREE_QUEENS: &str = "4k3/8/8/8/8/Q7/8/Q1Q1K3 w - - 0 1";
/// The knight on e2 is pinned, so only the one on h5 can go to f4.
const PINNED_KNIGHT: &str = "k3r3/8/8/7N/8/8/4N3/4K3 w - - 0 1";
/// White may capture en passant on f6.
const EN_PASSANT: &str = "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3";
/// A pawn on e7 promotes; a queen on e8 would check the king on a4.
const PROMOTION: &str = "8/4P3/8/8/k7/8/8/4K3 w - - 0 1";
const CASTLING: &str = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
/// After 1. f3 e5 2. g4: Black mates with Qh4.
const FOOLS_MATE: &str = "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2";
/// A pawn on d4 can take on e5 but nothing can push to e5.
const PAWN_TAKES: &str = "4k3/8/8/4p3/3P4/8/8/4K3 w - - 0 1";
/// After 1. e4 d5.
const SCANDINAVIAN: &str = "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";

fn pos(fen: &str) -> Position {
    Position::from_fen(fen).unwrap_or_else(|err| panic!("{fen}: {err}"))
}

#[test]
fn writes_san() {
    let cases = [
        (START, "e2e4", "e4"),
        (START, "g1f3", "Nf3"),
        (TWO_KNIGHTS, "b1d2", "Nbd2"),
        (TWO_KNIGHTS, "f1d2", "Nfd2"),
        (TWO_KNIGHTS, "b1c3", "Nc3"),
        (TWO_ROOKS, "a1a3", "R1a3"),
        (TWO_ROOKS, "a5a3", "R5a3"),
        (TWO_ROOKS, "a1b1", "Rb1"),
        (THREE_QUEENS, "a1b2", "Qa1b2"),
        (THREE_QUEENS, "c1b2", "Qcb2"),
        (THREE_QUEENS, "a3b2", "Q3b2"),
        (PINNED_KNIGHT, "h5f4", "Nf4"),
        (SCANDINAVIAN, "e4d5", "exd5"),
        (EN_PASSANT, "e5f6", "exf6"),
        (PAWN_TAKES, "d4e5", "dxe5"),
        (PAWN_TAKES, "d4d5", "d5"),
        (PROMOTION, "e7e8q", "e8=Q+"),
        (PROMOTION, "e7e8r", "e8=R"),
        (PROMOTION, "e7e8n", "e8=N"),
        (CASTLING, "e1g1", "O-O"),
        (CASTLING, "e1c1", "O-O-O"),
        (CASTLING, "a1a8", "Rxa8+"),
        ("3k4/8/8/8/8/8/8/R3K3 w Q - 0 1", "e1c1", "O-O-O+"),
        (FOOLS_MATE, "d8h4", "Qh4#"),
        ("1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7b8q", "axb8=Q+"),
    ];
    for (fen, uci, san) in cases {
        let position = pos(fen);
        let m = position
            .parse_uci(uci)
            .unwrap_or_else(|err| panic!("{fen} {uci}: {err}"));
        assert_eq!(position.san(&m), san, "{fen} {uci}");
    }
}

#[test]
fn reads_strict_and_lenient_san() {
    let cases = [
        (START, "e4", "e2e4"),
        (START, "Nf3", "g1f3"),
        (START, "Nf3+", "g1f3"),
        (START, "Nf3#", "g1f3"),
        (START, "Nf3!?", "g1f3"),
        (START, "e4!!", "e2e4"),
        (START, "Ngf3", "g1f3"),
        (START, "N1f3", "g1f3"),
        (START, "Ng1f3", "g1f3"),
        (START, "Nxf3", "g1f3"),
        (TWO_KNIGHTS, "Nbd2", "b1d2"),
        (TWO_KNIGHTS, "Nfd2", "f1d2"),
        (TWO_KNIGHTS, "Nb1d2", "b1d2"),
        (TWO_ROOKS, "R1a3", "a1a3"),
        (TWO_ROOKS, "R5a3", "a5a3"),
        (TWO_ROOKS, "Ra5a3", "a5a3"),
        (THREE_QUEENS, "Qa1b2", "a1b2"),
        (THREE_QUEENS, "Qcb2", "c1b2"),
        (THREE_QUEENS, "Q3b2", "a3b2"),
        (THREE_QUEENS, "Qa3b2", "a3b2"),
        (PINNED_KNIGHT, "Nf4", "h5f4"),
        (SCANDINAVIAN, "exd5", "e4d5"),
        (SCANDINAVIAN, "ed5", "e4d5"),
        (EN_PASSANT, "exf6", "e5f6"),
        (EN_PASSANT, "ef6", "e5f6"),
        (PAWN_TAKES, "dxe5", "d4e5"),
        (PAWN_TAKES, "de5", "d4e5"),
        (PROMOTION, "e8=Q", "e7e8q"),
        (PROMOTION, "e8=Q+", "e7e8q"),
        (PROMOTION, "e8Q", "e7e8q"),
        (PROMOTION, "e8q", "e7e8q"),
        (PROMOTION, "e8=N", "e7e8n"),
        (PROMOTION, "e8n", "e7e8n"),
        (CASTLING, "O-O", "e1g1"),
        (CASTLING, "0-0", "e1g1"),
        (CASTLING, "O-O-O", "e1c1"),
        (CASTLING, "0-0-0", "e1c1"),
        (CASTLING, "O-O+", "e1g1"),
        (FOOLS_MATE, "Qh4#", "d8h4"),
        (FOOLS_MATE, "Qh4", "d8h4"),
        (FOOLS_MATE, "Qh4+", "d8h4"),
    ];
    for (fen, san, uci) in cases {
        let m = pos(fen)
            .parse_san(san)
            .unwrap_or_else(|err| panic!("{fen} {san}: {err}"));
        assert_eq!(m.to_uci().to_string(), uci, "{fen} {san}");
    }
}

#[test]
fn san_that_names_no_single_legal_move_fails_exactly() {
    let illegal = |san: &str| SanError::Illegal { san: san.into() };
    let ambiguous = |san: &str| SanError::Ambiguous { san: san.into() };
    let cases = [
        (START, "e5", illegal("e5")),
        (START, "Ke2", illegal("Ke2")),
        (START, "O-O", illegal("O-O")),
        (START, "Nd4", illegal("Nd4")),
        (START, "Nhf3", illegal("Nhf3")),
        (TWO_KNIGHTS, "Nd2", ambiguous("Nd2")),
        (TWO_KNIGHTS, "N1d2", ambiguous("N1d2")),
        (TWO_ROOKS, "Ra3", ambiguous("Ra3")),
        (TWO_ROOKS, "Raa3", ambiguous("Raa3")),
        (THREE_QUEENS, "Qb2", ambiguous("Qb2")),
        (THREE_QUEENS, "Qab2", ambiguous("Qab2")),
        (THREE_QUEENS, "Q1b2", ambiguous("Q1b2")),
        // The pinned knight cannot go, so naming it is illegal.
        (PINNED_KNIGHT, "Nef4", illegal("Nef4")),
        // A pawn without its file is a push, never a capture.
        (PAWN_TAKES, "e5", illegal("e5")),
        // A promotion must name its piece, and a king is no promotion.
        (PROMOTION, "e8", illegal("e8")),
        // Castling is written O-O, not as the king's step.
        (CASTLING, "Kg1", illegal("Kg1")),
    ];
    for (fen, san, expected) in cases {
        assert_eq!(pos(fen).parse_san(san), Err(expected), "{fen} {san}");
    }
    assert_eq!(
        pos(START).parse_san("e8=K"),
        Err(SanError::Syntax { san: "e8=K".into() })
    );
}

#[test]
fn san_errors_read_well() {
    let start = pos(START);
    let message = |san: &str| start.parse_san(san).expect_err(san).to_string();
    assert_eq!(message("Zz9"), "invalid san: \"Zz9\"");
    assert_eq!(message("e5"), "illegal san: no legal move matches \"e5\"");
    assert_eq!(
        pos(TWO_KNIGHTS)
            .parse_san("Nd2")
            .expect_err("ambiguous")
            .to_string(),
        "ambiguous san: \"Nd2\" matches more than one legal move"
    );
}

#[test]
fn every_legal_move_of_tricky_positions_reads_back_from_its_san() {
    for fen in [
        START,
        TWO_KNIGHTS,
        TWO_ROOKS,
        THREE_QUEENS,
        PINNED_KNIGHT,
        EN_PASSANT,
        PROMOTION,
        CASTLING,
        FOOLS_MATE,
        // Kiwipete.
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    ] {
        let position = pos(fen);
        for m in position.legal_moves().iter() {
            let san = position.san(m);
            assert_eq!(position.parse_san(&san), Ok(*m), "{fen} {san}");
        }
    }
}
