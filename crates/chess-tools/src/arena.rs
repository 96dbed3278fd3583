//! The arena proof: a club's class plays a whole arena against real server
//! processes, one of which is killed with SIGKILL half-way, and the stored
//! rows are audited at the end (every finished game scored once and the
//! same on every node, no immediate rematch, nobody in two games at once,
//! no pairing in the closing window, the waits within the documented wait).
//! The binary's `src/bin/arena.rs` says how to run it; docs/tournaments.md
//! quotes its figures.

pub mod audit;
pub mod config;
pub mod player;
pub mod report;
pub mod run;
