//! The web's arenas (`docs/protocol.md`, "Arenas"): the list on the home
//! page, the tournament page `/tournament/{id}` and its JSON, and the
//! signed-in account's actions (create, join, withdraw, terminate). The
//! settings and actions are `tournament::arenas`', shared with the lichess
//! API; this module reads the session and writes the web's shapes.

use std::time::Instant;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chess_live::now_ms;
use chess_store::tournaments::{Listing, TournamentError, TournamentRow, TournamentStatus};
use chess_tournament::arena::Mark;
use serde::Deserialize;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::http::archive::account_named;
use crate::http::error::{ApiError, too_many_requests};
use crate::http::signed_in::signed_in;
use crate::lichess::tournaments::settings;
use crate::state::AppState;
use crate::tournament::arenas::full_name;
use crate::tournament::arenas::{self, ArenaView, CreateError};
use crate::tournament::standings::Standing;

/// Standings lines on one page of the tournament page.
pub const STANDINGS_PAGE: usize = 20;
/// Arenas of each listing on the home page, and on a player's page.
const LISTED: i64 = 20;

/// The arenas' routes.
pub fn routes() -> axum::Router<AppState> {
    axum::Router::new()
        .route("/tournament/{id}", get(page))
        .route("/api/arenas", get(list).post(create))
        .route("/api/arenas/{id}", get(view))
        .route("/api/arenas/{id}/join", post(join))
        .route("/api/arenas/{id}/withdraw", post(withdraw))
        .route("/api/arenas/{id}/terminate", post(terminate))
        .route("/api/games/{id}/tournament", get(of_game))
        .route("/api/players/{username}/tournaments", get(played))
}

fn not_found() -> ApiError {
    ApiError::client(
        StatusCode::NOT_FOUND,
        "tournament_not_found",
        "no tournament with that id",
    )
}

impl From<TournamentError> for ApiError {
    fn from(error: TournamentError) -> ApiError {
        let message = error.to_string();
        let (status, code) = match error {
            TournamentError::NoSuchTournament => return not_found(),
            TournamentError::NotAClubLeader => (StatusCode::FORBIDDEN, "not_a_club_leader"),
            TournamentError::NotTheOrganiser => (StatusCode::FORBIDDEN, "not_the_organiser"),
            TournamentError::NotAClubMember => (StatusCode::FORBIDDEN, "not_a_club_member"),
            TournamentError::RatingOutOfRange => {
                (StatusCode::UNPROCESSABLE_ENTITY, "rating_out_of_range")
            }
            TournamentError::Finished => (StatusCode::CONFLICT, "tournament_over"),
            TournamentError::NotAPlayer => (StatusCode::CONFLICT, "not_a_player"),
            TournamentError::IdTaken
            | TournamentError::LeaseLost
            | TournamentError::PlayerBusy
            | TournamentError::Store(_) => return ApiError::Internal(Box::new(error)),
        };
        ApiError::client(status, code, message)
    }
}

/// The signed-in account of the request: arenas are for accounts (their
/// games are rated, their results kept), not guests.
async fn account(state: &AppState, headers: &HeaderMap) -> Result<Uuid, ApiError> {
    signed_in(state, headers, "sign in to play in tournaments").await
}

/// An arena as the web lists it (the home page, a club's page).
fn summary(tournament: &TournamentRow, created_by: &str, players: usize) -> Value {
    json!({
        "id": tournament.id,
        "name": tournament.name,
        "full_name": full_name(&tournament.name),
        "created_by": created_by,
        "club_id": tournament.club_id,
        "clock": {
            "base_s": tournament.clock_base_s,
            "increment_s": tournament.clock_increment_s,
        },
        "perf": arenas::perf(tournament).code(),
        "rated": tournament.rated,
        "berserkable": tournament.berserkable,
        "streaks": tournament.streaks,
        "min_rating": tournament.min_rating,
        "max_rating": tournament.max_rating,
        "starts_at": tournament.starts_at,
        "ends_at": tournament.ends_at,
        "status": tournament.status.code(),
        "players": players,
    })
}

