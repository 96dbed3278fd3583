//! A player's history: pairing number, rating, and what happened in each
//! round so far. Everything the pairing needs (score, colours, floats,
//! opponents, whether the pairing-allocated bye is still allowed) is
//! derived from it, so the caller stores only what happened.

use super::colour::Colour;

/// A player's pairing number (A.2: the rank in the initial ranking list,
/// late entries included); the TRF's starting rank.
pub type PairingNumber = u32;

/// How a game that was played ended, for one player.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    Win,
    Draw,
    Loss,
}

/// The kinds of round without a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ByeKind {
    /// The pairing-allocated bye of an odd round (C.04.1 c); its points are
    /// [`Scoring::pairing_bye`].
    PairingAllocated,
    /// A requested half-point bye.
    HalfPoint,
    /// A full-point bye granted by the organiser (not the pairing's).
    FullPoint,
    /// Absent, withdrawn, or not yet entered: no points.
    ZeroPoint,
}

/// What happened to one player in one round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RoundRecord {
    /// A game that was played.
    Played {
        opponent: PairingNumber,
        colour: Colour,
        outcome: Outcome,
    },
    /// A game that was paired but not played: the player who turned up wins
    /// (`won`). It counts as no game for colours and for the no-rematch
    /// rule, and a forfeit win bars the pairing-allocated bye (C.2).
    Forfeit {
        opponent: PairingNumber,
        colour: Colour,
        won: bool,
    },
    /// No game.
    Bye(ByeKind),
}

/// Points are counted in half points so that scores stay integers.
pub type HalfPoints = u32;

/// What the pairing-allocated bye is worth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum PairingByePoints {
    /// A win's points, FIDE's default.
    #[default]
    Win,
    /// Half a point, when the regulations say so.
    Draw,
}

/// The points of the rounds without a result on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Scoring {
    pub pairing_bye: PairingByePoints,
}

impl Scoring {
    /// The half points `record` is worth.
    #[must_use]
    pub fn points(self, record: &RoundRecord) -> HalfPoints {
        match record {
            RoundRecord::Played { outcome, .. } => match outcome {
                Outcome::Win => 2,
                Outcome::Draw => 1,
                Outcome::Loss => 0,
            },
            RoundRecord::Forfeit { won, .. } => {
                if *won {
                    2
                } else {
                    0
                }
            }
            RoundRecord::Bye(kind) => match kind {
                ByeKind::PairingAllocated => match self.pairing_bye {
                    PairingByePoints::Win => 2,
                    PairingByePoints::Draw => 1,
                },
                ByeKind::HalfPoint => 1,
                ByeKind::FullPoint => 2,
                ByeKind::ZeroPoint => 0,
            },
        }
    }
}

/// One player and the rounds played so far. A player who entered late has
/// byes (half or zero points) for the rounds missed; missing entries at the
/// end of `rounds` count as zero-point byes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Player {
    pub number: PairingNumber,
    pub rating: u16,
    pub name: String,
    pub rounds: Vec<RoundRecord>,
}

impl Player {
    /// A player with no rounds yet.
    #[must_use]
    pub fn new(number: PairingNumber, rating: u16) -> Player {
        Player {
            number,
            rating,
            name: String::new(),
            rounds: Vec::new(),
        }
    }

    /// The record of `round` (0-based), a zero-point bye when not recorded.
    #[must_use]
    pub fn record(&self, round: usize) -> RoundRecord {
        self.rounds
            .get(round)
            .copied()
            .unwrap_or(RoundRecord::Bye(ByeKind::ZeroPoint))
    }

    /// The score after the first `rounds` rounds.
    #[must_use]
    pub fn score_after(&self, rounds: usize, scoring: Scoring) -> HalfPoints {
        (0..rounds).map(|r| scoring.points(&self.record(r))).sum()
    }

    /// Whether the pairing-allocated bye is still allowed (C.2): not after
    /// one, and not after a win's points scored without playing.
    #[must_use]
    pub fn may_get_pairing_bye(&self, rounds: usize) -> bool {
        !(0..rounds).any(|r| {
            matches!(
                self.record(r),
                RoundRecord::Bye(ByeKind::PairingAllocated | ByeKind::FullPoint)
                    | RoundRecord::Forfeit { won: true, .. }
            )
        })
    }
}
