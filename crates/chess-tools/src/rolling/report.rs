//! What a rolling run shares between its tasks and prints at the end: the
//! controller's hold on the players, failed checks and the figures.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

/// A move first sent this close to a stop (before or after) counts as sent
/// around it.
const NEAR_STOP: Duration = Duration::from_millis(300);

/// Every check the tool makes, by the name findings carry.
pub const CHECKS: &[&str] = &[
    // An acknowledged or broadcast move is missing or different on a node.
    "move_lost",
    // A premove was played although the connection that set it was gone
    // before the opponent's move was even sent.
    "premove_after_its_connection",
    // A premove was played that this player never set.
    "premove_unexplained",
    // A new connection was shown a premove it did not set (in its `state`,
    // in a replayed `premove` message, or in `GET /api/games/{id}`).
    "premove_shown_to_new_connection",
    // A clock did not lose exactly the time that passed across a stop.
    "clock",
    // A player was not back on a node within the wait after a stop.
    "not_back",
    // A game ended by timeout or abort, or the nodes disagree on its end.
    "result",
    // A socket was told an older version than it had seen.
    "version_went_back",
    // The server refused the tool's set-up or answered unexpectedly.
    "protocol",
];

/// Shared by the controller and every player.
#[derive(Debug, Default)]
pub struct Shared {
    /// Players start no new move or premove (they still resend unanswered
    /// moves): the controller is checking the games.
    pub hold: AtomicBool,
    /// The run is over: White resigns, and the players leave.
    pub finish: AtomicBool,
    /// When each node stop began.
    stops: Mutex<Vec<Instant>>,
    /// When each move was first sent.
    sends: Mutex<Vec<Instant>>,
    findings: Mutex<Vec<(&'static str, String, String)>>,
    counts: Mutex<BTreeMap<&'static str, u64>>,
    /// Milliseconds from a lost connection to the first message on the next.
    back_ms: Mutex<Vec<u64>>,
    /// Milliseconds a node took to exit after SIGTERM.
    stop_ms: Mutex<Vec<u64>>,
    clock_error_max_ms: Mutex<Option<u64>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub fn fail(&self, check: &'static str, game: &str, detail: impl Into<String>) {
        debug_assert!(CHECKS.contains(&check), "{check}");
        lock(&self.findings).push((check, game.to_owned(), detail.into()));
    }

    pub fn count(&self, name: &'static str) {
        *lock(&self.counts).entry(name).or_default() += 1;
    }

    pub fn holding(&self) -> bool {
        self.hold.load(Ordering::SeqCst)
    }

    pub fn finishing(&self) -> bool {
        self.finish.load(Ordering::SeqCst)
    }

    pub fn stopped_now(&self) {
        lock(&self.stops).push(Instant::now());
    }

    pub fn move_sent(&self) {
        lock(&self.sends).push(Instant::now());
    }

    /// Moves first sent within `window` before or after a stop began.
    fn moves_near_stops(&self, window: Duration) -> u64 {
        let stops = lock(&self.stops);
        let near = lock(&self.sends)
            .iter()
            .filter(|sent| {
                stops.iter().any(|stop| {
                    sent.saturating_duration_since(*stop) < window
                        && stop.saturating_duration_since(**sent) < window
                })
            })
            .count();
        u64::try_from(near).unwrap_or(u64::MAX)
    }

    pub fn back_after(&self, gap: Duration) {
        lock(&self.back_ms).push(millis(gap));
    }

    pub fn node_stopped_in(&self, took: Duration) {
        lock(&self.stop_ms).push(millis(took));
    }

    pub fn clock_checked(&self, error_ms: u64) {
        self.count("clocks_checked");
        let mut max = lock(&self.clock_error_max_ms);
        *max = Some(max.map_or(error_ms, |max| max.max(error_ms)));
    }

    /// The figures and findings so far.
    pub fn report(&self, label: String, elapsed: Duration) -> Report {
        let mut counts = lock(&self.counts).clone();
        counts.insert("moves_near_stop", self.moves_near_stops(NEAR_STOP));
        Report {
            label,
            elapsed,
            findings: lock(&self.findings).clone(),
            counts,
            back_ms: sorted(&lock(&self.back_ms)),
            stop_ms: sorted(&lock(&self.stop_ms)),
            clock_error_max_ms: *lock(&self.clock_error_max_ms),
        }
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn sorted(values: &[u64]) -> Vec<u64> {
    let mut values = values.to_vec();
    values.sort_unstable();
    values
}

/// The outcome of a run.
#[derive(Clone, Debug)]
pub struct Report {
    pub label: String,
    pub elapsed: Duration,
    /// (check, game, detail)
    pub findings: Vec<(&'static str, String, String)>,
    pub counts: BTreeMap<&'static str, u64>,
    /// Reconnection times, sorted.
    pub back_ms: Vec<u64>,
    /// SIGTERM exit times, sorted.
    pub stop_ms: Vec<u64>,
    pub clock_error_max_ms: Option<u64>,
}

impl Report {
    pub fn count(&self, name: &str) -> u64 {
        self.counts.get(name).copied().unwrap_or(0)
    }
}

/// At most this many findings of one check are printed in full.
const SHOWN_PER_CHECK: usize = 5;

fn quantiles(values: &[u64]) -> String {
    if values.is_empty() {
        return "none".to_owned();
    }
    let at = |q: f64| {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let index = ((values.len() - 1) as f64 * q).round() as usize;
        values[index]
    };
    format!(
        "{} times, median {} ms, p90 {} ms, max {} ms",
        values.len(),
        at(0.5),
        at(0.9),
        at(1.0)
    )
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "target:     {}", self.label)?;
        writeln!(
            f,
            "stops:      {} with SIGTERM, {} with SIGKILL, {:.1} s in all; SIGTERM exits: {}",
            self.count("stops_term"),
            self.count("stops_kill"),
            self.elapsed.as_secs_f64(),
            quantiles(&self.stop_ms)
        )?;
        writeln!(
            f,
            "players:    {} connections lost, back on a node: {}",
            self.count("connections_lost"),
            quantiles(&self.back_ms)
        )?;
        writeln!(
            f,
            "moves:      {} acknowledged, {} first sent within 300 ms of a stop, {} resent after a reconnection",
            self.count("moves_acked"),
            self.count("moves_near_stop"),
            self.count("moves_resent")
        )?;
        writeln!(
            f,
            "premoves:   {} set, {} played, {} pending when their connection was lost",
            self.count("premoves_set"),
            self.count("premoves_played"),
            self.count("premoves_cut")
        )?;
        writeln!(
            f,
            "checked:    {} clocks across stops (largest error {} ms), {} game states, {} results on both nodes",
            self.count("clocks_checked"),
            self.clock_error_max_ms
                .map_or_else(|| "-".to_owned(), |ms| ms.to_string()),
            self.count("states_checked"),
            self.count("results_checked")
        )?;
        let mut by_check: BTreeMap<&str, Vec<&(&'static str, String, String)>> = BTreeMap::new();
        for finding in &self.findings {
            by_check.entry(finding.0).or_default().push(finding);
        }
        if by_check.is_empty() {
            return write!(f, "findings:   none");
        }
        write!(f, "findings:")?;
        for (check, findings) in by_check {
            write!(f, "\n  {check}: {}", findings.len())?;
            for (_, game, detail) in findings.into_iter().take(SHOWN_PER_CHECK) {
                write!(f, "\n    game {game}: {detail}")?;
            }
        }
        Ok(())
    }
}
