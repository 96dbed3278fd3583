//! The ratings as the JSON API shows them: a player's rating in every speed
//! with its history (the player page draws its chart from it), and the
//! ratings of a game's two players with what the game changed.
//!
//! Ratings are rounded to the unit; `provisional` (shown with a `?`) while
//! the deviation, grown by the time since the player's last rated game, is
//! above 110 ([`chess_store::ratings::glicko2::PROVISIONAL_DEVIATION`]).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chess_live::{Freshness, PlayerKind, now_ms};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::http::error::ApiError;
use crate::state::AppState;
use chess_store::accounts::Username;
use chess_store::ratings::Perf;
use chess_store::{StoredRating, shown};

/// The ratings routes, merged into the API router.
pub fn routes() -> axum::Router<AppState> {
    axum::Router::new()
        .route("/api/players/{username}/ratings", get(player_ratings))
        .route("/api/games/{id}/ratings", get(game_ratings))
}

fn player_not_found() -> ApiError {
    ApiError::client(
        StatusCode::NOT_FOUND,
        "player_not_found",
        "no account with that username",
    )
}

/// `{rating, rd, provisional, games}` of a stored rating, as of `now_ms`.
pub fn rating_json(stored: &StoredRating, now_ms: i64) -> Value {
    let rating = stored.as_of(now_ms);
    json!({
        "rating": shown(rating.rating),
        "rd": shown(rating.deviation),
        "provisional": rating.is_provisional(),
        "games": stored.games,
    })
}

/// `GET /api/players/{username}/ratings`.
async fn player_ratings(
    State(state): State<AppState>,
    Path(username): Path<String>,
) -> Result<Response, ApiError> {
    let username: Username = username.parse().map_err(|_| player_not_found())?;
    let account = state
        .store
        .account_by_username(&username)
        .await?
        .ok_or_else(player_not_found)?;
    let now = now_ms().to_stored();
    let ratings = state.store.ratings_of(account.player_id).await?;
    let history = state.store.rating_history(account.player_id).await?;
    let mut perfs = serde_json::Map::new();
    for (perf, stored) in ratings {
        let mut entry = rating_json(&stored, now);
        entry["history"] = history
            .iter()
            .filter(|point| point.perf == perf)
            .map(|point| {
                json!({
                    "at_ms": point.at_ms,
                    "rating": shown(point.rating),
                    "game_id": point.game_id,
                })
            })
            .collect();
        perfs.insert(perf.code().to_owned(), entry);
    }
    Ok(Json(json!({ "username": account.username, "ratings": perfs })).into_response())
}

/// `GET /api/games/{id}/ratings`: whether the game is rated, its perf, and
/// for each seat held by an account its rating (before the game once it is
/// over and rated) and the change it made (`null` until then).
async fn game_ratings(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = Uuid::parse_str(&id).map_err(|_| ApiError::game_not_found())?;
    let game = state
        .registry
        .snapshot(id, Freshness::Stored)
        .await?
        .ok_or_else(ApiError::game_not_found)?;
    let perf = Perf::of(game.time_control.speed());
    let changes = state.store.rating_changes_of_game(id).await?;
    let now = now_ms().to_stored();
    let mut seats = serde_json::Map::new();
    for (name, player) in [
        ("white", &game.players.white),
        ("black", &game.players.black),
    ] {
        let value = match player {
            Some(player) if player.kind == PlayerKind::Account => {
                let stored = state.store.rating_of(player.id, perf).await?;
                let mut value = rating_json(&stored, now);
                value["change"] = Value::Null;
                if let Some(change) = changes.iter().find(|c| c.player_id == player.id) {
                    value["rating"] = json!(shown(change.before));
                    value["after"] = json!(shown(change.after));
                    value["change"] = json!(change.change);
                }
                value
            }
            _ => Value::Null,
        };
        seats.insert(name.to_owned(), value);
    }
    Ok(Json(json!({
        "game_id": id,
        "rated": game.rated,
        "perf": perf.code(),
        "white": seats["white"],
        "black": seats["black"],
    }))
    .into_response())
}
