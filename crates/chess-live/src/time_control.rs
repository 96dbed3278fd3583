//! Time controls as games store them and every view writes them
//! (`docs/protocol.md`), converted to and from the game crate's checked
//! [`TimeControl`].

use chess_game::{RealTime, TimeControl, TimeControlError};
use serde::{Deserialize, Serialize};

/// `{"kind":"clock","initial_ms":180000,"increment_ms":2000}` or
/// `{"kind":"correspondence"}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TimeControlJson {
    Clock { initial_ms: u64, increment_ms: u64 },
    Correspondence,
}

impl TimeControlJson {
    /// The checked time control.
    ///
    /// # Errors
    /// The game crate's reason when the figures are out of bounds.
    pub fn parse(self) -> Result<TimeControl, TimeControlError> {
        match self {
            TimeControlJson::Clock {
                initial_ms,
                increment_ms,
            } => Ok(TimeControl::RealTime(RealTime::new(
                initial_ms,
                increment_ms,
            )?)),
            TimeControlJson::Correspondence => Ok(TimeControl::Correspondence),
        }
    }
}

impl From<TimeControl> for TimeControlJson {
    fn from(tc: TimeControl) -> TimeControlJson {
        match (tc.initial_ms(), tc.increment_ms()) {
            (Some(initial_ms), Some(increment_ms)) => TimeControlJson::Clock {
                initial_ms,
                increment_ms,
            },
            _ => TimeControlJson::Correspondence,
        }
    }
}

/// The wire JSON value of a time control.
pub fn to_json(tc: TimeControl) -> serde_json::Value {
    serde_json::to_value(TimeControlJson::from(tc)).unwrap_or(serde_json::Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_round_trip() {
        for text in ["1+0", "3+2", "15+10", "0.25+0", "correspondence"] {
            let tc: TimeControl = text.parse().expect(text);
            assert_eq!(TimeControlJson::from(tc).parse(), Ok(tc), "{text}");
        }
    }

    #[test]
    fn out_of_bounds_clock_is_refused() {
        let bad = TimeControlJson::Clock {
            initial_ms: 1_000,
            increment_ms: 0,
        };
        assert!(bad.parse().is_err());
    }
}
