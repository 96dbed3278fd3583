//! What a test needs to run live games with no database and no waiting: a
//! [`MemoryStore`] that keeps games, moves, players and nodes in memory with
//! the real stores' compare-and-set and all-or-nothing batches (and fails
//! on request, the ways the invariants talk about), and a [`ManualClock`]
//! that a test moves by hand.
//!
//! Built for this crate's own tests and, with the `testing` feature, for
//! anyone's: `chess-live = { workspace = true, features = ["testing"] }`
//! among a crate's dev-dependencies.
//!
//! ```
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use chess_live::testing::{ManualClock, MemoryStore};
//! use chess_live::{NoTelemetry, Registry, RegistrySettings, WriterSettings};
//!
//! let store = Arc::new(MemoryStore::new());
//! let clock = Arc::new(ManualClock::new());
//! let (_stop, shutdown) = tokio::sync::watch::channel(false);
//! let settings = RegistrySettings {
//!     node_name: "node-1".to_owned(),
//!     first_move_deadline_ms: 30_000,
//!     writer: WriterSettings { queue: 64, linger: Duration::ZERO },
//! };
//! let telemetry = Arc::new(NoTelemetry);
//! let (registry, _writer) =
//!     Registry::with_clock(store.clone(), settings, telemetry, shutdown, clock.clone());
//! registry.start().await?;
//! clock.advance(Duration::from_secs(60)); // the sweeper sweeps again, at once
//! # Ok(()) }
//! ```

mod clock;
mod store;

pub use clock::ManualClock;
pub use store::MemoryStore;
