//! One line per game in the "my games" and "live games" lists.

use serde::Serialize;
use uuid::Uuid;

use crate::clock::UnixMs;
use crate::games::live::Entry;
use crate::games::model::{GameMode, GameStage, Seat};
use crate::games::view::status_of;
use crate::ws::protocol::{PlayerView, ResultView};
use chess_rules::ByColor;

/// A game as the lists show it (`docs/protocol.md`, "Game summary").
#[derive(Clone, Debug, Serialize)]
pub struct GameSummary {
    pub game_id: Uuid,
    pub url: String,
    pub mode: GameMode,
    pub players: ByColor<Option<PlayerView>>,
    pub time_control: serde_json::Value,
    pub status: GameStage,
    pub result: Option<ResultView>,
    pub your_color: Option<Seat>,
    pub your_turn: bool,
    pub moves: usize,
    pub fen: String,
    pub updated_at: UnixMs,
}

impl GameSummary {
    /// Whether the game has no clock.
    pub fn is_correspondence(&self) -> bool {
        self.time_control.get("kind").and_then(|kind| kind.as_str()) == Some("correspondence")
    }
}

/// The summary of `entry`'s game for `viewer`.
pub fn summarize(entry: &Entry, viewer: Option<Uuid>) -> GameSummary {
    let seat = entry.seat_of(viewer);
    let status = status_of(&entry.game, entry.row.status);
    GameSummary {
        game_id: entry.row.id,
        url: format!("/game/{}", entry.row.id),
        mode: entry.row.mode,
        players: ByColor::new_with(|color| entry.player_view(color, viewer)),
        time_control: crate::http::time_control::to_json(entry.game.time_control()),
        status,
        result: entry.game.result().map(|result| ResultView {
            winner: result.winner,
            reason: result.reason.code(),
        }),
        your_color: (seat != Seat::None).then_some(seat),
        your_turn: status == GameStage::Playing && seat.holds(entry.game.turn()),
        moves: entry.game.moves().len(),
        fen: entry.game.position().fen(),
        updated_at: entry.row.updated_at,
    }
}
