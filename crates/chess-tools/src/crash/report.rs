//! What a run found: failed checks (each with the game and the details) and
//! counters of what was exercised, printed at the end.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// Every check the tool makes, by the name findings carry.
pub const CHECKS: &[&str] = &[
    // An acknowledged (or broadcast) move is missing or different after a restart.
    "acked_move_lost",
    // A stored move that no client sent.
    "unexplained_move",
    // The stored moves do not replay through chess-rules to the stored position.
    "corrupt_game",
    // A clock did not lose exactly the time that passed (downtime included).
    "clock",
    // A premove was still set after the restart (a restart drops every socket).
    "premove_kept",
    // A seat was told an older version than it had already seen.
    "version_went_back",
    // A result seen before the restart changed or vanished.
    "result_changed",
    // The server refused something it should have accepted, or answered
    // unexpectedly, while it was up.
    "protocol",
    // The reward ledger broke a rule of docs/rewards.md.
    "ledger",
    // A game changed ratings other than once per player for a rated ending.
    "ratings",
    // The server panicked (its log says so) or its process ended by itself.
    "panic",
];

/// One failed check.
#[derive(Clone, Debug)]
pub struct Finding {
    pub check: &'static str,
    pub game: String,
    pub detail: String,
}

/// Collects findings and counts from every task of the run.
#[derive(Debug, Default)]
pub struct Recorder {
    findings: Mutex<Vec<Finding>>,
    counts: Mutex<BTreeMap<&'static str, u64>>,
    /// Largest difference between a clock and its expected value, in ms.
    clock_error_max_ms: AtomicU64,
    clocks_checked: AtomicU64,
    downtime_total_ms: AtomicU64,
    downtime_max_ms: AtomicU64,
}

impl Recorder {
    /// Records a failed check.
    pub fn fail(&self, check: &'static str, game: &str, detail: impl Into<String>) {
        debug_assert!(CHECKS.contains(&check), "{check}");
        let finding = Finding {
            check,
            game: game.to_owned(),
            detail: detail.into(),
        };
        self.findings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(finding);
    }

    /// How many findings there are so far.
    pub fn findings_count(&self) -> usize {
        self.findings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Adds one to counter `name`.
    pub fn count(&self, name: &'static str) {
        self.add(name, 1);
    }

    /// Counter `name` so far.
    pub fn count_of(&self, name: &str) -> u64 {
        self.counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .copied()
            .unwrap_or(0)
    }

    /// Adds `n` to counter `name`.
    pub fn add(&self, name: &'static str, n: u64) {
        *self
            .counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(name)
            .or_default() += n;
    }

    /// A clock was compared with its expected value; `error_ms` apart.
    pub fn clock_checked(&self, error_ms: u64) {
        self.clocks_checked.fetch_add(1, Ordering::Relaxed);
        self.clock_error_max_ms
            .fetch_max(error_ms, Ordering::Relaxed);
    }

    /// The server was down for `downtime` (kill to healthy again).
    pub fn downtime(&self, downtime: Duration) {
        let ms = u64::try_from(downtime.as_millis()).unwrap_or(u64::MAX);
        self.downtime_total_ms.fetch_add(ms, Ordering::Relaxed);
        self.downtime_max_ms.fetch_max(ms, Ordering::Relaxed);
    }

    /// The figures so far.
    pub fn report(&self, label: String, tolerated: &[String], elapsed: Duration) -> Report {
        let findings = self
            .findings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let counts = self
            .counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        Report {
            label,
            elapsed,
            findings,
            tolerated: tolerated.to_vec(),
            counts,
            clocks_checked: self.clocks_checked.load(Ordering::Relaxed),
            clock_error_max_ms: self.clock_error_max_ms.load(Ordering::Relaxed),
            downtime_total_ms: self.downtime_total_ms.load(Ordering::Relaxed),
            downtime_max_ms: self.downtime_max_ms.load(Ordering::Relaxed),
        }
    }
}

/// The outcome of a run.
#[derive(Clone, Debug)]
pub struct Report {
    pub label: String,
    pub elapsed: Duration,
    pub findings: Vec<Finding>,
    /// Checks whose findings do not fail the run (known bugs).
    pub tolerated: Vec<String>,
    pub counts: BTreeMap<&'static str, u64>,
    pub clocks_checked: u64,
    pub clock_error_max_ms: u64,
    pub downtime_total_ms: u64,
    pub downtime_max_ms: u64,
}

impl Report {
    /// A counter's value (0 when never counted).
    pub fn count(&self, name: &str) -> u64 {
        self.counts.get(name).copied().unwrap_or(0)
    }

