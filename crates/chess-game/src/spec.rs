//! What a game is created from: time control, initial position, take-back.

use std::fmt;

use chess_rules::{FenError, Position};

use crate::TimeControl;

/// Everything needed to start a game, apart from who sits where.
///
/// Seats are the server's business: a [`GameSpec`] speaks only of colours.
/// A rematch reuses the spec unchanged, and the server swaps the people.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(into = "SpecData", try_from = "SpecData")
)]
pub struct GameSpec {
    time_control: TimeControl,
    initial: Position,
    takeback_allowed: bool,
    rated: bool,
    berserkable: bool,
    mandatory: bool,
}

/// Why a [`GameSpec`] cannot be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpecError {
    /// The initial FEN does not describe a legal position.
    Fen(FenError),
    /// The initial position has no legal move: the game would be over
    /// before it began.
    NoLegalMoves,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::Fen(e) => write!(f, "invalid initial position: {e}"),
            SpecError::NoLegalMoves => f.write_str("the initial position has no legal move"),
        }
    }
}

impl std::error::Error for SpecError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SpecError::Fen(e) => Some(e),
            SpecError::NoLegalMoves => None,
        }
    }
}

impl GameSpec {
    /// A game from the standard starting position, without take-back.
    pub fn standard(time_control: TimeControl) -> GameSpec {
        GameSpec {
            time_control,
            initial: Position::startpos(),
            takeback_allowed: false,
            rated: false,
            berserkable: false,
            mandatory: false,
        }
    }

    /// A game from any position where the side to move has a move.
    ///
    /// # Errors
    /// [`SpecError::NoLegalMoves`] for a checkmate or stalemate position.
    pub fn new(
        time_control: TimeControl,
        initial: Position,
        takeback_allowed: bool,
    ) -> Result<GameSpec, SpecError> {
        if !initial.has_legal_moves() {
            return Err(SpecError::NoLegalMoves);
        }
        Ok(GameSpec {
            time_control,
            initial,
            takeback_allowed,
            rated: false,
            berserkable: false,
            mandatory: false,
        })
    }

    /// A game from a FEN string.
    ///
    /// # Errors
    /// [`SpecError::Fen`] for bad FEN, [`SpecError::NoLegalMoves`] as in
    /// [`GameSpec::new`].
    pub fn from_fen(
        time_control: TimeControl,
        fen: &str,
        takeback_allowed: bool,
    ) -> Result<GameSpec, SpecError> {
        let initial = Position::from_fen(fen).map_err(SpecError::Fen)?;
        GameSpec::new(time_control, initial, takeback_allowed)
    }

    /// The same spec with take-back allowed or not: allow it when both seats
    /// belong to one person (two players on one screen) or one seat is the
    /// computer.
    #[must_use]
    pub fn with_takeback(mut self, allowed: bool) -> GameSpec {
        self.takeback_allowed = allowed;
        self
    }

    /// The same spec, rated or casual. Whether a game may be rated (two
    /// accounts, the standard start) is the server's business; a rematch
    /// keeps it.
    #[must_use]
    pub fn with_rated(mut self, rated: bool) -> GameSpec {
        self.rated = rated;
        self
    }

    /// Whether the result changes the players' ratings.
    pub fn rated(&self) -> bool {
        self.rated
    }

    /// The same spec, with berserk allowed or not: an arena's games allow
    /// it when the arena does ([`crate::Game::berserk`]).
    #[must_use]
    pub fn with_berserk(mut self, allowed: bool) -> GameSpec {
        self.berserkable = allowed;
        self
    }

    /// Whether a player may berserk (see [`GameSpec::with_berserk`]).
    pub fn berserkable(&self) -> bool {
        self.berserkable
    }

    /// The same spec, for a game that must be played (a tournament's):
    /// it cannot be aborted, and a first move not made in time loses it
    /// ([`crate::EndReason::NoStart`]) instead of aborting it.
    #[must_use]
    pub fn with_mandatory(mut self, mandatory: bool) -> GameSpec {
        self.mandatory = mandatory;
        self
    }

    /// Whether the game must be played (see [`GameSpec::with_mandatory`]).
    pub fn mandatory(&self) -> bool {
        self.mandatory
    }

    /// The time control of both sides.
    pub fn time_control(&self) -> TimeControl {
        self.time_control
    }

    /// The position the game starts from.
    pub fn initial_position(&self) -> &Position {
        &self.initial
    }

    /// Whether moves may be taken back (see [`GameSpec::with_takeback`]).
    pub fn takeback_allowed(&self) -> bool {
        self.takeback_allowed
    }
}

/// The plain form of a [`GameSpec`] for serde: the position as FEN.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct SpecData {
    time_control: TimeControl,
    initial_fen: String,
    takeback_allowed: bool,
    /// Absent (casual) in games stored before ratings.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    rated: bool,
    /// Absent (no berserk) in games stored before tournaments.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    berserkable: bool,
    /// Absent (abortable) in games stored before tournaments.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    mandatory: bool,
}

#[cfg(feature = "serde")]
impl From<GameSpec> for SpecData {
    fn from(spec: GameSpec) -> SpecData {
        SpecData {
            time_control: spec.time_control,
            initial_fen: spec.initial.fen(),
            takeback_allowed: spec.takeback_allowed,
            rated: spec.rated,
            berserkable: spec.berserkable,
            mandatory: spec.mandatory,
        }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<SpecData> for GameSpec {
    type Error = SpecError;
    fn try_from(data: SpecData) -> Result<GameSpec, SpecError> {
        Ok(
            GameSpec::from_fen(data.time_control, &data.initial_fen, data.takeback_allowed)?
                .with_rated(data.rated)
                .with_berserk(data.berserkable)
                .with_mandatory(data.mandatory),
        )
    }
}
