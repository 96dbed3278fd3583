//! The web's clubs (`docs/protocol.md`, "Clubs"): creating one, its page
//! `/club/{id}` and its JSON (members, leaders, arenas, and for leaders the
//! requests to join and the invitation link), joining, leaving, and the
//! leaders' answers. The rules (a club always has a leader, leaders' rights
//! checked in the statements that act) are the store's, `store::clubs`.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chess_live::now_ms;
use chess_store::clubs::{Admission, ClubError, ClubRow, Joined};
use rand::Rng as _;
use serde::Deserialize;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::http::archive::account_named;
use crate::http::error::ApiError;
use crate::http::extract::JsonBody;
use crate::http::signed_in::signed_in;
use crate::state::AppState;

/// A club name's length, in characters.
pub const NAME_CHARS: std::ops::RangeInclusive<usize> = 2..=40;
/// The longest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 2_000;
/// The longest message with a request to join.
pub const MAX_MESSAGE_CHARS: usize = 500;

/// The clubs' routes.
pub fn routes() -> axum::Router<AppState> {
    axum::Router::new()
        .route("/club/{id}", get(page))
        .route("/api/clubs", post(create))
        .route("/api/clubs/mine", get(mine))
        .route("/api/clubs/{id}", get(view))
        .route("/api/clubs/{id}/join", post(join))
        .route("/api/clubs/{id}/leave", post(leave))
        .route("/api/clubs/{id}/requests/{username}/{answer}", post(answer))
        .route("/api/clubs/{id}/members/{username}/remove", post(remove))
        .route("/api/clubs/{id}/members/{username}/leader", post(leader))
}

fn not_found() -> ApiError {
    ApiError::client(
        StatusCode::NOT_FOUND,
        "club_not_found",
        "no club with that id",
    )
}

fn bad_club(message: impl Into<String>) -> ApiError {
    ApiError::client(StatusCode::UNPROCESSABLE_ENTITY, "bad_club", message)
}

impl From<ClubError> for ApiError {
    fn from(error: ClubError) -> ApiError {
        let message = error.to_string();
        let (status, code) = match error {
            ClubError::NoSuchClub => return not_found(),
            ClubError::NameTaken => (StatusCode::CONFLICT, "club_name_taken"),
            ClubError::NotALeader => (StatusCode::FORBIDDEN, "not_a_leader"),
            ClubError::NotAMember => (StatusCode::CONFLICT, "not_a_member"),
            ClubError::LastLeader => (StatusCode::CONFLICT, "last_leader"),
            ClubError::WrongInvitation => (StatusCode::FORBIDDEN, "wrong_invitation"),
            ClubError::UsernameTaken(_) => (StatusCode::CONFLICT, "username_taken"),
            ClubError::NotInClass => (StatusCode::NOT_FOUND, "not_in_class"),
            ClubError::Store(_) => return ApiError::Internal(Box::new(error)),
        };
        ApiError::client(status, code, message)
    }
}

/// The signed-in account of the request (clubs are for accounts).
async fn account(state: &AppState, headers: &HeaderMap) -> Result<Uuid, ApiError> {
    signed_in(state, headers, "sign in to create or join clubs").await
}

/// The club id made from its name: lowercase ASCII letters and digits,
/// words joined by `-` ("Chess Club 7B" is `chess-club-7b`), so it reads
/// well in a link. A name with no such letter gets a random id.
pub fn club_id_of(name: &str) -> String {
    let words: Vec<String> = name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    if words.is_empty() {
        format!("club-{}", new_code(8).to_ascii_lowercase())
    } else {
        words.join("-")
    }
}

/// What a new club is asked to be.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewClub {
    name: String,
    #[serde(default)]
    description: String,
    /// `open`, `request` or `invitation`.
    admission: String,
}

