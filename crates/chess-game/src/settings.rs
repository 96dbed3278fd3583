//! Settings of the server that shape every game: first-move deadlines and
//! the draw-offer cooldown.

use crate::Speed;

/// Rules an operator may tune. [`GameSettings::default`] follows lichess.
///
/// The settings a game was created with are saved with it (see
/// [`crate::SavedGame`]), so changing them affects only new games.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GameSettings {
    /// How long each side has for its first move before the game may be
    /// aborted, by speed, in milliseconds; `None` means no deadline.
    pub first_move_deadline_ms: FirstMoveDeadlines,
    /// After a player's draw offer is declined or withdrawn, how many moves
    /// of their own they must make before they may offer again. Stops a
    /// player from pestering the opponent with offers.
    pub draw_offer_cooldown_moves: u32,
}

/// First-move deadlines by [`Speed`], in milliseconds.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FirstMoveDeadlines {
    pub ultra_bullet: Option<u64>,
    pub bullet: Option<u64>,
    pub blitz: Option<u64>,
    pub rapid: Option<u64>,
    pub classical: Option<u64>,
    pub correspondence: Option<u64>,
}

impl FirstMoveDeadlines {
    /// The deadline for a game of this speed.
    pub const fn for_speed(&self, speed: Speed) -> Option<u64> {
        match speed {
            Speed::UltraBullet => self.ultra_bullet,
            Speed::Bullet => self.bullet,
            Speed::Blitz => self.blitz,
            Speed::Rapid => self.rapid,
            Speed::Classical => self.classical,
            Speed::Correspondence => self.correspondence,
        }
    }
}

impl Default for FirstMoveDeadlines {
    /// Lichess's casual-game figures: 15, 20, 25, 30 and 35 seconds from
    /// ultra-bullet to classical; one day for correspondence.
    fn default() -> FirstMoveDeadlines {
        FirstMoveDeadlines {
            ultra_bullet: Some(15_000),
            bullet: Some(20_000),
            blitz: Some(25_000),
            rapid: Some(30_000),
            classical: Some(35_000),
            correspondence: Some(24 * 60 * 60 * 1000),
        }
    }
}

impl Default for GameSettings {
    /// Lichess-like deadlines (see [`FirstMoveDeadlines::default`]) and a
    /// cooldown of three own moves after a declined or withdrawn draw offer.
    fn default() -> GameSettings {
        GameSettings {
            first_move_deadline_ms: FirstMoveDeadlines::default(),
            draw_offer_cooldown_moves: 3,
        }
    }
}
