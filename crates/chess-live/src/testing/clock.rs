//! A clock that only moves when a test moves it.

use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::sync::watch;

use crate::clock::{Clock, UnixMs};

/// A [`Clock`] that stands still until [`ManualClock::advance`] or
/// [`ManualClock::set`] moves it; whoever waits on it for a moment now
/// reached wakes at once (an owner's deadline, the sweeper, the heartbeat,
/// an idle unload).
///
/// Its waits are its own rather than tokio's paused time: a paused runtime
/// moves its time on by itself whenever it is idle, which it is while the
/// node's writer commits on its own thread, so games' clocks would run
/// during every commit.
#[derive(Debug)]
pub struct ManualClock {
    now: watch::Sender<UnixMs>,
}

impl ManualClock {
    /// A clock at a fixed moment (2025-01-01T00:00:00Z): far from the
    /// epoch, as a real one is, and the same in every run.
    pub fn new() -> ManualClock {
        ManualClock::starting_at(UnixMs::from_millis(1_735_689_600_000))
    }

    /// A clock at `start`.
    pub fn starting_at(start: UnixMs) -> ManualClock {
        ManualClock {
            now: watch::Sender::new(start),
        }
    }

    /// Moves the clock `by` on, waking whoever waits for a moment now reached.
    pub fn advance(&self, by: Duration) {
        self.now.send_modify(|now| *now = now.plus(by));
    }

    /// Sets the clock to `at` (back in time too: nobody waiting wakes then).
    pub fn set(&self, at: UnixMs) {
        self.now.send_replace(at);
    }
}

impl Default for ManualClock {
    fn default() -> ManualClock {
        ManualClock::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> UnixMs {
        *self.now.borrow()
    }

    fn sleep_until(&self, at: UnixMs) -> BoxFuture<'static, ()> {
        let mut now = self.now.subscribe();
        Box::pin(async move {
            // The sender lives as long as the clock: an error means the
            // clock is gone, and then that moment never comes.
            if now.wait_for(|now| *now >= at).await.is_err() {
                std::future::pending::<()>().await;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use futures_util::FutureExt as _;

    use super::*;

    #[tokio::test]
    async fn a_wait_ends_when_the_clock_is_moved_past_it_and_not_before() {
        let clock = ManualClock::new();
        let start = clock.now();
        let mut wait = clock.sleep_until(start.plus(Duration::from_secs(10)));
        clock.advance(Duration::from_secs(9));
        assert!((&mut wait).now_or_never().is_none(), "woke a second early");
        clock.advance(Duration::from_secs(1));
        assert!((&mut wait).now_or_never().is_some());
        assert_eq!(clock.now(), start.plus(Duration::from_secs(10)));
        // A moment already passed is no wait at all.
        assert!(clock.sleep_until(start).now_or_never().is_some());
    }
}
