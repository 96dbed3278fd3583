//! The HTTP API and pages (`docs/protocol.md`).

use std::sync::Arc;

use axum::extract::rejection::JsonRejection;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{FromRequest, Path, Request, State};
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE, ORIGIN};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chess_engine::Level;
use chess_game::GameSpec;
use chess_rules::Color;
use serde::Deserialize;
use serde_json::json;
use tower_http::services::{ServeDir, ServeFile};
use uuid::Uuid;

use crate::clock::now_ms;
use crate::error::ApiError;
use crate::games::{LiveGame, NewGame, computer_player};
use crate::identity::{Identity, MaybeIdentity, random_guest_name, set_cookie};
use crate::lobby::{SeekError, SeekOutcome};
use crate::model::{ColorChoice, GameMode, GameStatus, PlayerKind, Seat};
use crate::startup::AppState;
use crate::store::PlayerRow;
use crate::time_control::TimeControlJson;

/// Every route of the server.
pub fn router(state: AppState) -> Router {
    let web = state.web_dir.as_ref().clone();
    let game_page = ServeFile::new(web.join("game.html"));
    Router::new()
        .route("/healthz", get(healthz))
        .route("/api/me", get(me))
        .route("/api/lobby/seeks", get(list_seeks).post(create_seek))
        .route("/api/lobby/seeks/{seek_id}/join", post(join_seek))
        .route(
            "/api/lobby/seeks/{seek_id}",
            axum::routing::delete(cancel_seek),
        )
        .route("/api/lobby/socket", get(lobby_socket))
        .route("/api/challenges", post(create_challenge))
        .route("/api/games/local", post(create_local))
        .route("/api/games/computer", post(create_computer))
        .route("/api/games/mine", get(my_games))
        .route("/api/games/live", get(live_games))
        .route("/api/games/{id}", get(game_state))
        .route("/api/games/{id}/join", post(join_challenge))
        .route("/api/games/{id}/pgn", get(game_pgn))
        .route("/api/games/{id}/socket", get(game_socket))
        .route_service("/game/{id}", game_page)
        .fallback_service(ServeDir::new(web))
        .with_state(state)
}

/// `Json` whose rejections are API errors with the `invalid_body` code.
#[derive(Debug)]
pub struct JsonBody<T>(pub T);

impl<T, S> FromRequest<S> for JsonBody<T>
where
    Json<T>: FromRequest<S, Rejection = JsonRejection>,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<JsonBody<T>, ApiError> {
        match Json::<T>::from_request(request, state).await {
            Ok(Json(value)) => Ok(JsonBody(value)),
            Err(rejection) => Err(ApiError::client(
                rejection.status(),
                "invalid_body",
                rejection.body_text(),
            )),
        }
    }
}

async fn healthz(State(state): State<AppState>) -> Result<&'static str, ApiError> {
    state.store.ping().await?;
    Ok("ok")
}

/// The stored player behind a verified identity (re-created from the token
/// if the database lost it).
async fn player_of(state: &AppState, identity: &Identity) -> Result<PlayerRow, ApiError> {
    if let Some(player) = state.store.player(identity.id).await? {
        return Ok(player);
    }
    let player = PlayerRow {
        id: identity.id,
        kind: PlayerKind::Guest,
        name: identity.name.clone(),
        created_at: i64::try_from(now_ms()).unwrap_or(i64::MAX),
    };
    state.store.insert_player(&player).await?;
    Ok(player)
}

async fn me(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    if let Ok(identity) = crate::identity::resolve(&state, &headers).await {
        let player = player_of(&state, &identity).await?;
        return Ok(
            Json(json!({ "id": player.id, "name": player.name, "kind": player.kind }))
                .into_response(),
        );
    }
    // First visit (or a cookie that does not verify): a new guest.
    let identity = Identity {
        id: Uuid::new_v4(),
        name: random_guest_name(),
    };
    let player = player_of(&state, &identity).await?;
    let token = state
        .tokens
        .issue(&identity)
        .map_err(|error| ApiError::Internal(Box::new(error)))?;
    let mut response =
        Json(json!({ "id": player.id, "name": player.name, "kind": player.kind })).into_response();
    set_cookie(response.headers_mut(), &state.tokens, &token);
    Ok(response)
}

