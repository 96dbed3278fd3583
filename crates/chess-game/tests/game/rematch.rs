//! Rematch offers after the end.

use chess_game::{EventKind, GameError, RematchState};

use crate::helpers::*;

fn ended() -> chess_game::Game {
    let mut g = game("3+2");
    play_line(&mut g, &["e2e4", "e7e5"], T0 + 1_000);
    g.resign(Black, T0 + 3_000).unwrap();
    g
}

#[test]
fn no_rematch_before_the_end() {
    let mut g = game("3+2");
    assert_eq!(g.offer_rematch(White, T0), Err(GameError::GameNotOver));
    assert_eq!(g.accept_rematch(White, T0), Err(GameError::GameNotOver));
    assert_eq!(g.decline_rematch(White, T0), Err(GameError::GameNotOver));
    assert_eq!(g.withdraw_rematch(White, T0), Err(GameError::GameNotOver));
    assert_eq!(g.rematch_spec(), None);
}

#[test]
fn accepted_rematch_keeps_the_spec_for_swapped_seats() {
    let mut g = ended();
    let events = g.offer_rematch(White, T0 + 4_000).unwrap();
    assert_eq!(events[0].kind, EventKind::RematchOffered { color: White });
    assert_eq!(g.rematch(), RematchState::Offered(White));
    assert_eq!(g.rematch_spec(), None);
    assert_eq!(
        g.accept_rematch(White, T0 + 4_500),
        Err(GameError::NoRematchOffer)
    );
    let v = g.version();
    let events = g.accept_rematch(Black, T0 + 5_000).unwrap();
    assert_versions(&g, v, &events);
    assert_eq!(events[0].kind, EventKind::RematchAccepted { color: Black });
    assert_eq!(g.rematch(), RematchState::Accepted);
    let spec = g.rematch_spec().unwrap();
    assert_eq!(spec.time_control().to_string(), "3+2");
    assert_eq!(&spec, g.spec());
    assert_eq!(
        g.offer_rematch(White, T0 + 6_000),
        Err(GameError::RematchAlreadyAccepted)
    );
    assert_eq!(
        g.decline_rematch(White, T0 + 6_000),
        Err(GameError::RematchAlreadyAccepted)
    );
}

#[test]
fn declined_or_withdrawn_rematch_can_be_offered_again() {
    let mut g = ended();
    g.offer_rematch(Black, T0 + 4_000).unwrap();
    assert_eq!(
        g.offer_rematch(Black, T0 + 4_100),
        Err(GameError::RematchAlreadyOffered)
    );
    assert_eq!(
        g.decline_rematch(Black, T0 + 4_100),
        Err(GameError::NoRematchOffer)
    );
    let events = g.decline_rematch(White, T0 + 4_200).unwrap();
    assert_eq!(events[0].kind, EventKind::RematchDeclined { color: White });
    assert_eq!(g.rematch(), RematchState::None);
    assert_eq!(
        g.accept_rematch(White, T0 + 4_300),
        Err(GameError::NoRematchOffer)
    );

    g.offer_rematch(Black, T0 + 5_000).unwrap();
    assert_eq!(
        g.withdraw_rematch(White, T0 + 5_100),
        Err(GameError::NoOwnRematchOffer)
    );
    let events = g.withdraw_rematch(Black, T0 + 5_200).unwrap();
    assert_eq!(events[0].kind, EventKind::RematchWithdrawn { color: Black });
    assert_eq!(g.rematch(), RematchState::None);
}

#[test]
fn offering_back_accepts() {
    let mut g = ended();
    g.offer_rematch(Black, T0 + 4_000).unwrap();
    let events = g.offer_rematch(White, T0 + 4_100).unwrap();
    assert_eq!(events[0].kind, EventKind::RematchAccepted { color: White });
    assert!(g.rematch_spec().is_some());
}

#[test]
fn aborted_games_can_be_rematched() {
    let mut g = game("3+2");
    g.abort(T0 + 1_000).unwrap();
    g.offer_rematch(White, T0 + 2_000).unwrap();
    g.accept_rematch(Black, T0 + 3_000).unwrap();
    assert!(g.rematch_spec().is_some());
}
