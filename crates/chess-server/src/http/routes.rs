//! The HTTP API and pages (`docs/protocol.md`).

use std::sync::Arc;

use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Path, State};
use axum::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chess_engine::Level;
use chess_game::GameSpec;
use chess_live::time_control::TimeControlJson;
use chess_live::{
    Freshness, GameMode, GameSnapshot, GameStage, JoinError, NewGame, PlayerKind, PlayerRow, Seat,
    Viewer, computer_player, now_ms,
};
use chess_rules::Color;
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

use crate::auth::extract::{MaybeIdentity, resolve};
use crate::auth::identity::{Identity, random_guest_name, set_cookie};
use crate::auth::rate_limit::AddressKey;
use crate::http::error::{ApiError, too_many_requests};
use crate::http::extract::{ClientAddress, JsonBody};
use crate::http::limits::limit_game_creation;
use crate::lobby::{ColorChoice, SeekError, SeekOutcome, SeekTerms};
use crate::state::AppState;

/// Read buffer of a WebSocket, allocated for the socket's whole life.
/// Clients send a few dozen bytes at a time (`move`, `hello`, pongs), and
/// tungstenite's 128 KiB default read and write buffers would cost a quarter
/// of a megabyte per socket; a larger frame makes tungstenite reserve room
/// for it (up to `max_message_size`), so this only sizes the common case.
/// At 20,000 sockets every KiB here is 20 MiB.
const SOCKET_BUFFER_BYTES: usize = 1024;

/// How much a game socket queues before it writes without waiting for its
/// flush: the socket writes what is ready once per wake-up (a move's `ack`
/// and its own `event` in one write), and this only bounds a burst. The
/// buffer grows to what is queued at once, not to this size: a move's
/// messages are a few hundred bytes, a full state a few KiB.
const GAME_SOCKET_WRITE_BATCH_BYTES: usize = 16 * 1024;

/// Every route of the server.
pub fn router(state: AppState) -> Router {
    let web = crate::http::web::routes(state.web_dir.as_deref());
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
        .merge(crate::http::ratings::routes())
        .merge(crate::http::archive::routes())
        .merge(crate::http::tournaments::routes())
        .merge(crate::http::clubs::routes())
        .merge(crate::http::classes::routes())
        .merge(crate::http::uploads::routes())
        .merge(web)
        .with_state(state)
}

async fn healthz(State(state): State<AppState>) -> Result<&'static str, ApiError> {
    state.store.ping().await?;
    Ok("ok")
}

/// The stored player behind a verified identity (re-created from the token
/// if the database lost it). Resolving the identity read it already.
async fn player_of(state: &AppState, identity: &Identity) -> Result<PlayerRow, ApiError> {
    if let Some(player) = &identity.stored {
        return Ok(player.clone());
    }
    new_guest(state, identity).await
}

/// Stores `identity` as a guest (in the next group commit) and returns it.
async fn new_guest(state: &AppState, identity: &Identity) -> Result<PlayerRow, ApiError> {
    let player = PlayerRow {
        id: identity.id,
        kind: PlayerKind::Guest,
        name: identity.name.clone(),
        created_at: now_ms(),
        bot: false,
    };
    state.registry.insert_player(player.clone()).await?;
    Ok(player)
}

async fn me(
    State(state): State<AppState>,
    ClientAddress(address): ClientAddress,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    if let Ok(identity) = resolve(&state, &headers).await {
        let player = player_of(&state, &identity).await?;
        return Ok(
            Json(json!({ "id": player.id, "name": player.name, "kind": player.kind }))
                .into_response(),
        );
    }
    // First visit (or a cookie that does not verify): a new guest, each a
    // stored player, so one address may only create so many.
    if let Err(retry) = state
        .new_guest_limits
        .hit(AddressKey::from(address), std::time::Instant::now())
    {
        return Ok(too_many_requests(retry));
    }
    let identity = Identity {
        id: Uuid::new_v4(),
        name: random_guest_name(),
        stored: None,
    };
    let player = new_guest(&state, &identity).await?;
    let token = state
        .tokens
        .issue(&identity)
        .map_err(|error| ApiError::Internal(Box::new(error)))?;
    let mut response =
        Json(json!({ "id": player.id, "name": player.name, "kind": player.kind })).into_response();
    set_cookie(response.headers_mut(), &state.tokens, &token);
    Ok(response)
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
    /// Rated (accounts only); casual when absent.
    #[serde(default)]
    rated: bool,
    /// `[min, max]`: pair only with opponents rated within.
    #[serde(default)]
    rating_range: Option<[i64; 2]>,
}

/// `422 rated_needs_account` unless `player` is an account: guests (and the
/// computer, one-screen games) always play casual.
fn check_rated(rated: bool, player: &PlayerRow) -> Result<(), ApiError> {
    if rated && player.kind != PlayerKind::Account {
        return Err(rated_needs_account());
    }
    Ok(())
}

