//! Finished games played in the browser (`docs/protocol.md`, "Games played
//! in the browser"): a signed-in player's computer and one-screen games run
//! in the page, and the page hands each finished one over so the archive
//! stays complete. Nothing of it is taken on trust: every move is replayed
//! through the rules (the game crate's restore), the result must follow from
//! the moves, the names must be the player's own (and the computer's), the
//! times must make sense, and the game is casual. It is stored whole in one
//! transaction, or not at all.

use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use chess_engine::Level;
use chess_game::{Game, ResultMismatch};
use chess_live::{GameMode, NewGame, PlayerKind, computer_player, now_ms};
use chess_rules::Color;
use chess_wasm::{LocalGame, Opponent};
use serde::Deserialize;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::auth::identity::Identity;
use crate::http::error::ApiError;
use crate::http::extract::JsonBody;
use crate::http::limits::limit_game_creation;
use crate::state::AppState;

/// The most an upload may hold: a saved game is about 150 bytes a move, so
/// this is some 3,000 moves (the API's 16 KiB would cut games off near 100).
const MAX_UPLOAD_BYTES: usize = 512 * 1024;

/// How far ahead of the server's clock a browser's clock may run.
const CLOCK_SLACK_MS: u64 = 5 * 60 * 1000;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/games/played-here", post(upload))
        .layer(DefaultBodyLimit::max(MAX_UPLOAD_BYTES))
}

/// The upload: the game as the browser saved it, and who played it as the
/// page names them (PGN's White and Black).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Upload {
    game: Value,
    white: String,
    black: String,
}

fn refused(code: &'static str, message: impl Into<String>) -> ApiError {
    ApiError::client(StatusCode::UNPROCESSABLE_ENTITY, code, message)
}

async fn upload(
    State(state): State<AppState>,
    identity: Identity,
    JsonBody(upload): JsonBody<Upload>,
) -> Result<Response, ApiError> {
    let person = match &identity.stored {
        Some(player) if player.kind == PlayerKind::Account => player.clone(),
        _ => {
            return Err(ApiError::client(
                StatusCode::UNAUTHORIZED,
                "not_signed_in",
                "sign in to keep the games played in this browser in your archive",
            ));
        }
    };
    let local = LocalGame::restore(&upload.game.to_string())
        .map_err(|err| refused("illegal_game", err.to_string()))?;
    let id =
        Uuid::parse_str(local.id()).map_err(|_| refused("bad_game_id", "a game's id is a UUID"))?;
    let game = local.game();
    check_casual(game)?;
    check_result(game)?;
    check_times(game, now_ms().millis())?;

    let (mode, level) = match local.opponent() {
        Opponent::OneScreen => (GameMode::Local, None),
        Opponent::Computer { level, .. } => (GameMode::Computer, Level::from_number(level)),
    };
    let seat = |color: Color| match (local.opponent().computer_color(), level) {
        (Some(computer), Some(level)) if computer == color => computer_player(level),
        _ => person.clone(),
    };
    let (white, black) = (seat(Color::White), seat(Color::Black));
    for (named, player) in [(&upload.white, &white), (&upload.black, &black)] {
        if *named != player.name {
            return Err(ApiError::client(
                StatusCode::FORBIDDEN,
                "not_your_game",
                format!(
                    "the game names {named:?} where {:?} played: you are signed in as {:?}",
                    player.name, person.name
                ),
            ));
        }
    }
    limit_game_creation(&state, &identity)?;
    let new = NewGame {
        id,
        mode,
        spec: game.spec().clone(),
        white: Some(white),
        black: Some(black),
        computer_level: level,
    };
    let stored = state.registry.store_finished(&new, game).await?;
    if !stored {
        // The same upload again (a retry after a lost answer) is no error;
        // a game under that id that is not this player's is.
        let existing = state.store.game(id).await?;
        let mine = existing
            .is_some_and(|row| row.white_id == Some(person.id) || row.black_id == Some(person.id));
        if !mine {
            return Err(ApiError::client(
                StatusCode::CONFLICT,
                "game_id_taken",
                "another game has this id",
            ));
        }
    }
    let status = if stored {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(json!({ "game_id": id, "url": format!("/game/{id}"), "stored": stored })),
    )
        .into_response())
}

/// A game played in the browser is casual and free: not rated, not a
/// tournament's, no berserk.
fn check_casual(game: &Game) -> Result<(), ApiError> {
    let spec = game.spec();
    if spec.rated() || spec.mandatory() || spec.berserkable() {
        return Err(refused(
            "not_casual",
            "a game played in the browser is casual: not rated, not a tournament's",
        ));
    }
    Ok(())
}

fn check_result(game: &Game) -> Result<(), ApiError> {
    game.verify_result().map_err(|mismatch| match mismatch {
        ResultMismatch::NotOver => refused("game_not_over", "only a finished game is kept"),
        other => refused("result_does_not_follow", other.to_string()),
    })
}

/// Moves in order after the game's creation, none from the future.
fn check_times(game: &Game, now: u64) -> Result<(), ApiError> {
    let mut last = game.created_at_ms();
    for saved in game.moves() {
        if saved.at_ms < last {
            return Err(refused("bad_times", "the moves' times go backwards"));
        }
        last = saved.at_ms;
    }
    let ended = game.saved().state.last_event_at_ms.max(last);
    if ended > now.saturating_add(CLOCK_SLACK_MS) {
        return Err(refused("bad_times", "the game ends in the future"));
    }
    Ok(())
}
