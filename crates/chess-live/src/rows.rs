//! A live game as it is stored: the rows the registry loads games from and
//! the writer writes them back as. Enumerations are kept typed; the JSON
//! columns stay strings whose shapes [`crate::stored`] owns.

use chess_rules::ByColor;
use uuid::Uuid;

use crate::clock::UnixMs;
use crate::model::{GameMode, GameStage, PlayerKind};

/// A person (or the computer) who can hold a seat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayerRow {
    pub id: Uuid,
    pub kind: PlayerKind,
    pub name: String,
    pub created_at: UnixMs,
    /// An account that plays as an engine through the bot API. Final once
    /// the player has held a seat (an account becomes a bot only before its
    /// first game), so a live game's copy never goes stale.
    pub bot: bool,
}

/// A game's row: the truth the in-memory game is a cache of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRow {
    pub id: Uuid,
    pub mode: GameMode,
    pub white_id: Option<Uuid>,
    pub black_id: Option<Uuid>,
    pub computer_level: Option<i64>,
    /// JSON of the time control ([`crate::time_control::TimeControlJson`]).
    pub time_control: String,
    pub status: GameStage,
    /// JSON of the result once finished.
    pub result: Option<String>,
    /// JSON record the game is rebuilt from ([`crate::stored`]).
    pub state: String,
    pub version: i64,
    pub rematch_of: Option<Uuid>,
    pub rematch_id: Option<Uuid>,
    pub created_at: UnixMs,
    pub updated_at: UnixMs,
    /// When a timer must next look at the game: derived from the
    /// game on every write, so the sweeper finds games no node hosts.
    pub deadline_at: Option<UnixMs>,
    /// JSON array of the latest changes' events, oldest first: what other
    /// nodes replay to their sockets.
    pub recent_events: String,
    /// The node whose socket set each side's premove.
    pub premove_nodes: ByColor<Option<Uuid>>,
}

impl GameRow {
    /// The `premove_nodes` column: null when no premove is held.
    pub fn premove_nodes_json(&self) -> Option<String> {
        (self.premove_nodes.white.is_some() || self.premove_nodes.black.is_some())
            .then(|| serde_json::to_string(&self.premove_nodes).unwrap_or_default())
    }

    /// The seats as player ids.
    pub fn seats(&self) -> ByColor<Option<Uuid>> {
        ByColor {
            white: self.white_id,
            black: self.black_id,
        }
    }
}

/// One played move (serialisable: other nodes receive new moves in change
/// notices, [`crate::notice`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MoveRow {
    pub ply: i64,
    pub uci: String,
    pub san: String,
    /// The mover's remaining time after the move, for timed games.
    pub clock_ms: Option<i64>,
    pub played_at: UnixMs,
    /// JSON of the game crate's saved move.
    pub record: String,
}
