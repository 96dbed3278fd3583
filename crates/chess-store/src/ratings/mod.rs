//! Ratings: Glicko-2 per speed for accounts ([`glicko2`] is the pure
//! arithmetic; `store::ratings` writes them in the transaction that stores a
//! game's result, exactly once).
//!
//! Lichess's five speeds, with ultrabullet folded into bullet: a game's
//! speed is lichess's estimate of its duration
//! ([`chess_game::TimeControl::speed`]).

pub mod glicko2;
mod stored;

use chess_game::Speed;

pub use stored::{GameRatingChange, HistoryPoint, PlayerChange, StoredRating, shown};
pub(crate) use stored::{RatedEnding, rated_ending};

/// The speeds that carry a rating, in the order pages list them.
pub const PERFS: [Perf; 5] = [
    Perf::Bullet,
    Perf::Blitz,
    Perf::Rapid,
    Perf::Classical,
    Perf::Correspondence,
];

/// A speed with a rating of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Perf {
    Bullet,
    Blitz,
    Rapid,
    Classical,
    Correspondence,
}

impl Perf {
    /// The perf a game of `speed` is rated in (ultrabullet counts as
    /// bullet).
    pub const fn of(speed: Speed) -> Perf {
        match speed {
            Speed::UltraBullet | Speed::Bullet => Perf::Bullet,
            Speed::Blitz => Perf::Blitz,
            Speed::Rapid => Perf::Rapid,
            Speed::Classical => Perf::Classical,
            Speed::Correspondence => Perf::Correspondence,
        }
    }

    /// Its code, stored and on the wire: lichess's perf keys.
    pub const fn code(self) -> &'static str {
        match self {
            Perf::Bullet => "bullet",
            Perf::Blitz => "blitz",
            Perf::Rapid => "rapid",
            Perf::Classical => "classical",
            Perf::Correspondence => "correspondence",
        }
    }

    /// The perf of a stored code.
    pub fn from_code(code: &str) -> Option<Perf> {
        PERFS.into_iter().find(|perf| perf.code() == code)
    }
}
