//! Saving a game and rebuilding it exactly.

use chess_game::{Game, RestoreError};

use crate::helpers::*;

/// A game with something in every part of the saved state: clocks running,
/// a draw cooldown, an open draw offer and a premove.
fn busy_game() -> Game {
    let mut g = game("3+2");
    play_line(&mut g, &["e2e4", "e7e5", "g1f3", "b8c6"], T0 + 1_000);
    g.offer_draw(White, T0 + 5_000).unwrap();
    g.decline_draw(Black, T0 + 6_000).unwrap();
    g.offer_draw(Black, T0 + 7_000).unwrap();
    play(&mut g, White, "f1c4", T0 + 8_000);
    g.set_premove(White, sq("e1"), sq("g1"), None, 90, T0 + 9_000)
        .unwrap();
    g
}

fn restored(g: &Game) -> Game {
    Game::restore(g.saved().clone()).expect("restore")
}

#[test]
fn restore_rebuilds_the_same_state() {
    let g = busy_game();
    let r = restored(&g);
    assert_eq!(r.saved(), g.saved());
    assert_eq!(r.position(), g.position());
    assert_eq!(r.version(), g.version());
    assert_eq!(r.remaining_ms(T0 + 20_000), g.remaining_ms(T0 + 20_000));
    assert_eq!(r.next_deadline(), g.next_deadline());
    assert_eq!(r.draw_offer(), g.draw_offer());
    assert_eq!(r.premove(White), g.premove(White));
    assert_eq!(r.can_offer_draw(White), g.can_offer_draw(White));
}

#[test]
fn restored_game_continues_exactly_like_the_original() {
    let mut g = busy_game();
    let mut r = restored(&g);
    for (color, uci, at) in [(Black, "g8f6", T0 + 12_000), (Black, "d7d6", T0 + 13_000)] {
        assert_eq!(
            r.play_uci(color, uci, None, at),
            g.play_uci(color, uci, None, at)
        );
    }
    assert_eq!(r.saved(), g.saved());
}

#[test]
fn time_spent_while_the_server_was_down_counts() {
    let mut g = game("1+0");
    play_line(&mut g, &["e2e4", "e7e5"], T0 + 1_000);
    let saved = g.saved().clone();
    // The server restarts long after White's flag fell.
    let mut r = Game::restore(saved).unwrap();
    let events = r.check_time(T0 + 3_600_000);
    assert_eq!(codes(&events), ["game_ended"]);
    assert_eq!(r.result().unwrap().winner, Some(Black));
}

#[test]
fn restore_refuses_moves_that_do_not_replay() {
    let g = busy_game();
    let mut saved = g.saved().clone();
    saved.moves[1].uci = "e7e4".into();
    assert_eq!(
        Game::restore(saved).unwrap_err(),
        RestoreError::BadMove {
            ply: 1,
            uci: "e7e4".into()
        }
    );
    let mut saved = g.saved().clone();
    saved.moves[1].uci = "e7".into();
    assert!(matches!(
        Game::restore(saved),
        Err(RestoreError::BadMove { ply: 1, .. })
    ));
    let mut saved = g.saved().clone();
    saved.moves[1].uci = "e7e6".into();
    assert!(matches!(
        Game::restore(saved),
        Err(RestoreError::Inconsistent(_))
    ));
    let mut saved = g.saved().clone();
    saved.state.remaining_ms = None;
    assert!(matches!(
        Game::restore(saved),
        Err(RestoreError::Inconsistent(_))
    ));
}

#[test]
fn a_copy_advanced_to_a_later_save_equals_the_game() {
    let mut g = busy_game();
    let mut copy = restored(&g);
    let known = g.moves().len();
    // Elsewhere, the game goes on: Black replies and White's premove is played.
    g.play_uci(Black, "g8f6", None, T0 + 12_000).unwrap();
    g.offer_draw(Black, T0 + 13_000).ok();
    let later = g.saved().clone();
    copy.advance(later.state.clone(), later.moves[known..].to_vec())
        .expect("advances");
    assert_eq!(copy.saved(), g.saved());
    assert_eq!(copy.position(), g.position());
    assert_eq!(copy.next_deadline(), g.next_deadline());
}

#[test]
fn advancing_with_a_move_that_does_not_replay_changes_nothing() {
    let mut g = busy_game();
    let mut copy = restored(&g);
    let before = copy.saved().clone();
    let known = g.moves().len();
    // Black's reply lets White's premove (castling) play, then Black again.
    play_line(&mut g, &["g8f6", "d7d6"], T0 + 12_000);
    let later = g.saved().clone();
    let mut moves = later.moves[known..].to_vec();
    assert_eq!(moves.len(), 3);
    moves[2].uci = "d7d4".into();
    assert_eq!(
        copy.advance(later.state.clone(), moves),
        Err(RestoreError::BadMove {
            ply: u32::try_from(known + 2).unwrap(),
            uci: "d7d4".into()
        })
    );
    assert_eq!(copy.saved(), &before);
    assert_eq!(copy.position(), restored(&copy).position());
    // A state whose clocks contradict the time control is refused too.
    let mut state = later.state.clone();
    state.remaining_ms = None;
    assert!(matches!(
        copy.advance(state, later.moves[known..].to_vec()),
        Err(RestoreError::Inconsistent(_))
    ));
    assert_eq!(copy.saved(), &before);
}

#[cfg(feature = "serde")]
mod json {
    use super::*;
    use chess_game::{Event, SavedGame};

    #[test]
    fn saved_game_round_trips_through_json() {
        let g = busy_game();
        let json = serde_json::to_string(g.saved()).unwrap();
        let back: SavedGame = serde_json::from_str(&json).unwrap();
        assert_eq!(&back, g.saved());
        let r = Game::restore(back).unwrap();
        assert_eq!(r.saved(), g.saved());
    }

    #[test]
    fn events_are_flat_tagged_json() {
        let mut g = game("3+2");
        let events = play(&mut g, White, "e2e4", T0 + 1_000);
        let json = serde_json::to_value(&events[0]).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "version": 1,
                "at_ms": T0 + 1_000,
                "type": "move",
                "ply": 0,
                "color": "white",
                "uci": "e2e4",
                "san": "e4",
                "fen": "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1",
                "remaining_ms": { "white": 180_000, "black": 180_000 },
                "running": null,
                "premove": false,
            })
        );
        let back: Event = serde_json::from_value(json).unwrap();
        assert_eq!(back, events[0]);

        let events = g.abort(T0 + 2_000).unwrap();
        let json = serde_json::to_value(&events[0]).unwrap();
        assert_eq!(json["type"], "game_ended");
        assert_eq!(json["reason"], "aborted");
        assert_eq!(json["winner"], serde_json::Value::Null);
    }

    #[test]
    fn time_controls_and_specs_are_plain_json() {
        let spec = chess_game::GameSpec::standard(tc("0.5+0"));
        let json = serde_json::to_value(&spec).unwrap();
        assert_eq!(json["time_control"], "0.5+0");
        assert_eq!(
            json["initial_fen"],
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
        );
        let bad = serde_json::json!({
            "time_control": "0+0", "initial_fen": json["initial_fen"], "takeback_allowed": false
        });
        assert!(serde_json::from_value::<chess_game::GameSpec>(bad).is_err());
    }
}
