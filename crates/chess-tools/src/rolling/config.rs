//! The rolling-restart tool's flags, checked once into a [`Config`].

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

/// Most games in play at once (each is two sockets).
const MAX_GAMES: u32 = 500;

/// Command-line flags (`cargo run -p chess-tools --bin rolling -- --help`).
#[derive(Debug, Parser)]
#[command(
    name = "rolling",
    about = "Two chess-server nodes on one fresh Postgres database, optionally behind nginx: \
             timed games are played while the nodes are stopped one at a time (SIGTERM and \
             SIGKILL, each direction) and started again; the players reconnect as the web \
             client does, and moves, clocks, results and premoves are checked."
)]
pub struct Args {
    /// Games in play (each is two players, each one socket).
    #[arg(long, default_value_t = 10)]
    pub games: u32,

    /// Node stops. They go round: node A with SIGTERM, node B with SIGTERM,
    /// node A with SIGKILL, node B with SIGKILL.
    #[arg(long, default_value_t = 4)]
    pub switches: u32,

    /// Seconds of play before each stop (the stop itself falls at a random
    /// moment in the last of them).
    #[arg(long, default_value_t = 3.0)]
    pub play_s: f64,

    /// Seconds a stopped node stays down before it is started again.
    #[arg(long, default_value_t = 3.0)]
    pub down_s: f64,

    /// A player thinks between these many milliseconds before each move
    /// (`MIN-MAX`).
    #[arg(long, default_value = "80-400", value_parser = parse_range)]
    pub think_ms: (u64, u64),

    /// An nginx configuration (the `http`-block file, e.g.
    /// deploy/nginx/chess.conf) to run in front of the two nodes; the players
    /// then use only its address. Its `node1:8080` and `node2:8080` are
    /// replaced by the nodes' addresses and `listen 80` by a free port.
    /// Without it, the players try node A, then node B.
    #[arg(long)]
    pub proxy_config: Option<PathBuf>,

    /// The nginx binary for `--proxy-config`.
    #[arg(long, default_value = "nginx")]
    pub nginx: PathBuf,

    /// The `chess-server` binary. Default: the one next to this tool in the
    /// cargo target folder (`target/<profile>/chess-server`).
    #[arg(long)]
    pub server: Option<PathBuf>,

    /// Seed of the tool's random choices (moves, premoves, stop moments).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Keep the run's folder (node and proxy logs) and database at the end.
    #[arg(long)]
    pub keep: bool,
}

fn parse_range(text: &str) -> Result<(u64, u64), String> {
    let (low, high) = text
        .split_once('-')
        .ok_or_else(|| format!("expected MIN-MAX, got {text:?}"))?;
    let low: u64 = low
        .trim()
        .parse()
        .map_err(|_| format!("bad MIN in {text:?}"))?;
    let high: u64 = high
        .trim()
        .parse()
        .map_err(|_| format!("bad MAX in {text:?}"))?;
    if low > high {
        return Err(format!("MIN is above MAX in {text:?}"));
    }
    Ok((low, high))
}

/// How a node is stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// SIGTERM: the node closes its sockets with 1012 and finishes its work.
    Term,
    /// SIGKILL: the node vanishes mid-work.
    Kill,
}

/// One stop: which node (0 is A, 1 is B) and how.
#[derive(Clone, Copy, Debug)]
pub struct Switch {
    pub node: usize,
    pub signal: Signal,
}

/// The flags, checked.
#[derive(Debug)]
pub struct Config {
    pub games: u32,
    pub switches: Vec<Switch>,
    pub play: Duration,
    pub down: Duration,
    pub think_ms: (u64, u64),
    pub proxy_config: Option<PathBuf>,
    pub nginx: PathBuf,
    pub server: PathBuf,
    pub seed: u64,
    pub keep: bool,
}

/// Flags that make no run.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("--games must be between 1 and {MAX_GAMES}")]
    Games,
    #[error("--switches must be at least 1")]
    Switches,
    #[error("--play-s and --down-s must be between 0.1 and 3600")]
    Durations,
    #[error("--proxy-config {0}: not a readable file")]
    ProxyConfig(PathBuf),
}

/// The order the stops go round in: each signal in each direction.
const ROUND: [Switch; 4] = [
    Switch {
        node: 0,
        signal: Signal::Term,
    },
    Switch {
        node: 1,
        signal: Signal::Term,
    },
    Switch {
        node: 0,
        signal: Signal::Kill,
    },
    Switch {
        node: 1,
        signal: Signal::Kill,
    },
];

impl Config {
    /// # Errors
    /// A [`ConfigError`] for flags outside their ranges.
    pub fn from_args(args: Args) -> Result<Config, ConfigError> {
        if args.games == 0 || args.games > MAX_GAMES {
            return Err(ConfigError::Games);
        }
        if args.switches == 0 {
            return Err(ConfigError::Switches);
        }
        let seconds = |s: f64| {
            (0.1..=3600.0)
                .contains(&s)
                .then(|| Duration::from_secs_f64(s))
        };
        let (Some(play), Some(down)) = (seconds(args.play_s), seconds(args.down_s)) else {
            return Err(ConfigError::Durations);
        };
        if let Some(path) = &args.proxy_config
            && !path.is_file()
        {
            return Err(ConfigError::ProxyConfig(path.clone()));
        }
        Ok(Config {
            games: args.games,
            switches: ROUND
                .iter()
                .copied()
                .cycle()
                .take(args.switches as usize)
                .collect(),
            play,
            down,
            think_ms: args.think_ms,
            proxy_config: args.proxy_config,
            nginx: args.nginx,
            server: args.server.unwrap_or_else(crate::server::default_binary),
            seed: args.seed,
            keep: args.keep,
        })
    }
}
