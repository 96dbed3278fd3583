//! The online chess server: guests, a live lobby, challenge links, local and
//! computer games, and authoritative games over WebSockets, stored in SQLite
//! (embedded default) or Postgres. The wire protocol is `docs/protocol.md`.
//!
//! The folders follow the architecture: [`http`] (the JSON API, the web
//! client, security headers), [`ws`] (the game and lobby sockets and their
//! protocol), [`games`] (one owner task per live game, the group-commit
//! writer, the lobby), [`store`] (every query, on SQLite or Postgres),
//! [`auth`] (guests, accounts, sessions, rate limits), [`ledger`] (the
//! reward rules) and [`lichess`] (the lichess Board and Bot API).
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

pub mod auth;
pub mod clock;
pub mod games;
pub mod http;
pub mod ledger;
pub mod lichess;
pub mod metrics;
pub mod overload;
pub mod settings;
pub mod startup;
pub mod store;
pub mod telemetry;
pub mod ws;

pub use settings::Settings;
pub use startup::{AppState, Application, StartupError, shutdown_signal};
