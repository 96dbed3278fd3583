//! The rules of an online chess game on top of `chess-rules`: clocks, game
//! endings, draw offers, premoves, rematches and take-backs, as a pure,
//! deterministic state machine. No IO and no wall clock: the caller passes
//! the time into every command, and each command returns the versioned
//! [`Event`]s it caused or an exact [`GameError`].
//!
//! # A whole short game
//!
//! ```
//! use chess_game::{EndReason, Game, GameSettings, GameSpec, TimeControl};
//! use chess_rules::Color;
//!
//! let spec = GameSpec::standard("3+2".parse().unwrap());
//! let mut game = Game::new(spec, GameSettings::default(), 1_000);
//!
//! // Each side's first move is free: no clock runs yet.
//! game.play_uci(Color::White, "f2f3", Some(0), 3_000).unwrap();
//! game.play_uci(Color::Black, "e7e5", Some(1), 9_000).unwrap();
//! assert_eq!(game.running_clock(), Some(Color::White));
//! assert_eq!(game.next_deadline(), Some(9_000 + 180_000));
//!
//! // White's second move takes 4 s and earns the first 2 s bonus.
//! let events = game.play_uci(Color::White, "g2g4", Some(2), 13_000).unwrap();
//! assert_eq!(events[0].version, 3);
//! let clocks = game.remaining_ms(13_000).unwrap();
//! assert_eq!((clocks.white, clocks.black), (178_000, 180_000));
//!
//! // Black mates at once.
//! let events = game.play_uci(Color::Black, "d8h4", None, 14_500).unwrap();
//! let result = game.result().unwrap();
//! assert_eq!((result.winner, result.reason), (Some(Color::Black), EndReason::Checkmate));
//! assert_eq!(events.last().unwrap().kind.code(), "game_ended");
//! assert_eq!(game.version(), 5);
//!
//! // Only rematch commands remain; the rematch keeps the time control.
//! assert!(game.resign(Color::White, 15_000).is_err());
//! game.offer_rematch(Color::White, 16_000).unwrap();
//! game.accept_rematch(Color::Black, 17_000).unwrap();
//! assert_eq!(game.rematch_spec().unwrap().time_control().to_string(), "3+2");
//! ```
//!
//! # Clock rules
//!
//! - Each side's first move is time-free and earns no bonus. White's clock
//!   starts when Black's first move is made.
//! - From White's second move on, every move is timed and earns the
//!   increment, for both sides.
//! - A player whose remaining time reaches zero has lost: at `now` with
//!   exactly 0 ms left the flag has fallen, with 1 ms left it has not.
//! - A timeout is a draw only when the side that did not flag cannot mate in
//!   the current position. An open draw offer, from either side, does not
//!   change that: the side that flagged loses.
//! - A premove, when played, costs its player the round trip the server
//!   measured for them. One left due ([`Game::play_leaving_premove`]) and
//!   played later ([`Game::play_premove`]) costs the time since their turn
//!   began when that is longer; a move made by hand replaces it.
//! - If a side has not made its first move within the first-move deadline
//!   (from creation for the first mover, from the first move for the
//!   second), the game is aborted.

mod error;
mod event;
mod game;
pub mod pgn;
mod premove;
mod result;
mod saved;
mod settings;
mod spec;
mod time_control;
mod verify;

pub use error::{GameError, RestoreError};
pub use event::{Event, EventKind, PremoveCancelReason};
pub use game::{Checkpoint, Game, RewindError, TakeBack};
pub use premove::Premove;
pub use result::{EndReason, GameResult, GameStatus};
pub use saved::{RematchState, SavedGame, SavedMove, SavedState};
pub use settings::{FirstMoveDeadlines, GameSettings};
pub use spec::{GameSpec, SpecError};
pub use time_control::{
    INITIAL_STEP_MS, MAX_INCREMENT_MS, MAX_INITIAL_MS, RealTime, Speed, TimeControl,
    TimeControlError,
};
pub use verify::ResultMismatch;