/// Checks a new club's fields: its stored row, made by `creator` at `now`.
fn new_club_row(club: &NewClub, creator: Uuid, now: i64) -> Result<ClubRow, ApiError> {
    let name = club.name.trim();
    let chars = name.chars().count();
    if !NAME_CHARS.contains(&chars) {
        return Err(bad_club(format!(
            "name: {} to {} characters",
            NAME_CHARS.start(),
            NAME_CHARS.end()
        )));
    }
    if !name
        .chars()
        .all(|c| c.is_alphanumeric() || " -_'.&".contains(c))
    {
        return Err(bad_club("name: letters, digits, spaces and - _ ' . & only"));
    }
    if !name.chars().any(char::is_alphanumeric) {
        return Err(bad_club("name: needs a letter or a digit"));
    }
    let id = club_id_of(name);
    let description = club.description.trim();
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(bad_club(format!(
            "description: at most {MAX_DESCRIPTION_CHARS} characters"
        )));
    }
    let admission = match club.admission.as_str() {
        "open" => Admission::Open,
        "request" => Admission::Request,
        "invitation" => Admission::Invitation,
        other => {
            return Err(bad_club(format!(
                "admission: open, request or invitation, not {other:?}"
            )));
        }
    };
    let invite_code = (admission == Admission::Invitation).then(|| new_code(16));
    Ok(ClubRow {
        id,
        name: name.to_owned(),
        description: description.to_owned(),
        admission,
        invite_code,
        created_by: creator,
        created_at: now,
    })
}

/// `len` random letters and digits: an invitation link's secret is 16
/// (95 bits).
fn new_code(len: usize) -> String {
    rand::rng()
        .sample_iter(rand::distr::Alphanumeric)
        .take(len)
        .map(char::from)
        .collect()
}

/// A club as the web lists it.
fn summary(club: &ClubRow) -> Value {
    json!({
        "id": club.id,
        "name": club.name,
        "description": club.description,
        "admission": club.admission.code(),
        "url": format!("/club/{}", club.id),
        "created_at": club.created_at,
    })
}

/// `POST /api/clubs`: the signed-in account creates a club and leads it.
async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    JsonBody(club): JsonBody<NewClub>,
) -> Result<Response, ApiError> {
    let creator = account(&state, &headers).await?;
    let row = new_club_row(&club, creator, now_ms().to_stored())?;
    state.store.create_club(&row).await?;
    tracing::info!(id = row.id, "club created");
    Ok((StatusCode::CREATED, Json(summary(&row))).into_response())
}

/// `GET /api/clubs/mine`: the signed-in account's clubs.
async fn mine(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    let player = account(&state, &headers).await?;
    let clubs: Vec<Value> = state
        .store
        .clubs_of(player)
        .await?
        .iter()
        .map(summary)
        .collect();
    Ok(Json(json!({ "clubs": clubs })).into_response())
}

/// `GET /api/clubs/{id}`: the club, its members and arenas; for its
/// leaders also the requests to join and the invitation link.
async fn view(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let club = state.store.club(&id).await?.ok_or_else(not_found)?;
    let me = state
        .accounts
        .session_of(&headers)
        .await?
        .map(|session| session.account_id);
    let members = state.store.club_members(&id).await?;
    let mine = me.and_then(|me| members.iter().find(|member| member.player_id == me));
    let leader = mine.is_some_and(|member| member.leader);
    let mut value = summary(&club);
    value["members"] = members
        .iter()
        .map(|member| {
            json!({
                "username": member.username,
                "leader": member.leader,
                "joined_at": member.joined_at,
            })
        })
        .collect();
    value["me"] = json!({
        "signed_in": me.is_some(),
        "member": mine.is_some(),
        "leader": leader,
    });
    if leader {
        let requests: Vec<Value> = state
            .store
            .club_requests(&id)
            .await?
            .into_iter()
            .map(|request| {
                json!({
                    "username": request.username,
                    "message": request.message,
                    "created_at": request.created_at,
                })
            })
            .collect();
        value["requests"] = json!(requests);
        value["class"] = crate::http::classes::roster(&state, &id).await?;
        if let Some(code) = &club.invite_code {
            value["invite_url"] = json!(format!("/club/{}?code={code}", club.id));
        }
    }
    value["arenas"] = crate::http::tournaments::listings(&state, Some(&id)).await?;
    Ok(Json(value).into_response())
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct JoinBody {
    /// The invitation link's code, for a club by invitation.
    code: Option<String>,
    /// A word for the leaders, for a club on request.
    message: Option<String>,
}

/// `POST /api/clubs/{id}/join`.
async fn join(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let player = account(&state, &headers).await?;
    // The body is optional: an open club needs nothing.
    let JoinBody { code, message } = if body.is_empty() {
        JoinBody::default()
    } else {
        serde_json::from_slice(&body).map_err(|error| {
            ApiError::client(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_body",
                error.to_string(),
            )
        })?
    };
    let message = message.unwrap_or_default();
    if message.chars().count() > MAX_MESSAGE_CHARS {
        return Err(bad_club(format!(
            "message: at most {MAX_MESSAGE_CHARS} characters"
        )));
    }
    let joined = join_club(&state, &id, player, code.as_deref(), message.trim()).await?;
    Ok(Json(json!({ "joined": joined })).into_response())
}

/// `player` joins club `id` (shared with the lichess team route): what
/// happened, as its code.
pub async fn join_club(
    state: &AppState,
    id: &str,
    player: Uuid,
    code: Option<&str>,
    message: &str,
) -> Result<&'static str, ClubError> {
    let joined = state
        .store
        .join_club(id, player, code, message, now_ms().to_stored())
        .await?;
    Ok(match joined {
        Joined::Member => "member",
        Joined::Requested => "requested",
        Joined::AlreadyMember => "already_member",
    })
}

