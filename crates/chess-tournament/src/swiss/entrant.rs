//! A player as one round's pairing sees them: score, colours, floats, whom
//! they may not meet; what the Dutch system (`dutch`) builds and the bracket
//! pairing (`bracket`) weighs.

use std::collections::HashSet;

use super::colour::{ColourHistory, ColourSide, Preference, Strength};
use super::player::{HalfPoints, PairingNumber};

/// A float a player received in a round (A.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Float {
    None,
    Down,
    Up,
}

/// A player to be paired this round, with what the criteria look at.
#[derive(Clone, Debug)]
pub(crate) struct Entrant {
    pub number: PairingNumber,
    pub score: HalfPoints,
    pub history: ColourHistory,
    pub preference: Option<Preference>,
    pub topscorer: bool,
    pub bye_ok: bool,
    /// The float of the previous round and of the one before.
    pub float1: Float,
    pub float2: Float,
    /// Opponents met over the board, and the forbidden ones.
    pub avoid: HashSet<PairingNumber>,
}

impl Entrant {
    /// C.1 and C.3: whether the two may meet.
    pub fn compatible(&self, other: &Entrant) -> bool {
        if self.avoid.contains(&other.number) {
            return false;
        }
        match (self.preference, other.preference) {
            (Some(a), Some(b))
                if a.strength == Strength::Absolute
                    && b.strength == Strength::Absolute
                    && a.colour == b.colour =>
            {
                self.topscorer || other.topscorer
            }
            _ => true,
        }
    }

    pub fn side(&self) -> ColourSide<'_> {
        ColourSide {
            history: &self.history,
            preference: self.preference,
            topscorer: self.topscorer,
            pairing_number: self.number,
        }
    }
}