fn rated_needs_account() -> ApiError {
    ApiError::client(
        StatusCode::UNPROCESSABLE_ENTITY,
        "rated_needs_account",
        "rated games are for signed-in accounts",
    )
}

fn parse_rating_range(range: Option<[i64; 2]>) -> Result<Option<(i64, i64)>, ApiError> {
    match range {
        None => Ok(None),
        Some([min, max]) if 0 <= min && min <= max && max <= 4000 => Ok(Some((min, max))),
        Some(_) => Err(ApiError::client(
            StatusCode::UNPROCESSABLE_ENTITY,
            "bad_rating_range",
            "rating_range is [min, max] with 0 <= min <= max <= 4000",
        )),
    }
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
        SeekError::RatedNeedsAccount => rated_needs_account(),
        SeekError::OutOfRange => ApiError::client(
            StatusCode::FORBIDDEN,
            "rating_out_of_range",
            "your rating is outside the range this seek asks for",
        ),
        SeekError::Store(error) => error.into(),
        SeekError::Game(error) => error.into(),
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
    let terms = SeekTerms {
        rated: request.rated,
        rating_range: parse_rating_range(request.rating_range)?,
    };
    limit_game_creation(&state, &identity)?;
    let _creating = state.admission.creation()?;
    let player = player_of(&state, &identity).await?;
    check_rated(terms.rated, &player)?;
    match state
        .lobby
        .create(player, tc, request.color, terms)
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
    let _creating = state.admission.creation()?;
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

/// Refuses a WebSocket upgrade from an origin not in the allow-list (the
/// upgrade is a GET, which the rule for state-changing requests lets pass).
fn check_origin(state: &AppState, headers: &HeaderMap) -> Result<(), ApiError> {
    state.allowed_origins.check(headers)
}

async fn lobby_socket(
    State(state): State<AppState>,
    MaybeIdentity(viewer): MaybeIdentity,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Result<Response, ApiError> {
    check_origin(&state, &headers)?;
    let place = state.admission.socket()?;
    let lobby = Arc::clone(&state.lobby);
    let viewer = viewer.map(|v| v.id);
    let session_ends = state.accounts.session_watch(&headers, viewer);
    let metrics = state.metrics.clone();
    Ok(upgrade
        .max_message_size(64 * 1024)
        .read_buffer_size(SOCKET_BUFFER_BYTES)
        .write_buffer_size(0)
        .on_upgrade(move |socket| async move {
            metrics
                .lobby_socket(crate::ws::lobby_socket::serve(
                    lobby,
                    socket,
                    viewer,
                    session_ends,
                ))
                .await;
            drop(place);
        }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChallengeRequest {
    time_control: TimeControlJson,
    color: ColorChoice,
    #[serde(default)]
    fen: Option<String>,
    /// Rated (between accounts, from the standard start); casual when absent.
    #[serde(default)]
    rated: bool,
}

async fn create_challenge(
    State(state): State<AppState>,
    identity: Identity,
    JsonBody(request): JsonBody<ChallengeRequest>,
) -> Result<Response, ApiError> {
    let spec = spec_of(request.time_control, request.fen.as_deref(), false)?;
    if request.rated && request.fen.is_some() {
        return Err(ApiError::client(
            StatusCode::UNPROCESSABLE_ENTITY,
            "rated_from_position",
            "a game from a set-up position cannot be rated",
        ));
    }
    let spec = spec.with_rated(request.rated);
    limit_game_creation(&state, &identity)?;
    let _creating = state.admission.creation()?;
    let player = player_of(&state, &identity).await?;
    check_rated(request.rated, &player)?;
    let (white, black) = match request.color.resolve() {
        Color::White => (Some(player), None),
        Color::Black => (None, Some(player)),
    };
    let live = state
        .registry
        .create(NewGame {
            id: Uuid::new_v4(),
            mode: GameMode::Online,
            spec,
            white,
            black,
            computer_level: None,
        })
        .await?;
    Ok(game_created(StatusCode::CREATED, live.id()))
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
    let _creating = state.admission.creation()?;
    let player = player_of(&state, &identity).await?;
    let live = state
        .registry
        .create(NewGame {
            id: Uuid::new_v4(),
            mode: GameMode::Local,
            spec,
            white: Some(player.clone()),
            black: Some(player),
            computer_level: None,
        })
        .await?;
    Ok(game_created(StatusCode::CREATED, live.id()))
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
    let _creating = state.admission.creation()?;
    let player = player_of(&state, &identity).await?;
    let computer = computer_player(level);
    let (white, black) = match request.color.resolve() {
        Color::White => (player, computer),
        Color::Black => (computer, player),
    };
    let live = state
        .registry
        .create(NewGame {
            id: Uuid::new_v4(),
            mode: GameMode::Computer,
            spec,
            white: Some(white),
            black: Some(black),
            computer_level: Some(level),
        })
        .await?;
    Ok(game_created(StatusCode::CREATED, live.id()))
}

fn game_id(id: &str) -> Result<Uuid, ApiError> {
    parse_id(id, ApiError::game_not_found)
}

/// Game `id` copied out, up to date with the store; 404 if there is no such
/// game.
async fn snapshot(state: &AppState, id: Uuid) -> Result<GameSnapshot, ApiError> {
    state
        .registry
        .snapshot(id, Freshness::Stored)
        .await?
        .ok_or_else(ApiError::game_not_found)
}

async fn join_challenge(
    State(state): State<AppState>,
    identity: Identity,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = game_id(&id)?;
    let _creating = state.admission.creation()?;
    let game = snapshot(&state, id).await?;
    let (status, mode) = (game.situation.status, game.mode);
    if game.seat_of(Some(identity.id)) != Seat::None {
        return Err(ApiError::client(
            StatusCode::CONFLICT,
            "own_challenge",
            "you already hold a seat in this game",
        ));
    }
    let taken = || {
        ApiError::client(
            StatusCode::CONFLICT,
            "seat_taken",
            "someone else took the seat first",
        )
    };
    if status != GameStage::Open {
        return Err(
            if mode == GameMode::Online && status == GameStage::Playing {
                taken()
            } else {
                ApiError::client(
                    StatusCode::CONFLICT,
                    "not_open",
                    "this game has no empty seat",
                )
            },
        );
    }
    let player = player_of(&state, &identity).await?;
    check_rated(game.rated, &player)?;
    match state.registry.join(id, player).await {
        Ok(Some(color)) => {
            // The challenge's creator may be waiting on any page: their lobby
            // sockets take them to the game.
            if let Some(creator) = game.players.get(color.other()) {
                state.lobby.challenge_accepted(id, creator.id).await;
            }
            Ok(Json(json!({ "game_id": id, "color": color })).into_response())
        }
        Ok(None) => Err(ApiError::game_not_found()),
        Err(JoinError::Taken) => Err(taken()),
        Err(JoinError::Store(error)) => Err(error.into()),
    }
}

async fn game_state(
    State(state): State<AppState>,
    MaybeIdentity(viewer): MaybeIdentity,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let view = state
        .registry
        .state(game_id(&id)?, viewer.map(|v| v.id), Freshness::Stored)
        .await?
        .ok_or_else(ApiError::game_not_found)?;
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
    let id = game_id(&id)?;
    let text = crate::http::pgn::export(&snapshot(&state, id).await?);
    Ok((
        [
            (
                CONTENT_TYPE,
                "application/x-chess-pgn; charset=utf-8".to_owned(),
            ),
            (
                CONTENT_DISPOSITION,
                format!("attachment; filename=\"game-{id}.pgn\""),
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
    // Before any work: a node at its cap sheds the socket at once.
    let place = state.admission.socket()?;
    let player = viewer.map(|v| v.id);
    // The game must exist; the socket attaches to it once upgraded, so that
    // an owner busy with a slow commit does not hold up the upgrade.
    let id = game_id(&id)?;
    state
        .registry
        .get(id)
        .await?
        .ok_or_else(ApiError::game_not_found)?;
    let registry = Arc::clone(&state.registry);
    let limits = state.socket_limits;
    let shutdown = state.registry.shutdown_signal();
    let session_ends = state.accounts.session_watch(&headers, player);
    let span = tracing::info_span!("socket", game_id = %id);
    let metrics = state.metrics.clone();
    Ok(upgrade
        // Far above the protocol's limit: bigger frames get a polite error
        // from the parser; only absurd ones close the connection.
        .max_message_size(64 * 1024)
        .read_buffer_size(SOCKET_BUFFER_BYTES)
        .write_buffer_size(GAME_SOCKET_WRITE_BATCH_BYTES)
        .on_upgrade(move |socket| async move {
            let serve = async {
                match Viewer::open(&registry, id, player).await {
                    Ok(Some(viewer)) => {
                        crate::ws::game_socket::serve(
                            socket,
                            viewer,
                            limits,
                            shutdown,
                            session_ends,
                            metrics.clone(),
                        )
                        .await;
                    }
                    Ok(None) | Err(_) => {
                        tracing::warn!("the game could not be reached; closing the socket");
                    }
                }
            };
            tracing::Instrument::instrument(metrics.game_socket(serve), span).await;
            drop(place);
        }))
}

async fn my_games(State(state): State<AppState>, identity: Identity) -> Result<Response, ApiError> {
    let rows = state.store.games_of_player(identity.id, 30).await?;
    let mut games = Vec::with_capacity(rows.len());
    for row in rows {
        if let Some(game) = state.registry.snapshot(row.id, Freshness::Held).await? {
            games.push(crate::http::summary::summarize(&game, Some(identity.id)));
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
    let viewer = viewer.map(|v| v.id);
    for row in rows {
        if let Some(game) = state.registry.snapshot(row.id, Freshness::Held).await?
            && game.situation.status == GameStage::Playing
        {
            games.push(crate::http::summary::summarize(&game, viewer));
        }
    }
    Ok(Json(json!({ "games": games })).into_response())
}
