//! The signed-in account of a request, for the routes that are for
//! accounts only (clubs, classes, tournaments). Apart from the extractors
//! (`extract.rs`), which the account routes use too, so that no file is
//! both used by `auth` and a user of the state `auth` builds.

use axum::http::{HeaderMap, StatusCode};
use uuid::Uuid;

use crate::http::error::ApiError;
use crate::state::AppState;

/// The signed-in account of a request (its session cookie), or `401
/// not_signed_in` with `why` as the message: clubs and tournaments are for
/// accounts, not guests.
///
/// # Errors
/// The `401`; the database error.
pub async fn signed_in(
    state: &AppState,
    headers: &HeaderMap,
    why: &'static str,
) -> Result<Uuid, ApiError> {
    state
        .accounts
        .session_of(headers)
        .await?
        .map(|session| session.account_id)
        .ok_or_else(|| ApiError::client(StatusCode::UNAUTHORIZED, "not_signed_in", why))
}
