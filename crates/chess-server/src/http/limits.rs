//! The per-player bound on making games, for every route that makes one
//! (seeks, challenges, server-side local and computer games, uploads of games
//! played in the browser).

use axum::http::StatusCode;

use crate::auth::identity::Identity;
use crate::http::error::ApiError;
use crate::state::AppState;

/// `429 too_many_requests` when the player has created too many games in the
/// last minute (seeks, challenges, local and computer games and uploads all count).
pub(crate) fn limit_game_creation(state: &AppState, identity: &Identity) -> Result<(), ApiError> {
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
