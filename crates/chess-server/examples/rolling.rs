//! The rolling-restart tool: two `chess-server` nodes on one fresh Postgres
//! database, optionally behind nginx run from deploy/nginx/chess.conf, with
//! timed games in play while the nodes are stopped one at a time (SIGTERM
//! and SIGKILL, each direction) and started again. The players reconnect as
//! the web client does; the tool checks that every move is kept, clocks lose
//! exactly the time that passed, no game ends by itself, and a premove never
//! outlives the connection that set it. docs/operations.md ("Restarting
//! nodes with games in progress") quotes its figures.
//!
//! ```sh
//! cargo build --release -p chess-server --bin chess-server --example rolling
//! target/release/examples/rolling --games 10 --switches 8
//! target/release/examples/rolling --games 10 --switches 8 --proxy-config deploy/nginx/chess.conf
//! ```
//!
//! The logic lives in `examples/rolling/` (and the crash tool's client and
//! server process), which `tests/rolling_restart.rs` includes too.

#[allow(dead_code)] // The crash tool's client, of which this run needs a part.
#[path = "crash/client.rs"]
mod client;
#[path = "rolling/config.rs"]
mod config;
#[path = "crash/moves.rs"]
mod moves;
#[path = "rolling/proxy.rs"]
mod proxy;
#[path = "rolling/report.rs"]
mod report;
#[path = "rolling/run.rs"]
mod run;
#[path = "rolling/seat.rs"]
mod seat;
#[allow(dead_code)] // The crash tool's server process, of which this run needs a part.
#[path = "crash/server.rs"]
mod server;

use std::process::ExitCode;

use clap::Parser;

use crate::config::{Args, Config};

#[tokio::main]
async fn main() -> ExitCode {
    let config = match Config::from_args(Args::parse()) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("rolling: {error}");
            return ExitCode::FAILURE;
        }
    };
    match run::run(&config).await {
        Ok(report) => {
            println!("{report}");
            if report.findings.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(error) => {
            eprintln!("rolling: {error}");
            ExitCode::FAILURE
        }
    }
}
