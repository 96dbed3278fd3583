//! The persisted form of a game, from which [`crate::Game`] is rebuilt exactly.
//!
//! Two parts with different lifecycles, so the server can store them as
//! rows:
//! - [`SavedGame::moves`] is append-only: one [`SavedMove`] per accepted
//!   move, never changed afterwards. The one exception is a take-back (only
//!   in games that allow it), which removes moves from the end; the
//!   `take_back` event says how many.
//! - [`SavedGame::state`] is a small [`SavedState`] that is overwritten
//!   after every event (offers, clocks at the start of the current turn,
//!   result, version).
//!
//! The spec, settings and creation time never change.

use chess_rules::{ByColor, Color};

use crate::{GameResult, GameSettings, GameSpec, Premove};

/// Everything needed to rebuild a [`crate::Game`]: see the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SavedGame {
    /// What the game was created from; never changes.
    pub spec: GameSpec,
    /// The settings it was created with; never change.
    pub settings: GameSettings,
    /// When the game was created (the start of White's first-move deadline).
    pub created_at_ms: u64,
    /// Append-only (see the module docs).
    pub moves: Vec<SavedMove>,
    /// Overwritten after every event.
    pub state: SavedState,
}

/// One accepted move.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SavedMove {
    /// The move in UCI (`e2e4`, `e7e8q`).
    pub uci: String,
    /// The move in SAN, with `+` or `#` (`e4`, `e8=Q#`).
    pub san: String,
    /// When the move was accepted.
    pub at_ms: u64,
    /// Milliseconds taken off the mover's clock for this move: the time
    /// since their turn began, or the charge of a premove; 0 for each side's
    /// first move and in correspondence.
    pub spent_ms: u64,
    /// Both clocks just after the move, increment included; `None` in
    /// correspondence.
    pub remaining_ms: Option<ByColor<u64>>,
    /// Whether a stored premove was played.
    pub premove: bool,
}

/// The part of a game that changes in place.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SavedState {
    /// The version of the last event (0 before any).
    pub version: u64,
    /// When the last event happened (or creation): a command's time is never
    /// taken to be earlier than this, so event times never go backwards.
    pub last_event_at_ms: u64,
    /// When the side to move got the turn: creation, the last move, or a
    /// take-back. Their clock and first-move deadline count from here.
    pub turn_started_at_ms: u64,
    /// Both clocks at `turn_started_at_ms` (frozen once the game is over);
    /// `None` in correspondence.
    pub remaining_ms: Option<ByColor<u64>>,
    /// The side whose draw offer is open.
    pub draw_offer: Option<Color>,
    /// For each side, how many moves of their own they must have made
    /// before they may offer a draw (raised by the cooldown).
    pub draw_offer_allowed_after: ByColor<u32>,
    /// Stored premoves.
    pub premoves: ByColor<Option<Premove>>,
    /// Where the rematch question stands.
    pub rematch: RematchState,
    /// The result once the game is over.
    pub result: Option<GameResult>,
    /// Which sides berserked (absent in games stored before tournaments).
    #[cfg_attr(feature = "serde", serde(default))]
    pub berserk: ByColor<bool>,
}

/// Where the rematch question stands after the game.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(tag = "state", content = "color", rename_all = "snake_case")
)]
pub enum RematchState {
    /// No open offer (none made yet, or the last one was declined or
    /// withdrawn: either side may offer again).
    #[default]
    None,
    /// This side offered a rematch.
    Offered(Color),
    /// The rematch was accepted; nothing more can happen here.
    Accepted,
}
