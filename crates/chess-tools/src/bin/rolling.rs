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
//! cargo build --release -p chess-server -p chess-tools
//! target/release/rolling --games 10 --switches 8
//! target/release/rolling --games 10 --switches 8 --proxy-config deploy/nginx/chess.conf
//! ```
//!
//! The logic lives in the library's `rolling`
//! module, which the server's test binaries run short.

use std::process::ExitCode;

use clap::Parser;

use chess_tools::rolling::config::{Args, Config};
use chess_tools::rolling::run;

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
