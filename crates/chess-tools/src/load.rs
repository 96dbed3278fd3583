//! The load tool: games over real sockets against a release server, the
//! server's CPU per move and the move latencies (`src/bin/load.rs`).

pub mod config;
pub mod game;
pub mod lichess;
pub mod process;
pub mod report;
pub mod run;
pub mod server;
