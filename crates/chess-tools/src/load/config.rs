//! The load tool's flags, checked once into a [`Config`] the rest trusts.

use crate::flags::{OutOfRange, in_range};
use std::str::FromStr;
use std::time::Duration;

use clap::{Parser, ValueEnum};

/// Most concurrent games: 20,000 players' sockets (more with spectators);
/// whether they fit is decided against the open-file limit at start.
const MAX_GAMES: u32 = 20_000;
/// Most plies per game.
const MAX_MOVES: u32 = 1_000;
/// Longest think time per move.
const MAX_THINK_MS: u64 = 10_000;
/// Longest run; in-flight games then finish (bounded by `--moves`).
const MAX_DURATION_S: u64 = 3_600;
/// Most spectators per game.
const MAX_SPECTATORS: u32 = 8;
/// Fastest ramp: games started per second while the slots fill up.
const MAX_RAMP_PER_S: u32 = 10_000;
/// Open files the tool needs besides the game sockets: standard streams,
/// the runtime's epoll and wake-up descriptors, pooled HTTP connections.
pub const RESERVED_FILES: u64 = 128;

/// Command-line flags (`cargo run --release -p chess-tools --bin load -- --help`).
#[derive(Debug, Parser)]
#[command(
    name = "load",
    about = "Plays concurrent random games over the game socket and measures the move path."
)]
pub struct Args {
    /// A running node to load (loopback addresses only); repeat it for
    /// several nodes: White plays on node i, Black on node i+1, spectators
    /// on the nodes after. Default http://127.0.0.1:8080.
    #[arg(long = "url", conflicts_with = "spawn")]
    pub urls: Vec<String>,

    /// Start the server in this process on port 0 with a fresh database instead.
    #[arg(long, value_enum)]
    pub spawn: Option<Backend>,

    /// Games played at the same time (each by two guests with their own cookie).
    #[arg(long, default_value_t = 50)]
    pub games: u32,

    /// Plies per game: the side to move resigns when this many are played.
    #[arg(long, default_value_t = 40)]
    pub moves: u32,

    /// Pause before each move in milliseconds: a fixed value (`0`, `500`) or
    /// a range drawn from uniformly for every move (`1000-3000`).
    #[arg(long, default_value = "0")]
    pub think_ms: ThinkMs,

    /// Spectator sockets per game (anonymous viewers), timed like the opponent.
    #[arg(long, default_value_t = 0)]
    pub spectators: u32,

    /// New games start until this many seconds have passed.
    #[arg(long, default_value_t = 60)]
    pub duration_s: u64,

    /// Start no more than this many games in all (default: as many as the duration allows).
    #[arg(long)]
    pub total_games: Option<u32>,

    /// Games started per second while the slots fill up, so thousands of
    /// connections arrive as a ramp, not as one burst.
    #[arg(long, default_value_t = 200)]
    pub ramp_per_s: u32,

    /// Which API the games are played through: the web client's sockets, or
    /// the lichess Board API (HTTP and NDJSON streams, docs/lichess-api.md).
    #[arg(long, value_enum, default_value_t = ApiKind::Web)]
    pub api: ApiKind,

    /// With `--api web`: play every game between two accounts the tool
    /// signs up (two per concurrent game, taking turns with white) instead
    /// of two new guests, so that games carry what account games carry (the
    /// reward ledger, ratings): the same games `--api lichess` plays.
    #[arg(long)]
    pub accounts: bool,

    /// With `--api lichess`: accounts to play with, one `username token`
    /// line each (two per concurrent game; tokens with `board:play`), for a
    /// server this tool cannot sign accounts up on. Without it the tool
    /// signs accounts up on this server.
    #[arg(long)]
    pub lichess_tokens: Option<std::path::PathBuf>,

    /// A server process to measure (CPU time and resident memory from
    /// /proc); repeat it for several nodes.
    #[arg(long = "server-pid")]
    pub server_pids: Vec<u32>,

