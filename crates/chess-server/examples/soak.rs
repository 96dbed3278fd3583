//! The soak: a `chess-server` process under a steady load (the load tool's
//! games, with think time) for as long as asked, sampled every few seconds
//! into a CSV: resident memory, open descriptors and threads from `/proc`,
//! live games and sockets from its `/metrics`, and the ack and opponent
//! latencies the players saw. It fails if memory or descriptors keep growing
//! over the second half of the load, or if the server does not come back to
//! its idle descriptors with no socket open once the load is gone.
//!
//! ```sh
//! cargo build --release -p chess-server --bin chess-server --example soak
//! target/release/examples/soak --duration 1h --games 200 --think-ms 1000-3000 --csv soak.csv
//! ```
//!
//! `docs/reliability.md` has the figures of the last run. The logic lives in
//! `examples/soak/` (and the load tool's `examples/load/`, the crash tool's
//! server process), which `tests/soak_smoke.rs` includes too.

// Shared with the load and crash tools: the soak uses part of each.
#[allow(dead_code)]
#[path = "load/config.rs"]
mod config;
#[allow(dead_code)]
#[path = "load/game.rs"]
mod game;
#[allow(dead_code)]
#[path = "soak/plan.rs"]
mod plan;
#[allow(dead_code)]
#[path = "load/process.rs"]
mod process;
#[allow(dead_code)]
#[path = "load/report.rs"]
mod report;
#[path = "soak/run.rs"]
mod run;
#[path = "soak/samples.rs"]
mod samples;
#[allow(dead_code)]
#[path = "crash/server.rs"]
mod server;
#[path = "soak/verdict.rs"]
mod verdict;

use std::process::ExitCode;

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
