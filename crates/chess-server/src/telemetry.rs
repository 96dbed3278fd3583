//! Structured logs with `tracing`.

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber: human-readable lines, filtered by `RUST_LOG`
/// (default `info` for this crate and `warn` for the rest).
///
/// Calling it twice is harmless: the second call keeps the first subscriber.
pub fn init() {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("warn,chess_server=info,tower_http=info"));
    // `try_init` fails only when a subscriber is already installed (tests start many apps).
    let _ = tracing_subscriber::fmt().with_env_filter(filter).try_init();
}
