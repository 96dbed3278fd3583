//! The soak (`chess-tools`' `soak`) run short against the `chess-server` binary
//! on SQLite: a steady load with think time, sampled every two seconds. It
//! must end without a finding: no growth beyond the (loose, for so short a
//! run) limits, and the server back to its idle descriptors with no socket
//! open once the load is gone. The figures are printed, never asserted.

use chess_tools::soak::plan;
use chess_tools::soak::run;
use clap::Parser;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_soak_stays_bounded_and_comes_back_to_idle() {
    let csv = std::env::temp_dir().join(format!("chess-soak-{}.csv", uuid::Uuid::new_v4()));
    let csv_arg = csv.display().to_string();
    let plan = plan::Plan::from_args(plan::Args::parse_from([
        "soak",
        "--duration",
        "30s",
        "--sample-every",
        "2s",
        "--games",
        "8",
        "--moves",
        "30",
        "--think-ms",
        "20-200",
        "--server",
        env!("CARGO_BIN_EXE_chess-server"),
        "--csv",
        &csv_arg,
        // Thirty seconds cannot tell a slow leak from warm-up noise: the
        // memory limit catches a gross one (a megabyte a second). Descriptors
        // move in steps as the database pool opens connections (three files
        // each on SQLite), which a slope over a few samples reads as growth;
        // a leak per game or socket shows instead in the check that the
        // server comes back to its idle descriptors after the load. The
        // hour-long run holds the real limits.
        "--max-rss-growth-mib-per-hour",
        "3600",
        "--max-fd-growth-per-hour",
        "100000",
    ]))
    .expect("valid flags");

    let outcome = run::soak(&plan).await.expect("the soak runs");
    println!("{}", run::summary(&plan, &outcome));

    assert!(outcome.findings.is_empty(), "{:?}", outcome.findings);
    assert!(
        outcome.samples.len() >= 10,
        "{} samples",
        outcome.samples.len()
    );
    let rows = std::fs::read_to_string(&csv)
        .expect("the CSV")
        .lines()
        .count();
    // The header, one row per sample and the idle reading after the load.
    assert_eq!(rows, outcome.samples.len() + 2);
    let report = &outcome.report;
    assert!(report.moves_acked > 0, "{report}");
    assert_eq!(report.games_failed, 0, "{report}");
    assert!(report.errors.is_empty(), "{report}");
    assert_eq!(report.moves_acked, report.moves_sent, "{report}");
    // Under load the sampler saw the games' sockets.
    assert!(outcome.samples.iter().any(|s| s.game_sockets > 0));
    let _ = std::fs::remove_file(&csv);
}
