//! The one error type of the HTTP API: a stable machine code and a human message
//! for 4xx; an opaque `internal` for 5xx, with the cause logged.

use axum::Json;
use axum::http::StatusCode;
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
        ApiError::Internal(Box::new(error))
    }
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
        }
    }
}
