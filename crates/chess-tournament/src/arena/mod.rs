//! The arena: players join, are paired again as soon as they finish a
//! game, and score points until the clock of the tournament runs out.

pub mod pairing;
pub mod pool;
pub mod sheet;
pub mod standings;
pub mod timing;

pub use pairing::{ColorHistory, Pairing, Pass, Waiting, pair};
pub use pool::{Pauses, pass_due};
pub use sheet::{FinishedGame, GameScore, Mark, Outcome, Sheet};
pub use standings::{Entry, performance, rank};
pub use timing::{ArenaClock, closing_window, pairing_wait, pause_delay};
