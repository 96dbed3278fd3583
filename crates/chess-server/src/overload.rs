//! Shedding load: past a node's limits a request is refused at once with
//! `429 busy` and a `Retry-After`, instead of waiting in a queue that grows
//! without bound until memory or file descriptors run out.
//!
//! The limits: open WebSockets (each one a file descriptor for as long as it
//! lives), requests creating or joining games and seeks in flight (each one
//! holds database work; a slow database would otherwise pile them up), and
//! the node's [`Pressure`]: when the node cannot keep up with the games in
//! play (its runtime runs ready tasks late, or its writer's queue is filling
//! up), new games and seeks are refused first, so that the games being
//! played keep their time. The writer's own queue is `chess_live::writer`'s.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chess_live::Registry;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

use crate::http::error::ApiError;
use crate::metrics::Metrics;

/// How often the pressure probe wakes to see how late it is.
const PROBE_EVERY: Duration = Duration::from_millis(100);
/// The probe's lateness counts as sustained when every one of this many
/// wake-ups in a row was at least that late: a single slow moment (a
/// checkpoint, a burst of sign-ins) is not overload.
const SUSTAINED_PROBES: usize = 5;
/// The writer's queue this full (as a share of its room) means the
/// database is not keeping up with the games in play.
const BUSY_BACKLOG: f64 = 0.5;
/// What a refused creation is told to wait: long enough for a pressure
/// that is sustained to pass, short enough for a player to stay.
const BUSY_RETRY_SECONDS: u32 = 5;

/// File descriptors kept for everything but sockets (the database, the
/// listener, requests being read), as a share of the open-file limit.
const RESERVED_SHARE: u64 = 10;
/// The least kept, however low the limit.
const RESERVED_AT_LEAST: u64 = 64;
/// A default cap above this would only say "no cap" with a bigger number.
const MAX_DEFAULT_SOCKETS: u64 = 1 << 24;

/// The node's admission limits; clones share them.
#[derive(Clone, Debug)]
pub struct Admission {
    sockets: Arc<Semaphore>,
    creations: Arc<Semaphore>,
    pressure: Pressure,
    metrics: Metrics,
}

/// A place taken under one of the limits; given back when dropped.
#[derive(Debug)]
pub struct Admitted {
    _place: OwnedSemaphorePermit,
}

impl Admission {
    /// Limits of `max_sockets` open sockets and `max_creations` creation
    /// requests at once, new games refused under `pressure`; refusals are
    /// counted in `metrics`.
    pub fn new(
        max_sockets: usize,
        max_creations: usize,
        pressure: Pressure,
        metrics: Metrics,
    ) -> Admission {
        Admission {
            sockets: Arc::new(Semaphore::new(max_sockets.min(Semaphore::MAX_PERMITS))),
            creations: Arc::new(Semaphore::new(max_creations.min(Semaphore::MAX_PERMITS))),
            pressure,
            metrics,
        }
    }

    /// A place for one more WebSocket, held for the socket's life.
    ///
    /// # Errors
    /// `429 busy` when the node holds as many sockets as it may.
    pub fn socket(&self) -> Result<Admitted, ApiError> {
        self.take(
            &self.sockets,
            "sockets",
            "this server holds as many connections as it can; try again shortly",
        )
    }

    /// A place for one request that creates or joins a game or a seek.
    ///
    /// # Errors
    /// `429 busy` when the node is under pressure (the games in play come
    /// first), or when as many such requests are already being served.
    pub fn creation(&self) -> Result<Admitted, ApiError> {
        if self.pressure.is_busy() {
            self.metrics.busy_refusal("pressure");
            return Err(ApiError::Busy {
                message: "this server is busy with the games in play; new games wait: try again shortly",
                retry_after_seconds: BUSY_RETRY_SECONDS,
            });
        }
        self.take(
            &self.creations,
            "creations",
            "this server is creating as many games as it can; try again shortly",
        )
    }

    fn take(
        &self,
        limit: &Arc<Semaphore>,
        name: &'static str,
        message: &'static str,
    ) -> Result<Admitted, ApiError> {
        Arc::clone(limit)
            .try_acquire_owned()
            .map(|place| Admitted { _place: place })
            .map_err(|_| {
                self.metrics.busy_refusal(name);
                ApiError::Busy {
                    message,
                    retry_after_seconds: 1,
                }
            })
    }
}

/// Whether the node keeps up with the games in play: how late its runtime
/// runs a task that is ready (a probe sleeps [`PROBE_EVERY`] and sees how
/// much later it wakes), sustained over [`SUSTAINED_PROBES`] wake-ups, and
/// how full its writer's queue is. Clones share it.
#[derive(Clone, Debug)]
pub struct Pressure {
    /// The sustained lateness, in microseconds.
    lag_us: Arc<AtomicU64>,
    /// Busy at or above this lateness; zero: never for lateness.
    busy_lag: Duration,
    /// The node's writer, when there is one to watch.
    registry: Option<Arc<Registry>>,
}

impl Pressure {
    /// A pressure that is never busy (tests, tools).
    pub fn none() -> Pressure {
        Pressure {
            lag_us: Arc::default(),
            busy_lag: Duration::ZERO,
            registry: None,
        }
    }