/// `429 too_many_requests` when the player has created too many games in the
/// last minute (seeks, challenges, local and computer games all count).
fn limit_game_creation(state: &AppState, identity: &Identity) -> Result<(), ApiError> {
    state
        .game_limits
        .hit(identity.id, std::time::Instant::now())
        .map_err(|retry| {
            ApiError::client(
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_requests",
                retry.to_string(),
            )
        })
}

fn parse_id(text: &str, not_found: fn() -> ApiError) -> Result<Uuid, ApiError> {
    Uuid::parse_str(text).map_err(|_| not_found())
}

fn seek_not_found() -> ApiError {
    ApiError::client(
        StatusCode::NOT_FOUND,
        "seek_not_found",
        "no open seek with that id",
    )
}

fn parse_time_control(json: TimeControlJson) -> Result<chess_game::TimeControl, ApiError> {
    json.parse().map_err(|error| {
        ApiError::client(
            StatusCode::UNPROCESSABLE_ENTITY,
            "bad_time_control",
            error.to_string(),
        )
    })
}

fn spec_of(json: TimeControlJson, fen: Option<&str>, takeback: bool) -> Result<GameSpec, ApiError> {
    let tc = parse_time_control(json)?;
    match fen {
        None => Ok(GameSpec::standard(tc).with_takeback(takeback)),
        Some(fen) => GameSpec::from_fen(tc, fen, takeback).map_err(|error| {
            ApiError::client(
                StatusCode::UNPROCESSABLE_ENTITY,
                "bad_fen",
                error.to_string(),
            )
        }),
    }
}

