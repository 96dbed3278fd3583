//! The HTTP side of the server: the JSON API, the game lists and PGN export
//! it serves, the built-in web client, security headers and the one error
//! type every endpoint answers with.
//!
//! - [`routes`]: the API router (games, lobby, seeks, challenges) and the
//!   WebSocket upgrades handed to [`crate::ws`];
//! - [`error`]: `ApiError`, a stable code and message per refusal;
//! - [`security`]: security headers and the `Origin` check on state changes;
//! - [`summary`], [`pgn`]: game lists and PGN export with `[%clk]`;
//! - [`time_control`]: time controls as the API writes them;
//! - [`web`]: the web client, built into the binary.

pub mod error;
pub mod pgn;
pub mod routes;
pub mod security;
pub mod summary;
pub mod time_control;
pub mod web;
