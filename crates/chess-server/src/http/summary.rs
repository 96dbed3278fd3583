//! One line per game in the "my games" and "live games" lists.

use chess_live::view::{PlayerView, ResultView};
use chess_live::{GameMode, GameSnapshot, GameStage, Seat, UnixMs, time_control};
use chess_rules::ByColor;
use serde::Serialize;
use uuid::Uuid;

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
    /// When the last move was played (unix ms), `None` before the first:
    /// how long a player has had the move.
    pub last_move_at: Option<u64>,
}

impl GameSummary {
    /// Whether the game has no clock.
    pub fn is_correspondence(&self) -> bool {
        self.time_control.get("kind").and_then(|kind| kind.as_str()) == Some("correspondence")
    }
}

/// The summary of `game` for `viewer`.
pub fn summarize(game: &GameSnapshot, viewer: Option<Uuid>) -> GameSummary {
    let seat = game.seat_of(viewer);
    let situation = &game.situation;
    GameSummary {
        game_id: game.id,
        url: format!("/game/{}", game.id),
        mode: game.mode,
        players: ByColor::new_with(|color| game.player_view(color, viewer)),
        time_control: time_control::to_json(game.time_control),
        status: situation.status,
        result: situation.result,
        your_color: (seat != Seat::None).then_some(seat),
        your_turn: situation.status == GameStage::Playing && seat.holds(situation.turn),
        moves: game.moves.len(),
        fen: situation.fen.clone(),
        updated_at: game.updated_at,
        last_move_at: game.moves.last().map(|mv| mv.at_ms),
    }
}
