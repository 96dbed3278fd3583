//! Games that must be played (a tournament's): no abort, resigning at any
//! time, and a first move not made in time loses instead of aborting.

use chess_game::{EndReason, Game, GameError, GameResult, GameSettings, GameSpec};

use crate::helpers::*;

fn tournament_game(time_control: &str) -> Game {
    let spec = GameSpec::standard(tc(time_control)).with_mandatory(true);
    Game::new(spec, GameSettings::default(), T0)
}

#[test]
fn white_who_never_starts_loses() {
    let mut g = tournament_game("5+3"); // blitz: 25 s
    assert_eq!(g.check_time(T0 + 24_999), []);
    let events = g.check_time(T0 + 25_000);
    assert_eq!(codes(&events), ["game_ended"]);
    assert_eq!(
        g.result(),
        Some(GameResult {
            winner: Some(Black),
            reason: EndReason::NoStart
        })
    );
}

#[test]
fn black_who_never_answers_loses_even_with_a_late_move() {
    let mut g = tournament_game("1+0"); // bullet: 20 s
    play(&mut g, White, "e2e4", T0 + 5_000);
    let events = g
        .play_uci(Black, "e7e5", Some(1), T0 + 25_000)
        .expect("too late");
    assert_eq!(codes(&events), ["game_ended"]);
    assert_eq!(
        g.result(),
        Some(GameResult {
            winner: Some(White),
            reason: EndReason::NoStart
        })
    );
    assert_eq!(g.ply(), 1, "the late move is not played");
}

#[test]
fn a_tournament_game_cannot_be_aborted_but_can_be_resigned_at_once() {
    let mut g = tournament_game("3+0");
    assert!(!g.is_abortable());
    let before = g.saved().clone();
    assert_eq!(g.abort(T0 + 1_000), Err(GameError::MustBePlayed));
    assert_eq!(g.saved(), &before, "a refused abort changes nothing");
    g.resign(White, T0 + 2_000).expect("resigns before moving");
    assert_eq!(
        g.result(),
        Some(GameResult {
            winner: Some(Black),
            reason: EndReason::Resignation
        })
    );
}

#[test]
fn an_ordinary_game_still_aborts() {
    let mut g = game("3+0");
    assert!(g.is_abortable());
    assert_eq!(
        g.resign(White, T0 + 1_000),
        Err(GameError::ResignNotAllowedYet)
    );
    g.abort(T0 + 2_000).expect("aborted");
    assert_eq!(
        g.result().map(|result| result.reason),
        Some(EndReason::Aborted)
    );
}

#[test]
fn mandatory_survives_a_restore() {
    let mut g = tournament_game("3+0");
    play(&mut g, White, "e2e4", T0 + 1_000);
    let mut restored = Game::restore(g.saved().clone()).expect("restore");
    assert!(restored.spec().mandatory());
    assert_eq!(restored.abort(T0 + 2_000), Err(GameError::MustBePlayed));
}

#[test]
fn a_tournament_game_has_no_rematch() {
    let mut g = tournament_game("3+0");
    g.resign(White, T0 + 1_000).expect("resigned");
    let before = g.saved().clone();
    assert_eq!(
        g.offer_rematch(Black, T0 + 2_000),
        Err(GameError::NoRematchInTournament)
    );
    assert_eq!(g.saved(), &before, "a refused offer changes nothing");
    let mut ordinary = game("3+0");
    play(&mut ordinary, White, "e2e4", T0 + 500);
    play(&mut ordinary, Black, "e7e5", T0 + 900);
    ordinary.resign(White, T0 + 1_000).expect("resigned");
    ordinary
        .offer_rematch(Black, T0 + 2_000)
        .expect("an ordinary game has one");
}
