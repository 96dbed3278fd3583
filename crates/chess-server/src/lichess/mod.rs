//! The lichess Board and Bot API, so existing clients (berserk, lichess-bot,
//! board apps) can play on this server: `docs/lichess-api.md`.
//!
//! A thin layer over the same parts the web client uses: the games' owners
//! through the [`Hub`](crate::games::Hub) (every move goes through the one
//! rules path), the lobby's seeks and the store. What it adds:
//!
//! - [`auth`]: personal access tokens sent as `Authorization: Bearer`, with scopes;
//! - [`tokens`]: creating, listing and revoking them (signed-in session);
//! - [`account`]: `GET /api/account` and the bot upgrade;
//! - [`events`]: the per-account NDJSON event stream and the watchers that feed it;
//! - [`challenges`]: challenges between accounts and the open-while-waiting seek;
//! - [`notices`]: what nodes tell each other so every node's event streams hear of it;
//! - [`games`]: the NDJSON game stream and the game actions;
//! - [`shapes`]: the lichess JSON shapes and the mapping of endings to status names.
//!
//! Errors are lichess's `{"error": "..."}` with its status codes.

pub mod account;
pub mod auth;
pub mod challenges;
pub mod events;
pub mod games;
pub mod notices;
pub mod shapes;
pub mod tokens;

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, RETRY_AFTER};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use futures_util::Stream;
use serde_json::json;

use crate::auth::rate_limit::{AddressKey, Limit, RateLimiter, SIGN_IN_FAILURES_PER_ADDRESS};
use crate::games::Hub;
use crate::games::lobby::Lobby;
use crate::startup::AppState;
use crate::store::StoreError;

/// Lichess sends an empty line this often on an idle NDJSON stream, so
/// proxies and clients know the connection is alive.
pub const KEEP_ALIVE: Duration = Duration::from_secs(7);

/// Tokens one account may create per hour.
const TOKENS_PER_ACCOUNT: Limit = Limit {
    max: 20,
    window: Duration::from_secs(60 * 60),
};

/// What the API keeps in memory on this node.
#[derive(Debug)]
pub struct Lichess {
    pub(crate) events: events::EventBus,
    pub(crate) watched: events::Watched,
    /// Requests with a token that does not verify, per address: the same
    /// budget as failed sign-ins.
    pub(crate) bad_tokens: RateLimiter<AddressKey>,
    pub(crate) token_creations: RateLimiter<uuid::Uuid>,
}

impl Lichess {
    /// The API's state; [`Lichess::start`] begins following the lobby.
    pub fn new() -> Lichess {
        Lichess {
            events: events::EventBus::default(),
            watched: events::Watched::default(),
            bad_tokens: RateLimiter::new(SIGN_IN_FAILURES_PER_ADDRESS),
            token_creations: RateLimiter::new(TOKENS_PER_ACCOUNT),
        }
    }

    /// Follows the games the lobby starts (seeks taken, challenge links
    /// joined), so an API client whose seek was taken on the web hears of its
    /// game on its event stream.
    /// It also relays other nodes' [`notices`] to this node's streams.
    pub fn start(self: &Arc<Self>, hub: Arc<Hub>, lobby: &Lobby) {
        notices::relay(self, &hub);
        let mut started = lobby.started_games();
        let lichess = Arc::clone(self);
        let mut shutdown = hub.shutdown_signal();
        tokio::spawn(async move {
            loop {
                let game = tokio::select! {
                    game = started.next() => match game {
                        Some(game) => game,
                        None => return,
                    },
                    _ = shutdown.changed() => return,
                };
                events::game_started(&lichess, &hub, game.game_id).await;
            }
        });
    }
}

impl Default for Lichess {
    fn default() -> Lichess {
        Lichess::new()
    }
}

