//! Time controls: `minutes + increment seconds`, or correspondence.

use std::fmt;
use std::str::FromStr;

/// Longest initial time a real-time game may have: three hours.
pub const MAX_INITIAL_MS: u64 = 180 * 60_000;
/// Largest increment a real-time game may have: three minutes per move.
pub const MAX_INCREMENT_MS: u64 = 180_000;
/// Initial times are whole quarters of a minute (lichess offers ¼, ½, ¾,
/// 1½ minutes and whole minutes), so that the text form `0.25+0` is exact.
pub const INITIAL_STEP_MS: u64 = 15_000;

/// How much time each player has.
///
/// Parsed from and printed as `"5+3"` (five minutes, three seconds added
/// per move), `"0.5+0"` (thirty seconds) or `"correspondence"`.
///
/// ```
/// use chess_game::TimeControl;
///
/// let blitz: TimeControl = "5+3".parse().unwrap();
/// assert_eq!(blitz.initial_ms(), Some(300_000));
/// assert_eq!(blitz.increment_ms(), Some(3_000));
/// assert_eq!(blitz.to_string(), "5+3");
/// assert_eq!("0.5+0".parse::<TimeControl>().unwrap().initial_ms(), Some(30_000));
/// assert!("0+0".parse::<TimeControl>().is_err());
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "String", try_from = "String")
)]
pub enum TimeControl {
    /// A clock for each side with an initial time and a per-move increment.
    RealTime(RealTime),
    /// No clock: a player may take as long as they like.
    Correspondence,
}

/// The checked figures of a real-time control; build it with
/// [`RealTime::new`] so the bounds always hold.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct RealTime {
    initial_ms: u64,
    increment_ms: u64,
}

/// Why a time control was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TimeControlError {
    /// The text is neither `minutes+seconds` nor `correspondence`.
    Syntax(String),
    /// The initial time is more than [`MAX_INITIAL_MS`].
    InitialTooLong { initial_ms: u64 },
    /// The initial time is not a whole number of quarter minutes.
    InitialNotQuarterMinutes { initial_ms: u64 },
    /// The increment is more than [`MAX_INCREMENT_MS`].
    IncrementTooLarge { increment_ms: u64 },
    /// The increment is not a whole number of seconds.
    IncrementNotWholeSeconds { increment_ms: u64 },
    /// Both the initial time and the increment are zero.
    NoTime,
}

impl fmt::Display for TimeControlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeControlError::Syntax(text) => write!(
                f,
                "invalid time control {text:?}: expected minutes+seconds such as \"5+3\" or \"0.5+0\", or \"correspondence\""
            ),
            TimeControlError::InitialTooLong { initial_ms } => write!(
                f,
                "initial time of {initial_ms} ms is longer than the maximum of 180 minutes"
            ),
            TimeControlError::InitialNotQuarterMinutes { initial_ms } => write!(
                f,
                "initial time of {initial_ms} ms is not a whole number of quarter minutes (15 s)"
            ),
            TimeControlError::IncrementTooLarge { increment_ms } => write!(
                f,
                "increment of {increment_ms} ms is larger than the maximum of 180 seconds"
            ),
            TimeControlError::IncrementNotWholeSeconds { increment_ms } => write!(
                f,
                "increment of {increment_ms} ms is not a whole number of seconds"
            ),
            TimeControlError::NoTime => {
                f.write_str("initial time and increment cannot both be zero")
            }
        }
    }
}

impl std::error::Error for TimeControlError {}

impl RealTime {
    /// A real-time control of `initial_ms` per player plus `increment_ms`
    /// per move.
    ///
    /// # Errors
    /// A [`TimeControlError`] when the initial time is above 180 minutes or
    /// not a multiple of 15 s, the increment is above 180 s or not whole
    /// seconds, or both are zero.
    pub const fn new(initial_ms: u64, increment_ms: u64) -> Result<RealTime, TimeControlError> {
        if initial_ms > MAX_INITIAL_MS {
            return Err(TimeControlError::InitialTooLong { initial_ms });
        }
        if !initial_ms.is_multiple_of(INITIAL_STEP_MS) {
            return Err(TimeControlError::InitialNotQuarterMinutes { initial_ms });
        }
        if increment_ms > MAX_INCREMENT_MS {
            return Err(TimeControlError::IncrementTooLarge { increment_ms });
        }
        if !increment_ms.is_multiple_of(1000) {
            return Err(TimeControlError::IncrementNotWholeSeconds { increment_ms });
        }
        if initial_ms == 0 && increment_ms == 0 {
            return Err(TimeControlError::NoTime);
        }
        Ok(RealTime {
            initial_ms,
            increment_ms,
        })
    }

    /// Time each player starts with, in milliseconds.
    pub const fn initial_ms(self) -> u64 {
        self.initial_ms
    }

    /// Time added after each move that earns a bonus, in milliseconds.
    pub const fn increment_ms(self) -> u64 {
        self.increment_ms
    }

