//! A game as rows: the small changing part in `games.state`, one `moves` row
//! per ply (append-only apart from take-backs), rebuilt with `Game::restore`.

use chess_game::{Game, GameSettings, GameSpec, SavedGame, SavedMove, SavedState};
use serde::{Deserialize, Serialize};

use crate::clock::UnixMs;
use crate::rows::MoveRow;
use crate::store::StoreError;

/// Everything of a [`SavedGame`] except its moves: the `games.state` column.
#[derive(Debug, Serialize, Deserialize)]
struct StoredState {
    spec: GameSpec,
    settings: GameSettings,
    created_at_ms: u64,
    state: SavedState,
}

/// [`StoredState`] borrowed from a game, to write it.
#[derive(Serialize)]
struct StoredStateOf<'a> {
    spec: &'a GameSpec,
    settings: &'a GameSettings,
    created_at_ms: u64,
    state: &'a SavedState,
}

/// The `games.state` JSON of `game`.
pub fn state_json(game: &Game) -> String {
    let saved = game.saved();
    let stored = StoredStateOf {
        spec: &saved.spec,
        settings: &saved.settings,
        created_at_ms: saved.created_at_ms,
        state: &saved.state,
    };
    // Plain data with string keys: serialising cannot fail.
    serde_json::to_string(&stored).unwrap_or_default()
}

/// The `games.result` JSON of `game`, once it is over.
pub fn result_json(game: &Game) -> Option<String> {
    game.result().map(|result| {
        serde_json::json!({ "winner": result.winner, "reason": result.reason.code() }).to_string()
    })
}

/// The `moves` row of move number `ply` of `game`.
pub fn move_row(game: &Game, ply: usize) -> Option<MoveRow> {
    let saved = game.moves().get(ply)?;
    let mover = game.position_at(u32::try_from(ply).ok()?)?.turn();
    Some(MoveRow {
        ply: i64::try_from(ply).ok()?,
        uci: saved.uci.clone(),
        san: saved.san.clone(),
        clock_ms: saved
            .remaining_ms
            .map(|clocks| i64::try_from(*clocks.get(mover)).unwrap_or(i64::MAX)),
        played_at: UnixMs::from_millis(saved.at_ms),
        record: serde_json::to_string(saved).unwrap_or_default(),
    })
}

/// Rebuilds a game from its `games.state` JSON and its moves.
///
/// # Errors
/// A corrupt [`StoreError`] when the JSON does not parse or the game crate
/// refuses the record.
pub fn restore(state: &str, moves: &[MoveRow]) -> Result<Game, StoreError> {
    let stored = parse_state(state)?;
    Game::restore(SavedGame {
        spec: stored.spec,
        settings: stored.settings,
        created_at_ms: stored.created_at_ms,
        moves: parse_moves(moves)?,
        state: stored.state,
    })
    .map_err(|e| StoreError::corrupt(format!("game record: {e}")))
}

/// The spec a game was created with, from its `games.state` JSON: what the
/// store reads of an ending (is it rated, at what speed) without rebuilding
/// the game.
///
/// # Errors
/// A corrupt [`StoreError`] when the JSON does not parse.
pub fn spec_of(state: &str) -> Result<GameSpec, StoreError> {
    parse_state(state).map(|stored| stored.spec)
}

/// Which sides berserked, from a game's `games.state` JSON: what a
/// tournament's scoring reads of each game without rebuilding it.
///
/// # Errors
/// A corrupt [`StoreError`] when the JSON does not parse.
pub fn berserk_of(state: &str) -> Result<chess_rules::ByColor<bool>, StoreError> {
    parse_state(state).map(|stored| stored.state.berserk)
}

fn parse_state(state: &str) -> Result<StoredState, StoreError> {
    serde_json::from_str(state).map_err(|e| StoreError::corrupt(format!("game state: {e}")))
}

fn parse_moves(moves: &[MoveRow]) -> Result<Vec<SavedMove>, StoreError> {
    moves
        .iter()
        .map(|row| serde_json::from_str::<SavedMove>(&row.record))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| StoreError::corrupt(format!("saved move: {e}")))
}

/// Brings `game` up to its stored `state` JSON, given the moves played since
/// it was read (`moves`, in ply order, continuing its moves).
///
/// # Errors
/// A corrupt [`StoreError`] when the JSON does not parse or the moves do not
/// continue the game; `game` is then unchanged.
pub fn advance(game: &mut Game, state: &str, moves: &[MoveRow]) -> Result<(), StoreError> {
    let stored = parse_state(state)?;
    game.advance(stored.state, parse_moves(moves)?)
        .map_err(|e| StoreError::corrupt(format!("game record: {e}")))
}

/// Whether the stored move `row` is `held`, exactly.
pub fn is_move(row: &MoveRow, held: &SavedMove) -> bool {
    serde_json::from_str::<SavedMove>(&row.record).is_ok_and(|stored| &stored == held)
}

#[cfg(test)]
mod tests {
    use chess_rules::Color;

    use super::*;

    #[test]
    fn a_game_survives_the_round_trip_through_rows() {
        let mut game = Game::new(
            GameSpec::standard("3+2".parse().expect("preset")),
            GameSettings::default(),
            1_000,
        );
        game.play_uci(Color::White, "e2e4", Some(0), 2_000)
            .expect("legal");
        game.play_uci(Color::Black, "e7e5", Some(1), 3_000)
            .expect("legal");
        game.play_uci(Color::White, "g1f3", Some(2), 7_000)
            .expect("legal");
        let rows: Vec<MoveRow> = (0..3).filter_map(|ply| move_row(&game, ply)).collect();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[2].san, "Nf3");
        assert_eq!(rows[2].clock_ms, Some(180_000 - 4_000 + 2_000));

        let restored = restore(&state_json(&game), &rows).expect("restores");
        assert_eq!(restored.saved(), game.saved());
        assert_eq!(restored.version(), game.version());
    }
}
