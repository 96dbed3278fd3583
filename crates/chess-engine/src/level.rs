//! The two playing levels and how much time each spends on a move.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::Limits;

/// How strongly the engine plays. Each level is a fixed, documented setting.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    /// Level 1, for beginners: a two-ply search plus captures, then a choice
    /// among the moves with random noise of up to ±60 centipawns added to
    /// their scores, and on one move in eight a "blunder" noise of up to
    /// ±250. It sees one-move threats, so it does not hang its queen every
    /// move, but it misses forks, pins and quiet threats, and sometimes
    /// gives away a pawn or a piece. At most 0.3 s a move.
    Easy,
    /// Level 2, a club player: the full search (iterative deepening, no depth
    /// cap), about one second a move, less on a short clock.
    Hard,
}

/// Settings that make up a level.
#[derive(Copy, Clone, Debug)]
pub(crate) struct LevelSettings {
    /// The deepest iteration searched, if capped.
    pub max_depth: Option<u32>,
    /// Uniform noise added to every root move's score, in centipawns.
    pub noise: u32,
    /// One move in this many uses `blunder_noise` instead (0: never).
    pub blunder_one_in: u32,
    pub blunder_noise: u32,
    /// The most time spent on one move.
    pub max_think_time: Duration,
    /// Transposition table size.
    pub hash_megabytes: usize,
}

impl Level {
    /// Both levels, weakest first.
    pub const ALL: [Level; 2] = [Level::Easy, Level::Hard];

    /// The level's number as shown to players and used by the UCI option.
    pub const fn number(self) -> u8 {
        match self {
            Level::Easy => 1,
            Level::Hard => 2,
        }
    }

    /// The level with this number, if any.
    pub const fn from_number(number: u8) -> Option<Level> {
        match number {
            1 => Some(Level::Easy),
            2 => Some(Level::Hard),
            _ => None,
        }
    }

    /// A stable lowercase name: `easy` or `hard`.
    pub const fn name(self) -> &'static str {
        match self {
            Level::Easy => "easy",
            Level::Hard => "hard",
        }
    }

    pub(crate) const fn settings(self) -> LevelSettings {
        match self {
            Level::Easy => LevelSettings {
                max_depth: Some(2),
                noise: 60,
                blunder_one_in: 8,
                blunder_noise: 250,
                max_think_time: Duration::from_millis(300),
                hash_megabytes: 1,
            },
            Level::Hard => LevelSettings {
                max_depth: None,
                noise: 0,
                blunder_one_in: 0,
                blunder_noise: 0,
                max_think_time: Duration::from_secs(1),
                hash_megabytes: 16,
            },
        }
    }

    /// How long this level thinks about a move with `remaining` on its clock
    /// and `increment` added after each move; `None` for an untimed game.
    ///
    /// Untimed, this is the level's usual time (1 s for [`Level::Hard`]).
    /// On a clock it is about a 25th of the remaining time plus most of the
    /// increment, never more than a quarter of what is left, never more than
    /// the untimed figure, and with a safety margin for the server's latency.
    pub fn think_time(self, remaining: Option<Duration>, increment: Duration) -> Duration {
        let cap = self.settings().max_think_time;
        let Some(remaining) = remaining else {
            return cap;
        };
        const SAFETY_MARGIN: Duration = Duration::from_millis(50);
        const MINIMUM: Duration = Duration::from_millis(5);
        let usable = remaining.saturating_sub(SAFETY_MARGIN);
        let share = usable / 25 + increment * 3 / 4;
        share.min(usable / 4).min(cap).max(MINIMUM)
    }

    /// The search limits for a move by this level: untimed (`None`) or with
    /// the engine's own remaining clock time and increment.
    pub fn limits(self, remaining: Option<Duration>, increment: Duration) -> Limits {
        Limits {
            movetime: Some(self.think_time(remaining, increment)),
            ..Limits::default()
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Text that names no level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseLevelError {
    /// The text that was given.
    pub input: String,
}

impl fmt::Display for ParseLevelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown level {:?}: expected 1, 2, easy or hard",
            self.input
        )
    }
}

impl std::error::Error for ParseLevelError {}

impl FromStr for Level {
    type Err = ParseLevelError;

    /// Reads `1`, `2`, `easy` or `hard` (any case).
    fn from_str(s: &str) -> Result<Level, ParseLevelError> {
        let trimmed = s.trim();
        let level = match trimmed.to_ascii_lowercase().as_str() {
            "1" | "easy" => Some(Level::Easy),
            "2" | "hard" => Some(Level::Hard),
            _ => None,
        };
        level.ok_or_else(|| ParseLevelError {
            input: s.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_by_number_and_name() {
        for level in Level::ALL {
            assert_eq!(level.number().to_string().parse(), Ok(level));
            assert_eq!(level.name().to_uppercase().parse(), Ok(level));
            assert_eq!(Level::from_number(level.number()), Some(level));
        }
        let err = "3".parse::<Level>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown level \"3\": expected 1, 2, easy or hard"
        );
        assert_eq!(Level::from_number(0), None);
    }

    #[test]
    fn think_time_is_one_second_untimed_and_less_on_a_short_clock() {
        let ms = Duration::from_millis;
        assert_eq!(Level::Hard.think_time(None, ms(0)), ms(1000));
        // Plenty of time: capped at one second.
        assert_eq!(
            Level::Hard.think_time(Some(ms(600_000)), ms(5000)),
            ms(1000)
        );
        // Three minutes: 175 s / 25 = 7 s, capped.
        assert_eq!(Level::Hard.think_time(Some(ms(180_000)), ms(0)), ms(1000));
        // Ten seconds left, no increment: (10 000 - 50) / 25 = 398 ms.
        assert_eq!(Level::Hard.think_time(Some(ms(10_000)), ms(0)), ms(398));
        // Nearly flagging, a big increment must not make it overstep:
        // a quarter of the usable 150 ms.
        assert_eq!(
            Level::Hard.think_time(Some(ms(200)), ms(2000)),
            Duration::from_micros(37_500)
        );
        // Easy never thinks long.
        assert_eq!(Level::Easy.think_time(None, ms(0)), ms(300));
        assert_eq!(
            Level::Hard.limits(None, ms(0)).movetime,
            Some(Duration::from_secs(1))
        );
    }
}
