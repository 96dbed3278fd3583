//! Every route of the lichess-compatible API.

use axum::routing::{delete, get, post};

use super::{account, challenges, event_stream, games, teams, tokens, tournaments};
use crate::state::AppState;

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
        .route("/api/stream/event", get(event_stream::stream))
        .route("/api/challenge/{target}", post(challenges::create))
        .route("/api/challenge/{id}/accept", post(challenges::accept))
        .route("/api/challenge/{id}/decline", post(challenges::decline))
        .route("/api/challenge/{id}/cancel", post(challenges::cancel))
        .route("/api/board/seek", post(challenges::seek))
        .route("/api/board/game/stream/{id}", get(games::board_stream))
        .route("/api/bot/game/stream/{id}", get(games::bot_stream))
        .route("/api/tournament", post(tournaments::create))
        .route("/api/tournament/{id}", get(tournaments::info))
        .route("/api/tournament/{id}/join", post(tournaments::join))
        .route("/api/tournament/{id}/withdraw", post(tournaments::withdraw))
        .route(
            "/api/tournament/{id}/terminate",
            post(tournaments::terminate),
        )
        .route("/api/tournament/{id}/results", get(tournaments::results))
        .route("/api/tournament/{id}/games", get(tournaments::games))
        .route("/api/team/{id}/arena", get(tournaments::team_arenas))
        .route("/api/team/{id}", get(teams::team))
        .route("/api/team/{id}/users", get(teams::users))
        .route("/team/{id}/join", post(teams::join));
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
                &format!("/api/{api}/game/{{id}}/berserk"),
                post(games::berserk),
            )
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
