//! The load tool's flags, checked once into a [`Config`] the rest trusts.

use std::time::Duration;

use clap::{Parser, ValueEnum};

/// Most concurrent games: each is two sockets and a few tasks on a shared machine.
const MAX_GAMES: u32 = 500;
/// Most plies per game.
const MAX_MOVES: u32 = 1_000;
/// Longest think time per move.
const MAX_THINK_MS: u64 = 10_000;
/// Longest run; in-flight games then finish (bounded by `--moves`).
const MAX_DURATION_S: u64 = 3_600;

/// Command-line flags (`cargo run --release -p chess-server --example load -- --help`).
#[derive(Debug, Parser)]
#[command(
    name = "load",
    about = "Plays concurrent random games over the game socket and measures the move path."
)]
pub struct Args {
    /// A running server to load: loopback addresses only. Default http://127.0.0.1:8080.
    #[arg(long, conflicts_with = "spawn")]
    pub url: Option<String>,

    /// Start the server in this process on port 0 with a fresh database instead.
    #[arg(long, value_enum)]
    pub spawn: Option<Backend>,

    /// Games played at the same time (each by two guests with their own cookie).
    #[arg(long, default_value_t = 50)]
    pub games: u32,

    /// Plies per game: the side to move resigns when this many are played.
    #[arg(long, default_value_t = 40)]
    pub moves: u32,

    /// Pause before each move, in milliseconds.
    #[arg(long, default_value_t = 0)]
    pub think_ms: u64,

    /// New games start until this many seconds have passed.
    #[arg(long, default_value_t = 60)]
    pub duration_s: u64,

    /// Start no more than this many games in all (default: as many as the duration allows).
    #[arg(long)]
    pub total_games: Option<u32>,
}

/// The database of a server started in-process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// A temporary SQLite file, removed at the end.
    Sqlite,
    /// A randomly named database at `TEST_POSTGRES_URL`, dropped at the end.
    Postgres,
}

/// Which server the tool talks to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A server already running at this `http://` base URL (no trailing slash).
    Url(String),
    /// A server this process starts.
    Spawn(Backend),
}

/// Checked settings of one run.
#[derive(Clone, Debug)]
pub struct Config {
    pub target: Target,
    pub games: u32,
    pub moves: u32,
    pub think: Duration,
    pub duration: Duration,
    pub total_games: Option<u32>,
}

/// A flag out of range.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("--{flag} must be between {min} and {max}, got {value}")]
    OutOfRange {
        flag: &'static str,
        min: u64,
        max: u64,
        value: u64,
    },
    #[error("--url {0:?} is not an http:// URL")]
    BadUrl(String),
    #[error(
        "--url {0:?} is not a loopback address: the load tool only targets 127.0.0.1, ::1 or localhost"
    )]
    NotLoopback(String),
}

impl Config {
    /// Checks `args`.
    ///
    /// # Errors
    /// A [`ConfigError`] naming the first flag that is out of range or a URL
    /// that is not a loopback `http://` address.
    pub fn from_args(args: Args) -> Result<Config, ConfigError> {
        let target = match (args.spawn, args.url) {
            (Some(backend), _) => Target::Spawn(backend),
            (None, Some(url)) => Target::Url(loopback_base_url(&url)?),
            (None, None) => Target::Url("http://127.0.0.1:8080".to_owned()),
        };
        Ok(Config {
            target,
            games: in_range("games", args.games.into(), 1, MAX_GAMES.into())?,
            moves: in_range("moves", args.moves.into(), 1, MAX_MOVES.into())?,
            think: Duration::from_millis(in_range("think-ms", args.think_ms, 0, MAX_THINK_MS)?),
            duration: Duration::from_secs(in_range(
                "duration-s",
                args.duration_s,
                1,
                MAX_DURATION_S,
            )?),
            total_games: args
                .total_games
                .map(|total| in_range("total-games", total.into(), 1, u32::MAX.into()))
                .transpose()?,
        })
    }
}

/// `value` as a `T` when `min <= value <= max`.
fn in_range<T: TryFrom<u64>>(
    flag: &'static str,
    value: u64,
    min: u64,
    max: u64,
) -> Result<T, ConfigError> {
    let out_of_range = ConfigError::OutOfRange {
        flag,
        min,
        max,
        value,
    };
    if !(min..=max).contains(&value) {
        return Err(out_of_range);
    }
    T::try_from(value).map_err(|_| out_of_range)
}

/// `url` without a trailing slash, if it is `http://` on a loopback host.
fn loopback_base_url(url: &str) -> Result<String, ConfigError> {
    let parsed = reqwest::Url::parse(url).map_err(|_| ConfigError::BadUrl(url.to_owned()))?;
    if parsed.scheme() != "http" {
        return Err(ConfigError::BadUrl(url.to_owned()));
    }
    // `host_str` writes IPv6 hosts in brackets: `[::1]`.
    let loopback = parsed.host_str().is_some_and(|host| {
        host.eq_ignore_ascii_case("localhost")
            || host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    });
    if !loopback {
        return Err(ConfigError::NotLoopback(url.to_owned()));
    }
    Ok(url.trim_end_matches('/').to_owned())
}
