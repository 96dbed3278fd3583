//! The account through a token: `GET /api/account` (shared with the web's
//! session route, told apart by the `Authorization` header) and
//! `POST /api/bot/account/upgrade`.

use axum::Json;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::auth::{ApiUser, authenticate, bearer};
use super::reply::{ApiFailure, ok};
use crate::http::extract::ClientAddress;
use crate::state::AppState;
use chess_store::shown;

/// Lichess's account object.
async fn account_json(state: &AppState, user: &ApiUser) -> Result<serde_json::Value, ApiFailure> {
    let created_at = state
        .store
        .api_account(user.player_id)
        .await?
        .map_or(0, |account| account.created_at);
    // Every speed, lichess's shape; `prov` while the rating is provisional.
    let now = chess_live::now_ms().to_stored();
    let mut perfs = serde_json::Map::new();
    for (perf, stored) in state.store.ratings_of(user.player_id).await? {
        let rating = stored.as_of(now);
        perfs.insert(
            perf.code().to_owned(),
            json!({
                "rating": shown(rating.rating),
                "rd": shown(rating.deviation),
                "games": stored.games,
                "prog": 0,
                "prov": rating.is_provisional(),
            }),
        );
    }
    let mut value = json!({
        "id": user.id(),
        "username": user.username,
        "createdAt": created_at,
        "perfs": perfs,
        "url": format!("/@/{}", user.id()),
    });
    if user.bot {
        value["title"] = json!("BOT");
    }
    Ok(value)
}

/// Answers `GET /api/account` for a request with a bearer token (a lichess
/// client); every other request goes on to the web's routes, where the same
/// path answers the signed-in session.
pub async fn bearer_account(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::GET
        || request.uri().path() != "/api/account"
        || bearer(request.headers()).is_none()
    {
        return next.run(request).await;
    }
    let ClientAddress(address) = ClientAddress::of(request.extensions(), request.headers());
    // Only the headers are needed (a request body is not `Sync`).
    let headers = request.headers().clone();
    drop(request);
    let answer = async {
        let user = authenticate(&state, &headers, address).await?;
        account_json(&state, &user).await
    }
    .await;
    match answer {
        Ok(value) => Json(value).into_response(),
        Err(failure) => failure.into_response(),
    }
}

/// `POST /api/bot/account/upgrade`: the account becomes a bot for good. Only
/// an account that has never played can: its games and rewards stay a
/// person's.
pub async fn upgrade(State(state): State<AppState>, user: ApiUser) -> Result<Response, ApiFailure> {
    user.require(&[super::auth::Scope::BotPlay])?;
    if user.bot {
        return Ok(ok());
    }
    if state.store.make_bot(user.player_id).await? {
        tracing::info!(account = %user.player_id, "an account became a bot");
        super::tokens::tokens_changed(&state, user.player_id).await;
        Ok(ok())
    } else {
        Err(ApiFailure::new(
            StatusCode::BAD_REQUEST,
            "This account has already played games and cannot become a bot",
        ))
    }
}
