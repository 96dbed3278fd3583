//! The UTC calendar day a reward belongs to, on `jiff`'s proleptic
//! Gregorian calendar.

use std::fmt;

use jiff::Timestamp;
use jiff::civil::{Date, Time};
use jiff::tz::Offset;

#[cfg(test)]
const MS_PER_DAY: i64 = 24 * 60 * 60 * 1000;

/// A UTC calendar day, stored as `yyyy-mm-dd` so a person reading the ledger
/// sees the date and text order is date order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UtcDay(Date);

/// A stored day that is not a `yyyy-mm-dd` date.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a yyyy-mm-dd date: {0:?}")]
pub struct BadDay(pub String);

impl UtcDay {
    /// The UTC day containing the instant `unix_ms` (milliseconds since
    /// 1970-01-01T00:00:00Z). The day changes exactly at UTC midnight.
    /// Instants outside the years -9999 to 9999 count as the first or last
    /// day of that range.
    pub fn from_unix_ms(unix_ms: i64) -> UtcDay {
        let instant = Timestamp::from_millisecond(unix_ms).unwrap_or(if unix_ms < 0 {
            Timestamp::MIN
        } else {
            Timestamp::MAX
        });
        UtcDay(Offset::UTC.to_datetime(instant).date())
    }

    /// The first millisecond of this day.
    pub fn start_unix_ms(self) -> i64 {
        Offset::UTC
            .to_timestamp(self.0.to_datetime(Time::midnight()))
            .map_or(i64::MIN, Timestamp::as_millisecond)
    }

    /// The day after (the last day, 9999-12-31, has none: it stays).
    #[must_use]
    pub fn next(self) -> UtcDay {
        UtcDay(self.0.tomorrow().unwrap_or(self.0))
    }

    /// Parses `yyyy-mm-dd` as written by [`UtcDay`]'s `Display`.
    ///
    /// # Errors
    /// [`BadDay`] for anything else, including impossible dates (`2026-02-30`).
    pub fn parse(text: &str) -> Result<UtcDay, BadDay> {
        // jiff reads ISO 8601's other forms too (`20260101`); the ledger
        // stores exactly one.
        let shaped = text.len() == 10
            && text.bytes().enumerate().all(|(at, byte)| match at {
                4 | 7 => byte == b'-',
                _ => byte.is_ascii_digit(),
            });
        match text.parse::<Date>() {
            Ok(date) if shaped => Ok(UtcDay(date)),
            _ => Err(BadDay(text.to_owned())),
        }
    }

    /// The date, for other formats (PGN's `yyyy.mm.dd`).
    pub fn date(self) -> Date {
        self.0
    }
}

impl fmt::Display for UtcDay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
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
