//! Live games: the core of the chess server, below its HTTP, WebSocket and
//! lichess edges, above the rules (`chess-rules`, `chess-game`) and the
//! engine (`chess-engine`).
//!
//! - A [`Registry`] hosts this node's live games: one owner task per game
//!   ([`owner`]), loaded from the store on first use, unloaded when idle,
//!   reached through a [`GameHandle`] with typed requests.
//! - A player's intent is a [`Command`]; the owner applies it to the game,
//!   hands the change to the node's [`writer`] (group commit: many games'
//!   changes in one transaction) and, once committed, answers and
//!   broadcasts it ([`Outgoing`]).
//! - Every connection watches a game through a [`Viewer`]: subscribed,
//!   counted as present, shown each change once, started again from a full
//!   [`StateView`] when needed.
//! - Storage is behind one seam, the [`GameStore`] trait; nodes sharing a
//!   store tell each other of changes and presence in the [`notice`] format,
//!   which the server's listener carries back to [`Registry::changed_elsewhere`]
//!   and [`Registry::presence_elsewhere`].
//! - What happens is reported through [`Telemetry`], and the time is read
//!   from a [`Clock`] ([`Registry::with_clock`]; the system's by default).
//! - With the `testing` feature, `testing` has a store in memory and a
//!   clock moved by hand, to run all of this with no database and no waiting.
//!
//! Nothing here knows HTTP, WebSockets, the lichess API or SQL.
//!
//! ```no_run
//! # async fn play(store: std::sync::Arc<dyn chess_live::GameStore>, alice: chess_live::PlayerRow, bob: chess_live::PlayerRow)
//! # -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use chess_game::GameSpec;
//! use chess_live::{
//!     Command, GameMode, NewGame, NoTelemetry, Registry, RegistrySettings, Viewer,
//!     WriterSettings, now_ms,
//! };
//!
//! let (_stop, shutdown) = tokio::sync::watch::channel(false);
//! let settings = RegistrySettings {
//!     node_name: "node-1".to_owned(),
//!     first_move_deadline_ms: 30_000,
//!     writer: WriterSettings { queue: 1024, linger: Duration::from_millis(1) },
//! };
//! let (registry, _writer) = Registry::new(store, settings, Arc::new(NoTelemetry), shutdown);
//! registry.start().await?;
//! let game = registry
//!     .create(NewGame {
//!         id: uuid::Uuid::new_v4(),
//!         mode: GameMode::Online,
//!         spec: GameSpec::standard("3+2".parse()?),
//!         white: Some(alice.clone()),
//!         black: Some(bob),
//!         computer_level: None,
//!     })
//!     .await?;
//! let mut viewer = Viewer::open(&registry, game.id(), Some(alice.id)).await?.expect("hosted");
//! let e4 = Command::Move { uci: "e2e4".parse()?, ply: 0 };
//! viewer.command(e4, now_ms()).await??;
//! let _move = viewer.next().await;
//! # Ok(()) }
//! ```

pub mod clock;
pub mod command;
pub mod model;
mod nodes;
pub mod notice;
pub mod owner;
pub mod registry;
pub mod rows;
pub mod store;
pub mod stored;
pub mod telemetry;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod time_control;
pub mod view;
pub mod viewer;
pub mod writer;

pub use clock::{Clock, SystemClock, UnixMs, now_ms};
pub use command::{Applied, Command, ConnectionId, Refusal};
pub use model::{GameMode, GameStage, PlayerKind, Seat};
pub use owner::{Freshness, GameHandle, Gone, IDLE_UNLOAD, JoinError};
pub use registry::{NewGame, Registry, RegistrySettings, computer_id, computer_player};
pub use rows::{GameRow, MoveRow, PlayerRow};
pub use store::{
    Batch, BatchOutcome, BatchPath, GameStore, GameWrite, SeatClaim, StoreError, StoreErrorKind,
    StoreResult, WriteOutcome,
};
pub use telemetry::{NoTelemetry, Telemetry};
pub use view::{GameSnapshot, Outgoing, StateView};
pub use viewer::{Received, Seen, Viewer};
pub use writer::{LiveGames, WriteError, Writer, WriterSettings};
