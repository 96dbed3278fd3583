//! The online chess server: guests, a live lobby, challenge links, local and
//! computer games, and authoritative games over WebSockets, stored in SQLite
//! (embedded default) or Postgres. The wire protocol is `docs/protocol.md`;
//! the layers and the path of a move are in `ARCHITECTURE.md`.
//!
//! The live games themselves (their owners, registry, group commit and
//! viewers) are the `chess_live` crate, and the database (every query, on
//! SQLite or Postgres, the reward ledger and the ratings kept in it) is the
//! `chess_store` crate; this one is their edges and the rest of the product.
//! The modules follow the architecture: [`http`] (the JSON API, the web
//! client, security headers), [`ws`] (the game and lobby sockets and their
//! protocol), [`lichess`] (the lichess Board and Bot API), [`lobby`] (seeks
//! and pairing), [`auth`] (guests, accounts, sessions, rate limits),
//! [`outbox`] (reward requests to the host platform), [`cluster`] (other
//! nodes' notices), [`metrics`], and [`state`] and [`startup`] that put them
//! together.
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
pub mod cluster;
pub mod http;
pub mod lichess;
pub mod lobby;
pub mod metrics;
pub mod outbound;
pub mod outbox;
pub mod overload;
pub mod settings;
pub mod startup;
pub mod state;
pub mod telemetry;
pub mod tournament;
pub mod turns;
pub mod ws;

pub use settings::Settings;
pub use startup::{Application, StartupError, shutdown_signal};
pub use state::AppState;
