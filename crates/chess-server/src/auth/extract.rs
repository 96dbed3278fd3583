//! Who a request acts as, for the routes that take an [`Identity`]: the
//! signed-in account of a valid session cookie, else the guest of a guest
//! cookie.

use axum::extract::FromRequestParts;
use axum::http::HeaderMap;
use axum::http::request::Parts;
use chess_live::PlayerKind;

use super::identity::{Identity, IdentityError};
use crate::http::error::ApiError;
use crate::state::AppState;

/// Who a request acts as: the signed-in account if its session cookie is
/// valid and not signed out, else the guest of a guest cookie. A guest
/// cookie whose player has since become an account no longer counts (after
/// signing out, that browser is a new guest, not the account).
///
/// # Errors
/// [`IdentityError`] when neither cookie verifies; an internal error if the
/// database fails.
pub async fn resolve(state: &AppState, headers: &HeaderMap) -> Result<Identity, ApiError> {
    if let Some(session) = state.accounts.session_of(headers).await? {
        let stored = state.store.player(session.account_id).await?;
        return Ok(Identity {
            id: session.account_id,
            name: stored
                .as_ref()
                .map(|player| player.name.clone())
                .unwrap_or_default(),
            stored,
        });
    }
    let guest = state.tokens.from_headers(headers)?;
    match state.store.player(guest.id).await? {
        Some(player) if player.kind == PlayerKind::Account => Err(IdentityError::Invalid.into()),
        stored => Ok(Identity { stored, ..guest }),
    }
}

/// Extractor: the verified identity of the request, or `401`.
impl FromRequestParts<AppState> for Identity {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Identity, ApiError> {
        resolve(state, &parts.headers).await
    }
}

/// Extractor: the identity if there is a valid one (spectators need none).
#[derive(Clone, Debug)]
pub struct MaybeIdentity(pub Option<Identity>);

impl FromRequestParts<AppState> for MaybeIdentity {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<MaybeIdentity, std::convert::Infallible> {
        Ok(MaybeIdentity(resolve(state, &parts.headers).await.ok()))
    }
}