/// A standings line with its whole sheet.
fn standing_json(standing: &Standing) -> Value {
    let games: Vec<Value> = standing
        .sheet
        .games
        .iter()
        .zip(standing.berserks.iter())
        .map(|(game, berserk)| {
            json!({
                "points": game.points,
                "mark": match game.mark {
                    Mark::Normal => "normal",
                    Mark::Double => "double",
                    Mark::Null => "null",
                },
                "berserk": berserk,
                "berserk_bonus": game.berserk_bonus,
            })
        })
        .collect();
    json!({
        "rank": standing.rank,
        "username": standing.username,
        "rating": standing.rating,
        "score": standing.sheet.total,
        "performance": standing.performance,
        "fire": standing.sheet.on_fire,
        "withdrawn": standing.withdrawn,
        "games": games,
    })
}

/// `GET /api/arenas`: the arenas to list on the home page.
async fn list(State(state): State<AppState>) -> Result<Response, ApiError> {
    Ok(Json(listings(&state, None).await?).into_response())
}

/// `{running, upcoming, finished}`: up to [`LISTED`] arena summaries each,
/// of club `club` only when given.
///
/// # Errors
/// The database error.
pub async fn listings(state: &AppState, club: Option<&str>) -> Result<Value, ApiError> {
    let mut lists = serde_json::Map::new();
    for (key, listing) in [
        ("running", Listing::Running),
        ("upcoming", Listing::Upcoming),
        ("finished", Listing::Finished),
    ] {
        let rows = state.store.tournaments(listing, club, LISTED).await?;
        let mut arenas = Vec::with_capacity(rows.len());
        for row in rows {
            let (created_by, players) = arenas::listed(&state.store, &row).await?;
            arenas.push(summary(&row, &created_by, players));
        }
        lists.insert(key.to_owned(), Value::Array(arenas));
    }
    Ok(Value::Object(lists))
}

/// `POST /api/arenas`: the signed-in account creates an arena from
/// lichess's field names (`docs/lichess-api.md`, "Arenas").
async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let player = account(&state, &headers).await?;
    let name = state
        .store
        .player(player)
        .await?
        .map(|player| player.name)
        .unwrap_or_default();
    let bad = |message: &str| {
        ApiError::client(
            StatusCode::UNPROCESSABLE_ENTITY,
            "bad_settings",
            message.to_owned(),
        )
    };
    let fields = crate::lichess::form::fields(&headers, &body).map_err(|f| bad(f.message()))?;
    let now = now_ms().to_stored();
    let settings = settings(&fields, &name, now).map_err(|f| bad(f.message()))?;
    settings.check(now).map_err(|error| bad(&error.0))?;
    if let Err(retry) = state.tournament_limits.hit(player, Instant::now()) {
        return Ok(too_many_requests(retry));
    }
    let row = arenas::create(&state.store, player, &settings)
        .await
        .map_err(|error| match error {
            CreateError::Settings(error) => bad(&error.0),
            CreateError::Refused(refused) => refused.into(),
        })?;
    tracing::info!(id = row.id, by = name, "arena created");
    Ok((StatusCode::CREATED, Json(summary(&row, &name, 0))).into_response())
}

#[derive(Debug, Deserialize)]
struct ViewQuery {
    page: Option<usize>,
}

