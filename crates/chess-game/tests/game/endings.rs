//! Every way the board ends a game, and that nothing but rematch handling is
//! accepted afterwards.

use chess_game::{EndReason, EventKind, GameError, GameResult, GameStatus, TakeBack};

use crate::helpers::*;

const FOOLS_MATE: [&str; 4] = ["f2f3", "e7e5", "g2g4", "d8h4"];

#[test]
fn checkmate_ends_the_game_after_the_move_event() {
    let mut g = game("5+3");
    play_line(&mut g, &FOOLS_MATE[..3], T0 + 1_000);
    let v = g.version();
    let events = play(&mut g, Black, "d8h4", T0 + 9_000);
    assert_versions(&g, v, &events);
    assert_eq!(codes(&events), ["move", "game_ended"]);
    match &events[0].kind {
        EventKind::Move { san, running, .. } => {
            assert_eq!(san, "Qh4#");
            assert_eq!(*running, None);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        g.status(),
        GameStatus::Ended(GameResult {
            winner: Some(Black),
            reason: EndReason::Checkmate
        })
    );
}

#[test]
fn stalemate_is_an_automatic_draw() {
    // Black's king on h8 has no move once the queen reaches g6.
    let mut g = game_from("5+3", "7k/5K2/8/8/8/8/8/6Q1 w - - 0 1");
    play(&mut g, White, "g1g6", T0 + 1_000);
    assert_eq!(g.result().unwrap().reason, EndReason::Stalemate);
    assert_eq!(g.result().unwrap().winner, None);
    assert!(g.result().unwrap().is_draw());
}

#[test]
fn insufficient_material_is_an_automatic_draw() {
    // Black's king takes White's last piece.
    let mut g = game_from("5+3", "8/8/8/8/8/5k2/5N2/1K6 b - - 0 1");
    play(&mut g, Black, "f3f2", T0 + 1_000);
    assert_eq!(
        g.result(),
        Some(GameResult {
            winner: None,
            reason: EndReason::InsufficientMaterial
        })
    );
}

#[test]
fn threefold_repetition_is_an_automatic_draw() {
    let mut g = game("5+3");
    let shuffle = ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"];
    let last = play_line(&mut g, &shuffle, T0 + 1_000);
    assert!(!g.is_over(), "the start position has occurred only twice");
    let events = play(&mut g, Black, "f6g8", last + 1_000);
    assert_eq!(codes(&events), ["move", "game_ended"]);
    assert_eq!(g.result().unwrap().reason, EndReason::ThreefoldRepetition);
}

#[test]
fn fifty_moves_without_pawn_move_or_capture_is_an_automatic_draw() {
    let mut g = game_from("5+3", "4k3/8/8/8/8/8/3R4/4K3 w - - 99 80");
    play(&mut g, White, "d2a2", T0 + 1_000);
    assert_eq!(g.result().unwrap().reason, EndReason::FiftyMoves);
}

#[test]
fn mate_on_the_hundredth_half_move_is_mate() {
    let mut g = game_from("5+3", "7k/8/6K1/8/8/8/8/R7 w - - 99 80");
    play(&mut g, White, "a1a8", T0 + 1_000);
    assert_eq!(g.result().unwrap().reason, EndReason::Checkmate);
}

#[test]
fn an_ended_game_refuses_every_command_but_rematch_handling() {
    let mut g = game("5+3");
    play_line(&mut g, &FOOLS_MATE, T0 + 1_000);
    let v = g.version();
    let later = T0 + 60_000;
    assert_eq!(
        g.play_uci(White, "e1f2", None, later),
        Err(GameError::GameOver)
    );
    assert_eq!(
        g.play_uci(Black, "h4e1", None, later),
        Err(GameError::GameOver)
    );
    assert_eq!(g.resign(White, later), Err(GameError::GameOver));
    assert_eq!(g.abort(later), Err(GameError::GameOver));
    assert_eq!(g.offer_draw(White, later), Err(GameError::GameOver));
    assert_eq!(g.accept_draw(White, later), Err(GameError::GameOver));
    assert_eq!(g.decline_draw(White, later), Err(GameError::GameOver));
    assert_eq!(g.withdraw_draw(White, later), Err(GameError::GameOver));
    assert_eq!(
        g.set_premove(White, sq("e1"), sq("f2"), None, 0, later),
        Err(GameError::GameOver)
    );
    assert_eq!(g.cancel_premove(White, later), Err(GameError::GameOver));
    assert_eq!(
        g.take_back(TakeBack::LastMove, later),
        Err(GameError::TakebackNotAllowed)
    );
    assert_eq!(g.disconnected(White, later), []);
    assert_eq!(g.check_time(later), []);
    assert_eq!(g.version(), v, "refused commands change nothing");
    assert!(g.offer_rematch(White, later).is_ok());
}

#[test]
fn illegal_and_malformed_moves_are_refused_exactly() {
    let mut g = game("5+3");
    assert_eq!(
        g.play_uci(White, "e2e5", None, T0),
        Err(GameError::IllegalMove("e2e5".into()))
    );
    assert_eq!(
        g.play_uci(White, "e2-e4", None, T0),
        Err(GameError::InvalidUci("e2-e4".into()))
    );
    assert_eq!(
        g.play_uci(Black, "e7e5", None, T0),
        Err(GameError::NotYourTurn)
    );
    assert_eq!(
        g.play_uci(White, "e2e4", Some(1), T0),
        Err(GameError::WrongPly {
            expected: 0,
            got: 1
        })
    );
    assert_eq!(g.version(), 0);
    assert_eq!(g.ply(), 0);
}

#[test]
fn a_move_for_a_played_ply_is_the_wrong_ply_even_on_the_opponents_turn() {
    let mut g = game("5+3");
    play(&mut g, White, "e2e4", T0);
    let v = g.version();
    // White sends another first move while Black is to move: the ply is
    // stale, which is what White must hear, not whose turn it is.
    assert_eq!(
        g.play_uci(White, "d2d4", Some(0), T0 + 1_000),
        Err(GameError::WrongPly {
            expected: 1,
            got: 0
        })
    );
    // A future ply on the opponent's turn is the wrong ply too.
    assert_eq!(
        g.play_uci(White, "g1f3", Some(2), T0 + 1_000),
        Err(GameError::WrongPly {
            expected: 1,
            got: 2
        })
    );
    // The ply to be played, by the side not to move: not your turn.
    assert_eq!(
        g.play_uci(White, "g1f3", Some(1), T0 + 1_000),
        Err(GameError::NotYourTurn)
    );
    assert_eq!(g.version(), v, "nothing changed");
    assert_eq!(g.ply(), 1);
}
