//! The online chess server: guests, a live lobby, challenge links, local and
//! computer games, and authoritative games over WebSockets, stored in SQLite
//! (embedded default) or Postgres. The wire protocol is `docs/protocol.md`.
//!
//! `main.rs` only reads [`Settings`], starts [`telemetry`] and runs an
//! [`Application`]; tests start the same application on port 0:
//!
//! ```no_run
//! # async fn start() -> Result<(), Box<dyn std::error::Error>> {
//! use chess_server::{Application, Settings};
//!
//! let mut settings = Settings::defaults();
//! settings.port = 0;
//! settings.database_url = "sqlite://target/example.db".to_owned();
//! let app = Application::build(settings).await?;
//! println!("open {}", app.url());
//! app.run_until_stopped(chess_server::shutdown_signal()).await?;
//! # Ok(()) }
//! ```

pub mod accounts;
pub mod clock;
pub mod error;
pub mod games;
pub mod identity;
pub mod ledger;
pub mod lichess;
pub mod lobby;
pub mod metrics;
pub mod model;
pub mod overload;
pub mod pgn;
pub mod protocol;
pub mod routes;
pub mod security;
pub mod settings;
pub mod startup;
pub mod store;
pub mod summary;
pub mod telemetry;
pub mod time_control;
pub mod web;

pub use settings::Settings;
pub use startup::{AppState, Application, StartupError, shutdown_signal};