/// `GET /api/arenas/{id}`: the arena, a page of its standings (the
/// signed-in player's page unless `page` is given), the podium once it is
/// over, and the signed-in player's own state.
async fn view(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    query: Result<Query<ViewQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|error| {
        ApiError::client(
            StatusCode::UNPROCESSABLE_ENTITY,
            "bad_query",
            error.body_text(),
        )
    })?;
    let view = ArenaView::load(&state.store, &id)
        .await?
        .ok_or_else(not_found)?;
    let me = state
        .accounts
        .session_of(&headers)
        .await?
        .map(|session| session.account_id);
    let now = now_ms().to_stored();
    let pages = view.standings.len().div_ceil(STANDINGS_PAGE).max(1);
    let own_page = me
        .and_then(|me| view.standings.iter().position(|line| line.player == me))
        .map(|index| index / STANDINGS_PAGE + 1);
    let page = query.page.or(own_page).unwrap_or(1).clamp(1, pages);
    let lines: Vec<Value> = view
        .standings
        .iter()
        .skip((page - 1) * STANDINGS_PAGE)
        .take(STANDINGS_PAGE)
        .map(standing_json)
        .collect();
    let mut value = summary(&view.tournament, &view.created_by, view.players.len());
    value["now"] = json!(now);
    value["ongoing"] = json!(view.ongoing());
    value["standings"] = json!({ "page": page, "pages": pages, "lines": lines });
    if view.tournament.status == TournamentStatus::Finished {
        let podium: Vec<Value> = view.standings.iter().take(3).map(standing_json).collect();
        value["podium"] = json!(podium);
    }
    if let Some(me) = me {
        value["me"] = own_state(&view, me, now);
        // The page asks every two seconds: the player is there, in the pool.
        if let Err(error) = state.store.mark_tournament_presence(&id, me, now).await {
            tracing::warn!(%error, id, "marking a player present failed");
        }
    }
    Ok(Json(value).into_response())
}

/// The player's own state: joined or not, paused until when, and the
/// game they are playing in the arena now (the page takes them there).
fn own_state(view: &ArenaView, me: Uuid, now: i64) -> Value {
    let organiser = view.tournament.created_by == me;
    let Some(player) = view.players.iter().find(|player| player.player_id == me) else {
        return json!({ "joined": false, "withdrawn": false, "organiser": organiser });
    };
    let playing = view
        .games
        .iter()
        .filter(|game| !game.finished && (game.white == me || game.black == me))
        .max_by_key(|game| game.paired_at)
        .map(|game| game.game_id);
    json!({
        "joined": !player.withdrawn,
        "withdrawn": player.withdrawn,
        "paused_until": player.pauses.until.filter(|until| *until > now),
        "game_id": playing,
        "organiser": organiser,
    })
}

async fn join(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let player = account(&state, &headers).await?;
    arenas::join(&state.store, &id, player).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn withdraw(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let player = account(&state, &headers).await?;
    arenas::withdraw(&state.store, &id, player).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn terminate(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let player = account(&state, &headers).await?;
    state
        .store
        .terminate_tournament(&id, player, now_ms().to_stored())
        .await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `GET /api/games/{id}/tournament`: the arena game `id` belongs to (the
/// game page links back to it and shows its time left), with `now`.
async fn of_game(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let game = Uuid::parse_str(&id).map_err(|_| ApiError::game_not_found())?;
    let Some(tournament) = state.store.tournament_of_game(game).await? else {
        return Err(not_found());
    };
    let row = state
        .store
        .tournament(&tournament)
        .await?
        .ok_or_else(not_found)?;
    let (created_by, players) = arenas::listed(&state.store, &row).await?;
    let mut value = summary(&row, &created_by, players);
    value["now"] = json!(now_ms().to_stored());
    Ok(Json(value).into_response())
}

/// `GET /api/players/{username}/tournaments`: the arenas the account
/// joined, latest first, each with their rank and score in it.
async fn played(
    State(state): State<AppState>,
    Path(username): Path<String>,
) -> Result<Response, ApiError> {
    let player = account_named(&state, &username).await?;
    let mut played = Vec::new();
    for row in state.store.tournaments_of(player, LISTED).await? {
        let Some(view) = ArenaView::load(&state.store, &row.id).await? else {
            continue;
        };
        let line = view.standings.iter().find(|line| line.player == player);
        let mut value = summary(&view.tournament, &view.created_by, view.players.len());
        value["rank"] = json!(line.map(|line| line.rank));
        value["score"] = json!(line.map(|line| line.sheet.total));
        played.push(value);
    }
    Ok(Json(json!({ "tournaments": played })).into_response())
}

/// `/tournament/{id}`: the page for an arena, a 404 page otherwise.
async fn page(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let found = state.store.tournament(&id).await?.is_some();
    let name = if found {
        "tournament.html"
    } else {
        "not-found.html"
    };
    let mut response = crate::http::web::page(state.web_dir.as_deref(), name, &headers).await;
    if !found {
        *response.status_mut() = StatusCode::NOT_FOUND;
    }
    Ok(response)
}