    /// The time each clock actually starts with: the initial time, except
    /// that a game with no initial time starts with the increment, at least
    /// 3 s, as on lichess; otherwise the first timed move would flag at once.
    pub const fn starting_ms(self) -> u64 {
        if self.initial_ms > 0 {
            self.initial_ms
        } else if self.increment_ms > 3_000 {
            self.increment_ms
        } else {
            3_000
        }
    }

    /// The expected length of a game in seconds as lichess estimates it:
    /// the initial time plus forty increments.
    pub const fn estimated_seconds(self) -> u64 {
        (self.initial_ms + 40 * self.increment_ms) / 1000
    }

    /// The time a player who berserks keeps (they also lose the
    /// increment): half the initial time, or all of it when the initial
    /// time is under forty increments (the increment is then the sacrifice).
    /// `None` with no initial time: there is nothing to halve.
    pub const fn berserk_initial_ms(self) -> Option<u64> {
        if self.initial_ms == 0 {
            None
        } else if self.initial_ms < 40 * self.increment_ms {
            Some(self.initial_ms)
        } else {
            Some(self.initial_ms - self.initial_ms / 2)
        }
    }
}

impl TimeControl {
    /// A real-time control; see [`RealTime::new`].
    ///
    /// # Errors
    /// As [`RealTime::new`].
    pub fn real_time(initial_ms: u64, increment_ms: u64) -> Result<TimeControl, TimeControlError> {
        RealTime::new(initial_ms, increment_ms).map(TimeControl::RealTime)
    }

    /// The initial time per player, or `None` for correspondence.
    pub const fn initial_ms(self) -> Option<u64> {
        match self {
            TimeControl::RealTime(rt) => Some(rt.initial_ms),
            TimeControl::Correspondence => None,
        }
    }

    /// The time each clock starts with ([`RealTime::starting_ms`]), or
    /// `None` for correspondence.
    pub const fn starting_ms(self) -> Option<u64> {
        match self {
            TimeControl::RealTime(rt) => Some(rt.starting_ms()),
            TimeControl::Correspondence => None,
        }
    }

    /// The increment per move, or `None` for correspondence.
    pub const fn increment_ms(self) -> Option<u64> {
        match self {
            TimeControl::RealTime(rt) => Some(rt.increment_ms),
            TimeControl::Correspondence => None,
        }
    }

    /// Whether the game has clocks.
    pub const fn is_real_time(self) -> bool {
        matches!(self, TimeControl::RealTime(_))
    }

    /// How fast a game with this control is, by lichess's estimate.
    pub const fn speed(self) -> Speed {
        match self {
            TimeControl::Correspondence => Speed::Correspondence,
            TimeControl::RealTime(rt) => match rt.estimated_seconds() {
                0..30 => Speed::UltraBullet,
                30..180 => Speed::Bullet,
                180..480 => Speed::Blitz,
                480..1500 => Speed::Rapid,
                _ => Speed::Classical,
            },
        }
    }
}

impl fmt::Display for TimeControl {
    /// `5+3`, `0.5+0`, `0.25+1`, `correspondence`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeControl::Correspondence => f.write_str("correspondence"),
            TimeControl::RealTime(rt) => {
                let minutes = rt.initial_ms / 60_000;
                // A multiple of 15 s leaves 0, 15, 30 or 45 s over a minute.
                let fraction = match rt.initial_ms % 60_000 {
                    15_000 => ".25",
                    30_000 => ".5",
                    45_000 => ".75",
                    _ => "",
                };
                write!(f, "{minutes}{fraction}+{}", rt.increment_ms / 1000)
            }
        }
    }
}

impl FromStr for TimeControl {
    type Err = TimeControlError;

    fn from_str(text: &str) -> Result<TimeControl, TimeControlError> {
        if text == "correspondence" {
            return Ok(TimeControl::Correspondence);
        }
        let syntax = || TimeControlError::Syntax(text.to_owned());
        let (minutes, seconds) = text.split_once('+').ok_or_else(syntax)?;
        let initial_ms = parse_decimal_ms(minutes, 60_000).ok_or_else(syntax)?;
        let increment_ms = parse_decimal_ms(seconds, 1_000).ok_or_else(syntax)?;
        TimeControl::real_time(initial_ms, increment_ms)
    }
}

/// Reads `digits[.digits]` as a count of `unit_ms` and returns milliseconds,
/// or `None` for anything else (signs, spaces, exponents, empty parts, or a
/// fraction finer than a millisecond).
fn parse_decimal_ms(text: &str, unit_ms: u64) -> Option<u64> {
    let (whole, fraction) = match text.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (text, None),
    };
    let all_digits =
        |s: &str| !s.is_empty() && s.len() <= 6 && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(whole) {
        return None;
    }
    let mut ms = whole.parse::<u64>().ok()?.checked_mul(unit_ms)?;
    if let Some(fraction) = fraction {
        if !all_digits(fraction) {
            return None;
        }
        let scale = 10u64.pow(u32::try_from(fraction.len()).ok()?);
        let numerator = fraction.parse::<u64>().ok()?.checked_mul(unit_ms)?;
        if numerator % scale != 0 {
            return None;
        }
        ms = ms.checked_add(numerator / scale)?;
    }
    Some(ms)
}

