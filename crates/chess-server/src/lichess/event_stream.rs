//! `GET /api/stream/event`: one NDJSON stream per client of the account's
//! events (`gameStart`, `gameFinish`, `challenge`, `challengeCanceled`,
//! `challengeDeclined`), with an empty keep-alive line every
//! [`KEEP_ALIVE`]. It opens with what is already going on; then the
//! [`EventBus`](super::streams::EventBus) queues what happens.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::response::Response;
use chess_live::GameStage;
use tokio::sync::{mpsc, watch};
use uuid::Uuid;

use super::auth::{ApiUser, Scope};
use super::events::{api_players, snapshot, watch as follow};
use super::reply::{ApiFailure, KEEP_ALIVE, line, ndjson};
use super::shapes;
use super::streams::Lichess;
use crate::state::AppState;

/// Current games sent when a stream opens (lichess sends every ongoing game).
const CURRENT_GAMES: i64 = 0;

/// `GET /api/stream/event`.
pub async fn stream(State(state): State<AppState>, user: ApiUser) -> Result<Response, ApiFailure> {
    user.require(&[Scope::ChallengeRead, Scope::BoardPlay, Scope::BotPlay])?;
    let lichess = Arc::clone(&state.lichess);
    let (receiver, id) = lichess.events.listen(user.player_id);
    // What is already going on: the account's games in play and the
    // challenges waiting for it.
    let mut opening = Vec::new();
    let rows = state
        .store
        .games_of_player(user.player_id, CURRENT_GAMES)
        .await?;
    for row in rows {
        if row.status != GameStage::Playing {
            continue;
        }
        let Some(game) = snapshot(&state.registry, row.id).await? else {
            continue;
        };
        if game.is_over() {
            continue;
        }
        let Some(color) = game.color_of(user.player_id) else {
            continue;
        };
        let players = api_players(&state.store, &game).await?;
        let value = serde_json::json!({
            "type": "gameStart",
            "game": shapes::event_game(&game, color, players.get(color.other()).as_ref()),
        });
        opening.push(line(&value));
        follow(&state, game.id);
    }
    for challenge in super::challenges::incoming(&state.store, user.player_id).await? {
        opening.push(line(&serde_json::json!({
            "type": "challenge",
            "challenge": challenge.json("in"),
        })));
    }
    let player = user.player_id;
    let shutdown = state.registry.shutdown_signal();
    // While the stream is open the account is there for its arenas, as a
    // person is with the tournament page open.
    let presence = tokio::spawn(crate::tournament::presence::keep_present(
        state.store.clone(),
        player,
    ))
    .abort_handle();
    Ok(ndjson(queue_stream(
        lichess, player, id, receiver, opening, shutdown, presence,
    )))
}

/// The lines of one event stream: `opening`, then whatever the bus queues,
/// with keep-alive lines while idle; ends when the bus drops it.
fn queue_stream(
    lichess: Arc<Lichess>,
    player: Uuid,
    id: u64,
    receiver: mpsc::Receiver<Bytes>,
    opening: Vec<Bytes>,
    shutdown: watch::Receiver<bool>,
    presence: tokio::task::AbortHandle,
) -> impl futures_util::Stream<Item = Bytes> + Send + 'static {
    struct Registration {
        lichess: Arc<Lichess>,
        player: Uuid,
        id: u64,
        presence: tokio::task::AbortHandle,
    }
    impl Drop for Registration {
        fn drop(&mut self) {
            self.lichess.events.remove(self.player, self.id);
            self.presence.abort();
        }
    }
    let registration = Registration {
        lichess,
        player,
        id,
        presence,
    };
    let opening = std::collections::VecDeque::from(opening);
    futures_util::stream::unfold(
        (registration, receiver, opening, shutdown),
        |(registration, mut receiver, mut opening, mut shutdown)| async move {
            if let Some(first) = opening.pop_front() {
                return Some((first, (registration, receiver, opening, shutdown)));
            }
            if *shutdown.borrow() {
                return None;
            }
            let line = tokio::select! {
                received = receiver.recv() => received?,
                () = tokio::time::sleep(KEEP_ALIVE) => Bytes::from_static(b"\n"),
                // The server is stopping: end the response so it can.
                _ = shutdown.changed() => return None,
            };
            Some((line, (registration, receiver, opening, shutdown)))
        },
    )
}
