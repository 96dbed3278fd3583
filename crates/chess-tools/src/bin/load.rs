//! The load tool for the move path: concurrent games of random moves over the
//! game socket, timing every move from `move` to its `ack` (socket in,
//! validate, persist, reply) and to the opponent's `event` (broadcast).
//!
//! ```sh
//! cargo run --release -p chess-tools --bin load -- --spawn sqlite --games 20 --duration-s 60
//! cargo run --release -p chess-tools --bin load -- --url http://127.0.0.1:8080 --games 50
//! # Two nodes (White on one, Black on the other), blitz-like thinking,
//! # the servers' CPU and memory read from /proc:
//! cargo run --release -p chess-tools --bin load -- \
//!     --url http://127.0.0.1:8080 --url http://127.0.0.1:8081 \
//!     --games 1000 --think-ms 1000-3000 --server-pid 1234 --server-pid 1235
//! # The same games through the lichess Board API (any server that speaks it,
//! # with `--lichess-tokens FILE` for accounts it cannot sign up itself):
//! cargo run --release -p chess-tools --bin load -- --spawn sqlite --api lichess --games 20
//! # Web games between signed-up accounts, as the API plays them (compare
//! # the two at one pace: docs/performance.md):
//! cargo run --release -p chess-tools --bin load -- --spawn sqlite --accounts --games 20 --think-ms 20-40
//! ```
//!
//! The logic lives in the library's `load`
//! module, which the server's test binaries run short.

use std::process::ExitCode;

use clap::Parser;

/// The same allocator as the server binary: the tool shares the machine
/// with the server it measures, and glibc's allocator cost it a few more
/// microseconds of CPU per move.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use chess_tools::load::config::{Args, Config};
use chess_tools::load::run;

#[tokio::main]
async fn main() -> ExitCode {
    let config = match Config::from_args(Args::parse()) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("load: {error}");
            return ExitCode::FAILURE;
        }
    };
    match run::run(&config).await {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("load: {error}");
            ExitCode::FAILURE
        }
    }
}
