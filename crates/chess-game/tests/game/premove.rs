//! Premoves: setting, replacing, cancelling, playing with a charge, and the
//! awkward cases: a premove made illegal by the opponent's move, a premove
//! that mates, promotes or flags, a premoved first move.

use chess_game::{EndReason, EventKind, GameError, Premove, PremoveCancelReason};
use chess_rules::{ByColor, Role};

use crate::helpers::*;

/// A 5+3 game after 1. e4 e5 2. Nf3, White's last move at `T0 + 3_000`:
/// Black to move with 300 s, White has 300 s + 3 s bonus - 1 s.
fn black_to_move() -> chess_game::Game {
    let mut g = game("5+3");
    play_line(&mut g, &["e2e4", "e7e5", "g1f3"], T0 + 1_000);
    g
}

#[test]
fn premove_only_during_the_opponents_turn_and_only_by_pattern() {
    let mut g = black_to_move();
    assert_eq!(
        g.set_premove(Black, sq("g8"), sq("f6"), None, 0, T0 + 4_000),
        Err(GameError::PremoveOnOwnTurn)
    );
    assert_eq!(
        g.set_premove(White, sq("f3"), sq("f5"), None, 0, T0 + 4_000),
        Err(GameError::InvalidPremove("f3f5".into()))
    );
    // Not White's piece on e5.
    assert_eq!(
        g.set_premove(White, sq("e5"), sq("e4"), None, 0, T0 + 4_000),
        Err(GameError::InvalidPremove("e5e4".into()))
    );
    // Occupied squares do not prevent a premove: Nf3xe5 is a knight's jump.
    let events = g
        .set_premove(White, sq("f3"), sq("e5"), None, 120, T0 + 4_000)
        .unwrap();
    assert_eq!(
        events[0].kind,
        EventKind::PremoveSet {
            color: White,
            uci: "f3e5".into()
        }
    );
    assert_eq!(
        g.premove(White),
        Some(Premove {
            from: sq("f3"),
            to: sq("e5"),
            promotion: None,
            charge_ms: 120
        })
    );
}