impl From<TimeControl> for String {
    fn from(tc: TimeControl) -> String {
        tc.to_string()
    }
}

impl TryFrom<String> for TimeControl {
    type Error = TimeControlError;
    fn try_from(text: String) -> Result<TimeControl, TimeControlError> {
        text.parse()
    }
}

/// How fast a game is, as lichess classifies it by
/// [`RealTime::estimated_seconds`]: under 30 s ultra-bullet, under 3 min
/// bullet, under 8 min blitz, under 25 min rapid, otherwise classical.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Speed {
    UltraBullet,
    Bullet,
    Blitz,
    Rapid,
    Classical,
    Correspondence,
}

impl Speed {
    /// A stable snake_case code: `ultra_bullet`, `bullet`, `blitz`, `rapid`,
    /// `classical`, `correspondence`.
    pub const fn code(self) -> &'static str {
        match self {
            Speed::UltraBullet => "ultra_bullet",
            Speed::Bullet => "bullet",
            Speed::Blitz => "blitz",
            Speed::Rapid => "rapid",
            Speed::Classical => "classical",
            Speed::Correspondence => "correspondence",
        }
    }
}

impl fmt::Display for Speed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_round_trip() {
        for (text, initial_ms, increment_ms) in [
            ("5+3", 300_000, 3_000),
            ("0.5+0", 30_000, 0),
            ("0.25+1", 15_000, 1_000),
            ("0.75+0", 45_000, 0),
            ("1.5+2", 90_000, 2_000),
            ("0+1", 0, 1_000),
            ("180+180", MAX_INITIAL_MS, MAX_INCREMENT_MS),
        ] {
            let tc: TimeControl = text.parse().unwrap();
            assert_eq!(tc.initial_ms(), Some(initial_ms), "{text}");
            assert_eq!(tc.increment_ms(), Some(increment_ms), "{text}");
            assert_eq!(tc.to_string(), text);
        }
        assert_eq!("correspondence".parse(), Ok(TimeControl::Correspondence));
        assert_eq!(TimeControl::Correspondence.to_string(), "correspondence");
    }

    #[test]
    fn lenient_decimals_normalise() {
        let tc: TimeControl = "0.50+0.0".parse().unwrap();
        assert_eq!(tc.to_string(), "0.5+0");
        let tc: TimeControl = "03+02".parse().unwrap();
        assert_eq!(tc.to_string(), "3+2");
    }

    #[test]
    fn refuses_bad_text_exactly() {
        for bad in [
            "",
            "5",
            "5+",
            "+3",
            "5+3+1",
            "-1+0",
            "5 + 3",
            "1e2+0",
            "abc",
            "5.+0",
            ".5+0",
            "5+-3",
            "Correspondence",
            "5+3 ",
        ] {
            assert_eq!(
                bad.parse::<TimeControl>(),
                Err(TimeControlError::Syntax(bad.to_owned())),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn refuses_out_of_bounds_exactly() {
        assert_eq!("0+0".parse::<TimeControl>(), Err(TimeControlError::NoTime));
        assert_eq!(
            "181+0".parse::<TimeControl>(),
            Err(TimeControlError::InitialTooLong {
                initial_ms: 181 * 60_000
            })
        );
        assert_eq!(
            "5+181".parse::<TimeControl>(),
            Err(TimeControlError::IncrementTooLarge {
                increment_ms: 181_000
            })
        );
        assert_eq!(
            "0.1+0".parse::<TimeControl>(),
            Err(TimeControlError::InitialNotQuarterMinutes { initial_ms: 6_000 })
        );
        assert_eq!(
            "5+0.5".parse::<TimeControl>(),
            Err(TimeControlError::IncrementNotWholeSeconds { increment_ms: 500 })
        );
        // A fraction of a millisecond is not a number of milliseconds at all.
        assert!(matches!(
            "5+0.0001".parse::<TimeControl>(),
            Err(TimeControlError::Syntax(_))
        ));
    }

    #[test]
    fn speeds_follow_lichess_estimate() {
        let speed = |text: &str| text.parse::<TimeControl>().unwrap().speed();
        assert_eq!(speed("0.25+0"), Speed::UltraBullet);
        assert_eq!(speed("0.25+1"), Speed::Bullet); // 15 + 40 = 55 s
        assert_eq!(speed("1+0"), Speed::Bullet);
        assert_eq!(speed("2+1"), Speed::Bullet); // 120 + 40 = 160 s
        assert_eq!(speed("3+0"), Speed::Blitz);
        assert_eq!(speed("5+3"), Speed::Blitz); // 300 + 120 = 420 s
        assert_eq!(speed("10+0"), Speed::Rapid);
        assert_eq!(speed("15+10"), Speed::Rapid); // 900 + 400 = 1300 s
        assert_eq!(speed("25+0"), Speed::Classical);
        assert_eq!(TimeControl::Correspondence.speed(), Speed::Correspondence);
    }
}
