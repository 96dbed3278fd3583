//! What this node's event streams hear of from elsewhere: the other nodes'
//! notices (challenges, games started through the API), and the games the
//! lobby starts (seeks taken, challenge links joined), so that an API client
//! whose seek was taken on the web hears of its game on its event stream.

use tokio::sync::broadcast;

use super::{challenges, events, notices};
use crate::cluster::NodeNotices;
use crate::state::AppState;

/// Starts relaying, until the node stops.
pub fn start(state: &AppState, node_notices: &NodeNotices) {
    let mut other_nodes = node_notices.api();
    let mut shutdown = state.registry.shutdown_signal();
    let relaying = state.clone();
    tokio::spawn(async move {
        loop {
            let payload = tokio::select! {
                received = other_nodes.recv() => match received {
                    Ok(payload) => payload,
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "missed api notices from other nodes");
                        // A missed notice may have revoked a token.
                        relaying.lichess.tokens.forget_all();
                        continue;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                _ = shutdown.changed() => return,
            };
            let node = relaying.registry.node_id();
            if let Some(notice) = notices::from_another_node(&payload, node) {
                challenges::deliver(&relaying, &notice).await;
            }
        }
    });
    let mut started = state.lobby.started_games();
    let mut shutdown = state.registry.shutdown_signal();
    let following = state.clone();
    tokio::spawn(async move {
        loop {
            let game = tokio::select! {
                game = started.next() => match game {
                    Some(game) => game,
                    None => return,
                },
                _ = shutdown.changed() => return,
            };
            events::game_started(&following, game.game_id).await;
        }
    });
}