#[test]
fn a_legal_premove_is_played_at_once_and_charged_its_round_trip() {
    let mut g = black_to_move();
    g.set_premove(White, sq("f1"), sq("c4"), None, 150, T0 + 4_000)
        .unwrap();
    let v = g.version();
    let events = play(&mut g, Black, "b8c6", T0 + 9_000);
    assert_versions(&g, v, &events);
    assert_eq!(codes(&events), ["move", "move"]);
    match &events[1].kind {
        EventKind::Move {
            uci,
            premove,
            color,
            running,
            remaining_ms,
            ..
        } => {
            assert_eq!((uci.as_str(), *premove, *color), ("f1c4", true, White));
            assert_eq!(*running, Some(Black));
            // White: 302 s - 0.15 s + 3 s. Black: 300 s - 6 s + 3 s.
            assert_eq!(
                *remaining_ms,
                Some(ByColor {
                    white: 304_850,
                    black: 297_000
                })
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(g.premove(White), None);
    let last = g.moves().last().unwrap();
    assert!(last.premove);
    assert_eq!((last.spent_ms, last.at_ms), (150, T0 + 9_000));
    // Black's clock runs from the moment of the premove.
    assert_eq!(g.next_deadline(), Some(T0 + 9_000 + 297_000));
}

#[test]
fn premove_made_illegal_by_the_opponents_move_is_dropped() {
    let mut g = game("5+3");
    play(&mut g, White, "e2e4", T0 + 1_000);
    // White prepares e4-e5; Black blocks it with e7-e5.
    g.set_premove(White, sq("e4"), sq("e5"), None, 100, T0 + 1_500)
        .unwrap();
    let events = play(&mut g, Black, "e7e5", T0 + 2_000);
    assert_eq!(codes(&events), ["move", "premove_dropped"]);
    assert_eq!(
        events[1].kind,
        EventKind::PremoveDropped {
            color: White,
            uci: "e4e5".into()
        }
    );
    assert_eq!(g.premove(White), None);
    assert_eq!(g.turn(), White);
    assert_eq!(g.ply(), 2);
    // Nothing was charged: White's clock simply runs.
    assert_eq!(g.remaining_ms(T0 + 2_000).unwrap().white, 300_000);
}

#[test]
fn premove_can_deliver_mate() {
    let mut g = game("5+3");
    play_line(&mut g, &["f2f3", "e7e5"], T0 + 1_000);
    g.set_premove(Black, sq("d8"), sq("h4"), None, 80, T0 + 2_500)
        .unwrap();
    let events = play(&mut g, White, "g2g4", T0 + 3_000);
    assert_eq!(codes(&events), ["move", "move", "game_ended"]);
    assert_eq!(g.result().unwrap().winner, Some(Black));
    assert_eq!(g.result().unwrap().reason, EndReason::Checkmate);
}

#[test]
fn pawn_premove_to_the_last_rank_promotes_to_a_queen_by_default() {
    let fen = "k7/6P1/8/8/8/2r5/8/K7 b - - 0 1";
    let mut g = game_from("5+3", fen);
    g.set_premove(White, sq("g7"), sq("g8"), None, 50, T0 + 500)
        .unwrap();
    assert_eq!(g.premove(White).unwrap().promotion, Some(Role::Queen));
    let events = play(&mut g, Black, "c3c2", T0 + 1_000);
    match &events[1].kind {
        EventKind::Move { uci, san, .. } => {
            assert_eq!(uci, "g7g8q");
            assert_eq!(san, "g8=Q+");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn pawn_premove_carries_the_chosen_promotion_piece() {
    let fen = "k7/6P1/8/8/8/2r5/8/K7 b - - 0 1";
    let mut g = game_from("5+3", fen);
    let events = g
        .set_premove(White, sq("g7"), sq("g8"), Some(Role::Knight), 50, T0 + 500)
        .unwrap();
    assert_eq!(
        events[0].kind,
        EventKind::PremoveSet {
            color: White,
            uci: "g7g8n".into()
        }
    );
    let events = play(&mut g, Black, "a8b7", T0 + 1_000);
    assert_eq!(codes(&events), ["move", "move"]);
    assert_eq!(g.moves()[1].uci, "g7g8n");
}

#[test]
fn promotion_piece_must_fit_the_premove() {
    let fen = "k7/6P1/8/8/8/2r5/8/K7 b - - 0 1";
    let mut g = game_from("5+3", fen);
    assert_eq!(
        g.set_premove(White, sq("g7"), sq("g8"), Some(Role::King), 0, T0),
        Err(GameError::InvalidPromotion("g7g8k".into()))
    );
    assert_eq!(
        g.set_premove(White, sq("a1"), sq("b1"), Some(Role::Queen), 0, T0),
        Err(GameError::InvalidPromotion("a1b1q".into()))
    );
    assert_eq!(g.version(), 0);
}

#[test]
fn a_new_premove_replaces_the_old_and_cancelling_clears_it() {
    let mut g = black_to_move();
    g.set_premove(White, sq("f1"), sq("c4"), None, 0, T0 + 4_000)
        .unwrap();
    g.set_premove(White, sq("f1"), sq("b5"), None, 0, T0 + 4_100)
        .unwrap();
    assert_eq!(g.premove(White).unwrap().to, sq("b5"));
    let events = g.cancel_premove(White, T0 + 4_200).unwrap();
    assert_eq!(
        events[0].kind,
        EventKind::PremoveCancelled {
            color: White,
            reason: PremoveCancelReason::Cancelled
        }
    );
    assert_eq!(
        g.cancel_premove(White, T0 + 4_300),
        Err(GameError::NoPremove)
    );
    let events = play(&mut g, Black, "b8c6", T0 + 5_000);
    assert_eq!(codes(&events), ["move"]);
}

#[test]
fn disconnecting_clears_the_premove() {
    let mut g = black_to_move();
    assert_eq!(g.disconnected(White, T0 + 4_000), []);
    g.set_premove(White, sq("f1"), sq("c4"), None, 0, T0 + 4_000)
        .unwrap();
    let events = g.disconnected(White, T0 + 4_500);
    assert_eq!(
        events[0].kind,
        EventKind::PremoveCancelled {
            color: White,
            reason: PremoveCancelReason::Disconnected
        }
    );
    assert_eq!(g.premove(White), None);
}

#[test]
fn a_premove_charge_that_empties_the_clock_loses_on_time() {
    let mut g = game("1+0");
    play_line(&mut g, &["e2e4", "e7e5"], T0 + 1_000);
    // White uses all but 100 ms.
    play(&mut g, White, "g1f3", T0 + 2_000 + 59_900);
    g.set_premove(White, sq("f1"), sq("c4"), None, 100, T0 + 62_000)
        .unwrap();
    let events = play(&mut g, Black, "b8c6", T0 + 63_000);
    assert_eq!(codes(&events), ["move", "game_ended"]);
    assert_eq!(g.result().unwrap().winner, Some(Black));
    assert_eq!(g.result().unwrap().reason, EndReason::Timeout);
    assert_eq!(g.remaining_ms(T0 + 63_000).unwrap().white, 0);
    assert_eq!(g.ply(), 4);
}

#[test]
fn a_premoved_first_move_is_as_free_as_any_first_move() {
    let mut g = game("5+3");
    g.set_premove(Black, sq("e7"), sq("e5"), None, 200, T0 + 100)
        .unwrap();
    let events = play(&mut g, White, "e2e4", T0 + 1_000);
    assert_eq!(codes(&events), ["move", "move"]);
    assert_eq!(g.moves()[1].spent_ms, 0);
    assert_eq!(g.remaining_ms(T0 + 1_000).unwrap().black, 300_000);
    assert_eq!(g.running_clock(), Some(White));
}

/// The move of a game whose premover is connected elsewhere: the premove
/// stays stored, due, and is played only when asked.
fn black_moves_leaving_whites_premove_due() -> chess_game::Game {
    let mut g = black_to_move();
    g.set_premove(White, sq("f1"), sq("c4"), None, 150, T0 + 4_000)
        .unwrap();
    let uci = "b8c6".parse().unwrap();
    let events = g
        .play_leaving_premove(Black, uci, Some(3), T0 + 9_000)
        .unwrap();
    assert_eq!(codes(&events), ["move"]);
    g
}

#[test]
fn a_premove_left_due_stays_until_played_and_is_charged_its_round_trip() {
    let mut g = black_moves_leaving_whites_premove_due();
    assert_eq!(g.turn(), White);
    assert!(g.premove(White).is_some(), "due, not played");
    // A game with a due premove survives the round trip through storage.
    let restored = chess_game::Game::restore(g.saved().clone()).unwrap();
    assert_eq!(restored.premove(White), g.premove(White));

    // Played 40 ms later, sooner than its round trip: charged the round trip.
    let v = g.version();
    let events = g.play_premove(T0 + 9_040);
    assert_versions(&g, v, &events);
    assert_eq!(codes(&events), ["move"]);
    assert!(matches!(
        &events[0].kind,
        EventKind::Move { uci, premove: true, color: White, .. } if uci == "f1c4"
    ));
    assert_eq!(g.premove(White), None);
    let last = g.moves().last().unwrap();
    assert_eq!((last.spent_ms, last.at_ms), (150, T0 + 9_040));
    // Nothing is due any more.
    assert!(g.play_premove(T0 + 9_100).is_empty());
}

#[test]
fn a_premove_played_late_costs_the_time_it_waited() {
    let mut g = black_moves_leaving_whites_premove_due();
    let events = g.play_premove(T0 + 9_700);
    assert_eq!(codes(&events), ["move"]);
    // Waited 700 ms for the server, more than its 150 ms round trip.
    assert_eq!(g.moves().last().unwrap().spent_ms, 700);
    // White: 302 s - 0.7 s + 3 s.
    assert_eq!(g.remaining_ms(T0 + 9_700).unwrap().white, 304_300);
}

#[test]
fn a_clock_that_ran_out_while_a_premove_was_due_ends_the_game() {
    let mut g = black_moves_leaving_whites_premove_due();
    // White had 302 s when their turn began at T0 + 9 s.
    let events = g.play_premove(T0 + 9_000 + 302_000);
    assert_eq!(codes(&events), ["game_ended"]);
    assert_eq!(g.result().unwrap().reason, EndReason::Timeout);
    assert_eq!(g.premove(White), None);
}

#[test]
fn a_move_by_hand_replaces_a_due_premove() {
    let mut g = black_moves_leaving_whites_premove_due();
    let events = g.play_uci(White, "d2d4", Some(4), T0 + 10_000).unwrap();
    assert_eq!(codes(&events), ["premove_cancelled", "move"]);
    assert_eq!(
        events[0].kind,
        EventKind::PremoveCancelled {
            color: White,
            reason: PremoveCancelReason::Cancelled
        }
    );
    assert_eq!(g.premove(White), None);
    // It is not left for White's next turn either.
    play(&mut g, Black, "g8f6", T0 + 11_000);
    assert_eq!(g.turn(), White);
    assert_eq!(g.moves().last().unwrap().uci, "g8f6");
}

#[test]
fn a_due_premove_that_became_illegal_is_dropped_when_played() {
    let mut g = game("5+3");
    play(&mut g, White, "e2e4", T0 + 1_000);
    g.set_premove(White, sq("e4"), sq("e5"), None, 100, T0 + 1_500)
        .unwrap();
    let uci = "e7e5".parse().unwrap();
    g.play_leaving_premove(Black, uci, None, T0 + 2_000)
        .unwrap();
    let events = g.play_premove(T0 + 2_010);
    assert_eq!(codes(&events), ["premove_dropped"]);
    assert_eq!(g.premove(White), None);
    assert_eq!(g.turn(), White);
}
