//! The engine's clock. Natively it reads the system's monotonic clock; in
//! a browser, where `std::time::Instant` does not exist (it panics on
//! wasm32-unknown-unknown), the bindings hand in the page's own.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Where the engine reads the time: a monotonic clock, as the time since
/// some fixed moment. Natively the system's ([`system_time`]); in a
/// browser, where `std::time::Instant` does not exist, the page's
/// `performance.now()` handed in by the bindings
/// ([`Engine::set_time_source`](crate::Engine::set_time_source)).
pub type TimeSource = fn() -> Duration;

/// The system's monotonic clock, since the first time it was read.
pub fn system_time() -> Duration {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    ORIGIN.get_or_init(Instant::now).elapsed()
}
