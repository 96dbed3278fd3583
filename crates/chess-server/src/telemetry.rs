//! Structured logs with `tracing`.

use std::io::{BufWriter, IsTerminal};

use tracing_appender::non_blocking::WorkerGuard;
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
/// rest). Keep the guard it returns for as long as the server runs: dropping
/// it writes out what is still queued and stops the log's thread.
///
/// Lines are formatted where they happen and written by a thread of their
/// own, which writes whatever queued up meanwhile in one go. A runtime
/// worker never waits on the log's file or pipe: every request and socket
/// logs a line, and writing each one there was a system call into the file
/// system on the worker's time, about 3% of the machine at 200 new games a
/// second. A log that cannot keep up (128,000 lines queued) loses lines
/// rather than slow the server, and one that cannot be written at all (its
/// disk is full) loses them too: the server serves without its log. The
/// last lines queued before a `kill -9` are lost with the process.
///
/// Calling it twice is harmless: the second call keeps the first subscriber
/// (and returns `None`).
pub fn init(format: LogFormat) -> Option<WorkerGuard> {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("warn,chess_server=info,tower_http=info"));
    // Decided before standard output is handed to the log's thread.
    let ansi = colour_wanted();
    let (writer, guard) = tracing_appender::non_blocking(BufWriter::new(std::io::stdout()));
    // By default the subscriber reports a line it could not write on
    // standard error with `eprintln!`, which panics when standard error
    // fails too (the same full disk).
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .log_internal_errors(false);
    // `try_init` fails only when a subscriber is already installed (tests start many apps).
    let installed = match format {
        LogFormat::Text => builder.with_ansi(ansi).try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
    installed.is_ok().then_some(guard)
}

/// Colour only on a terminal, and never when `NO_COLOR` is set (no-color.org).
fn colour_wanted() -> bool {
    std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
}
