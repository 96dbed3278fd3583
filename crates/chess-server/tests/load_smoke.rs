//! The load tool (`examples/load.rs`) against a spawned SQLite server: two
//! games of ten plies, every move acknowledged and seen by the opponent, no
//! error. Figures are printed, never asserted: timing depends on the machine.

#[path = "../examples/load/config.rs"]
mod config;
#[path = "../examples/load/game.rs"]
mod game;
#[path = "../examples/load/report.rs"]
mod report;
#[path = "../examples/load/run.rs"]
mod run;
#[path = "../examples/load/server.rs"]
mod server;

use clap::Parser;

use crate::config::{Args, Config, ConfigError, Target};

fn config(flags: &[&str]) -> Result<Config, ConfigError> {
    Config::from_args(Args::parse_from(
        std::iter::once("load").chain(flags.iter().copied()),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_games_of_ten_plies_are_fully_acknowledged() {
    let config = config(&[
        "--spawn",
        "sqlite",
        "--games",
        "2",
        "--total-games",
        "2",
        "--moves",
        "10",
        "--duration-s",
        "60",
    ])
    .expect("valid flags");

    let report = run::run(&config)
        .await
        .expect("the server starts and stops");
    println!("{report}");

    assert_eq!(report.games_started, 2, "{report}");
    assert_eq!(report.games_failed, 0, "{report}");
    assert!(report.errors.is_empty(), "{report}");
    assert!(report.moves_sent > 0, "{report}");
    assert!(
        report.moves_sent <= 20,
        "at most 10 plies per game: {report}"
    );
    assert_eq!(report.moves_acked, report.moves_sent, "{report}");
    assert_eq!(report.broadcasts_seen, report.moves_sent, "{report}");
    let by_rule: u64 = report.endings.values().sum();
    assert_eq!(report.games_at_limit + by_rule, 2, "{report}");
    if by_rule == 0 {
        // Both games ran to the limit: exactly ten plies each.
        assert_eq!(report.moves_sent, 20, "{report}");
    }
}

#[test]
fn the_url_must_be_loopback_http() {
    assert_eq!(
        config(&["--url", "http://localhost:8080/"]).map(|c| c.target),
        Ok(Target::Url("http://localhost:8080".to_owned()))
    );
    assert!(config(&["--url", "http://[::1]:8080"]).is_ok());
    assert!(config(&["--url", "http://127.0.0.2:8080"]).is_ok());
    assert_eq!(
        config(&["--url", "http://example.com"]).map(|c| c.target),
        Err(ConfigError::NotLoopback("http://example.com".to_owned()))
    );
    assert_eq!(
        config(&["--url", "https://127.0.0.1"]).map(|c| c.target),
        Err(ConfigError::BadUrl("https://127.0.0.1".to_owned()))
    );
    assert_eq!(
        config(&["--url", "not a url"]).map(|c| c.target),
        Err(ConfigError::BadUrl("not a url".to_owned()))
    );
}

#[test]
fn counts_and_times_are_bounded() {
    assert_eq!(
        config(&["--games", "0"]).map(|c| c.games),
        Err(ConfigError::OutOfRange {
            flag: "games",
            min: 1,
            max: 500,
            value: 0
        })
    );
    assert!(config(&["--games", "501"]).is_err());
    assert!(config(&["--moves", "0"]).is_err());
    assert!(config(&["--duration-s", "0"]).is_err());
    assert!(config(&["--duration-s", "3601"]).is_err());
    assert!(config(&["--think-ms", "10001"]).is_err());
    assert!(config(&["--total-games", "0"]).is_err());
    let defaults = config(&[]).expect("the defaults are valid");
    assert_eq!(
        defaults.target,
        Target::Url("http://127.0.0.1:8080".to_owned())
    );
    assert_eq!((defaults.games, defaults.moves), (50, 40));
}
