//! `GET /api/rewards/requests?after=<cursor>&limit=<n>`: every reward request
//! in entry order, with its delivery, for the host platform to reconcile
//! against what it received (`docs/rewards.md`, "Reconciliation").
//!
//! Only the platform may list them: it signs each request with the webhook's
//! secret over its timestamp, method and path with query
//! ([`signature::request_message`]), and a timestamp more than
//! [`FRESHNESS_SECONDS`] away from the server's clock is refused, so a
//! captured request cannot be replayed later. The reply is signed too (its
//! raw body, which carries its own `timestamp`), so the platform knows the
//! listing is the server's.
//!
//! The cursor is the last entry id seen (a keyset, not an offset: rows
//! written while the platform pages are neither skipped nor repeated).

use axum::Router;
use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use super::signature::{
    FRESHNESS_SECONDS, SIGNATURE_HEADER, TIMESTAMP_HEADER, request_message, sign, verify,
};
use super::{unix_ms, wire};
use crate::http::error::ApiError;
use crate::settings::Secret;
use chess_store::Store;

/// Requests a page lists when the platform names no `limit`.
const DEFAULT_LIMIT: u32 = 100;
/// The most a page lists.
const MAX_LIMIT: u32 = 1000;

/// What the reconciliation route needs: the store, and the secret (none
/// when `REWARD_WEBHOOK_SECRET` is unset: the route then answers 404).
#[derive(Clone, Debug)]
struct Reconciliation {
    store: Store,
    secret: Option<Secret>,
}

/// The reconciliation route.
pub fn router(store: Store, secret: Option<Secret>) -> Router {
    Router::new()
        .route("/api/rewards/requests", get(list))
        .with_state(Reconciliation { store, secret })
}

async fn list(
    State(reconciliation): State<Reconciliation>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let Some(secret) = &reconciliation.secret else {
        return Err(ApiError::client(
            StatusCode::NOT_FOUND,
            "reconciliation_off",
            "reward requests are not served: REWARD_WEBHOOK_SECRET is not set",
        ));
    };
    let now = unix_ms() / 1000;
    authenticate(secret, &method, &uri, &headers, now)?;
    let (after, limit) = page(uri.query().unwrap_or(""))?;
    let requests = reconciliation
        .store
        .reward_requests_after(after, limit)
        .await?;
    let next = requests.last().map_or(after, |request| request.entry_id);
    let body = json!({
        "requests": requests.iter().map(wire::listed).collect::<Vec<_>>(),
        "next": next,
        "more": requests.len() == limit as usize,
        "timestamp": now,
    });
    let body = serde_json::to_vec(&body).map_err(|error| ApiError::Internal(Box::new(error)))?;
    let signature = sign(secret.expose(), &body);
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(TIMESTAMP_HEADER, HeaderValue::from(now));
    if let Ok(value) = HeaderValue::from_str(&signature) {
        headers.insert(SIGNATURE_HEADER, value);
    }
    Ok(response)
}

fn unauthorized(code: &'static str, message: impl Into<String>) -> ApiError {
    ApiError::client(StatusCode::UNAUTHORIZED, code, message)
}

/// Checks the platform's signature and the freshness of its timestamp.
fn authenticate(
    secret: &Secret,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    now: i64,
) -> Result<(), ApiError> {
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    let (Some(timestamp), Some(signature)) = (header(TIMESTAMP_HEADER), header(SIGNATURE_HEADER))
    else {
        return Err(unauthorized(
            "signature_missing",
            "sign the request: X-Chess-Timestamp (unix seconds) and X-Chess-Signature \
             (sha256=<hex HMAC-SHA256 of \"<timestamp>\\n<METHOD>\\n<path?query>\">)",
        ));
    };
    let Ok(timestamp) = timestamp.trim().parse::<i64>() else {
        return Err(unauthorized(
            "signature_invalid",
            "X-Chess-Timestamp must be unix seconds",
        ));
    };
    let path_and_query = uri
        .path_and_query()
        .map_or_else(|| uri.path().to_owned(), ToString::to_string);
    let message = request_message(timestamp, method.as_str(), &path_and_query);
    if !verify(secret.expose(), message.as_bytes(), signature) {
        return Err(unauthorized(
            "signature_invalid",
            "the signature does not match the request (signed: \"<timestamp>\\n<METHOD>\\n<path?query>\" \
             with the webhook secret)",
        ));
    }
    if (now - timestamp).abs() > FRESHNESS_SECONDS {
        return Err(unauthorized(
            "timestamp_stale",
            format!(
                "X-Chess-Timestamp is {}s from the server's clock; at most {FRESHNESS_SECONDS}s is accepted",
                now - timestamp
            ),
        ));
    }
    Ok(())
}

/// The page asked for: `after` (an entry id, 0 for the start) and `limit`.
fn page(query: &str) -> Result<(i64, u32), ApiError> {
    let bad = |code, message: String| ApiError::client(StatusCode::BAD_REQUEST, code, message);
    let mut after = 0_i64;
    let mut limit = DEFAULT_LIMIT;
    for (key, value) in serde_urlencoded::from_str::<Vec<(String, String)>>(query)
        .map_err(|error| bad("bad_query", format!("the query does not parse: {error}")))?
    {
        match key.as_str() {
            "after" => {
                after = value.parse().ok().filter(|after| *after >= 0).ok_or_else(|| {
                    bad(
                        "bad_cursor",
                        format!("after must be an entry id (a whole number, 0 for the start), not {value:?}"),
                    )
                })?;
            }
            "limit" => {
                limit = value
                    .parse()
                    .ok()
                    .filter(|limit| (1..=MAX_LIMIT).contains(limit))
                    .ok_or_else(|| {
                        bad(
                            "bad_limit",
                            format!("limit must be 1 to {MAX_LIMIT}, not {value:?}"),
                        )
                    })?;
            }
            _ => {}
        }
    }
    Ok((after, limit))
}
