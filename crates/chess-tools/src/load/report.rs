//! What a run measured: a [`Recorder`] the games write into as they play, and
//! the [`Report`] printed at the end.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

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

/// A seated game (see [`Recorder::game_seated`]).
#[must_use = "the game counts as seated only while this is held"]
#[derive(Debug)]
pub struct Seated<'a> {
    recorder: &'a Recorder,
}

impl Drop for Seated<'_> {
    fn drop(&mut self) {
        self.recorder.with(|totals| totals.games_seated -= 1);
    }
}

/// Everything measured so far; shared by all games of a run.
#[derive(Debug, Default)]
pub struct Recorder {
    totals: Mutex<Totals>,
}

#[derive(Debug, Default)]
struct Totals {
    games_started: u64,
    /// Games whose sockets are all open and greeted, not ended yet.
    games_seated: u64,
    endings: BTreeMap<String, u64>,
    games_at_limit: u64,
    games_failed: u64,
    moves_sent: u64,
    /// Send → `ack`, one sample per acknowledged move.
    ack: Vec<Duration>,
    /// When each `ack` arrived, to count the moves of the steady window.
    acked_at: Vec<Instant>,
    /// Send → the opponent's `event`, one sample per move the opponent saw.
    broadcast: Vec<Duration>,
    /// Send → a spectator's `event`, one sample per move and spectator.
    spectated: Vec<Duration>,
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

    /// A game's sockets are all open: it counts as seated until the
    /// returned guard drops (the game ended, or failed).
    pub fn game_seated(&self) -> Seated<'_> {
        self.with(|totals| totals.games_seated += 1);
        Seated { recorder: self }
    }

    /// Games with every socket open right now: what a server's memory per
    /// live game is divided by (a game still waiting for its set-up holds
    /// no socket yet, and on a busy machine many games wait).
    pub fn seated_games(&self) -> u64 {
        self.with(|totals| totals.games_seated)
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
        self.acknowledged_at(Instant::now(), latency);
    }

    /// An `ack` that arrived `at`, `latency` after its move was sent.
    pub fn acknowledged_at(&self, at: Instant, latency: Duration) {
        self.with(|totals| {
            totals.ack.push(latency);
            totals.acked_at.push(at);
        });
    }

    pub fn broadcast_seen(&self, latency: Duration) {
        self.with(|totals| totals.broadcast.push(latency));
    }

    pub fn spectator_saw(&self, latency: Duration) {
        self.with(|totals| totals.spectated.push(latency));
    }

    /// The ack and opponent latencies recorded after the first `acks` and
    /// `broadcasts` of each: the figures of one time window, for a caller
    /// that remembers how many it has seen. (Before [`Recorder::report`],
    /// which sorts the samples.)
    pub fn latencies_after(
        &self,
        acks: usize,
        broadcasts: usize,
    ) -> (Vec<Duration>, Vec<Duration>) {
        self.with(|totals| {
            (
                totals.ack.get(acks..).unwrap_or_default().to_vec(),
                totals
                    .broadcast
                    .get(broadcasts..)
                    .unwrap_or_default()
                    .to_vec(),
            )
        })
    }

    /// Errors recorded so far, all codes together.
    pub fn errors_total(&self) -> u64 {
        self.with(|totals| totals.errors.values().sum())
    }

    /// An error by its code: the server's (`rate_limited`, `internal`, ...)
    /// or the tool's own (`timeout`, `socket_closed_1012`, `socket_lost`, `http_503`, ...).
    pub fn error(&self, code: &str) {
        self.with(|totals| *totals.errors.entry(code.to_owned()).or_default() += 1);
    }

    /// The figures of a run that took `elapsed`; `steady` is the window in
    /// which every slot was playing (after the ramp, before new games stop).
    pub fn report(
        &self,
        target: String,
        elapsed: Duration,
        steady: Option<(Instant, Instant)>,
    ) -> Report {
        self.with(|totals| {
            totals.ack.sort_unstable();
            totals.broadcast.sort_unstable();
            totals.spectated.sort_unstable();
            let steady = steady.map(|(from, to)| Steady {
                window: to - from,
                moves_acked: totals
                    .acked_at
                    .iter()
                    .filter(|at| (from..to).contains(at))
                    .count() as u64,
            });
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
                spectators_seen: totals.spectated.len() as u64,
                spectated: Percentiles::of_sorted(&totals.spectated),
                steady,
                errors: totals.errors.clone(),
                servers: Vec::new(),
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
    pub spectators_seen: u64,
    pub spectated: Option<Percentiles>,
    /// Throughput while every slot was busy, when the run had such a window.
    pub steady: Option<Steady>,
    pub errors: BTreeMap<String, u64>,
    /// What the measured server processes used (`--server-pid`).
    pub servers: Vec<ServerUse>,
}

/// Moves acknowledged in the steady window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Steady {
    pub window: Duration,
    pub moves_acked: u64,
}

impl Steady {
    pub fn moves_per_second(&self) -> f64 {
        let seconds = self.window.as_secs_f64();
        if seconds > 0.0 {
            self.moves_acked as f64 / seconds
        } else {
            0.0
        }
    }
}

/// CPU and memory of one server process over the run.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerUse {
    pub pid: u32,
    /// CPU time used during the run over wall time, in percent of one core.
    pub cpu_percent: f64,
    pub rss_start: u64,
    pub rss_end: u64,
    /// The resident size at the sample with the most seated games (every
    /// socket open), and that number.
    pub rss_busiest: u64,
    pub live_games_busiest: u64,
}