/// Every route of the API. `GET /api/account` is shared with the web's
/// account route: see [`account::bearer_account`].
pub fn router(state: AppState) -> axum::Router {
    let mut router = axum::Router::new()
        .route(
            "/api/account/tokens",
            get(tokens::list).post(tokens::create),
        )
        .route("/api/account/tokens/{id}", delete(tokens::revoke))
        .route("/api/bot/account/upgrade", post(account::upgrade))
        .route("/api/stream/event", get(events::stream))
        .route("/api/challenge/{target}", post(challenges::create))
        .route("/api/challenge/{id}/accept", post(challenges::accept))
        .route("/api/challenge/{id}/decline", post(challenges::decline))
        .route("/api/challenge/{id}/cancel", post(challenges::cancel))
        .route("/api/board/seek", post(challenges::seek))
        .route("/api/board/game/stream/{id}", get(games::board_stream))
        .route("/api/bot/game/stream/{id}", get(games::bot_stream));
    // The same actions under both prefixes; the handler checks the token
    // and the account kind each prefix requires.
    for api in ["board", "bot"] {
        router = router
            .route(
                &format!("/api/{api}/game/{{id}}/move/{{uci}}"),
                post(games::play),
            )
            .route(
                &format!("/api/{api}/game/{{id}}/resign"),
                post(games::resign),
            )
            .route(&format!("/api/{api}/game/{{id}}/abort"), post(games::abort))
            .route(
                &format!("/api/{api}/game/{{id}}/draw/{{answer}}"),
                post(games::draw),
            )
            .route(
                &format!("/api/{api}/game/{{id}}/takeback/{{answer}}"),
                post(games::takeback),
            )
            .route(&format!("/api/{api}/game/{{id}}/chat"), post(games::chat));
    }
    router.with_state(state)
}

/// A failure as lichess reports it: a status and `{"error": "..."}`.
#[derive(Debug)]
pub struct ApiFailure {
    status: StatusCode,
    message: String,
    retry_after: Option<Duration>,
}

impl ApiFailure {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiFailure {
        ApiFailure {
            status,
            message: message.into(),
            retry_after: None,
        }
    }

    /// `400`: the request cannot be done (an illegal move, a bad field).
    pub fn bad_request(message: impl Into<String>) -> ApiFailure {
        ApiFailure::new(StatusCode::BAD_REQUEST, message)
    }

    /// `404 No such game`: unknown, or not the caller's.
    pub fn no_such_game() -> ApiFailure {
        ApiFailure::new(StatusCode::NOT_FOUND, "No such game")
    }

    /// `429` with `Retry-After`.
    pub fn too_many(retry: Duration) -> ApiFailure {
        ApiFailure {
            status: StatusCode::TOO_MANY_REQUESTS,
            message: format!(
                "Too many requests. Try again in {} s.",
                retry.as_secs().max(1)
            ),
            retry_after: Some(retry),
        }
    }

    /// `500`, the cause logged and not shown.
    pub fn internal(cause: impl std::fmt::Display) -> ApiFailure {
        tracing::error!(error = %cause, "lichess api: internal error");
        ApiFailure::new(StatusCode::INTERNAL_SERVER_ERROR, "Internal server error")
    }
}

impl From<StoreError> for ApiFailure {
    fn from(error: StoreError) -> ApiFailure {
        ApiFailure::internal(error)
    }
}

impl IntoResponse for ApiFailure {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(json!({ "error": self.message }))).into_response();
        if let Some(retry) = self.retry_after
            && let Ok(value) = HeaderValue::from_str(&retry.as_secs().max(1).to_string())
        {
            response.headers_mut().insert(RETRY_AFTER, value);
        }
        response
    }
}

/// `{"ok": true}`, lichess's answer to a done action.
pub fn ok() -> Response {
    Json(json!({ "ok": true })).into_response()
}

/// An NDJSON response from a stream of lines (each already ending in `\n`).
pub fn ndjson(lines: impl Stream<Item = Bytes> + Send + 'static) -> Response {
    use futures_util::StreamExt as _;
    let body = Body::from_stream(lines.map(Ok::<Bytes, std::convert::Infallible>));
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/x-ndjson"),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// One NDJSON line.
pub fn line(value: &serde_json::Value) -> Bytes {
    let mut text = value.to_string();
    text.push('\n');
    Bytes::from(text)
}