async fn list_seeks(
    State(state): State<AppState>,
    MaybeIdentity(viewer): MaybeIdentity,
) -> Result<Response, ApiError> {
    let seeks = state.lobby.seeks(viewer.map(|v| v.id)).await?;
    Ok(Json(json!({ "seeks": seeks })).into_response())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SeekRequest {
    time_control: TimeControlJson,
    color: ColorChoice,
}

fn seek_error(error: SeekError) -> ApiError {
    match error {
        SeekError::NotFound => seek_not_found(),
        SeekError::Own => ApiError::client(
            StatusCode::CONFLICT,
            "own_seek",
            "you cannot join your own seek",
        ),
        SeekError::NotYours => ApiError::client(
            StatusCode::FORBIDDEN,
            "not_your_seek",
            "this seek is someone else's",
        ),
        SeekError::Store(error) => error.into(),
    }
}

fn game_created(status: StatusCode, game_id: Uuid) -> Response {
    (
        status,
        Json(json!({ "game_id": game_id, "url": format!("/game/{game_id}") })),
    )
        .into_response()
}

async fn create_seek(
    State(state): State<AppState>,
    identity: Identity,
    JsonBody(request): JsonBody<SeekRequest>,
) -> Result<Response, ApiError> {
    let tc = parse_time_control(request.time_control)?;
    limit_game_creation(&state, &identity)?;
    let player = player_of(&state, &identity).await?;
    match state
        .lobby
        .create(player, tc, request.color)
        .await
        .map_err(seek_error)?
    {
        SeekOutcome::Created(seek) => Ok((
            StatusCode::CREATED,
            Json(json!({ "outcome": "created", "seek": seek })),
        )
            .into_response()),
        SeekOutcome::Joined(game_id) => Ok(Json(json!({
            "outcome": "joined", "game_id": game_id, "url": format!("/game/{game_id}"),
        }))
        .into_response()),
    }
}

async fn join_seek(
    State(state): State<AppState>,
    identity: Identity,
    Path(seek_id): Path<String>,
) -> Result<Response, ApiError> {
    let seek_id = parse_id(&seek_id, seek_not_found)?;
    let player = player_of(&state, &identity).await?;
    let game_id = state
        .lobby
        .join(player, seek_id)
        .await
        .map_err(seek_error)?;
    Ok(game_created(StatusCode::OK, game_id))
}

async fn cancel_seek(
    State(state): State<AppState>,
    identity: Identity,
    Path(seek_id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let seek_id = parse_id(&seek_id, seek_not_found)?;
    state
        .lobby
        .cancel(identity.id, seek_id)
        .await
        .map_err(seek_error)?;
    Ok(StatusCode::NO_CONTENT)
}

/// Refuses a WebSocket upgrade from an origin not in the allow-list. A
/// request without `Origin` is not from a browser page and is let through.
fn check_origin(state: &AppState, headers: &HeaderMap) -> Result<(), ApiError> {
    match headers.get(ORIGIN) {
        None => Ok(()),
        Some(origin) => {
            let allowed = origin.to_str().is_ok_and(|origin| {
                state
                    .allowed_origins
                    .iter()
                    .any(|allowed| allowed == origin)
            });
            if allowed {
                Ok(())
            } else {
                Err(ApiError::client(
                    StatusCode::FORBIDDEN,
                    "forbidden_origin",
                    "websocket connections are not allowed from this origin",
                ))
            }
        }
    }
}

async fn lobby_socket(
    State(state): State<AppState>,
    MaybeIdentity(viewer): MaybeIdentity,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Result<Response, ApiError> {
    check_origin(&state, &headers)?;
    let lobby = Arc::clone(&state.lobby);
    let viewer = viewer.map(|v| v.id);
    let session_ends = state.accounts.session_watch(&headers);
    let metrics = state.metrics.clone();
    Ok(upgrade
        .max_message_size(64 * 1024)
        .on_upgrade(move |socket| metrics.lobby_socket(lobby.serve(socket, viewer, session_ends))))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChallengeRequest {
    time_control: TimeControlJson,
    color: ColorChoice,
    #[serde(default)]
    fen: Option<String>,
}

async fn create_challenge(
    State(state): State<AppState>,
    identity: Identity,
    JsonBody(request): JsonBody<ChallengeRequest>,
) -> Result<Response, ApiError> {
    let spec = spec_of(request.time_control, request.fen.as_deref(), false)?;
    limit_game_creation(&state, &identity)?;
    let player = player_of(&state, &identity).await?;
    let (white, black) = match request.color.resolve() {
        Color::White => (Some(player), None),
        Color::Black => (None, Some(player)),
    };
    let live = state
        .hub
        .create(NewGame {
            mode: GameMode::Online,
            spec,
            white,
            black,
            computer_level: None,
        })
        .await?;
    Ok(game_created(StatusCode::CREATED, live.id))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LocalRequest {
    time_control: TimeControlJson,
    #[serde(default)]
    fen: Option<String>,
}

async fn create_local(
    State(state): State<AppState>,
    identity: Identity,
    JsonBody(request): JsonBody<LocalRequest>,
) -> Result<Response, ApiError> {
    let spec = spec_of(request.time_control, request.fen.as_deref(), true)?;
    limit_game_creation(&state, &identity)?;
    let player = player_of(&state, &identity).await?;
    let live = state
        .hub
        .create(NewGame {
            mode: GameMode::Local,
            spec,
            white: Some(player.clone()),
            black: Some(player),
            computer_level: None,
        })
        .await?;
    Ok(game_created(StatusCode::CREATED, live.id))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ComputerRequest {
    level: u8,
    color: ColorChoice,
    time_control: TimeControlJson,
}

async fn create_computer(
    State(state): State<AppState>,
    identity: Identity,
    JsonBody(request): JsonBody<ComputerRequest>,
) -> Result<Response, ApiError> {
    let level = Level::from_number(request.level).ok_or_else(|| {
        ApiError::client(
            StatusCode::UNPROCESSABLE_ENTITY,
            "bad_level",
            "the computer's level is 1 or 2",
        )
    })?;
    let spec = spec_of(request.time_control, None, true)?;
    limit_game_creation(&state, &identity)?;
    let player = player_of(&state, &identity).await?;
    let computer = computer_player(level);
    let (white, black) = match request.color.resolve() {
        Color::White => (player, computer),
        Color::Black => (computer, player),
    };
    let live = state
        .hub
        .create(NewGame {
            mode: GameMode::Computer,
            spec,
            white: Some(white),
            black: Some(black),
            computer_level: Some(level),
        })
        .await?;
    Ok(game_created(StatusCode::CREATED, live.id))
}

async fn live_game(state: &AppState, id: &str) -> Result<Arc<LiveGame>, ApiError> {
    let id = parse_id(id, ApiError::game_not_found)?;
    state
        .hub
        .get(id)
        .await?
        .ok_or_else(ApiError::game_not_found)
}

async fn join_challenge(
    State(state): State<AppState>,
    identity: Identity,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let live = live_game(&state, &id).await?;
    {
        let entry = live.lock().await;
        if entry.seat_of(Some(identity.id)) != Seat::None {
            return Err(ApiError::client(
                StatusCode::CONFLICT,
                "own_challenge",
                "you already hold a seat in this game",
            ));
        }
        if entry.row.status != GameStatus::Open {
            return Err(
                if entry.row.mode == GameMode::Online && entry.row.status == GameStatus::Playing {
                    ApiError::client(
                        StatusCode::CONFLICT,
                        "seat_taken",
                        "someone else took the seat first",
                    )
                } else {
                    ApiError::client(
                        StatusCode::CONFLICT,
                        "not_open",
                        "this game has no empty seat",
                    )
                },
            );
        }
    }
    let player = player_of(&state, &identity).await?;
    match state.hub.join(&live, player).await? {
        Some(color) => Ok(Json(json!({ "game_id": live.id, "color": color })).into_response()),
        None => Err(ApiError::client(
            StatusCode::CONFLICT,
            "seat_taken",
            "someone else took the seat first",
        )),
    }
}

async fn game_state(
    State(state): State<AppState>,
    MaybeIdentity(viewer): MaybeIdentity,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let live = live_game(&state, &id).await?;
    live.refresh(state.hub.as_ref()).await;
    let view = live.lock().await.state_for(viewer.map(|v| v.id), now_ms());
    let mut body =
        serde_json::to_value(&view).map_err(|error| ApiError::Internal(Box::new(error)))?;
    if let Some(object) = body.as_object_mut() {
        object.insert("type".to_owned(), json!("state"));
    }
    Ok(Json(body).into_response())
}

async fn game_pgn(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let live = live_game(&state, &id).await?;
    live.refresh(state.hub.as_ref()).await;
    let text = {
        let entry = live.lock().await;
        crate::pgn::export(&entry)
    };
    Ok((
        [
            (
                CONTENT_TYPE,
                "application/x-chess-pgn; charset=utf-8".to_owned(),
            ),
            (
                CONTENT_DISPOSITION,
                format!("attachment; filename=\"game-{}.pgn\"", live.id),
            ),
        ],
        text,
    )
        .into_response())
}

async fn game_socket(
    State(state): State<AppState>,
    MaybeIdentity(viewer): MaybeIdentity,
    headers: HeaderMap,
    Path(id): Path<String>,
    upgrade: WebSocketUpgrade,
) -> Result<Response, ApiError> {
    check_origin(&state, &headers)?;
    let live = live_game(&state, &id).await?;
    let hub = Arc::clone(&state.hub);
    let limits = state.socket_limits;
    let viewer = viewer.map(|v| v.id);
    let session_ends = state.accounts.session_watch(&headers);
    let span = tracing::info_span!("socket", game_id = %live.id);
    let metrics = state.metrics.clone();
    Ok(upgrade
        // Far above the protocol's limit: bigger frames get a polite error
        // from the parser; only absurd ones close the connection.
        .max_message_size(64 * 1024)
        .on_upgrade(move |socket| {
            tracing::Instrument::instrument(
                metrics.game_socket(crate::games::socket::serve(
                    socket,
                    hub,
                    live,
                    viewer,
                    limits,
                    session_ends,
                )),
                span,
            )
        }))
}

async fn my_games(State(state): State<AppState>, identity: Identity) -> Result<Response, ApiError> {
    let rows = state.store.games_of_player(identity.id, 30).await?;
    let mut games = Vec::with_capacity(rows.len());
    for row in rows {
        if let Some(live) = state.hub.get(row.id).await? {
            games.push(crate::summary::summarize(
                &*live.lock().await,
                Some(identity.id),
            ));
        }
    }
    // Correspondence games waiting for my move first; the store's order
    // (unfinished, newest first, then finished) otherwise.
    games.sort_by_key(|game| !(game.your_turn && game.is_correspondence()));
    Ok(Json(json!({ "games": games })).into_response())
}

async fn live_games(
    State(state): State<AppState>,
    MaybeIdentity(viewer): MaybeIdentity,
) -> Result<Response, ApiError> {
    let rows = state.store.live_games(50).await?;
    let mut games = Vec::with_capacity(rows.len());
    for row in rows {
        if let Some(live) = state.hub.get(row.id).await? {
            let entry = live.lock().await;
            if entry.is_playing() {
                games.push(crate::summary::summarize(
                    &entry,
                    viewer.as_ref().map(|v| v.id),
                ));
            }
        }
    }
    Ok(Json(json!({ "games": games })).into_response())
}
