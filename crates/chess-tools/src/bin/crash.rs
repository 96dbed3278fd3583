//! The crash-cycle tool: random games against a real `chess-server` process
//! that is killed with SIGKILL at random moments and restarted on the same
//! data, checking after every restart that nothing acknowledged was lost.
//! See docs/reliability.md for what it checks and the figures of the last runs.
//!
//! ```sh
//! cargo build --release -p chess-server -p chess-tools
//! target/release/crash --backend sqlite --cycles 100 --games 8
//! target/release/crash --backend postgres --cycles 100 --games 8
//! ```
//!
//! The logic lives in the library's `crash`
//! module, which the server's test binaries run short.

use std::process::ExitCode;

use clap::Parser;

use chess_tools::crash::config::{Args, Config};
use chess_tools::crash::run;

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
