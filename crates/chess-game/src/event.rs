//! Versioned events: every change of a game's state, as a client needs it.

use chess_rules::{ByColor, Color};

use crate::{EndReason, GameResult};

/// One change of a game's state.
///
/// Versions count from 1 for the first event after creation and rise by
/// exactly one per event, so a reconnecting client asks for what it missed
/// since the last version it saw. With the `serde` feature an event is a flat
/// JSON object: `{"version":3,"at_ms":…,"type":"move","uci":"e2e4",…}`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Event {
    /// One more than the version of the event before.
    pub version: u64,
    /// When it happened, on the caller's time scale.
    pub at_ms: u64,
    #[cfg_attr(feature = "serde", serde(flatten))]
    /// What happened.
    pub kind: EventKind,
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(tag = "type", rename_all = "snake_case"))]
pub enum EventKind {
    /// A move was played.
    Move {
        /// Index of this move from the start: 0 for the first move.
        ply: u32,
        color: Color,
        uci: String,
        san: String,
        /// The position after the move.
        fen: String,
        /// Both remaining times just after the move (increment included),
        /// or `None` in correspondence.
        remaining_ms: Option<ByColor<u64>>,
        /// Whose clock runs now, if any.
        running: Option<Color>,
        /// Whether this was a stored premove played at once.
        premove: bool,
    },
    /// A player stored a premove (only its owner needs to see this).
    PremoveSet { color: Color, uci: String },
    /// A stored premove was removed without being played.
    PremoveCancelled {
        color: Color,
        reason: PremoveCancelReason,
    },
    /// A stored premove was not legal once the opponent had moved.
    PremoveDropped { color: Color, uci: String },
    /// `color` offered a draw.
    DrawOffered { color: Color },
    /// `color` declined the open draw offer, by refusing it or by moving.
    DrawDeclined { color: Color, by_move: bool },
    /// `color` withdrew their own draw offer.
    DrawWithdrawn { color: Color },
    /// `color` accepted the open draw offer; a `GameEnded` follows.
    DrawAccepted { color: Color },
    /// `color` offered a rematch.
    RematchOffered { color: Color },
    /// `color` declined the rematch offer.
    RematchDeclined { color: Color },
    /// `color` withdrew their own rematch offer.
    RematchWithdrawn { color: Color },
    /// `color` accepted the rematch: the server creates the new game.
    RematchAccepted { color: Color },
    /// The game ended. Any open draw offer and premoves are gone with it.
    GameEnded {
        winner: Option<Color>,
        reason: EndReason,
        /// The clocks as they stopped, or `None` in correspondence.
        remaining_ms: Option<ByColor<u64>>,
    },
    /// Moves were taken back. Open offers and premoves are gone, and a game
    /// that the board had ended is running again.
    TakeBack {
        /// How many moves were undone.
        plies_undone: u32,
        /// Moves now on the board.
        ply: u32,
        /// The position now.
        fen: String,
        remaining_ms: Option<ByColor<u64>>,
        running: Option<Color>,
    },
    /// A player berserked: their clock is cut and they get no increment.
    Berserk {
        color: Color,
        /// Both clocks after the cut.
        remaining_ms: Option<ByColor<u64>>,
    },
}

/// Why a premove was cancelled.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum PremoveCancelReason {
    /// Its player cancelled it.
    Cancelled,
    /// Its player lost their connection.
    Disconnected,
}

impl EventKind {
    /// A stable snake_case name of the kind, as the serde tag writes it.
    pub const fn code(&self) -> &'static str {
        match self {
            EventKind::Move { .. } => "move",
            EventKind::PremoveSet { .. } => "premove_set",
            EventKind::PremoveCancelled { .. } => "premove_cancelled",
            EventKind::PremoveDropped { .. } => "premove_dropped",
            EventKind::DrawOffered { .. } => "draw_offered",
            EventKind::DrawDeclined { .. } => "draw_declined",
            EventKind::DrawWithdrawn { .. } => "draw_withdrawn",
            EventKind::DrawAccepted { .. } => "draw_accepted",
            EventKind::RematchOffered { .. } => "rematch_offered",
            EventKind::RematchDeclined { .. } => "rematch_declined",
            EventKind::RematchWithdrawn { .. } => "rematch_withdrawn",
            EventKind::RematchAccepted { .. } => "rematch_accepted",
            EventKind::GameEnded { .. } => "game_ended",
            EventKind::TakeBack { .. } => "take_back",
            EventKind::Berserk { .. } => "berserk",
        }
    }

    /// The result, if this event ends the game.
    pub fn result(&self) -> Option<GameResult> {
        match *self {
            EventKind::GameEnded { winner, reason, .. } => Some(GameResult { winner, reason }),
            _ => None,
        }
    }
}
