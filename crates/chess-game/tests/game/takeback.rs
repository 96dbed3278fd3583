//! Take-back in one-person and computer games.

use chess_game::{EndReason, EventKind, Game, GameError, GameSettings, GameSpec, TakeBack};
use chess_rules::{ByColor, Position};

use crate::helpers::*;

fn local(time_control: &str) -> Game {
    let spec = GameSpec::standard(tc(time_control)).with_takeback(true);
    Game::new(spec, GameSettings::default(), T0)
}

#[test]
fn take_back_needs_a_game_that_allows_it() {
    let mut g = game("5+3");
    play(&mut g, White, "e2e4", T0 + 1_000);
    assert_eq!(
        g.take_back(TakeBack::LastMove, T0 + 2_000),
        Err(GameError::TakebackNotAllowed)
    );
    assert_eq!(g.ply(), 1);
}

#[test]
fn last_move_undoes_one_ply() {
    let mut g = local("correspondence");
    play_line(&mut g, &["e2e4", "e7e5", "g1f3"], T0 + 1_000);
    let before = g.position_at(2).unwrap().clone();
    let v = g.version();
    let events = g.take_back(TakeBack::LastMove, T0 + 10_000).unwrap();
    assert_versions(&g, v, &events);
    assert_eq!(
        events[0].kind,
        EventKind::TakeBack {
            plies_undone: 1,
            ply: 2,
            fen: before.fen(),
            remaining_ms: None,
            running: None,
        }
    );
    assert_eq!(g.position(), &before);
    assert_eq!(g.moves().len(), 2);
    play(&mut g, White, "d2d4", T0 + 11_000);
}

#[test]
fn back_to_the_persons_turn_undoes_the_computers_reply_too() {
    let mut g = local("correspondence");
    play_line(&mut g, &["e2e4", "e7e5", "g1f3", "b8c6"], T0 + 1_000);
    // White (the person) to move: undo Black's reply and White's move.
    let events = g.take_back(TakeBack::ToTurnOf(White), T0 + 10_000).unwrap();
    assert!(matches!(
        events[0].kind,
        EventKind::TakeBack {
            plies_undone: 2,
            ply: 2,
            ..
        }
    ));
    assert_eq!(g.turn(), White);
    // The computer has not replied yet: one move back is the person's turn.
    play(&mut g, White, "f1c4", T0 + 11_000);
    let events = g.take_back(TakeBack::ToTurnOf(White), T0 + 12_000).unwrap();
    assert!(matches!(
        events[0].kind,
        EventKind::TakeBack {
            plies_undone: 1,
            ply: 2,
            ..
        }
    ));
    assert_eq!(g.turn(), White);
}

#[test]
fn nothing_to_take_back() {
    let mut g = local("correspondence");
    assert_eq!(
        g.take_back(TakeBack::LastMove, T0),
        Err(GameError::NothingToTakeBack)
    );
    play(&mut g, White, "e2e4", T0 + 1_000);
    // Black to move wants its turn back: two plies, but only one exists.
    assert_eq!(
        g.take_back(TakeBack::ToTurnOf(Black), T0 + 2_000),
        Err(GameError::NothingToTakeBack)
    );
    g.take_back(TakeBack::ToTurnOf(White), T0 + 2_000).unwrap();
    assert_eq!(g.position(), &Position::startpos());
}

#[test]
fn take_back_reopens_a_checkmate_but_not_a_resignation() {
    let mut g = local("correspondence");
    play_line(&mut g, &["f2f3", "e7e5", "g2g4", "d8h4"], T0 + 1_000);
    assert_eq!(g.result().unwrap().reason, EndReason::Checkmate);
    g.take_back(TakeBack::ToTurnOf(White), T0 + 10_000).unwrap();
    assert!(!g.is_over());
    assert_eq!(g.ply(), 2);
    g.resign(White, T0 + 11_000).unwrap();
    assert_eq!(
        g.take_back(TakeBack::LastMove, T0 + 12_000),
        Err(GameError::GameOver)
    );
}

#[test]
fn take_back_restores_the_clocks_of_the_earlier_move() {
    let mut g = local("5+3");
    play_line(&mut g, &["e2e4", "e7e5"], T0 + 1_000);
    play(&mut g, White, "g1f3", T0 + 12_000); // White: 300 - 10 + 3
    play(&mut g, Black, "b8c6", T0 + 32_000); // Black: 300 - 20 + 3
    g.take_back(TakeBack::LastMove, T0 + 40_000).unwrap();
    assert_eq!(
        g.remaining_ms(T0 + 40_000),
        Some(ByColor {
            white: 293_000,
            black: 300_000
        })
    );
    assert_eq!(g.running_clock(), Some(Black));
    assert_eq!(g.next_deadline(), Some(T0 + 40_000 + 300_000));
}

#[test]
fn take_back_clears_offers_and_premoves() {
    let mut g = local("5+3");
    play_line(&mut g, &["e2e4", "e7e5", "g1f3"], T0 + 1_000);
    g.offer_draw(White, T0 + 4_000).unwrap();
    g.set_premove(White, sq("f1"), sq("c4"), None, 0, T0 + 4_000)
        .unwrap();
    g.take_back(TakeBack::LastMove, T0 + 5_000).unwrap();
    assert_eq!(g.draw_offer(), None);
    assert_eq!(g.premove(White), None);
}

#[test]
fn no_take_back_once_the_rematch_has_begun() {
    let mut g = local("correspondence");
    play_line(&mut g, &["f2f3", "e7e5", "g2g4", "d8h4"], T0 + 1_000);
    g.offer_rematch(White, T0 + 5_000).unwrap();
    g.accept_rematch(Black, T0 + 6_000).unwrap();
    assert_eq!(
        g.take_back(TakeBack::LastMove, T0 + 7_000),
        Err(GameError::RematchAlreadyAccepted)
    );
    assert!(g.is_over());
}

#[test]
fn take_back_to_the_first_moves_restarts_the_first_move_deadline() {
    let mut g = local("5+3"); // blitz: 25 s per first move
    play_line(&mut g, &["e2e4", "e7e5"], T0 + 1_000);
    g.take_back(TakeBack::LastMove, T0 + 100_000).unwrap();
    assert_eq!(g.running_clock(), None);
    assert_eq!(g.next_deadline(), Some(T0 + 125_000));
    assert_eq!(
        g.remaining_ms(T0 + 110_000),
        Some(ByColor {
            white: 300_000,
            black: 300_000
        })
    );
}
