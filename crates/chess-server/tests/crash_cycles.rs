//! A short run of the crash-cycle tool (`chess-tools`' `crash`): the real
//! `chess-server` binary is killed with SIGKILL three times while games are
//! played on it, restarted on the same data, and every game is checked after
//! each restart (acknowledged moves kept in order, games replay, clocks kept
//! running, premoves cleared, results kept) and the reward ledger and the
//! ratings at the end.
//! One run on SQLite, one on Postgres (skipped with CHESS_SKIP_POSTGRES_TESTS=1),
//! and two cycles each of a Postgres restart and a storm of terminated
//! backends on a cluster the run starts itself (skipped likewise, or without
//! the Postgres programs).

use chess_tools::crash::report;
use chess_tools::crash::run;
use chess_tools::flags::OutOfRange;
use clap::Parser;

use chess_tools::crash::config::{Args, Config, ConfigError};

/// Three cycles of four games, killed 300 to 1200 ms after the games resume.
fn short_run(backend: &str) -> Config {
    Config::from_args(Args::parse_from([
        "crash",
        "--server",
        env!("CARGO_BIN_EXE_chess-server"),
        "--backend",
        backend,
        "--cycles",
        "3",
        "--games",
        "4",
        "--seed",
        "7",
        "--kill-after-min-ms",
        "300",
        "--kill-after-max-ms",
        "1200",
        "--think-ms",
        "20",
    ]))
    .expect("valid flags")
}

async fn crash_cycles_keep_every_acknowledged_move(backend: &str) {
    let report = run::run(&short_run(backend))
        .await
        .expect("the server starts and restarts");
    println!("{report}");

    assert!(report.failures().is_empty(), "{report}");
    assert_eq!(report.count("kills"), 3, "{report}");
    assert!(report.count("moves_acked") > 0, "{report}");
    assert!(
        report.count("games_resumed") > 0,
        "games were checked after a restart: {report}"
    );
    assert!(report.count("games_replayed") > 0, "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_cycles_on_sqlite() {
    crash_cycles_keep_every_acknowledged_move("sqlite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_cycles_on_postgres() {
    if std::env::var("CHESS_SKIP_POSTGRES_TESTS").is_ok_and(|v| v == "1") {
        eprintln!("skipping a Postgres test: CHESS_SKIP_POSTGRES_TESTS=1");
        return;
    }
    crash_cycles_keep_every_acknowledged_move("postgres").await;
}

/// Two cycles of a database fault on a Postgres cluster the run starts
/// itself; skipped with the other Postgres tests, or without the programs.
async fn database_fault_loses_nothing(fault: &str) -> Option<report::Report> {
    if std::env::var("CHESS_SKIP_POSTGRES_TESTS").is_ok_and(|v| v == "1") {
        eprintln!("skipping a Postgres test: CHESS_SKIP_POSTGRES_TESTS=1");
        return None;
    }
    let bin = std::env::var("PG_BIN").unwrap_or_else(|_| "/usr/lib/postgresql/15/bin".to_owned());
    if !std::path::Path::new(&bin).join("initdb").exists() {
        eprintln!("skipping a database-fault test: no initdb in {bin} (set PG_BIN)");
        return None;
    }
    let config = Config::from_args(Args::parse_from([
        "crash",
        "--server",
        env!("CARGO_BIN_EXE_chess-server"),
        "--backend",
        "postgres",
        "--fault",
        fault,
        "--cycles",
        "2",
        "--games",
        "3",
        "--seed",
        "11",
        "--kill-after-min-ms",
        "300",
        "--kill-after-max-ms",
        "800",
        "--think-ms",
        "20",
    ]))
    .expect("valid flags");
    let report = run::run(&config)
        .await
        .expect("the cluster and the server run");
    println!("{report}");

    assert!(report.failures().is_empty(), "{report}");
    assert_eq!(report.count("kills"), 2, "two faults: {report}");
    assert!(report.count("moves_acked") > 0, "{report}");
    assert!(report.count("games_replayed") > 0, "{report}");
    Some(report)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_restart_loses_nothing() {
    database_fault_loses_nothing("restart-database").await;
}

/// The disk under Postgres full for a while: moves refused `unavailable`
/// (never `internal`: the client must know it may send again), nothing acked
/// lost, and the server plays on by itself once the space is back. Needs to
/// mount a tmpfs (root with `CAP_SYS_ADMIN`); skipped where it cannot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_under_postgres_loses_nothing() {
    if !can_mount_tmpfs() {
        eprintln!("skipping: cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)");
        return;
    }
    let Some(report) = database_fault_loses_nothing("disk-full").await else {
        return;
    };
    assert_eq!(report.count("refusal_code_internal"), 0, "{report}");
}

fn can_mount_tmpfs() -> bool {
    let probe = std::env::temp_dir().join(format!("chess-mount-probe-{}", std::process::id()));
    if std::fs::create_dir_all(&probe).is_err() {
        return false;
    }
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(&probe)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if mounted {
        let _ = std::process::Command::new("umount").arg(&probe).status();
    }
    let _ = std::fs::remove_dir(&probe);
    mounted
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_storm_of_terminated_backends_loses_nothing() {
    database_fault_loses_nothing("terminate-backends").await;
}

#[test]
fn bad_flags_are_refused() {
    let parse = |flags: &[&str]| {
        Config::from_args(Args::parse_from(
            ["crash", "--server", env!("CARGO_BIN_EXE_chess-server")]
                .iter()
                .chain(flags),
        ))
    };
    assert!(parse(&[]).is_ok());
    assert!(matches!(
        parse(&["--cycles", "0"]),
        Err(ConfigError::OutOfRange(OutOfRange { flag: "cycles", .. }))
    ));
    assert!(matches!(
        parse(&["--games", "0"]),
        Err(ConfigError::OutOfRange(OutOfRange { flag: "games", .. }))
    ));
    assert_eq!(
        parse(&["--kill-after-min-ms", "900", "--kill-after-max-ms", "100"]).err(),
        Some(ConfigError::KillWindow)
    );
    assert_eq!(
        parse(&["--fault", "restart-database"]).err(),
        Some(ConfigError::FaultNeedsPostgres),
        "database faults need a Postgres cluster of the run's own"
    );
    assert_eq!(
        parse(&["--tolerate", "everything"]).err(),
        Some(ConfigError::UnknownCheck("everything".to_owned()))
    );
    assert!(matches!(
        Config::from_args(Args::parse_from([
            "crash",
            "--server",
            "/nonexistent/chess-server"
        ])),
        Err(ConfigError::NoServer(_))
    ));
}
