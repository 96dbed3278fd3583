//! The soak's flags, checked once into a [`Plan`].

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::load::config::ThinkMs;
use crate::server::Backend;

/// Command-line flags (`target/release/soak --help`).
#[derive(Debug, Parser)]
#[command(
    name = "soak",
    about = "Holds a steady load on a chess-server process and fails if its memory or file \
             descriptors grow without bound."
)]
pub struct Args {
    /// How long new games keep starting: `90s`, `15m`, `1h`.
    #[arg(long, default_value = "15m", value_parser = parse_duration)]
    pub duration: Duration,

    /// Games played at the same time.
    #[arg(long, default_value_t = 100)]
    pub games: u32,

    /// Plies per game: the side to move resigns when this many are played.
    #[arg(long, default_value_t = 80)]
    pub moves: u32,

    /// Pause before each move in milliseconds, fixed (`500`) or a range (`1000-3000`).
    #[arg(long, default_value = "500-1500")]
    pub think_ms: ThinkMs,

    /// How often the server is sampled: `10s`.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub sample_every: Duration,

    /// The database under the server.
    #[arg(long, value_enum, default_value_t = Backend::Sqlite)]
    pub backend: Backend,

    /// The `chess-server` binary (default: the one next to this tool, so
    /// build both with the same profile).
    #[arg(long)]
    pub server: Option<PathBuf>,

    /// Where the samples go, one CSV row per sample.
    #[arg(long, default_value = "soak.csv")]
    pub csv: PathBuf,

    /// Fail when the resident memory grows faster than this over the second
    /// half of the load (MiB per hour, least squares).
    #[arg(long, default_value_t = 64.0)]
    pub max_rss_growth_mib_per_hour: f64,

    /// Fail when the open descriptors grow faster than this over the second
    /// half of the load (per hour, least squares).
    #[arg(long, default_value_t = 100.0)]
    pub max_fd_growth_per_hour: f64,
}

/// Checked settings of one soak.
#[derive(Clone, Debug)]
pub struct Plan {
    pub duration: Duration,
    pub games: u32,
    pub moves: u32,
    pub think_ms: ThinkMs,
    pub sample_every: Duration,
    pub backend: Backend,
    pub server: PathBuf,
    pub csv: PathBuf,
    pub max_rss_growth_mib_per_hour: f64,
    pub max_fd_growth_per_hour: f64,
}

impl Plan {
    /// Checks `args`.
    ///
    /// # Errors
    /// A message naming the first flag out of range.
    pub fn from_args(args: Args) -> Result<Plan, String> {
        if args.sample_every.is_zero() || args.sample_every * 4 > args.duration {
            return Err(format!(
                "--sample-every must be positive and fit four times in --duration ({:?} and {:?})",
                args.sample_every, args.duration
            ));
        }
        if !(1..=5_000).contains(&args.games) {
            return Err(format!("--games must be 1 to 5000, got {}", args.games));
        }
        if !(2..=1_000).contains(&args.moves) {
            return Err(format!("--moves must be 2 to 1000, got {}", args.moves));
        }
        if args.think_ms.max > 10_000 {
            return Err("--think-ms must be at most 10000".to_owned());
        }
        Ok(Plan {
            duration: args.duration,
            games: args.games,
            moves: args.moves,
            think_ms: args.think_ms,
            sample_every: args.sample_every,
            backend: args.backend,
            server: args.server.unwrap_or_else(crate::server::default_binary),
            csv: args.csv,
            max_rss_growth_mib_per_hour: args.max_rss_growth_mib_per_hour,
            max_fd_growth_per_hour: args.max_fd_growth_per_hour,
        })
    }
}

/// `90s`, `15m`, `2h` or a bare number of seconds.
///
/// # Errors
/// A message when the text is none of those.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration: write 90s, 15m or 1h"))?;
    let seconds = match unit {
        "s" => number,
        "m" => number.saturating_mul(60),
        "h" => number.saturating_mul(3_600),
        _ => return Err(format!("{text:?}: the unit is s, m or h")),
    };
    Ok(Duration::from_secs(seconds))
}
