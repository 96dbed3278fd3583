//! When a pairing pass runs, and when a paused player may come back. Times
//! are milliseconds on whatever clock the caller keeps.

use crate::arena::timing::{ArenaClock, PAUSES_FORGOTTEN_AFTER_MS, pairing_wait, pause_delay};

/// Waiting players from which a pass runs whatever their waits.
pub const CROWD: usize = 100;

/// Whether a pass should pair the pool now. `waited_ms` is how long each
/// waiting player has waited; `active` counts the players taking part now
/// (waiting or playing, not paused). A pass needs two waiting players, and
/// then runs when nobody has been paired yet, when more than [`CROWD`]
/// wait, when two have waited the clock's [`pairing_wait`], or when two
/// thirds of the active players wait (a small field need not wait out the
/// games still running).
pub fn pass_due(waited_ms: &[u64], active: usize, clock: ArenaClock, paired_before: bool) -> bool {
    let waiting = waited_ms.len();
    if waiting < 2 {
        return false;
    }
    let wait = pairing_wait(clock);
    let waited_enough = waited_ms.iter().filter(|&&waited| waited >= wait).count() >= 2;
    !paired_before || waiting > CROWD || waited_enough || 3 * waiting >= 2 * active
}

/// A player's pauses: how many lately, and when the last one was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pauses {
    pub count: u32,
    pub last_at: Option<u64>,
}

impl Pauses {
    /// The player pauses at `now`: the moment from which the pool takes
    /// them again. Pauses older than [`PAUSES_FORGOTTEN_AFTER_MS`] are
    /// forgotten first.
    pub fn pause(&mut self, now: u64, clock: ArenaClock) -> u64 {
        let forgotten = self
            .last_at
            .is_some_and(|last| now.saturating_sub(last) >= PAUSES_FORGOTTEN_AFTER_MS);
        if forgotten {
            self.count = 0;
        }
        self.count += 1;
        self.last_at = Some(now);
        now + pause_delay(self.count, clock)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLITZ: ArenaClock = ArenaClock {
        base_ms: 180_000,
        increment_ms: 0,
    };

    #[test]
    fn a_pass_needs_two_waiting_players() {
        assert!(!pass_due(&[], 10, BLITZ, false));
        assert!(!pass_due(&[60_000], 10, BLITZ, false));
        assert!(
            pass_due(&[0, 0], 10, BLITZ, false),
            "the first pass at once"
        );
    }

    #[test]
    fn later_passes_wait_for_two_long_waits_or_a_crowd() {
        // 3+0 waits 24 s.
        assert!(!pass_due(&[23_999, 30_000, 0], 40, BLITZ, true));
        assert!(pass_due(&[24_000, 30_000, 0], 40, BLITZ, true));
        assert!(pass_due(&[0; CROWD + 1], 400, BLITZ, true));
        assert!(!pass_due(&[0; CROWD], 400, BLITZ, true));
    }

    #[test]
    fn a_small_field_mostly_waiting_is_paired_at_once() {
        assert!(pass_due(&[0, 0], 3, BLITZ, true));
        assert!(!pass_due(&[0, 0], 4, BLITZ, true));
        assert!(pass_due(&[0; 4], 6, BLITZ, true));
    }

    #[test]
    fn pauses_grow_and_are_forgotten_after_twenty_minutes() {
        let five = ArenaClock {
            base_ms: 300_000,
            increment_ms: 0,
        };
        let mut pauses = Pauses::default();
        assert_eq!(pauses.pause(0, five), 10_000);
        assert_eq!(pauses.pause(60_000, five), 80_000);
        assert_eq!(pauses.pause(120_000, five), 160_000);
        // Twenty minutes later the count starts again.
        let later = 120_000 + PAUSES_FORGOTTEN_AFTER_MS;
        assert_eq!(pauses.pause(later, five), later + 10_000);
        assert_eq!(pauses.count, 1);
    }
}