impl ServerUse {
    /// Memory the live games added, per game, at the busiest sample.
    pub fn rss_per_live_game(&self) -> Option<u64> {
        (self.live_games_busiest > 0)
            .then(|| self.rss_busiest.saturating_sub(self.rss_start) / self.live_games_busiest)
    }
}

/// Bytes as MiB with one decimal.
fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// One latency line: `p50 .. p90 .. p99 .. max ..` or `no samples`.
fn latency_line(
    f: &mut fmt::Formatter<'_>,
    label: &str,
    percentiles: Option<Percentiles>,
) -> fmt::Result {
    match percentiles {
        Some(p) => writeln!(
            f,
            "{label:<11}p50 {}  p90 {}  p99 {}  max {}",
            ms(p.p50),
            ms(p.p90),
            ms(p.p99),
            ms(p.max)
        ),
        None => writeln!(f, "{label:<11}no samples"),
    }
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
        if let Some(steady) = self.steady {
            writeln!(
                f,
                "steady:    {} acknowledged in the {:.1} s with every slot playing = {:.1} moves/s",
                steady.moves_acked,
                steady.window.as_secs_f64(),
                steady.moves_per_second()
            )?;
        }
        latency_line(f, "ack:", self.ack)?;
        latency_line(f, "opponent:", self.broadcast)?;
        if self.spectators_seen > 0 {
            latency_line(f, "spectator:", self.spectated)?;
        }
        for server in &self.servers {
            write!(
                f,
                "server {}: CPU {:.0}% of one core, RSS {} at start, {} at end, {} with {} live games",
                server.pid,
                server.cpu_percent,
                mib(server.rss_start),
                mib(server.rss_end),
                mib(server.rss_busiest),
                server.live_games_busiest
            )?;
            match server.rss_per_live_game() {
                Some(per_game) => {
                    writeln!(f, " ({:.0} KiB per live game)", per_game as f64 / 1024.0)?
                }
                None => writeln!(f)?,
            }
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
        let report = recorder.report("test".to_owned(), Duration::from_secs(2), None);
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

    #[test]
    fn the_steady_window_counts_only_the_acks_inside_it() {
        let recorder = Recorder::default();
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let (from, to) = (at(1_000), at(3_000));
        for ms in [500, 1_000, 2_999, 3_000, 4_000] {
            recorder.acknowledged_at(at(ms), Duration::from_millis(5));
        }
        let report = recorder.report("test".to_owned(), Duration::from_secs(1), Some((from, to)));
        let steady = report.steady.expect("a window was given");
        // From its start (included) to its end (excluded).
        assert_eq!(steady.moves_acked, 2);
        assert_eq!(steady.window, Duration::from_secs(2));
        assert!((steady.moves_per_second() - 1.0).abs() < 1e-9);
        assert_eq!(report.moves_acked, 5);
    }

    #[test]
    fn seated_games_are_those_holding_their_sockets_now() {
        let recorder = Recorder::default();
        for _ in 0..4 {
            recorder.game_started();
        }
        let first = recorder.game_seated();
        let second = recorder.game_seated();
        assert_eq!(recorder.seated_games(), 2);
        drop(first);
        assert_eq!(recorder.seated_games(), 1);
        drop(second);
        assert_eq!(recorder.seated_games(), 0);
    }

    #[test]
    fn memory_per_live_game_is_the_growth_over_the_start() {
        let server = ServerUse {
            pid: 1,
            cpu_percent: 50.0,
            rss_start: 10 << 20,
            rss_end: 12 << 20,
            rss_busiest: 20 << 20,
            live_games_busiest: 1024,
        };
        assert_eq!(server.rss_per_live_game(), Some(10 * 1024));
        let idle = ServerUse {
            live_games_busiest: 0,
            ..server
        };
        assert_eq!(idle.rss_per_live_game(), None);
    }
}
