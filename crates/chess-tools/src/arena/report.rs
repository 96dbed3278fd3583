//! What an arena run found: the failed checks, what was exercised, and the
//! waits against the documented wait.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// Every check the audit makes, by the name findings carry.
pub const CHECKS: &[&str] = &[
    // A player was paired while still in a game of the arena.
    "two_games_at_once",
    // The same two players in a row (the field had more than two).
    "immediate_rematch",
    // A fourth game in a row with one colour.
    "colour_run",
    // A pairing before the start or in the closing window.
    "closing_window",
    // A tournament game still not over at the audit.
    "unfinished",
    // A pairing that one of its players never got to play.
    "unplayed",
    // The stored result or move count differs from what the players saw.
    "result_changed",
    // A node's standings differ from the score sheets of the stored games.
    "scored_wrong",
    // Two nodes show different standings.
    "nodes_disagree",
    // Fewer than 95% of the waits within the documented wait.
    "waits",
    // No pairing after the killed node came back (the arena stopped).
    "stopped_after_kill",
    // Something a player was refused, or a game that never ended.
    "player",
    // A server panicked.
    "panic",
];

/// One failed check.
#[derive(Clone, Debug)]
pub struct Finding {
    pub check: &'static str,
    pub detail: String,
}

/// The waits between a player's becoming free and their next pairing.
#[derive(Clone, Debug, Default)]
pub struct Waits {
    /// The documented wait for the arena's clock plus one director tick.
    pub limit_ms: i64,
    /// Waits that ended in a pairing, and those still open when pairings
    /// closed that had already lasted longer than the limit.
    pub counted: Vec<i64>,
    /// Waits that overlapped a node's outage (left out of the figure, shown
    /// beside it).
    pub during_outage: Vec<i64>,
}

impl Waits {
    /// How many counted waits are within the limit.
    pub fn within(&self) -> usize {
        self.counted
            .iter()
            .filter(|&&wait| wait <= self.limit_ms)
            .count()
    }

    /// The share of counted waits within the limit (1 with none).
    pub fn share_within(&self) -> f64 {
        if self.counted.is_empty() {
            return 1.0;
        }
        self.within() as f64 / self.counted.len() as f64
    }

    /// The `q`-quantile of the counted waits, in ms.
    pub fn quantile(&self, q: f64) -> i64 {
        let mut sorted = self.counted.clone();
        sorted.sort_unstable();
        if sorted.is_empty() {
            return 0;
        }
        let index = ((sorted.len() - 1) as f64 * q).round() as usize;
        sorted[index.min(sorted.len() - 1)]
    }
}

/// The whole run's outcome.
#[derive(Clone, Debug)]
pub struct Report {
    pub label: String,
    pub findings: Vec<Finding>,
    pub counts: BTreeMap<&'static str, u64>,
    pub waits: Waits,
    pub elapsed: Duration,
}

impl Report {
    pub fn new(label: String) -> Report {
        Report {
            label,
            findings: Vec::new(),
            counts: BTreeMap::new(),
            waits: Waits::default(),
            elapsed: Duration::ZERO,
        }
    }

    /// Records a failed check.
    pub fn fail(&mut self, check: &'static str, detail: impl Into<String>) {
        debug_assert!(CHECKS.contains(&check), "{check}");
        self.findings.push(Finding {
            check,
            detail: detail.into(),
        });
    }

    /// Adds `n` to counter `name`.
    pub fn add(&mut self, name: &'static str, n: u64) {
        *self.counts.entry(name).or_default() += n;
    }

    /// Counter `name` (0 when never counted).
    pub fn count(&self, name: &str) -> u64 {
        self.counts.get(name).copied().unwrap_or(0)
    }

    /// The findings of `check`.
    pub fn of(&self, check: &str) -> Vec<&Finding> {
        self.findings
            .iter()
            .filter(|finding| finding.check == check)
            .collect()
    }
}

/// Findings shown per check; the rest are counted.
const SHOWN_PER_CHECK: usize = 5;

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "arena: {} in {:.0?}", self.label, self.elapsed)?;
        for (name, value) in &self.counts {
            writeln!(f, "  {name}: {value}")?;
        }
        let waits = &self.waits;
        writeln!(
            f,
            "  waits: {} counted, {} within {} ms ({:.1}%), p50 {} ms, p95 {} ms, max {} ms; \
             left out, overlapping an outage: {} ({} within, max {} ms)",
            waits.counted.len(),
            waits.within(),
            waits.limit_ms,
            waits.share_within() * 100.0,
            waits.quantile(0.5),
            waits.quantile(0.95),
            waits.quantile(1.0),
            waits.during_outage.len(),
            waits
                .during_outage
                .iter()
                .filter(|&&wait| wait <= waits.limit_ms)
                .count(),
            waits.during_outage.iter().max().copied().unwrap_or(0),
        )?;
        if self.findings.is_empty() {
            return writeln!(f, "  no findings");
        }
        writeln!(f, "  {} findings:", self.findings.len())?;
        for check in CHECKS {
            let of = self.of(check);
            for finding in of.iter().take(SHOWN_PER_CHECK) {
                writeln!(f, "    {check}: {}", finding.detail)?;
            }
            if of.len() > SHOWN_PER_CHECK {
                writeln!(f, "    {check}: {} more", of.len() - SHOWN_PER_CHECK)?;
            }
        }
        Ok(())
    }
}
