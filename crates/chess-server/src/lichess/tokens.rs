//! Managing personal access tokens from a signed-in session (the account
//! page, or a script holding the session cookie): create (the text is shown
//! once), list, revoke.
//!
//! These routes speak the web API's error shape (`{"error": {"code",
//! "message"}}`), like the other account routes they sit next to.

use std::time::Instant;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

use super::auth::{Scope, new_token, parse_scopes, token_hash};
use crate::http::error::ApiError;
use crate::http::error::too_many_requests;
use crate::http::extract::JsonBody;
use crate::state::AppState;
use chess_live::now_ms;
use chess_store::TokenRow;

/// The longest description a token may have.
pub const MAX_DESCRIPTION_CHARS: usize = 100;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewToken {
    description: String,
    scopes: Vec<String>,
}

async fn signed_in(state: &AppState, headers: &HeaderMap) -> Result<Uuid, ApiError> {
    match state.accounts.session_of(headers).await? {
        Some(session) => Ok(session.account_id),
        None => Err(ApiError::client(
            StatusCode::UNAUTHORIZED,
            "not_signed_in",
            "sign in to an account first",
        )),
    }
}

fn token_json(row: &TokenRow) -> serde_json::Value {
    let scopes: Vec<&str> = parse_scopes(&row.scopes)
        .into_iter()
        .map(Scope::as_str)
        .collect();
    json!({
        "id": row.id,
        "description": row.description,
        "scopes": scopes,
        "created_at": row.created_at,
        "last_used_at": row.last_used_at,
    })
}

fn invalid(code: &'static str, message: impl Into<String>) -> ApiError {
    ApiError::client(StatusCode::UNPROCESSABLE_ENTITY, code, message)
}

/// `POST /api/account/tokens`: `{"description", "scopes"}` → `201` with the
/// token text, shown this once.
pub async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    JsonBody(request): JsonBody<NewToken>,
) -> Result<Response, ApiError> {
    let account = signed_in(&state, &headers).await?;
    let description = request.description.trim().to_owned();
    if description.is_empty() || description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(invalid(
            "invalid_description",
            format!("a token needs a description of 1 to {MAX_DESCRIPTION_CHARS} characters"),
        ));
    }
    if description.chars().any(char::is_control) {
        return Err(invalid(
            "invalid_description",
            "a description cannot contain control characters",
        ));
    }
    let mut scopes = Vec::new();
    for name in &request.scopes {
        let scope = Scope::parse(name).ok_or_else(|| {
            let known: Vec<&str> = Scope::ALL.iter().map(|scope| scope.as_str()).collect();
            invalid(
                "invalid_scope",
                format!(
                    "unknown scope {name:?}; the scopes are {}",
                    known.join(", ")
                ),
            )
        })?;
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    if scopes.is_empty() {
        return Err(invalid("invalid_scope", "a token needs at least one scope"));
    }
    if let Err(retry) = state.lichess.token_creations.hit(account, Instant::now()) {
        return Ok(too_many_requests(retry));
    }
    let token = new_token();
    let row = TokenRow {
        id: Uuid::new_v4(),
        player_id: account,
        description,
        scopes: scopes
            .iter()
            .map(|scope| scope.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        created_at: now_ms().to_stored(),
        last_used_at: None,
        revoked_at: None,
    };
    state.store.insert_token(&row, &token_hash(&token)).await?;
    let mut body = token_json(&row);
    body["token"] = json!(token);
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

/// `GET /api/account/tokens`: the account's working tokens (never their text).
pub async fn list(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    let account = signed_in(&state, &headers).await?;
    let tokens: Vec<_> = state
        .store
        .tokens_of(account)
        .await?
        .iter()
        .map(token_json)
        .collect();
    Ok(Json(json!({ "tokens": tokens })).into_response())
}

/// `DELETE /api/account/tokens/{id}`: the token stops working at once.
pub async fn revoke(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let account = signed_in(&state, &headers).await?;
    let not_found = || {
        ApiError::client(
            StatusCode::NOT_FOUND,
            "token_not_found",
            "you have no working token with that id",
        )
    };
    let id = Uuid::parse_str(&id).map_err(|_| not_found())?;
    let now = now_ms().to_stored();
    if state.store.revoke_token(account, id, now).await? {
        tokens_changed(&state, account).await;
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(not_found())
    }
}

/// `player`'s tokens changed (one revoked, or the account became a bot):
/// this node and the others forget what they remember of them, so that the
/// change holds on every node's next request.
pub async fn tokens_changed(state: &AppState, player: Uuid) {
    state.lichess.tokens.forget_player(player);
    super::notices::tell_other_nodes(
        &state.store,
        state.registry.node_id(),
        super::notices::ApiNotice::TokensChanged { player },
    )
    .await;
}
