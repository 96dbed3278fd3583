//! A short run of the rolling-restart tool (`chess-tools`' `rolling`): two real
//! `chess-server` nodes on one Postgres database, stopped one at a time with
//! SIGTERM and with SIGKILL in both directions while ten 10+5 games are
//! played, and started again. Once with the players trying node A then node
//! B, once through nginx running the shipped deploy/nginx/chess.conf. Every
//! move a player was told of must be on both nodes, clocks must lose exactly
//! the time that passed, every game must end by White's resignation (or on
//! the board), and no premove may outlive the connection that set it.
//!
//! Skipped with CHESS_SKIP_POSTGRES_TESTS=1; the nginx run also with
//! CHESS_SKIP_NGINX_TESTS=1 (scripts/ensure-nginx.sh installs it).

use chess_tools::rolling::run;
use std::path::PathBuf;

use clap::Parser;

use chess_tools::rolling::config::{Args, Config};

/// The two runs one after the other: each is four node processes and twenty
/// players, and the reconnection times they print mean more on a quiet
/// machine.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn skipped(variable: &str) -> bool {
    let skip = std::env::var(variable).is_ok_and(|value| value == "1");
    if skip {
        eprintln!("skipping a rolling-restart run: {variable}=1");
    }
    skip
}

/// Four stops (SIGTERM of A, of B, SIGKILL of A, of B) of ten games.
fn short_run(proxy_config: Option<PathBuf>) -> Config {
    let mut flags: Vec<String> = [
        "rolling",
        "--server",
        env!("CARGO_BIN_EXE_chess-server"),
        "--games",
        "10",
        "--switches",
        "4",
        "--play-s",
        "2",
        "--down-s",
        "1",
        "--seed",
        "11",
    ]
    .map(str::to_owned)
    .to_vec();
    if let Some(path) = proxy_config {
        flags.push("--proxy-config".to_owned());
        flags.push(path.display().to_string());
    }
    Config::from_args(Args::parse_from(flags)).expect("valid flags")
}

async fn every_rule_holds_across_the_stops(proxy_config: Option<PathBuf>) {
    let _alone = ONE_AT_A_TIME.lock().await;
    let report = run::run(&short_run(proxy_config))
        .await
        .expect("the nodes start and restart");
    println!("{report}");

    assert!(report.findings.is_empty(), "{report}");
    assert_eq!(report.count("stops_term"), 2, "{report}");
    assert_eq!(report.count("stops_kill"), 2, "{report}");
    // The stops cut connections, mid-game, with premoves pending, and the
    // checks ran on what they left.
    assert!(report.count("connections_lost") >= 20, "{report}");
    assert!(report.count("moves_acked") > 100, "{report}");
    assert!(report.count("premoves_cut") > 0, "{report}");
    assert!(report.count("clocks_checked") >= 40, "{report}");
    assert_eq!(report.count("results_checked"), 20, "{report}");
    // The web client's first retry: a stopped node's players are back on the
    // other within a second or so, never after the retries grew long.
    let slowest = report.back_ms.last().copied().unwrap_or(u64::MAX);
    assert!(slowest < 3_000, "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rolling_restart_with_players_choosing_the_node() {
    if skipped("CHESS_SKIP_POSTGRES_TESTS") {
        return;
    }
    every_rule_holds_across_the_stops(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rolling_restart_behind_nginx_with_the_shipped_configuration() {
    if skipped("CHESS_SKIP_POSTGRES_TESTS") || skipped("CHESS_SKIP_NGINX_TESTS") {
        return;
    }
    let shipped = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../deploy/nginx/chess.conf");
    every_rule_holds_across_the_stops(Some(shipped)).await;
}
