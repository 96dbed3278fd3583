//! The soak: a `chess-server` process under a steady load (the load tool's
//! games, with think time) for as long as asked, sampled every few seconds
//! into a CSV: resident memory, open descriptors and threads from `/proc`,
//! live games and sockets from its `/metrics`, and the ack and opponent
//! latencies the players saw. It fails if memory or descriptors keep growing
//! over the second half of the load, or if the server does not come back to
//! its idle descriptors with no socket open once the load is gone.
//!
//! ```sh
//! cargo build --release -p chess-server -p chess-tools
//! target/release/soak --duration 1h --games 200 --think-ms 1000-3000 --csv soak.csv
//! ```
//!
//! `docs/reliability.md` has the figures of the last run. The logic lives in
//! the library's `soak` module, which
//! the server's test binaries run short.

use std::process::ExitCode;

use chess_tools::soak::{plan, run};
use clap::Parser;

#[tokio::main]
async fn main() -> ExitCode {
    let plan = match plan::Plan::from_args(plan::Args::parse()) {
        Ok(plan) => plan,
        Err(error) => {
            eprintln!("soak: {error}");
            return ExitCode::FAILURE;
        }
    };
    match run::soak(&plan).await {
        Ok(outcome) => {
            print!("{}", run::summary(&plan, &outcome));
            if outcome.findings.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(error) => {
            eprintln!("soak: {error}");
            ExitCode::FAILURE
        }
    }
}
