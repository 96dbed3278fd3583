//! Berserk: in an arena game that allows it, a player halves their clock
//! and gives up the increment before both sides have moved.

use chess_game::{EventKind, Game, GameError, GameSettings, GameSpec, RealTime};
use chess_rules::ByColor;

use crate::helpers::*;

fn arena_game(time_control: &str) -> Game {
    let spec = GameSpec::standard(tc(time_control)).with_berserk(true);
    Game::new(spec, GameSettings::default(), T0)
}

fn clocks(white: u64, black: u64) -> Option<ByColor<u64>> {
    Some(ByColor { white, black })
}

#[test]
fn berserk_halves_the_initial_time_and_drops_the_increment() {
    let mut g = arena_game("3+2");
    let events = g.berserk(Black, T0 + 500).expect("berserk");
    assert_eq!(
        events.iter().map(|e| &e.kind).collect::<Vec<_>>(),
        [&EventKind::Berserk {
            color: Black,
            remaining_ms: clocks(180_000, 90_000)
        }]
    );
    assert!(g.berserked(Black) && !g.berserked(White));
    play(&mut g, White, "e2e4", T0 + 1_000);
    play(&mut g, Black, "e7e5", T0 + 2_000);
    play(&mut g, White, "g1f3", T0 + 5_000);
    play(&mut g, Black, "b8c6", T0 + 9_000);
    // White's 3 s earned the increment; Black's 4 s did not.
    assert_eq!(g.remaining_ms(T0 + 9_000), clocks(179_000, 86_000));
}

#[test]
fn the_kept_time_follows_the_published_rule() {
    let kept = |initial_s: u64, increment_s: u64| {
        RealTime::new(initial_s * 1000, increment_s * 1000)
            .expect("a clock")
            .berserk_initial_ms()
    };
    assert_eq!(kept(180, 2), Some(90_000));
    assert_eq!(kept(60, 0), Some(30_000));
    assert_eq!(kept(45, 0), Some(22_500));
    // 1+2: 60 s is under 40 increments (80 s): only the increment goes.
    assert_eq!(kept(60, 2), Some(60_000));
    assert_eq!(kept(0, 2), None, "no initial time, nothing to halve");
}

#[test]
fn berserk_is_possible_only_before_both_sides_have_moved() {
    let mut g = arena_game("1+0");
    play(&mut g, White, "e2e4", T0 + 1_000);
    g.berserk(White, T0 + 1_500).expect("after one ply, still");
    play(&mut g, Black, "e7e5", T0 + 2_000);
    let before = g.saved().clone();
    assert_eq!(
        g.berserk(Black, T0 + 2_500),
        Err(GameError::BerserkNotAllowed)
    );
    assert_eq!(g.saved(), &before, "a refused berserk changes nothing");
}

#[test]
fn berserk_twice_or_where_not_allowed_is_refused() {
    let mut g = arena_game("1+0");
    g.berserk(White, T0).expect("berserk");
    assert_eq!(g.berserk(White, T0 + 1), Err(GameError::AlreadyBerserk));
    assert_eq!(
        game("1+0").berserk(White, T0),
        Err(GameError::BerserkNotAllowed),
        "an ordinary game"
    );
    assert_eq!(
        arena_game("0+2").berserk(White, T0),
        Err(GameError::BerserkNotAllowed),
        "no initial time"
    );
    let mut correspondence = Game::new(
        GameSpec::standard(chess_game::TimeControl::Correspondence).with_berserk(true),
        GameSettings::default(),
        T0,
    );
    assert_eq!(
        correspondence.berserk(White, T0),
        Err(GameError::BerserkNotAllowed)
    );
    let mut over = arena_game("1+0");
    over.abort(T0 + 1).expect("aborted");
    assert_eq!(over.berserk(White, T0 + 2), Err(GameError::GameOver));
}

#[test]
fn a_berserked_game_restores_berserked() {
    let mut g = arena_game("3+2");
    g.berserk(White, T0).expect("berserk");
    play_line(&mut g, &["e2e4", "e7e5", "g1f3"], T0 + 1_000);
    let restored = Game::restore(g.saved().clone()).expect("restore");
    assert!(restored.berserked(White));
    assert!(restored.spec().berserkable());
    assert_eq!(restored.saved(), g.saved());
}

#[cfg(feature = "serde")]
#[test]
fn games_stored_before_berserk_read_as_unberserked() {
    let g = game("3+2");
    let mut json = serde_json::to_value(g.saved()).expect("json");
    json["state"]
        .as_object_mut()
        .expect("state")
        .remove("berserk");
    let back: chess_game::SavedGame = serde_json::from_value(json).expect("old form reads");
    assert_eq!(&back, g.saved());
    assert!(!back.spec.berserkable());
}