    /// The findings that fail the run.
    pub fn failures(&self) -> Vec<&Finding> {
        self.findings
            .iter()
            .filter(|finding| !self.tolerated.iter().any(|name| name == finding.check))
            .collect()
    }

    /// How many findings each check had.
    pub fn findings_by_check(&self) -> BTreeMap<&'static str, usize> {
        let mut by_check = BTreeMap::new();
        for finding in &self.findings {
            *by_check.entry(finding.check).or_default() += 1;
        }
        by_check
    }
}

/// At most this many findings of one check are printed in full.
const SHOWN_PER_CHECK: usize = 5;

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "target:    {}", self.label)?;
        let kills = self.count("kills");
        writeln!(
            f,
            "cycles:    {kills} faults (and {} kills during start-up), {} starts, downtime mean {} ms max {} ms, {:.1} s in all",
            self.count("startup_kills"),
            self.count("starts"),
            self.downtime_total_ms / kills.max(1),
            self.downtime_max_ms,
            self.elapsed.as_secs_f64()
        )?;
        writeln!(
            f,
            "games:     {} started, {} finished, {} resumed after a restart",
            self.count("games_started"),
            self.count("games_finished"),
            self.count("games_resumed")
        )?;
        writeln!(
            f,
            "moves:     {} acknowledged, {} sent and never acknowledged, of those {} stored anyway",
            self.count("moves_acked"),
            self.count("moves_unacked"),
            self.count("moves_stored_unacked")
        )?;
        if self.count("moves_refused_database_away") + self.count("backends_terminated") > 0 {
            writeln!(
                f,
                "database:  {} backends terminated, {} moves refused while it was away (codes: {}), resent until stored; {} refused moves found stored before their resend was answered",
                self.count("backends_terminated"),
                self.count("moves_refused_database_away"),
                self.counts
                    .iter()
                    .filter_map(|(name, n)| name
                        .strip_prefix("refusal_code_")
                        .map(|code| format!("{code} {n}")))
                    .collect::<Vec<_>>()
                    .join(", "),
                self.count("moves_refused_but_stored")
            )?;
        }
        writeln!(
            f,
            "actions:   {} premoves set ({} played), {} draw offers ({} accepted), {} resignations",
            self.count("premoves_set"),
            self.count("premoves_played"),
            self.count("draw_offers"),
            self.count("draws_accepted"),
            self.count("resignations")
        )?;
        writeln!(
            f,
            "checked:   {} games replayed, {} clocks (largest error {} ms), {} premoves pending at a kill, ledger {} entries ({} over the cap), {} rating changes",
            self.count("games_replayed"),
            self.clocks_checked,
            self.clock_error_max_ms,
            self.count("premoves_at_kill"),
            self.count("ledger_entries"),
            self.count("ledger_over_cap"),
            self.count("rating_changes")
        )?;
        let by_check = self.findings_by_check();
        if by_check.is_empty() {
            return write!(f, "findings:  none");
        }
        write!(f, "findings:")?;
        for (check, count) in &by_check {
            let tolerated = self.tolerated.iter().any(|name| name == check);
            write!(
                f,
                "\n  {check}: {count}{}",
                if tolerated {
                    " (tolerated: known bug)"
                } else {
                    ""
                }
            )?;
            for finding in self
                .findings
                .iter()
                .filter(|finding| finding.check == *check)
                .take(SHOWN_PER_CHECK)
            {
                write!(f, "\n    game {}: {}", finding.game, finding.detail)?;
            }
        }
        Ok(())
    }
}
