//! The crash tool's flags, checked once into a [`Config`] the rest trusts.

use crate::flags::{OutOfRange, in_range};
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

pub use crate::server::Backend;

/// Most kill-and-restart cycles of one run.
const MAX_CYCLES: u32 = 10_000;
/// Most games in play at once (each is two sockets).
const MAX_GAMES: u32 = 200;

/// Command-line flags (`cargo run -p chess-tools --bin crash -- --help`).
#[derive(Debug, Parser)]
#[command(
    name = "crash",
    about = "Plays random games against a chess-server process, kills it with SIGKILL at \
             random moments, restarts it on the same data and checks nothing acknowledged \
             was lost."
)]
pub struct Args {
    /// The database the server runs on: a fresh SQLite file, or a fresh
    /// Postgres database made at TEST_POSTGRES_URL (dropped at the end).
    #[arg(long, value_enum, default_value_t = Backend::Sqlite)]
    pub backend: Backend,

    /// Kill-and-restart cycles.
    #[arg(long, default_value_t = 10)]
    pub cycles: u32,

    /// Games in play at once; a finished game is replaced at the next cycle.
    #[arg(long, default_value_t = 6)]
    pub games: u32,

    /// Seed of every random choice of the tool (moves, kill moments); the
    /// server's timing still varies from run to run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// The `chess-server` binary. Default: the one next to this tool in the
    /// cargo target folder (`target/<profile>/chess-server`).
    #[arg(long)]
    pub server: Option<PathBuf>,

    /// The server is killed between this many milliseconds after the games
    /// resumed ...
    #[arg(long, default_value_t = 300)]
    pub kill_after_min_ms: u64,

    /// ... and this many.
    #[arg(long, default_value_t = 2_500)]
    pub kill_after_max_ms: u64,

    /// Longest pause of a player before acting, in milliseconds (each pause
    /// is uniform between 0 and this).
    #[arg(long, default_value_t = 60)]
    pub think_ms: u64,

    /// Known server bugs whose findings are reported but do not fail the run
    /// (comma separated check names, e.g. `premove_kept`).
    #[arg(long, value_delimiter = ',')]
    pub tolerate: Vec<String>,

    /// What happens at the random moment: the server is killed (SIGKILL), or,
    /// on a Postgres cluster the tool starts itself, the database is stopped
    /// (`-m immediate`) and started again, or its backends are terminated in a
    /// storm, or its data folder (on a tmpfs the tool mounts, as root) is
    /// filled to the last byte for a while, while the server keeps running.
    #[arg(long, value_enum, default_value_t = Fault::KillServer)]
    pub fault: Fault,

    /// Keep the data folder (logs, SQLite file) or Postgres database at the end.
    #[arg(long)]
    pub keep: bool,
}

/// What the tool does to the system at the random moment of each cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Fault {
    KillServer,
    RestartDatabase,
    TerminateBackends,
    DiskFull,
}

/// Checked settings of one run.
#[derive(Clone, Debug)]
pub struct Config {
    pub backend: Backend,
    pub cycles: u32,
    pub games: usize,
    pub seed: u64,
    pub server: PathBuf,
    pub kill_after: (Duration, Duration),
    pub think: Duration,
    pub tolerate: Vec<String>,
    pub fault: Fault,
    pub keep: bool,
}

/// A flag that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error(transparent)]
    OutOfRange(#[from] OutOfRange),
    #[error("database faults need --backend postgres")]
    FaultNeedsPostgres,
    #[error("--kill-after-min-ms must not exceed --kill-after-max-ms")]
    KillWindow,
    #[error(
        "no server binary at {0}: build it (`cargo build -p chess-server --bin chess-server`) or pass --server"
    )]
    NoServer(PathBuf),
    #[error("--tolerate {0:?} is not a check name (known: {known})", known = crate::crash::report::CHECKS.join(", "))]
    UnknownCheck(String),
}

impl Config {
    /// Checks `args`.
    ///
    /// # Errors
    /// A [`ConfigError`] naming the first bad flag.
    pub fn from_args(args: Args) -> Result<Config, ConfigError> {
        let server = match args.server {
            Some(path) => path,
            None => crate::server::default_binary(),
        };
        if !server.is_file() {
            return Err(ConfigError::NoServer(server));
        }
        if args.fault != Fault::KillServer && args.backend != Backend::Postgres {
            return Err(ConfigError::FaultNeedsPostgres);
        }
        if args.kill_after_min_ms > args.kill_after_max_ms {
            return Err(ConfigError::KillWindow);
        }
        if let Some(unknown) = args
            .tolerate
            .iter()
            .find(|name| !crate::crash::report::CHECKS.contains(&name.as_str()))
        {
            return Err(ConfigError::UnknownCheck(unknown.clone()));
        }
        Ok(Config {
            backend: args.backend,
            cycles: in_range("cycles", args.cycles.into(), 1, MAX_CYCLES.into())?,
            games: in_range("games", args.games.into(), 1, MAX_GAMES.into())?,
            seed: args.seed,
            server,
            kill_after: (
                Duration::from_millis(in_range(
                    "kill-after-min-ms",
                    args.kill_after_min_ms,
                    0,
                    60_000,
                )?),
                Duration::from_millis(in_range(
                    "kill-after-max-ms",
                    args.kill_after_max_ms,
                    1,
                    60_000,
                )?),
            ),
            think: Duration::from_millis(in_range("think-ms", args.think_ms, 0, 10_000)?),
            tolerate: args.tolerate,
            fault: args.fault,
            keep: args.keep,
        })
    }
}
