//! The HTTP side of the server: the JSON API, the game lists and PGN export
//! it serves, the built-in web client, security headers and the one error
//! type every endpoint answers with.
//!
//! - [`routes`]: the API router (games, lobby, seeks, challenges) and the
//!   WebSocket upgrades handed to [`crate::ws`];
//! - [`error`]: `ApiError`, a stable code and message per refusal;
//! - [`extract`]: JSON bodies and client addresses, for every route;
//! - [`forwarded`]: the trusted proxies and the header walk that finds a
//!   client's address behind them;
//! - [`security`]: security headers and the `Origin` check on state changes;
//! - [`summary`], [`pgn`]: game lists and PGN export with `[%clk]`;
//! - [`ratings`]: players' ratings and their history, a game's rating changes;
//! - [`web`]: the web client, built into the binary;
//! - [`archive`]: a player's page, archive and lichess-shaped export;
//! - [`uploads`]: finished games played in the browser, checked and kept;
//! - [`limits`]: the per-player bound on making games.

pub mod archive;
pub mod classes;
pub mod clubs;
pub mod error;
pub mod extract;
pub mod forwarded;
pub mod limits;
pub mod pgn;
pub mod ratings;
pub mod routes;
pub mod security;
pub mod signed_in;
pub mod summary;
pub mod tournaments;
pub mod uploads;
pub mod web;
