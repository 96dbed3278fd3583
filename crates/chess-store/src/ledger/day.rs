//! The UTC calendar day a reward belongs to.

use std::fmt;

const MS_PER_DAY: i64 = 24 * 60 * 60 * 1000;

/// A UTC calendar day, stored as `yyyy-mm-dd` so a person reading the ledger
/// sees the date and text order is date order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UtcDay {
    /// Days since 1970-01-01.
    days: i64,
}

/// A stored day that is not a `yyyy-mm-dd` date.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a yyyy-mm-dd date: {0:?}")]
pub struct BadDay(pub String);

impl UtcDay {
    /// The UTC day containing the instant `unix_ms` (milliseconds since
    /// 1970-01-01T00:00:00Z). The day changes exactly at UTC midnight.
    pub fn from_unix_ms(unix_ms: i64) -> UtcDay {
        UtcDay {
            days: unix_ms.div_euclid(MS_PER_DAY),
        }
    }

    /// The first millisecond of this day.
    pub fn start_unix_ms(self) -> i64 {
        self.days * MS_PER_DAY
    }

    /// The day after.
    #[must_use]
    pub fn next(self) -> UtcDay {
        UtcDay {
            days: self.days + 1,
        }
    }

    /// Parses `yyyy-mm-dd` as written by [`UtcDay`]'s `Display`.
    ///
    /// # Errors
    /// [`BadDay`] for anything else, including impossible dates (`2026-02-30`).
    pub fn parse(text: &str) -> Result<UtcDay, BadDay> {
        let bad = || BadDay(text.to_owned());
        let mut parts = text.splitn(3, '-');
        let mut field = |len: usize| -> Result<i64, BadDay> {
            let part = parts.next().filter(|p| p.len() == len).ok_or_else(bad)?;
            if !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            part.parse().map_err(|_| bad())
        };
        let (year, month, day) = (field(4)?, field(2)?, field(2)?);
        let parsed = UtcDay {
            days: days_from_civil(year, month, day),
        };
        // Out-of-range months or days do not survive the round trip.
        if parsed.civil() == (year, month, day) {
            Ok(parsed)
        } else {
            Err(bad())
        }
    }

    /// (year, month 1-12, day 1-31), by Howard Hinnant's `civil_from_days`.
    fn civil(self) -> (i64, i64, i64) {
        let z = self.days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        (year, month, day)
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

impl fmt::Display for UtcDay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (year, month, day) = self.civil();
        write!(f, "{year:04}-{month:02}-{day:02}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants_fall_on_known_days() {
        let cases = [
            (0, "1970-01-01"),
            (-1, "1969-12-31"),
            (951_782_400_000, "2000-02-29"),
            // 2026-11-29T23:59:59.999Z and the next millisecond.
            (1_795_996_799_999, "2026-11-29"),
            (1_795_996_800_000, "2026-11-30"),
            (4_107_542_400_000, "2100-03-01"),
        ];
        for (ms, text) in cases {
            assert_eq!(UtcDay::from_unix_ms(ms).to_string(), text, "{ms}");
        }
    }

    #[test]
    fn parse_and_display_round_trip_over_many_years() {
        let mut day = UtcDay::from_unix_ms(-5 * 365 * MS_PER_DAY);
        for _ in 0..(60 * 366) {
            let text = day.to_string();
            assert_eq!(UtcDay::parse(&text), Ok(day), "{text}");
            assert_eq!(UtcDay::from_unix_ms(day.start_unix_ms()), day);
            assert_eq!(UtcDay::from_unix_ms(day.next().start_unix_ms() - 1), day);
            day = day.next();
        }
    }

    #[test]
    fn parse_refuses_anything_but_real_dates() {
        for text in [
            "",
            "2026-1-01",
            "2026-13-01",
            "2026-02-30",
            "2025-02-29",
            "+026-01-01",
            "2026-01-01x",
            "2026/01/01",
        ] {
            assert_eq!(UtcDay::parse(text), Err(BadDay(text.to_owned())), "{text}");
        }
        assert!(UtcDay::parse("2024-02-29").is_ok());
    }
}
