//! Lichess's team API, answered by this server's clubs: `GET
//! /api/team/{id}`, `GET /api/team/{id}/users` and `POST /team/{id}/join`
//! (a team's arenas are `tournaments::team_arenas`).

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use chess_store::clubs::{Admission, ClubError};
use serde_json::json;

use super::auth::{ApiUser, Scope};
use super::form::fields;
use super::reply::{ApiFailure, line, ndjson, ok};
use crate::state::AppState;

impl From<ClubError> for ApiFailure {
    fn from(error: ClubError) -> ApiFailure {
        let message = error.to_string();
        match error {
            ClubError::NoSuchClub => ApiFailure::new(StatusCode::NOT_FOUND, "No such team"),
            ClubError::WrongInvitation | ClubError::NotALeader => {
                ApiFailure::new(StatusCode::FORBIDDEN, message)
            }
            ClubError::NameTaken
            | ClubError::NotAMember
            | ClubError::LastLeader
            | ClubError::UsernameTaken(_)
            | ClubError::NotInClass => ApiFailure::bad_request(message),
            ClubError::Store(_) => ApiFailure::internal(error),
        }
    }
}

/// `GET /api/team/{id}`: the club as lichess shows a team.
pub async fn team(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiFailure> {
    let club = state.store.club(&id).await?.ok_or(ClubError::NoSuchClub)?;
    let members = state.store.club_members(&id).await?;
    let leaders: Vec<_> = members
        .iter()
        .filter(|member| member.leader)
        .map(|member| json!({ "name": member.username, "id": member.username.to_lowercase() }))
        .collect();
    let creator = members
        .iter()
        .find(|member| member.player_id == club.created_by)
        .map(|member| member.username.clone());
    let mut value = json!({
        "id": club.id,
        "name": club.name,
        "description": club.description,
        "open": club.admission == Admission::Open,
        "leaders": leaders,
        "nbMembers": members.len(),
    });
    if let Some(leader) = creator.or_else(|| {
        members
            .iter()
            .find(|member| member.leader)
            .map(|member| member.username.clone())
    }) {
        value["leader"] = json!({ "name": leader, "id": leader.to_lowercase() });
    }
    Ok(Json(value).into_response())
}

/// `GET /api/team/{id}/users`: the members, one a line.
pub async fn users(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiFailure> {
    if state.store.club(&id).await?.is_none() {
        return Err(ClubError::NoSuchClub.into());
    }
    let lines: Vec<Bytes> = state
        .store
        .club_members(&id)
        .await?
        .iter()
        .map(|member| {
            line(&json!({
                "name": member.username,
                "id": member.username.to_lowercase(),
                "joinedTeamAt": member.joined_at,
            }))
        })
        .collect();
    Ok(ndjson(futures_util::stream::iter(lines)))
}

/// `POST /team/{id}/join`: `message` for a club on request, `password` (the
/// invitation code) for a club by invitation.
pub async fn join(
    State(state): State<AppState>,
    user: ApiUser,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiFailure> {
    user.require(&[Scope::TeamWrite])?;
    let fields = fields(&headers, &body)?;
    let message = fields.get("message").map_or("", |message| message.trim());
    if message.chars().count() > crate::http::clubs::MAX_MESSAGE_CHARS {
        return Err(ApiFailure::bad_request("message: at most 500 characters"));
    }
    let code = fields.get("password").map(String::as_str);
    crate::http::clubs::join_club(&state, &id, user.player_id, code, message).await?;
    Ok(ok())
}
