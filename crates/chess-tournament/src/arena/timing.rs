//! The arena's clocks: how long players wait before a pairing pass, when
//! pairings close and how long a paused player waits to come back.
//! Durations in milliseconds. (What berserk takes off a clock is a rule of
//! the game itself: `chess_game::RealTime::berserk_initial_ms`.)

/// A tournament's time control: base time and increment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArenaClock {
    pub base_ms: u64,
    pub increment_ms: u64,
}

impl ArenaClock {
    /// The game's expected length for one player, base + 40 increments (in
    /// whole seconds, as the rules state the thresholds).
    pub fn estimated_secs(self) -> u64 {
        (self.base_ms + 40 * self.increment_ms) / 1000
    }
}

/// How long two players must have waited before a pass pairs them: 8 s for
/// games expected under 30 s, 10 s under 60 s, otherwise a tenth of the
/// expected length plus 6 s, kept within 15 to 50 s (1+0: 15 s, 3+0: 24 s,
/// 5+0: 36 s, 10+0 and longer: 50 s).
pub fn pairing_wait(clock: ArenaClock) -> u64 {
    let estimated = clock.estimated_secs();
    let secs = match estimated {
        0..30 => 8,
        30..60 => 10,
        _ => (estimated / 10 + 6).clamp(15, 50),
    };
    secs * 1000
}

/// How long before the end no new pairing is made: half the base time,
/// but at least 30 s and at most 120 s.
pub fn closing_window(clock: ArenaClock) -> u64 {
    (clock.base_ms / 2).clamp(30_000, 120_000)
}

/// How long a player who paused (or was paused for not moving) waits before
/// the pairing takes them again, after their `pauses`-th pause: (pauses - 1)
/// fifteenths of the expected game length, within 10 s to 120 s.
pub fn pause_delay(pauses: u32, clock: ArenaClock) -> u64 {
    let secs = u64::from(pauses.saturating_sub(1)) * clock.estimated_secs() / 15;
    secs.clamp(10, 120) * 1000
}

/// Pauses stop counting after this long without one.
pub const PAUSES_FORGOTTEN_AFTER_MS: u64 = 20 * 60 * 1000;

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(base_s: u64, increment_s: u64) -> ArenaClock {
        ArenaClock {
            base_ms: base_s * 1000,
            increment_ms: increment_s * 1000,
        }
    }

    #[test]
    fn waits_grow_with_the_clock_as_published() {
        assert_eq!(pairing_wait(clock(15, 0)), 8_000);
        assert_eq!(pairing_wait(clock(30, 0)), 10_000);
        assert_eq!(pairing_wait(clock(60, 0)), 15_000);
        assert_eq!(pairing_wait(clock(180, 0)), 24_000);
        assert_eq!(pairing_wait(clock(300, 0)), 36_000);
        assert_eq!(pairing_wait(clock(600, 0)), 50_000);
        assert_eq!(pairing_wait(clock(1800, 30)), 50_000);
        // 3+2: 180 + 80 = 260 s expected, 26 + 6 = 32 s.
        assert_eq!(pairing_wait(clock(180, 2)), 32_000);
    }

    #[test]
    fn pairings_close_within_thirty_seconds_to_two_minutes() {
        assert_eq!(closing_window(clock(60, 0)), 30_000);
        assert_eq!(closing_window(clock(180, 0)), 90_000);
        assert_eq!(closing_window(clock(300, 0)), 120_000);
        assert_eq!(closing_window(clock(15, 0)), 30_000);
    }

    #[test]
    fn pauses_cost_more_each_time() {
        let five = clock(300, 0);
        assert_eq!(pause_delay(1, five), 10_000);
        assert_eq!(pause_delay(2, five), 20_000);
        assert_eq!(pause_delay(3, five), 40_000);
        assert_eq!(pause_delay(20, five), 120_000);
        assert_eq!(pause_delay(2, clock(60, 0)), 10_000);
    }
}
