//! What a run measured: a [`Recorder`] the games write into as they play, and
//! the [`Report`] printed at the end.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// How a game ended, from the load tool's point of view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The game ended by the rules (`checkmate`, `stalemate`, ...) before the ply limit.
    Rule(String),
    /// The ply limit was reached and the side to move resigned.
    PlyLimit,
    /// Something went wrong (the error codes are counted separately).
    Failed,
}

/// Everything measured so far; shared by all games of a run.
#[derive(Debug, Default)]
pub struct Recorder {
    totals: Mutex<Totals>,
}

#[derive(Debug, Default)]
struct Totals {
    games_started: u64,
    endings: BTreeMap<String, u64>,
    games_at_limit: u64,
    games_failed: u64,
    moves_sent: u64,
    /// Send → `ack`, one sample per acknowledged move.
    ack: Vec<Duration>,
    /// Send → the opponent's `event`, one sample per move the opponent saw.
    broadcast: Vec<Duration>,
    errors: BTreeMap<String, u64>,
}

impl Recorder {
    fn with<T>(&self, change: impl FnOnce(&mut Totals) -> T) -> T {
        // A panicking game task must not hide the other games' figures.
        change(&mut self.totals.lock().unwrap_or_else(PoisonError::into_inner))
    }

    pub fn game_started(&self) {
        self.with(|totals| totals.games_started += 1);
    }

    pub fn game_ended(&self, ending: Ending) {
        self.with(|totals| match ending {
            Ending::Rule(reason) => *totals.endings.entry(reason).or_default() += 1,
            Ending::PlyLimit => totals.games_at_limit += 1,
            Ending::Failed => totals.games_failed += 1,
        });
    }

    pub fn move_sent(&self) {
        self.with(|totals| totals.moves_sent += 1);
    }

    pub fn acknowledged(&self, latency: Duration) {
        self.with(|totals| totals.ack.push(latency));
    }

    pub fn broadcast_seen(&self, latency: Duration) {
        self.with(|totals| totals.broadcast.push(latency));
    }

    /// An error by its code: the server's (`rate_limited`, `internal`, ...)
    /// or the tool's own (`timeout`, `socket_closed`, `http_503`, ...).
    pub fn error(&self, code: &str) {
        self.with(|totals| *totals.errors.entry(code.to_owned()).or_default() += 1);
    }

    /// The figures of a run that took `elapsed`.
    pub fn report(&self, target: String, elapsed: Duration) -> Report {
        self.with(|totals| {
            totals.ack.sort_unstable();
            totals.broadcast.sort_unstable();
            Report {
                target,
                elapsed,
                games_started: totals.games_started,
                endings: totals.endings.clone(),
                games_at_limit: totals.games_at_limit,
                games_failed: totals.games_failed,
                moves_sent: totals.moves_sent,
                moves_acked: totals.ack.len() as u64,
                broadcasts_seen: totals.broadcast.len() as u64,
                ack: Percentiles::of_sorted(&totals.ack),
                broadcast: Percentiles::of_sorted(&totals.broadcast),
                errors: totals.errors.clone(),
            }
        })
    }
}

/// Percentiles of a latency sample (nearest rank); `None` for no samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Percentiles {
    pub p50: Duration,
    pub p90: Duration,
    pub p99: Duration,
    pub max: Duration,
}

impl Percentiles {
    /// Nearest-rank percentiles of `sorted` (ascending), `None` when empty.
    pub fn of_sorted(sorted: &[Duration]) -> Option<Percentiles> {
        let max = *sorted.last()?;
        let rank = |percent: usize| {
            // Nearest rank: the smallest sample with at least `percent`% of
            // the samples at or below it.
            let index = (sorted.len() * percent).div_ceil(100).max(1) - 1;
            sorted[index]
        };
        Some(Percentiles {
            p50: rank(50),
            p90: rank(90),
            p99: rank(99),
            max,
        })
    }
}

/// The summary of a run.
#[derive(Clone, Debug)]
pub struct Report {
    pub target: String,
    pub elapsed: Duration,
    pub games_started: u64,
    /// Games that ended by the rules, by reason.
    pub endings: BTreeMap<String, u64>,
    pub games_at_limit: u64,
    pub games_failed: u64,
    pub moves_sent: u64,
    pub moves_acked: u64,
    pub broadcasts_seen: u64,
    pub ack: Option<Percentiles>,
    pub broadcast: Option<Percentiles>,
    pub errors: BTreeMap<String, u64>,
}

