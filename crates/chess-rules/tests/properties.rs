//! Properties of the move generator over random reachable positions.

use chess_rules::{Position, Role};
use proptest::prelude::*;

const STARTS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N w - - 0 1",
];

/// A position reached by playing the moves picked by `choices` from one of
/// the start positions, stopping early when the game ends.
fn reachable_position() -> impl Strategy<Value = Position> {
    (
        prop::sample::select(STARTS),
        prop::collection::vec(any::<u16>(), 0..120),
    )
        .prop_map(|(start, choices)| {
            let mut pos = Position::from_fen(start).expect("start positions are valid");
            for choice in choices {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let m = moves[usize::from(choice) % moves.len()];
                pos.play_unchecked(&m);
            }
            pos
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn every_generated_move_leaves_the_own_king_safe(pos in reachable_position()) {
        let mover = pos.turn();
        for m in &pos.legal_moves() {
            let child = pos.play(m).expect("generated moves are legal");
            let king = child.board().king_of(mover).expect("the king is still there");
            prop_assert!(
                child.attackers_to(king, child.turn()).is_empty(),
                "{} leaves the king in check in {}", m, pos.fen()
            );
        }
    }

    #[test]
    fn fen_round_trips(pos in reachable_position()) {
        let fen = pos.fen();
        let read = Position::from_fen(&fen);
        prop_assert_eq!(read.as_ref().map(Position::fen), Ok(fen.clone()));
        // Equal in every field, including the incrementally kept Zobrist key.
        prop_assert_eq!(read.as_ref(), Ok(&pos), "{}", fen);
        prop_assert_eq!(read.map(|p| p.zobrist_key()), Ok(pos.zobrist_key()));
    }

    #[test]
    fn views_of_the_legal_moves_agree(pos in reachable_position()) {
        let moves = pos.legal_moves();
        prop_assert_eq!(pos.count_legal_moves(), moves.len());
        prop_assert_eq!(pos.has_legal_moves(), !moves.is_empty());
        for m in &moves {
            prop_assert!(pos.is_legal(m), "{} in {}", m, pos.fen());
        }
        // Destinations list each (from, to) pair once; promotions count once.
        let pairs: usize = pos
            .legal_destinations()
            .iter()
            .map(|(_, to)| to.count() as usize)
            .sum();
        let non_underpromotions = moves
            .iter()
            .filter(|m| m.promotion().is_none_or(|role| role == Role::Queen))
            .count();
        prop_assert_eq!(pairs, non_underpromotions);
        prop_assert_eq!(
            pos.legal_ep_square().is_some(),
            moves.iter().any(|m| m.is_en_passant())
        );
    }
}
