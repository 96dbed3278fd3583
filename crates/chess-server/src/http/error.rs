//! The one error type of the HTTP API: a stable machine code and a human message
//! for 4xx; an opaque `internal` for 5xx, with the cause logged.

use axum::Json;
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::store::StoreError;

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
    Unavailable(StoreError),
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

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> ApiError {
        if error.is_unavailable() {
            ApiError::Unavailable(error)
        } else {
            ApiError::Internal(Box::new(error))
        }
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