impl Report {
    /// Acknowledged moves per second of wall time.
    pub fn moves_per_second(&self) -> f64 {
        let seconds = self.elapsed.as_secs_f64();
        if seconds > 0.0 {
            self.moves_acked as f64 / seconds
        } else {
            0.0
        }
    }
}

/// Milliseconds with one decimal.
fn ms(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1000.0)
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "target:    {}", self.target)?;
        let by_rule: u64 = self.endings.values().sum();
        write!(
            f,
            "games:     {} started, {} at the ply limit, {} ended by the rules",
            self.games_started, self.games_at_limit, by_rule
        )?;
        if !self.endings.is_empty() {
            let reasons: Vec<String> = self
                .endings
                .iter()
                .map(|(reason, count)| format!("{reason} {count}"))
                .collect();
            write!(f, " ({})", reasons.join(", "))?;
        }
        writeln!(f, ", {} failed", self.games_failed)?;
        writeln!(
            f,
            "moves:     {} sent, {} acknowledged, {} seen by the opponent in {:.1} s = {:.1} moves/s",
            self.moves_sent,
            self.moves_acked,
            self.broadcasts_seen,
            self.elapsed.as_secs_f64(),
            self.moves_per_second()
        )?;
        match self.ack {
            Some(ack) => writeln!(
                f,
                "ack:       p50 {}  p90 {}  p99 {}  max {}",
                ms(ack.p50),
                ms(ack.p90),
                ms(ack.p99),
                ms(ack.max)
            )?,
            None => writeln!(f, "ack:       no samples")?,
        }
        match self.broadcast {
            Some(broadcast) => writeln!(
                f,
                "broadcast: p50 {}  p99 {}",
                ms(broadcast.p50),
                ms(broadcast.p99)
            )?,
            None => writeln!(f, "broadcast: no samples")?,
        }
        if self.errors.is_empty() {
            write!(f, "errors:    none")
        } else {
            let errors: Vec<String> = self
                .errors
                .iter()
                .map(|(code, count)| format!("{code} {count}"))
                .collect();
            write!(f, "errors:    {}", errors.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn millis(values: impl IntoIterator<Item = u64>) -> Vec<Duration> {
        values.into_iter().map(Duration::from_millis).collect()
    }

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let sorted = millis(1..=100);
        let percentiles = Percentiles::of_sorted(&sorted).expect("samples");
        assert_eq!(percentiles.p50, Duration::from_millis(50));
        assert_eq!(percentiles.p90, Duration::from_millis(90));
        assert_eq!(percentiles.p99, Duration::from_millis(99));
        assert_eq!(percentiles.max, Duration::from_millis(100));
    }

    #[test]
    fn one_sample_is_every_percentile() {
        let percentiles = Percentiles::of_sorted(&millis([7])).expect("a sample");
        assert_eq!(percentiles.p50, Duration::from_millis(7));
        assert_eq!(percentiles.p99, Duration::from_millis(7));
        assert_eq!(percentiles.max, Duration::from_millis(7));
    }

    #[test]
    fn no_samples_no_percentiles() {
        assert_eq!(Percentiles::of_sorted(&[]), None);
    }

    #[test]
    fn the_report_sorts_samples_and_counts_errors_by_code() {
        let recorder = Recorder::default();
        for latency in [30, 10, 20] {
            recorder.move_sent();
            recorder.acknowledged(Duration::from_millis(latency));
        }
        recorder.error("rate_limited");
        recorder.error("rate_limited");
        recorder.error("timeout");
        recorder.game_ended(Ending::Rule("checkmate".to_owned()));
        recorder.game_ended(Ending::PlyLimit);
        let report = recorder.report("test".to_owned(), Duration::from_secs(2));
        assert_eq!(report.moves_acked, 3);
        assert_eq!(
            report.ack.map(|ack| ack.p50),
            Some(Duration::from_millis(20))
        );
        assert_eq!(
            report.ack.map(|ack| ack.max),
            Some(Duration::from_millis(30))
        );
        assert_eq!(report.errors.get("rate_limited"), Some(&2));
        assert_eq!(report.errors.get("timeout"), Some(&1));
        assert_eq!(report.endings.get("checkmate"), Some(&1));
        assert_eq!(report.games_at_limit, 1);
        assert!((report.moves_per_second() - 1.5).abs() < 1e-9);
        let text = report.to_string();
        assert!(
            text.contains("errors:    rate_limited 2, timeout 1"),
            "{text}"
        );
    }
}