    /// This process is one of this many load processes started side by side
    /// with the same flags against the same nodes (more sockets than one
    /// process may open): the servers' memory per live game counts this
    /// process's live games that many times over.
    #[arg(long, default_value_t = 1)]
    pub load_processes: u32,
}

/// The API the games are played through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ApiKind {
    /// The web client's game sockets.
    Web,
    /// The lichess Board API.
    Lichess,
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
    /// Nodes already running at these `http://` base URLs (no trailing slash).
    Nodes(Vec<String>),
    /// A server this process starts.
    Spawn(Backend),
}

/// `--think-ms` as written: milliseconds, fixed or a range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThinkMs {
    pub min: u64,
    pub max: u64,
}

impl FromStr for ThinkMs {
    type Err = String;

    fn from_str(text: &str) -> Result<ThinkMs, String> {
        let number = |part: &str| {
            part.trim()
                .parse::<u64>()
                .map_err(|_| format!("{text:?} is not milliseconds: write 500 or 1000-3000"))
        };
        let (min, max) = match text.split_once('-') {
            Some((min, max)) => (number(min)?, number(max)?),
            None => {
                let fixed = number(text)?;
                (fixed, fixed)
            }
        };
        if min > max {
            return Err(format!(
                "{text:?}: the range's low end is above its high end"
            ));
        }
        Ok(ThinkMs { min, max })
    }
}

/// The pause before each move: a fixed one or a uniform draw per move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Think {
    min: Duration,
    max: Duration,
}

impl Think {
    /// The longest pause it can draw.
    pub fn max(self) -> Duration {
        self.max
    }

    /// The next pause: uniform in `min..=max`.
    pub fn draw(self, rng: &mut impl rand::Rng) -> Duration {
        if self.min == self.max {
            return self.min;
        }
        let millis = |duration: Duration| u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
        Duration::from_millis(rng.random_range(millis(self.min)..=millis(self.max)))
    }
}

impl From<ThinkMs> for Think {
    fn from(think_ms: ThinkMs) -> Think {
        Think {
            min: Duration::from_millis(think_ms.min),
            max: Duration::from_millis(think_ms.max),
        }
    }
}

impl std::fmt::Display for Think {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.min == self.max {
            write!(f, "{} ms", self.min.as_millis())
        } else {
            write!(f, "{}-{} ms", self.min.as_millis(), self.max.as_millis())
        }
    }
}

/// Which seat of a game a socket holds, to place it on a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    White,
    Black,
    /// The n-th spectator of the game, from 0.
    Spectator(u32),
}

/// The node (index into the URLs) that `role` of game number `game` uses:
/// White on node `game`, Black on the next one, spectators on the ones after,
/// all modulo the number of nodes. With two or more nodes the two players of
/// every game are on different nodes, and every node hosts both colours.
pub fn node_of(game: u64, role: Role, nodes: usize) -> usize {
    let offset = match role {
        Role::White => 0,
        Role::Black => 1,
        Role::Spectator(n) => 2 + u64::from(n),
    };
    let nodes = u64::try_from(nodes.max(1)).unwrap_or(u64::MAX);
    usize::try_from((game + offset) % nodes).unwrap_or(0)
}

/// Checked settings of one run.
#[derive(Clone, Debug)]
pub struct Config {
    pub target: Target,
    pub games: u32,
    pub moves: u32,
    pub think: Think,
    pub spectators: u32,
    pub duration: Duration,
    pub total_games: Option<u32>,
    pub ramp_per_s: u32,
    pub server_pids: Vec<u32>,
    /// Load processes running the same games side by side (`--load-processes`).
    pub load_processes: u32,
    pub api: ApiKind,
    /// Web games between signed-up accounts (`--accounts`).
    pub accounts: bool,
    pub lichess_tokens: Option<std::path::PathBuf>,
}

