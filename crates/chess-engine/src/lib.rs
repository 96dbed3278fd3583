//! A chess engine on top of `chess-rules`, with two playing levels, usable
//! as a library (the server plays one seat of a game with it) and over UCI
//! (the `chess-engine` binary).
//!
//! ```
//! use std::sync::atomic::AtomicBool;
//! use chess_engine::{Engine, Level, Limits};
//! use chess_rules::Position;
//!
//! let mut engine = Engine::new(Level::Hard, 42);
//! let position = Position::startpos();
//! let stop = AtomicBool::new(false);
//! let result = engine.search(&position, &[], Limits::depth(3), &stop);
//! let best = result.best_move.expect("the start position has moves");
//! assert!(position.is_legal(&best));
//! ```
//!
//! The search is CPU-bound and blocks: run it on a blocking thread (for
//! example `tokio::task::spawn_blocking`) and set the stop flag to end it
//! early. An [`Engine`] is `Send`, so it can move into that thread and back.

mod engine;
mod eval;
mod level;
mod rng;
mod score;
mod search;
mod time;
mod tt;
pub mod uci;

pub use engine::{Clock, Engine, Limits, MAX_DEPTH, SearchResult};
pub use eval::evaluate;
pub use level::{Level, ParseLevelError};
pub use score::Score;
pub use time::{TimeSource, system_time};
