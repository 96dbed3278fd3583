//! The server's time: Unix milliseconds, the scale every game command gets
//! (so deadlines survive a restart) and every stored time is kept in.
//! Stores bind [`UnixMs::to_stored`] and read back with [`UnixMs::from_stored`].
//!
//! The core reads the time, and waits for a moment, through a [`Clock`]
//! carried in its context, never the system clock directly: a server runs on
//! [`SystemClock`], and a test moves a clock by hand (`testing::ManualClock`,
//! with the `testing` feature) to pass a deadline without waiting for it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};

/// A moment as milliseconds since the Unix epoch.
///
/// `chess-game` counts in plain `u64` milliseconds ([`UnixMs::millis`]); the
/// databases keep a signed `bigint`, and this type is the one place that
/// converts (a moment past `i64::MAX` ms, some 292 million years away, is
/// stored as `i64::MAX`; a negative stored value reads as the epoch).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct UnixMs(u64);

impl UnixMs {
    /// The epoch itself.
    pub const EPOCH: UnixMs = UnixMs(0);

    /// The moment `millis` ms after the epoch.
    pub const fn from_millis(millis: u64) -> UnixMs {
        UnixMs(millis)
    }

    /// Milliseconds since the epoch (the scale `chess-game` takes).
    pub const fn millis(self) -> u64 {
        self.0
    }

    /// Whole seconds since the epoch (the scale of tokens' `iat` and `exp`).
    pub const fn secs(self) -> u64 {
        self.0 / 1000
    }

    /// The form the databases store.
    pub fn to_stored(self) -> i64 {
        i64::try_from(self.0).unwrap_or(i64::MAX)
    }

    /// Reads a stored time.
    pub fn from_stored(stored: i64) -> UnixMs {
        UnixMs(u64::try_from(stored).unwrap_or(0))
    }

    /// How long after `earlier` this is (zero if it is not after).
    pub fn since(self, earlier: UnixMs) -> Duration {
        Duration::from_millis(self.0.saturating_sub(earlier.0))
    }

    /// The moment `duration` after this one (the end of time at the latest).
    pub fn plus(self, duration: Duration) -> UnixMs {
        let millis = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
        UnixMs(self.0.saturating_add(millis))
    }

    /// The moment `duration` before this one (the epoch at the earliest).
    pub fn minus(self, duration: Duration) -> UnixMs {
        let millis = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
        UnixMs(self.0.saturating_sub(millis))
    }
}

impl std::fmt::Display for UnixMs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The current moment.
pub fn now_ms() -> UnixMs {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0);
    UnixMs(millis)
}

/// Where the live games read the time and wait for a moment: the owners'
/// clocks and first-move deadlines, the idle unload, the sweeper and the
/// heartbeat. One per registry, shared by its owners
/// ([`crate::Registry::with_clock`]).
///
/// The two go together so that a clock moved by hand also wakes whoever
/// waits on it: a test that moves the time past a deadline sees the game
/// flagged, without sleeping and without pausing the runtime (whose
/// automatic advance would also run while the writer's own thread commits).
pub trait Clock: Send + Sync + std::fmt::Debug + 'static {
    /// The current moment.
    fn now(&self) -> UnixMs;

    /// Resolves once this clock reads `at` or later (at once if it does).
    fn sleep_until(&self, at: UnixMs) -> BoxFuture<'static, ()>;
}

/// The system's wall clock, with tokio's timers to wait on it: what a
/// server runs on.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> UnixMs {
        now_ms()
    }

    fn sleep_until(&self, at: UnixMs) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(at.since(now_ms())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_times_round_trip_and_saturate() {
        let moment = UnixMs::from_millis(1_764_421_234_000);
        assert_eq!(UnixMs::from_stored(moment.to_stored()), moment);
        assert_eq!(UnixMs::from_millis(u64::MAX).to_stored(), i64::MAX);
        assert_eq!(UnixMs::from_stored(-5), UnixMs::EPOCH);
    }

    #[test]
    fn spans_between_moments_never_go_negative() {
        let (early, late) = (UnixMs::from_millis(1_000), UnixMs::from_millis(3_500));
        assert_eq!(late.since(early), Duration::from_millis(2_500));
        assert_eq!(early.since(late), Duration::ZERO);
        assert_eq!(early.minus(Duration::from_secs(5)), UnixMs::EPOCH);
        assert_eq!(early.plus(Duration::from_millis(2_500)), late);
        assert_eq!(
            UnixMs::from_millis(u64::MAX).plus(Duration::from_secs(1)),
            UnixMs::from_millis(u64::MAX)
        );
        assert_eq!(
            late.minus(Duration::from_millis(500)),
            UnixMs::from_millis(3_000)
        );
    }
}