/// A flag out of range, or a run that cannot fit.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error(transparent)]
    OutOfRange(#[from] OutOfRange),
    #[error("--url {0:?} is not an http:// URL")]
    BadUrl(String),
    #[error(
        "--url {0:?} is not a loopback address: the load tool only targets 127.0.0.1, ::1 or localhost"
    )]
    NotLoopback(String),
    #[error("--url {0:?} is given twice")]
    DuplicateUrl(String),
    #[error("--accounts is for --api web: the lichess API always plays between accounts")]
    AccountsWithLichess,
    #[error(
        "--accounts signs its accounts up (web games need their sessions): drop --lichess-tokens"
    )]
    AccountsFromTokens,
    #[error(
        "this run needs {needed} open files ({sockets} sockets and {RESERVED_FILES} for the tool) \
         but this process may open at most {hard_limit} (the hard limit, `ulimit -Hn`): run fewer \
         games or spectators, split the load over several load processes, or raise the hard limit"
    )]
    TooManyFiles {
        needed: u64,
        sockets: u64,
        hard_limit: u64,
    },
}

impl Config {
    /// Checks `args`.
    ///
    /// # Errors
    /// A [`ConfigError`] naming the first flag that is out of range or a URL
    /// that is not a loopback `http://` address.
    pub fn from_args(args: Args) -> Result<Config, ConfigError> {
        if args.accounts && args.api == ApiKind::Lichess {
            return Err(ConfigError::AccountsWithLichess);
        }
        if args.accounts && args.lichess_tokens.is_some() {
            return Err(ConfigError::AccountsFromTokens);
        }
        let target = match args.spawn {
            Some(backend) => Target::Spawn(backend),
            None if args.urls.is_empty() => Target::Nodes(vec!["http://127.0.0.1:8080".to_owned()]),
            None => {
                let mut nodes: Vec<String> = Vec::with_capacity(args.urls.len());
                for url in &args.urls {
                    let base = loopback_base_url(url)?;
                    if nodes.contains(&base) {
                        return Err(ConfigError::DuplicateUrl(url.clone()));
                    }
                    nodes.push(base);
                }
                Target::Nodes(nodes)
            }
        };
        let think_ms = args.think_ms;
        in_range::<u64>("think-ms", think_ms.max, 0, MAX_THINK_MS)?;
        Ok(Config {
            target,
            games: in_range("games", args.games.into(), 1, MAX_GAMES.into())?,
            moves: in_range("moves", args.moves.into(), 1, MAX_MOVES.into())?,
            think: Think::from(think_ms),
            spectators: in_range(
                "spectators",
                args.spectators.into(),
                0,
                MAX_SPECTATORS.into(),
            )?,
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
            ramp_per_s: in_range(
                "ramp-per-s",
                args.ramp_per_s.into(),
                1,
                MAX_RAMP_PER_S.into(),
            )?,
            server_pids: args.server_pids,
            load_processes: in_range("load-processes", args.load_processes.into(), 1, 64)?,
            api: args.api,
            accounts: args.accounts,
            lichess_tokens: args.lichess_tokens,
        })
    }

    /// Sockets open at once at full load: players and spectators of every
    /// game, twice over when the server runs in this process (both ends).
    pub fn sockets(&self) -> u64 {
        let per_game = match self.api {
            ApiKind::Web => 2 + u64::from(self.spectators),
            // Two game streams, two event streams and the moves' connections.
            ApiKind::Lichess => 6,
        };
        let ends = if matches!(self.target, Target::Spawn(_)) {
            2
        } else {
            1
        };
        u64::from(self.games) * per_game * ends
    }

    /// Checks that the run fits under the process's hard open-file limit.
    ///
    /// # Errors
    /// [`ConfigError::TooManyFiles`] saying how many it needs.
    pub fn check_fits(&self, hard_limit: u64) -> Result<u64, ConfigError> {
        let sockets = self.sockets();
        let needed = sockets + RESERVED_FILES;
        if needed > hard_limit {
            return Err(ConfigError::TooManyFiles {
                needed,
                sockets,
                hard_limit,
            });
        }
        Ok(needed)
    }
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
