//! The crash-cycle tool: random games against a real `chess-server` process
//! that is killed with SIGKILL at random moments and restarted on the same
//! data, checking after every restart that nothing acknowledged was lost.
//! See docs/reliability.md for what it checks and the figures of the last runs.
//!
//! ```sh
//! cargo build --release -p chess-server --bin chess-server --example crash
//! target/release/examples/crash --backend sqlite --cycles 100 --games 8
//! target/release/examples/crash --backend postgres --cycles 100 --games 8
//! ```
//!
//! The logic lives in `examples/crash/`, which `tests/crash_cycles.rs`
//! includes too (with `#[path]`).

#[path = "crash/audit.rs"]
mod audit;
#[path = "crash/client.rs"]
mod client;
#[path = "crash/cluster.rs"]
mod cluster;
#[path = "crash/config.rs"]
mod config;
#[path = "crash/game.rs"]
mod game;
#[path = "crash/ledger.rs"]
mod ledger;
#[path = "crash/moves.rs"]
mod moves;
#[path = "crash/ratings.rs"]
mod ratings;
#[path = "crash/report.rs"]
mod report;
#[path = "crash/run.rs"]
mod run;
#[path = "crash/server.rs"]
mod server;
#[path = "crash/verify.rs"]
mod verify;

use std::process::ExitCode;

use clap::Parser;

use crate::config::{Args, Config};

#[tokio::main]
async fn main() -> ExitCode {
    let config = match Config::from_args(Args::parse()) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("crash: {error}");
            return ExitCode::FAILURE;
        }
    };
    match run::run(&config).await {
        Ok(report) => {
            println!("{report}");
            if report.failures().is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(error) => {
            eprintln!("crash: {error}");
            ExitCode::FAILURE
        }
    }
}
