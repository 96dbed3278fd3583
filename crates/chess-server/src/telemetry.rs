//! Structured logs with `tracing`.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines; coloured only when written to a terminal, so a
    /// file or a pipe gets no escape codes.
    #[default]
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// Installs the global subscriber writing to standard output in `format`,
/// filtered by `RUST_LOG` (default `info` for this crate and `warn` for the
/// rest).
///
/// Calling it twice is harmless: the second call keeps the first subscriber.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("warn,chess_server=info,tower_http=info"));
    // A log that cannot be written (its disk is full) must not stop the
    // server: by default the subscriber reports that on standard error with
    // `eprintln!`, which panics when standard error fails too (the same full
    // disk), and every request that logs would then die without an answer.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .log_internal_errors(false);
    // `try_init` fails only when a subscriber is already installed (tests start many apps).
    let _ = match format {
        LogFormat::Text => builder.with_ansi(colour_wanted()).try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// Colour only on a terminal, and never when `NO_COLOR` is set (no-color.org).
fn colour_wanted() -> bool {
    std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
}
