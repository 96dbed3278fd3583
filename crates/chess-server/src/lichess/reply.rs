//! Lichess's answers: failures as `{"error": "..."}` with its status codes,
//! `{"ok": true}`, and NDJSON streams with their keep-alive lines.

use std::time::Duration;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, RETRY_AFTER};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;
use serde_json::json;

use chess_store::StoreError;

/// Lichess sends an empty line this often on an idle NDJSON stream, so
/// proxies and clients know the connection is alive.
pub const KEEP_ALIVE: Duration = Duration::from_secs(7);

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

    /// The sentence it says.
    pub fn message(&self) -> &str {
        &self.message
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

/// The node's own refusals in lichess's words: `429` with `Retry-After` for
/// `busy`, else the failure as the API reports it.
impl From<crate::http::error::ApiError> for ApiFailure {
    fn from(error: crate::http::error::ApiError) -> ApiFailure {
        match error {
            crate::http::error::ApiError::Busy {
                retry_after_seconds,
                ..
            } => ApiFailure::too_many(Duration::from_secs(u64::from(retry_after_seconds))),
            crate::http::error::ApiError::Client {
                status, message, ..
            } => ApiFailure::new(status, message),
            other => ApiFailure::internal(format!("{other:?}")),
        }
    }
}

impl From<chess_live::StoreError> for ApiFailure {
    fn from(error: chess_live::StoreError) -> ApiFailure {
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
