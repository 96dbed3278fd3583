//! The server's integration tests in one binary (one link). Each test that
//! needs a database runs on SQLite and on Postgres with a fresh one: most are
//! black-box tests of the real server on port 0, played over real WebSockets
//! (`on_both_backends!`); the store's own tests (`on_both_stores!`) run
//! against a `Store` directly, and the account routes' tests call their
//! router without opening a port. `binary` starts the built executable.

mod helpers;

mod accounts;
mod accounts_limits;
mod accounts_router;
mod archive;
mod bad_input;
mod binary;
mod classes;
mod clocks;
mod clubs;
mod computer;
mod disk_faults;
mod endings;
mod identity;
mod lichess;
mod lobby;
mod metrics;
mod nodes;
mod oidc;
mod overload;
mod premoves;
mod ratings;
mod restart;
mod reward_webhook;
mod security;
mod slow_database;
mod tournaments;
mod uploads;
mod writer;
