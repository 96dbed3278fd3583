//! The one error type of the HTTP API: a stable machine code and a human message
//! for 4xx; an opaque `internal` for 5xx, with the cause logged.

use axum::Json;
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::auth::rate_limit::RetryAfter;
use chess_store::StoreError;

/// An HTTP API failure. See the error code table in `docs/protocol.md`.
#[derive(Debug)]
pub enum ApiError {
    /// A client error with a stable code.
    Client {
        status: StatusCode,
        code: &'static str,
        message: String,
    },
    /// A server failure; the cause is logged, the client sees only `internal`.
    Internal(Box<dyn std::error::Error + Send + Sync>),
    /// The node is at one of its limits (sockets, requests in flight):
    /// `429 busy` with `Retry-After`; nothing was done.
    Busy {
        message: &'static str,
        retry_after_seconds: u32,
    },
    /// The database cannot take the request now (unreachable, disk full,
    /// read-only): `503 unavailable` with `Retry-After`, the cause logged.
    Unavailable(Box<dyn std::error::Error + Send + Sync>),
}

impl ApiError {
    /// A client error with a stable `code` and a readable `message`.
    pub fn client(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::Client {
            status,
            code,
            message: message.into(),
        }
    }

    /// `404 game_not_found`.
    pub fn game_not_found() -> ApiError {
        ApiError::client(
            StatusCode::NOT_FOUND,
            "game_not_found",
            "no game with that id",
        )
    }
}

impl ApiError {
    /// A storage failure: `503` when the database cannot take requests now
    /// (`unavailable`), else `500`.
    fn storage(
        unavailable: bool,
        error: impl std::error::Error + Send + Sync + 'static,
    ) -> ApiError {
        if unavailable {
            ApiError::Unavailable(Box::new(error))
        } else {
            ApiError::Internal(Box::new(error))
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> ApiError {
        ApiError::storage(error.is_unavailable(), error)
    }
}

/// A live game's storage failure, told the same way.
impl From<chess_live::StoreError> for ApiError {
    fn from(error: chess_live::StoreError) -> ApiError {
        ApiError::storage(error.is_unavailable(), error)
    }
}

/// `status` with an API error body and a `Retry-After` of `seconds`.
fn retry_later(status: StatusCode, code: &str, message: &str, seconds: u32) -> Response {
    let mut response = (
        status,
        Json(json!({ "error": { "code": code, "message": message } })),
    )
        .into_response();
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from(seconds));
    response
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match self {
            ApiError::Client {
                status,
                code,
                message,
            } => (
                status,
                Json(json!({ "error": { "code": code, "message": message } })),
            )
                .into_response(),
            ApiError::Internal(cause) => {
                tracing::error!(error = %cause, source = ?cause.source(), "internal error");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    Json(json!({ "error": { "code": "internal", "message": "the server failed; it has been logged" } })),
                )
                    .into_response()
            }
            ApiError::Busy {
                message,
                retry_after_seconds,
            } => retry_later(
                StatusCode::TOO_MANY_REQUESTS,
                "busy",
                message,
                retry_after_seconds,
            ),
            ApiError::Unavailable(cause) => {
                tracing::warn!(error = %cause, "the database cannot take the request");
                retry_later(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "unavailable",
                    "the database cannot take this request just now; nothing changed, try again",
                    1,
                )
            }
        }
    }
}

/// `429 too_many_requests` saying when to try again, in words and in
/// `Retry-After` (whole seconds, at least one).
pub fn too_many_requests(retry: RetryAfter) -> Response {
    let seconds = retry.0.as_secs_f64().ceil().max(1.0).to_string();
    let mut response = ApiError::client(
        StatusCode::TOO_MANY_REQUESTS,
        "too_many_requests",
        retry.to_string(),
    )
    .into_response();
    if let Ok(value) = HeaderValue::from_str(&seconds) {
        response.headers_mut().insert(RETRY_AFTER, value);
    }
    response
}
