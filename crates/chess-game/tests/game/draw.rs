//! Draw offers, including the awkward sequences.

use chess_game::{EndReason, EventKind, GameError, GameResult};

use crate::helpers::*;

/// A 5+3 game after 1. e4 e5, Black's last move at `T0 + 2_000`.
fn started() -> chess_game::Game {
    let mut g = game("5+3");
    play_line(&mut g, &["e2e4", "e7e5"], T0 + 1_000);
    g
}

#[test]
fn no_offer_before_both_sides_have_moved() {
    let mut g = game("5+3");
    assert_eq!(g.offer_draw(White, T0), Err(GameError::DrawOfferTooEarly));
    play(&mut g, White, "e2e4", T0 + 1_000);
    assert_eq!(
        g.offer_draw(Black, T0 + 2_000),
        Err(GameError::DrawOfferTooEarly)
    );
}

#[test]
fn offer_and_accept_is_a_draw_by_agreement() {
    let mut g = started();
    let events = g.offer_draw(White, T0 + 3_000).unwrap();
    assert_eq!(events[0].kind, EventKind::DrawOffered { color: White });
    assert_eq!(g.draw_offer(), Some(White));
    let v = g.version();
    let events = g.accept_draw(Black, T0 + 4_000).unwrap();
    assert_versions(&g, v, &events);
    assert_eq!(codes(&events), ["draw_accepted", "game_ended"]);
    assert_eq!(
        g.result(),
        Some(GameResult {
            winner: None,
            reason: EndReason::Agreement
        })
    );
    assert_eq!(g.draw_offer(), None);
}

#[test]
fn offer_on_either_turn_and_the_offerers_own_move_keeps_it() {
    // White to move: Black may offer, and so may White.
    let mut g = started();
    g.offer_draw(Black, T0 + 3_000).unwrap();
    assert_eq!(g.draw_offer(), Some(Black));
    let mut g = started();
    g.offer_draw(White, T0 + 3_000).unwrap();
    let events = play(&mut g, White, "g1f3", T0 + 4_000);
    assert_eq!(codes(&events), ["move"]);
    assert_eq!(g.draw_offer(), Some(White));
    g.accept_draw(Black, T0 + 5_000).unwrap();
    assert_eq!(g.result().unwrap().reason, EndReason::Agreement);
}

#[test]
fn draw_offer_followed_by_the_opponents_move_is_declined() {
    let mut g = started();
    g.offer_draw(Black, T0 + 3_000).unwrap();
    let events = play(&mut g, White, "g1f3", T0 + 4_000);
    assert_eq!(codes(&events), ["move", "draw_declined"]);
    assert_eq!(
        events[1].kind,
        EventKind::DrawDeclined {
            color: White,
            by_move: true
        }
    );
    assert_eq!(
        g.accept_draw(White, T0 + 5_000),
        Err(GameError::NoDrawOffer)
    );
}

#[test]
fn accept_after_the_offer_was_declined_is_refused() {
    let mut g = started();
    g.offer_draw(White, T0 + 3_000).unwrap();
    let events = g.decline_draw(Black, T0 + 4_000).unwrap();
    assert_eq!(
        events[0].kind,
        EventKind::DrawDeclined {
            color: Black,
            by_move: false
        }
    );
    assert_eq!(
        g.accept_draw(Black, T0 + 5_000),
        Err(GameError::NoDrawOffer)
    );
    assert!(!g.is_over());
}

#[test]
fn a_declined_offerer_waits_three_own_moves() {
    let mut g = started();
    g.offer_draw(White, T0 + 3_000).unwrap();
    g.decline_draw(Black, T0 + 4_000).unwrap();
    assert_eq!(
        g.offer_draw(White, T0 + 5_000),
        Err(GameError::DrawOfferCooldown { moves_left: 3 })
    );
    let at = play_line(&mut g, &["g1f3", "b8c6", "f1c4", "g8f6"], T0 + 6_000);
    assert_eq!(
        g.offer_draw(White, at + 1),
        Err(GameError::DrawOfferCooldown { moves_left: 1 })
    );
    // The one who declined was never blocked.
    g.offer_draw(Black, at + 2).unwrap();
    g.decline_draw(White, at + 3).unwrap();
    let at = play_line(&mut g, &["d2d3"], at + 1_000);
    g.offer_draw(White, at + 1).unwrap();
}

#[test]
fn withdrawing_also_starts_the_cooldown() {
    let mut g = started();
    assert_eq!(
        g.withdraw_draw(White, T0 + 3_000),
        Err(GameError::NoOwnDrawOffer)
    );
    g.offer_draw(White, T0 + 3_000).unwrap();
    let events = g.withdraw_draw(White, T0 + 4_000).unwrap();
    assert_eq!(events[0].kind, EventKind::DrawWithdrawn { color: White });
    assert_eq!(
        g.offer_draw(White, T0 + 5_000),
        Err(GameError::DrawOfferCooldown { moves_left: 3 })
    );
}

#[test]
fn one_open_offer_at_a_time_and_offering_back_accepts() {
    let mut g = started();
    g.offer_draw(White, T0 + 3_000).unwrap();
    assert_eq!(
        g.offer_draw(White, T0 + 3_500),
        Err(GameError::DrawAlreadyOffered)
    );
    assert_eq!(
        g.accept_draw(White, T0 + 3_500),
        Err(GameError::NoDrawOffer)
    );
    assert_eq!(
        g.decline_draw(White, T0 + 3_500),
        Err(GameError::NoDrawOffer)
    );
    let events = g.offer_draw(Black, T0 + 4_000).unwrap();
    assert_eq!(codes(&events), ["draw_accepted", "game_ended"]);
    assert_eq!(g.result().unwrap().reason, EndReason::Agreement);
}
