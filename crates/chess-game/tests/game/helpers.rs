//! Building games and playing moves with explicit times.

use chess_game::{Event, EventKind, Game, GameSettings, GameSpec, TimeControl};
use chess_rules::{Color, Square};

pub use chess_rules::Color::{Black, White};

/// When every test game is created: an arbitrary epoch-like instant.
pub const T0: u64 = 1_700_000_000_000;

pub fn tc(text: &str) -> TimeControl {
    text.parse().expect("test time control")
}

/// A standard game created at [`T0`] with default settings.
pub fn game(time_control: &str) -> Game {
    Game::new(
        GameSpec::standard(tc(time_control)),
        GameSettings::default(),
        T0,
    )
}

/// A game from a FEN created at [`T0`].
pub fn game_from(time_control: &str, fen: &str) -> Game {
    let spec = GameSpec::from_fen(tc(time_control), fen, false).expect("test fen");
    Game::new(spec, GameSettings::default(), T0)
}

/// Plays a move that must be accepted, checking that a `move` event for it
/// comes first, and returns all events.
pub fn play(game: &mut Game, color: Color, uci: &str, at: u64) -> Vec<Event> {
    let ply = game.ply();
    let events = game
        .play_uci(color, uci, Some(ply), at)
        .unwrap_or_else(|e| panic!("{uci} at {at}: {e}"));
    match &events.first().map(|e| &e.kind) {
        Some(EventKind::Move { uci: played, .. }) => assert_eq!(played, uci),
        other => panic!("expected a move event for {uci}, got {other:?}"),
    }
    events
}

/// Plays moves alternately, one second apart, starting at `start`; returns
/// the time of the last move.
pub fn play_line(game: &mut Game, moves: &[&str], start: u64) -> u64 {
    let mut at = start;
    for uci in moves {
        let color = game.turn();
        play(game, color, uci, at);
        at += 1_000;
    }
    at - 1_000
}

pub fn sq(name: &str) -> Square {
    name.parse().expect("test square")
}

/// The kinds' codes, for compact assertions on event sequences.
pub fn codes(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(|e| e.kind.code()).collect()
}

/// Checks that events carry consecutive versions ending at the game's.
pub fn assert_versions(game: &Game, before: u64, events: &[Event]) {
    for (i, event) in events.iter().enumerate() {
        assert_eq!(event.version, before + 1 + i as u64, "{events:?}");
    }
    assert_eq!(game.version(), before + events.len() as u64);
}
