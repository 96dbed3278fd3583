//! How a game stands and how it ended.

use std::fmt;

use chess_rules::{Color, Ending};

/// Why a game ended. [`EndReason::code`] gives the stable snake_case code
/// clients see.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum EndReason {
    /// The side to move is mated: the other side wins.
    Checkmate,
    /// A player resigned: the other side wins.
    Resignation,
    /// A player's clock reached zero: the other side wins.
    Timeout,
    /// A player's clock reached zero but the other side has no mating
    /// material: a draw.
    TimeoutVsInsufficientMaterial,
    /// The side to move has no legal move and is not in check: a draw.
    Stalemate,
    /// The same position occurred a third time: a draw.
    ThreefoldRepetition,
    /// Fifty moves by each side without a pawn move or capture: a draw.
    FiftyMoves,
    /// Neither side can mate: a draw.
    InsufficientMaterial,
    /// The players agreed to a draw.
    Agreement,
    /// The game was aborted before both sides had moved: no result.
    Aborted,
    /// In a game that must be played (a tournament's), the side to move did
    /// not make its first move in time: the other side wins.
    NoStart,
}

impl EndReason {
    /// The stable snake_case code: `checkmate`, `resignation`, `timeout`,
    /// `timeout_vs_insufficient_material`, `stalemate`, `threefold_repetition`, `fifty_moves`,
    /// `insufficient_material`, `agreement`, `aborted`, `no_start`.
    pub const fn code(self) -> &'static str {
        match self {
            EndReason::Checkmate => "checkmate",
            EndReason::Resignation => "resignation",
            EndReason::Timeout => "timeout",
            EndReason::TimeoutVsInsufficientMaterial => "timeout_vs_insufficient_material",
            EndReason::Stalemate => "stalemate",
            EndReason::ThreefoldRepetition => "threefold_repetition",
            EndReason::FiftyMoves => "fifty_moves",
            EndReason::InsufficientMaterial => "insufficient_material",
            EndReason::Agreement => "agreement",
            EndReason::Aborted => "aborted",
            EndReason::NoStart => "no_start",
        }
    }

    /// The reason for a board ending of the rules crate.
    pub const fn from_ending(ending: Ending) -> EndReason {
        match ending {
            Ending::Checkmate { .. } => EndReason::Checkmate,
            Ending::Stalemate => EndReason::Stalemate,
            Ending::InsufficientMaterial => EndReason::InsufficientMaterial,
            Ending::ThreefoldRepetition => EndReason::ThreefoldRepetition,
            Ending::FiftyMoves => EndReason::FiftyMoves,
        }
    }

    /// Whether the board alone ended the game (checkmate or an automatic
    /// draw), so that taking the last move back reopens it.
    pub const fn is_board_ending(self) -> bool {
        matches!(
            self,
            EndReason::Checkmate
                | EndReason::Stalemate
                | EndReason::ThreefoldRepetition
                | EndReason::FiftyMoves
                | EndReason::InsufficientMaterial
        )
    }
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// The result of a finished game.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GameResult {
    /// The winner, or `None` for a draw or an aborted game.
    pub winner: Option<Color>,
    /// Why the game ended.
    pub reason: EndReason,
}

impl GameResult {
    /// Whether the game was drawn (not aborted, no winner).
    pub const fn is_draw(&self) -> bool {
        self.winner.is_none() && !matches!(self.reason, EndReason::Aborted)
    }
}

impl fmt::Display for GameResult {
    /// `1-0 (checkmate)`, `1/2-1/2 (stalemate)`, `* (aborted)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let score = match (self.winner, self.reason) {
            (_, EndReason::Aborted) => "*",
            (Some(Color::White), _) => "1-0",
            (Some(Color::Black), _) => "0-1",
            (None, _) => "1/2-1/2",
        };
        write!(f, "{score} ({})", self.reason)
    }
}

/// Where a game stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(tag = "status", rename_all = "snake_case"))]
pub enum GameStatus {
    /// Fewer than two moves played: either player may abort, and the
    /// first-move deadline applies.
    Created,
    /// Both sides have moved; no result yet.
    Started,
    /// The game is over.
    Ended(GameResult),
}

impl GameStatus {
    /// `created`, `started` or `ended`.
    pub const fn code(&self) -> &'static str {
        match self {
            GameStatus::Created => "created",
            GameStatus::Started => "started",
            GameStatus::Ended(_) => "ended",
        }
    }
}
