//! The load tool (`chess-tools`' `load`) against a spawned SQLite server: two
//! games of ten plies, every move acknowledged and seen by the opponent, no
//! error. Figures are printed, never asserted: timing depends on the machine.

use chess_tools::flags::OutOfRange;
use chess_tools::load::config;
use chess_tools::load::report;
use chess_tools::load::run;
use std::time::Duration;

use clap::Parser;

use chess_tools::load::config::{Args, Config, ConfigError, Role, Target, node_of};

fn config(flags: &[&str]) -> Result<Config, ConfigError> {
    Config::from_args(Args::parse_from(
        std::iter::once("load").chain(flags.iter().copied()),
    ))
}

/// A run of games of at most ten plies against a spawned SQLite server,
/// with `flags` on top: its report, printed.
async fn spawned_run(flags: &[&str]) -> report::Report {
    let mut all = vec!["--spawn", "sqlite", "--moves", "10", "--duration-s", "60"];
    all.extend_from_slice(flags);
    let config = config(&all).expect("valid flags");
    let report = run::run(&config)
        .await
        .expect("the server starts and stops");
    println!("{report}");
    report
}

/// `games` games started, none failed, no error, and every move sent
/// acknowledged and seen by the opponent.
fn assert_every_move_acknowledged(report: &report::Report, games: u64) {
    assert_eq!(report.games_started, games, "{report}");
    assert_eq!(report.games_failed, 0, "{report}");
    assert!(report.errors.is_empty(), "{report}");
    assert!(report.moves_sent > 0, "{report}");
    assert_eq!(report.moves_acked, report.moves_sent, "{report}");
    assert_eq!(report.broadcasts_seen, report.moves_sent, "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_games_of_ten_plies_are_fully_acknowledged() {
    let report = spawned_run(&["--games", "2", "--total-games", "2"]).await;

    assert_every_move_acknowledged(&report, 2);
    assert!(
        report.moves_sent <= 20,
        "at most 10 plies per game: {report}"
    );
    let by_rule: u64 = report.endings.values().sum();
    assert_eq!(report.games_at_limit + by_rule, 2, "{report}");
    if by_rule == 0 {
        // Both games ran to the limit: exactly ten plies each.
        assert_eq!(report.moves_sent, 20, "{report}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_games_through_the_lichess_api_are_fully_acknowledged() {
    let report = spawned_run(&["--api", "lichess", "--games", "2", "--total-games", "4"]).await;

    assert_every_move_acknowledged(&report, 4);
    assert!(
        report.moves_sent <= 40,
        "at most 10 plies per game: {report}"
    );
    let by_rule: u64 = report.endings.values().sum();
    assert_eq!(report.games_at_limit + by_rule, 4, "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_web_games_between_two_accounts_are_fully_acknowledged() {
    // One slot, so the same two accounts play both games, white in turn.
    let report = spawned_run(&["--accounts", "--games", "1", "--total-games", "2"]).await;

    assert!(report.target.contains(", accounts,"), "{report}");
    assert_every_move_acknowledged(&report, 2);
}

#[test]
fn accounts_are_for_web_games_that_sign_them_up() {
    assert_eq!(
        config(&["--api", "lichess", "--accounts"]).err(),
        Some(ConfigError::AccountsWithLichess)
    );
    assert_eq!(
        config(&["--accounts", "--lichess-tokens", "/tmp/tokens"]).err(),
        Some(ConfigError::AccountsFromTokens)
    );
    assert!(config(&["--accounts"]).expect("valid flags").accounts);
}

#[test]
fn the_url_must_be_loopback_http() {
    assert_eq!(
        config(&["--url", "http://localhost:8080/"]).map(|c| c.target),
        Ok(Target::Nodes(vec!["http://localhost:8080".to_owned()]))
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
        Err(ConfigError::OutOfRange(OutOfRange {
            flag: "games",
            min: 1,
            max: 20_000,
            value: 0
        }))
    );
    assert!(config(&["--games", "10000"]).is_ok());
    assert!(config(&["--games", "20001"]).is_err());
    assert!(config(&["--spectators", "9"]).is_err());
    assert!(config(&["--ramp-per-s", "0"]).is_err());
    assert!(config(&["--moves", "0"]).is_err());
    assert!(config(&["--duration-s", "0"]).is_err());
    assert!(config(&["--duration-s", "3601"]).is_err());
    assert!(config(&["--think-ms", "10001"]).is_err());
    assert!(config(&["--total-games", "0"]).is_err());
    let defaults = config(&[]).expect("the defaults are valid");
    assert_eq!(
        defaults.target,
        Target::Nodes(vec!["http://127.0.0.1:8080".to_owned()])
    );
    assert_eq!((defaults.games, defaults.moves), (50, 40));
    assert_eq!(defaults.think.max(), Duration::ZERO);
}

#[test]
fn url_repeats_name_several_nodes_in_order() {
    let nodes = config(&[
        "--url",
        "http://127.0.0.1:8080",
        "--url",
        "http://127.0.0.1:8081/",
    ])
    .map(|c| c.target);
    assert_eq!(
        nodes,
        Ok(Target::Nodes(vec![
            "http://127.0.0.1:8080".to_owned(),
            "http://127.0.0.1:8081".to_owned()
        ]))
    );
    // Every URL is checked, not only the first.
    assert_eq!(
        config(&[
            "--url",
            "http://127.0.0.1:8080",
            "--url",
            "http://example.com"
        ])
        .map(|c| c.target),
        Err(ConfigError::NotLoopback("http://example.com".to_owned()))
    );
    // The same node twice would silently put both players on one node.
    assert_eq!(
        config(&[
            "--url",
            "http://127.0.0.1:8080",
            "--url",
            "http://127.0.0.1:8080/"
        ])
        .map(|c| c.target),
        Err(ConfigError::DuplicateUrl(
            "http://127.0.0.1:8080/".to_owned()
        ))
    );
    assert!(
        Args::try_parse_from([
            "load",
            "--url",
            "http://127.0.0.1:8080",
            "--spawn",
            "sqlite"
        ])
        .is_err()
    );
}

#[test]
fn think_time_is_fixed_or_a_range() {
    let fixed = config(&["--think-ms", "500"])
        .expect("a fixed think time")
        .think;
    let mut rng = rand::rng();
    assert_eq!(fixed.draw(&mut rng), Duration::from_millis(500));
    assert_eq!(fixed.max(), Duration::from_millis(500));

    let range = config(&["--think-ms", "1000-3000"]).expect("a range").think;
    assert_eq!(range.max(), Duration::from_millis(3_000));
    let draws: Vec<Duration> = (0..200).map(|_| range.draw(&mut rng)).collect();
    assert!(
        draws
            .iter()
            .all(|d| (Duration::from_millis(1_000)..=Duration::from_millis(3_000)).contains(d)),
        "{draws:?}"
    );
    // 200 uniform draws over 2,001 values are not all the same.
    assert!(draws.iter().any(|d| *d != draws[0]), "{draws:?}");
    assert_eq!(range.to_string(), "1000-3000 ms");

    for bad in ["3000-1000", "fast", "1000-", "-5", "1000-3000-5000"] {
        let parsed = Args::try_parse_from(["load", "--think-ms", bad]);
        assert!(parsed.is_err(), "{bad} was accepted");
    }
    // The high end is bounded like a fixed value.
    assert!(matches!(
        config(&["--think-ms", "1000-10001"]),
        Err(ConfigError::OutOfRange(OutOfRange {
            flag: "think-ms",
            ..
        }))
    ));
}

#[test]
fn the_players_of_a_game_are_spread_over_the_nodes() {
    // One node: everyone on it.
    for game in 0..4 {
        assert_eq!(node_of(game, Role::White, 1), 0);
        assert_eq!(node_of(game, Role::Black, 1), 0);
        assert_eq!(node_of(game, Role::Spectator(0), 1), 0);
    }
    // Two nodes: the players of every game on different nodes, and each node
    // hosts White as often as Black.
    let white: Vec<usize> = (0..4).map(|game| node_of(game, Role::White, 2)).collect();
    let black: Vec<usize> = (0..4).map(|game| node_of(game, Role::Black, 2)).collect();
    assert_eq!(white, [0, 1, 0, 1]);
    assert_eq!(black, [1, 0, 1, 0]);
    // Three nodes: White on i, Black on i+1, spectators on the nodes after.
    assert_eq!(node_of(4, Role::White, 3), 1);
    assert_eq!(node_of(4, Role::Black, 3), 2);
    assert_eq!(node_of(4, Role::Spectator(0), 3), 0);
    assert_eq!(node_of(4, Role::Spectator(1), 3), 1);
}

#[test]
fn a_run_that_cannot_fit_under_the_open_file_limit_is_refused() {
    let external = config(&["--games", "10000"]).expect("valid flags");
    assert_eq!(external.sockets(), 20_000);
    assert_eq!(
        external.check_fits(20_000),
        Err(ConfigError::TooManyFiles {
            needed: 20_000 + config::RESERVED_FILES,
            sockets: 20_000,
            hard_limit: 20_000
        })
    );
    assert_eq!(
        external.check_fits(30_000),
        Ok(20_000 + config::RESERVED_FILES)
    );
    // Spectators are sockets too.
    let watched = config(&["--games", "100", "--spectators", "2"]).expect("valid flags");
    assert_eq!(watched.sockets(), 400);
    // In-process, every socket has both of its ends in this process.
    let spawned = config(&["--spawn", "sqlite", "--games", "100"]).expect("valid flags");
    assert_eq!(spawned.sockets(), 400);
    let message = external
        .check_fits(20_000)
        .expect_err("does not fit")
        .to_string();
    assert!(message.contains("ulimit -Hn"), "{message}");
}
