//! A short run of the arena proof (`chess-tools`' `arena`): a club's class
//! of 30 plays a 1+0 arena, shortened from 10 minutes to 2, against the
//! real `chess-server` binary: one node on SQLite, and two nodes on one
//! Postgres database (skipped with CHESS_SKIP_POSTGRES_TESTS=1); half-way
//! the node pairing the arena is killed with SIGKILL and started again.
//! The audit of the stored rows must find nothing: every finished game
//! scored once and alike on every node, no player in two games at once, no
//! immediate rematch, no fourth colour in a row, no pairing in the closing
//! window, 95% of the waits within the documented wait.

use chess_tools::arena::config::{Args, Config, ConfigError};
use chess_tools::arena::report::Report;
use chess_tools::arena::run;
use chess_tools::flags::OutOfRange;
use clap::Parser;

fn short_run(flags: &[&str]) -> Config {
    let mut all = vec![
        "arena",
        "--server",
        env!("CARGO_BIN_EXE_chess-server"),
        "--minutes",
        "2",
        "--seed",
        "5",
    ];
    all.extend_from_slice(flags);
    Config::from_args(Args::parse_from(all)).expect("valid flags")
}

fn assert_clean(report: &Report) {
    assert!(report.findings.is_empty(), "{report}");
    assert_eq!(report.count("kills"), 1, "{report}");
    assert_eq!(report.count("players"), 30, "{report}");
    // The arena went on through the kill: games ran across it and pairings
    // were made after it.
    assert!(report.count("games_across_a_kill") > 0, "{report}");
    assert!(report.count("pairings_after_a_kill") > 0, "{report}");
    // Enough was played for the checks to mean something: most pupils
    // played several games, and the score sheet's rules came up.
    assert!(report.count("games_counted") >= 30, "{report}");
    assert!(!report.waits.counted.is_empty(), "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_arena_on_one_sqlite_node_survives_a_kill() {
    let report = run::run(&short_run(&["--backend", "sqlite"]))
        .await
        .expect("the arena runs");
    println!("{report}");
    assert_clean(&report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_arena_on_two_postgres_nodes_survives_killing_its_pairing_node() {
    if std::env::var("CHESS_SKIP_POSTGRES_TESTS").is_ok_and(|v| v == "1") {
        eprintln!("skipping a Postgres test: CHESS_SKIP_POSTGRES_TESTS=1");
        return;
    }
    let report = run::run(&short_run(&["--backend", "postgres", "--nodes", "2"]))
        .await
        .expect("the arena runs");
    println!("{report}");
    assert_clean(&report);
    assert_eq!(report.count("killed_the_lease_holder"), 1, "{report}");
}

#[test]
fn bad_flags_are_refused() {
    let parse = |flags: &[&str]| {
        Config::from_args(Args::parse_from(
            ["arena", "--server", env!("CARGO_BIN_EXE_chess-server")]
                .iter()
                .chain(flags),
        ))
    };
    assert!(parse(&[]).is_ok());
    assert_eq!(
        parse(&["--nodes", "2"]).err(),
        Some(ConfigError::NodesNeedPostgres)
    );
    assert!(matches!(
        parse(&["--players", "101"]),
        Err(ConfigError::OutOfRange(OutOfRange {
            flag: "players",
            ..
        }))
    ));
    assert!(matches!(
        parse(&["--minutes", "1"]),
        Err(ConfigError::OutOfRange(OutOfRange {
            flag: "minutes",
            ..
        }))
    ));
    assert!(matches!(
        Config::from_args(Args::parse_from([
            "arena",
            "--server",
            "/nonexistent/chess-server"
        ])),
        Err(ConfigError::NoServer(_))
    ));
}
