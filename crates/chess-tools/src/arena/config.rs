//! The arena proof's flags, checked once into a [`Config`] the rest trusts.

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::flags::{OutOfRange, in_range};
pub use crate::server::Backend;

/// Command-line flags (`cargo run -p chess-tools --bin arena -- --help`).
#[derive(Debug, Parser)]
#[command(
    name = "arena",
    about = "Runs a 1+0 arena for a club's class against chess-server processes, kills one \
             with SIGKILL half-way and audits the stored games at the end."
)]
pub struct Args {
    /// The database: a fresh SQLite file (one node), or a fresh Postgres
    /// database made at TEST_POSTGRES_URL (dropped at the end).
    #[arg(long, value_enum, default_value_t = Backend::Sqlite)]
    pub backend: Backend,

    /// Server processes on the one database (more than one needs Postgres).
    #[arg(long, default_value_t = 1)]
    pub nodes: u32,

    /// Pupils in the class, every one of them in the arena.
    #[arg(long, default_value_t = 30)]
    pub players: u32,

    /// The arena's length: 10 minutes as announced, shorter for a quick run.
    #[arg(long, default_value_t = 10)]
    pub minutes: u32,

    /// Whether a node is killed (SIGKILL) half-way through: the one pairing
    /// the arena (the lease holder) when there are several.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub kill: bool,

    /// How long the killed node stays down, in milliseconds.
    #[arg(long, default_value_t = 2_000)]
    pub down_ms: u64,

    /// Seed of the players' choices (moves, how each game ends, berserks);
    /// the servers' timing still varies from run to run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// The `chess-server` binary. Default: the one next to this tool in the
    /// cargo target folder (`target/<profile>/chess-server`).
    #[arg(long)]
    pub server: Option<PathBuf>,

    /// Keep the data folder (logs, SQLite file) or Postgres database at the end.
    #[arg(long)]
    pub keep: bool,
}

/// Checked settings of one run.
#[derive(Clone, Debug)]
pub struct Config {
    pub backend: Backend,
    pub nodes: usize,
    pub players: usize,
    pub minutes: u32,
    pub kill: bool,
    pub down: Duration,
    pub seed: u64,
    pub server: PathBuf,
    pub keep: bool,
}

/// A flag that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error(transparent)]
    OutOfRange(#[from] OutOfRange),
    #[error("several nodes share a database only on --backend postgres")]
    NodesNeedPostgres,
    #[error(
        "no server binary at {0}: build it (`cargo build -p chess-server --bin chess-server`) or pass --server"
    )]
    NoServer(PathBuf),
}

impl Config {
    /// Checks `args`.
    ///
    /// # Errors
    /// A [`ConfigError`] naming the first bad flag.
    pub fn from_args(args: Args) -> Result<Config, ConfigError> {
        let server = args.server.unwrap_or_else(crate::server::default_binary);
        if !server.is_file() {
            return Err(ConfigError::NoServer(server));
        }
        let nodes = in_range("nodes", args.nodes.into(), 1, 4)?;
        if nodes > 1 && args.backend != Backend::Postgres {
            return Err(ConfigError::NodesNeedPostgres);
        }
        Ok(Config {
            backend: args.backend,
            nodes,
            // A class is at most 100 accounts; four players make an arena
            // with a choice of opponents.
            players: in_range("players", args.players.into(), 4, 100)?,
            // Two minutes leave 90 s of pairings before the closing 30 s.
            minutes: in_range("minutes", args.minutes.into(), 2, 60)?,
            kill: args.kill,
            down: Duration::from_millis(in_range("down-ms", args.down_ms, 0, 60_000)?),
            seed: args.seed,
            server,
            keep: args.keep,
        })
    }
}