    /// Starts the probe, busy when the sustained lateness reaches
    /// `busy_lag` (zero: never for lateness) or `registry`'s writer queue
    /// is half full; it reports to `metrics` and stops with `shutdown`.
    pub fn start(
        busy_lag: Duration,
        registry: Option<Arc<Registry>>,
        metrics: Metrics,
        mut shutdown: watch::Receiver<bool>,
    ) -> Pressure {
        let pressure = Pressure {
            lag_us: Arc::default(),
            busy_lag,
            registry,
        };
        let probe = pressure.clone();
        tokio::spawn(async move {
            let mut recent = VecDeque::with_capacity(SUSTAINED_PROBES);
            loop {
                let asleep = Instant::now();
                tokio::select! {
                    () = tokio::time::sleep(PROBE_EVERY) => {}
                    _ = shutdown.changed() => return,
                }
                let late = asleep.elapsed().saturating_sub(PROBE_EVERY);
                if recent.len() == SUSTAINED_PROBES {
                    recent.pop_front();
                }
                recent.push_back(late);
                let sustained = recent.iter().min().copied().unwrap_or_default();
                probe.lag_us.store(
                    u64::try_from(sustained.as_micros()).unwrap_or(u64::MAX),
                    Ordering::Relaxed,
                );
                metrics.pressure(sustained, probe.writer_backlog(), probe.is_busy());
            }
        });
        pressure
    }

    /// The runtime's sustained lateness.
    pub fn lag(&self) -> Duration {
        Duration::from_micros(self.lag_us.load(Ordering::Relaxed))
    }

    /// How full the writer's queue is (0 to 1).
    fn writer_backlog(&self) -> f64 {
        self.registry
            .as_ref()
            .map_or(0.0, |registry| registry.writer_backlog())
    }

    /// Whether new games should wait: the runtime is late, or the writer's
    /// queue is filling up.
    pub fn is_busy(&self) -> bool {
        let late = !self.busy_lag.is_zero() && self.lag() >= self.busy_lag;
        late || self.writer_backlog() >= BUSY_BACKLOG
    }
}

/// The default socket cap for an open-file limit of `open_files`: the limit
/// less a tenth (at least 64) for everything else.
pub fn sockets_for_open_files(open_files: u64) -> usize {
    let reserved = (open_files / RESERVED_SHARE).max(RESERVED_AT_LEAST);
    let sockets = open_files
        .saturating_sub(reserved)
        .clamp(1, MAX_DEFAULT_SOCKETS);
    usize::try_from(sockets).unwrap_or(usize::MAX)
}

/// The default socket cap under this process's current (soft) open-file
/// limit; `main` raises that limit to the hard one before the server starts.
pub fn default_max_sockets() -> usize {
    let open_files = rlimit::getrlimit(rlimit::Resource::NOFILE).map_or(1024, |(soft, _hard)| soft);
    sockets_for_open_files(open_files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_cap_keeps_a_tenth_of_the_descriptors() {
        assert_eq!(sockets_for_open_files(1024), 1024 - 102);
        assert_eq!(sockets_for_open_files(1_048_576), 1_048_576 - 104_857);
        // Small limits keep at least 64, and the cap never reaches zero.
        assert_eq!(sockets_for_open_files(256), 256 - 64);
        assert_eq!(sockets_for_open_files(10), 1);
        // An unlimited soft limit gives a large cap, not an overflow.
        assert_eq!(sockets_for_open_files(u64::MAX), 1 << 24);
    }

    #[test]
    fn a_place_is_given_back_when_dropped() {
        let admission = Admission::new(1, 1, Pressure::none(), Metrics::new());
        let held = admission.socket().expect("the first socket fits");
        assert!(matches!(admission.socket(), Err(ApiError::Busy { .. })));
        // The limits are separate.
        let creating = admission.creation().expect("a creation fits");
        drop(held);
        assert!(admission.socket().is_ok());
        drop(creating);
    }

    #[test]
    fn under_sustained_lateness_new_games_wait_but_sockets_do_not() {
        let pressure = Pressure {
            lag_us: Arc::default(),
            busy_lag: Duration::from_millis(250),
            registry: None,
        };
        let metrics = Metrics::new();
        let admission = Admission::new(10, 10, pressure.clone(), metrics.clone());
        pressure.lag_us.store(249_000, Ordering::Relaxed);
        assert!(admission.creation().is_ok(), "just under the limit");
        pressure.lag_us.store(250_000, Ordering::Relaxed);
        let refused = admission.creation().expect_err("busy");
        assert!(
            matches!(refused, ApiError::Busy { retry_after_seconds, .. } if retry_after_seconds == BUSY_RETRY_SECONDS)
        );
        // A game in play keeps its sockets: a reconnecting player gets in.
        assert!(admission.socket().is_ok());
        assert!(
            metrics
                .encode()
                .contains("chess_busy_refusals_total{limit=\"pressure\"} 1"),
            "{}",
            metrics.encode()
        );
        // Lateness never counts when the limit is off.
        let off = Pressure {
            busy_lag: Duration::ZERO,
            ..pressure
        };
        assert!(!off.is_busy());
    }

    /// On a runtime of one thread, blocked again and again for 300 ms: the
    /// probe, asleep for 100 ms, wakes about 200 ms late every time,
    /// sustained, and new games wait.
    #[tokio::test]
    async fn the_probe_measures_how_late_a_ready_task_runs() {
        let (_stop, shutdown) = watch::channel(false);
        let metrics = Metrics::new();
        let pressure = Pressure::start(Duration::from_millis(150), None, metrics.clone(), shutdown);
        assert!(!pressure.is_busy(), "nothing measured yet");
        for _ in 0..=SUSTAINED_PROBES {
            std::thread::sleep(Duration::from_millis(300));
            // Let the probe run, then sleep again.
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // Each wake-up comes 300 ms after the last, 200 ms later than asked.
        assert!(
            pressure.lag() >= Duration::from_millis(150),
            "{:?}",
            pressure.lag()
        );
        assert!(pressure.is_busy());
        assert!(
            metrics.encode().contains("chess_busy 1"),
            "{}",
            metrics.encode()
        );
    }
}