/// `POST /api/clubs/{id}/leave`.
async fn leave(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let player = account(&state, &headers).await?;
    state.store.remove_club_member(&id, player, player).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST /api/clubs/{id}/requests/{username}/{accept|decline}`.
async fn answer(
    State(state): State<AppState>,
    Path((id, username, answer)): Path<(String, String, String)>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let leader = account(&state, &headers).await?;
    let accept = match answer.as_str() {
        "accept" => true,
        "decline" => false,
        _ => return Err(bad_club("the answer is accept or decline")),
    };
    let player = account_named(&state, &username).await?;
    let answered = state
        .store
        .answer_club_request(&id, leader, player, accept, now_ms().to_stored())
        .await?;
    if !answered {
        return Err(ApiError::client(
            StatusCode::NOT_FOUND,
            "request_not_found",
            "that account has no request waiting",
        ));
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST /api/clubs/{id}/members/{username}/remove`: a leader removes a
/// member.
async fn remove(
    State(state): State<AppState>,
    Path((id, username)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let leader = account(&state, &headers).await?;
    let member = account_named(&state, &username).await?;
    state.store.remove_club_member(&id, leader, member).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LeaderBody {
    leader: bool,
}

/// `POST /api/clubs/{id}/members/{username}/leader` with `{"leader": bool}`.
async fn leader(
    State(state): State<AppState>,
    Path((id, username)): Path<(String, String)>,
    headers: HeaderMap,
    JsonBody(body): JsonBody<LeaderBody>,
) -> Result<Response, ApiError> {
    let leader = account(&state, &headers).await?;
    let member = account_named(&state, &username).await?;
    state
        .store
        .set_club_leader(&id, leader, member, body.leader)
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `/club/{id}`: the page for a club, a 404 page otherwise.
async fn page(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let found = state.store.club(&id).await?.is_some();
    let name = if found { "club.html" } else { "not-found.html" };
    let mut response = crate::http::web::page(state.web_dir.as_deref(), name, &headers).await;
    if !found {
        *response.status_mut() = StatusCode::NOT_FOUND;
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(name: &str, admission: &str) -> NewClub {
        NewClub {
            name: name.into(),
            description: String::new(),
            admission: admission.into(),
        }
    }

    #[test]
    fn ids_are_made_from_names() {
        assert_eq!(club_id_of("Chess Club 7B"), "chess-club-7b");
        assert_eq!(club_id_of("  St. Mary's -- Juniors "), "st-mary-s-juniors");
        assert_eq!(club_id_of("Échecs Paris"), "checs-paris", "ASCII only");
        let cyrillic = club_id_of("Шахматы");
        assert!(
            cyrillic.starts_with("club-") && cyrillic.len() == 13,
            "{cyrillic}"
        );
        assert!(
            cyrillic
                .chars()
                .all(|c| c == '-' || c.is_ascii_alphanumeric())
        );
    }

    #[test]
    fn new_clubs_are_checked() {
        let me = Uuid::new_v4();
        let open = new_club_row(&new("Chess Club 7B", "open"), me, 5).expect("fine");
        assert_eq!(open.id, "chess-club-7b");
        assert_eq!(open.invite_code, None);
        let invited = new_club_row(&new("Secret", "invitation"), me, 5).expect("fine");
        assert_eq!(invited.invite_code.as_deref().map(str::len), Some(16));
        assert!(new_club_row(&new("x", "open"), me, 5).is_err());
        assert!(new_club_row(&new("<b>club</b>", "open"), me, 5).is_err());
        assert!(new_club_row(&new("--", "open"), me, 5).is_err());
        assert!(new_club_row(&new("Fine name", "anyone"), me, 5).is_err());
        let mut long = new("Fine name", "open");
        long.description = "x".repeat(MAX_DESCRIPTION_CHARS + 1);
        assert!(new_club_row(&long, me, 5).is_err());
    }
}
