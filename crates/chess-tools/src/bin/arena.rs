//! The arena proof: a club's class of 30 plays a 1+0 arena against
//! `chess-server` processes (one on SQLite, or two on one Postgres
//! database), one of which is killed with SIGKILL half-way and started
//! again; at the end the stored rows are audited: every finished game
//! scored once and alike on every node, nobody in two games at once, no
//! immediate rematch, no fourth colour in a row, no pairing in the closing
//! window, and 95% of the waits within the documented wait.
//! docs/tournaments.md quotes its figures.
//!
//! ```sh
//! cargo build --release -p chess-server -p chess-tools
//! target/release/arena --backend sqlite
//! target/release/arena --backend postgres --nodes 2
//! ```
//!
//! The arena lasts 10 minutes as announced; `--minutes 2` shortens it (the
//! server's tests run it so). The logic lives in the library's `arena`
//! module.

use std::process::ExitCode;

use clap::Parser;

use chess_tools::arena::config::{Args, Config};
use chess_tools::arena::run;

#[tokio::main]
async fn main() -> ExitCode {
    let config = match Config::from_args(Args::parse()) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("arena: {error}");
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
            eprintln!("arena: {error}");
            ExitCode::FAILURE
        }
    }
}
