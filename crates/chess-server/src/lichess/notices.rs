//! What the API's nodes tell each other, so an event stream on any node
//! hears of challenges and games made through another (`LISTEN/NOTIFY` on
//! Postgres, on the channel [`API_CHANNEL`]; on SQLite there is one node and
//! local delivery is all there is).
//!
//! A notice carries ids only, far under Postgres's 8,000-byte payload limit:
//! each node reads the challenge or game from the store and queues the
//! lines for its own open streams.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;
use uuid::Uuid;

use super::Lichess;
use super::challenges::{CHALLENGE_LIFETIME_MS, Challenge};
use super::events;
use crate::clock::now_ms;
use crate::games::Hub;
use crate::games::notify::API_CHANNEL;
use crate::startup::AppState;

/// A change other nodes' event streams may need to hear of.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApiNotice {
    /// Challenge `id` became `status`: `created` (made), `declined` or
    /// `canceled`. The status is in the notice because the row may have
    /// moved on by the time a node reads it, and each step has its line.
    Challenge { id: Uuid, status: String },
    /// A game started through the API (a challenge accepted).
    GameStarted { game_id: Uuid },
}

/// An [`ApiNotice`] with the node that sent it.
#[derive(Debug, Serialize, Deserialize)]
struct NodeNotice {
    node: Uuid,
    notice: ApiNotice,
}

/// Delivers `notice` to this node's streams and tells the other nodes.
pub async fn publish(state: &AppState, notice: ApiNotice) {
    deliver(&state.lichess, &state.hub, &notice).await;
    let payload = NodeNotice {
        node: state.hub.node_id(),
        notice,
    };
    let payload = serde_json::to_string(&payload).unwrap_or_default();
    if let Err(error) = state.store.notify(API_CHANNEL, &payload).await {
        tracing::warn!(%error, "telling other nodes of an api change failed");
    }
}

/// Queues the lines `notice` gives this node's open event streams.
async fn deliver(lichess: &Arc<Lichess>, hub: &Arc<Hub>, notice: &ApiNotice) {
    match notice {
        ApiNotice::Challenge { id, status } => {
            let expired_before = now_ms().to_stored() - CHALLENGE_LIFETIME_MS;
            let row = match hub.store().challenge(*id, expired_before).await {
                Ok(Some(row)) => row,
                // Expired meanwhile: nothing to tell.
                Ok(None) => return,
                Err(error) => {
                    tracing::warn!(%error, %id, "reading a challenge to announce failed");
                    return;
                }
            };
            let mut challenge = match Challenge::load(hub.store(), row).await {
                Ok(Some(challenge)) => challenge,
                Ok(None) | Err(_) => return,
            };
            if *status != challenge.status {
                // Announce the step the notice is about, not a later one.
                challenge.status.clone_from(status);
                if status != "declined" {
                    challenge.decline_reason = None;
                }
            }
            for (player, line) in challenge.event_lines() {
                lichess.events.send(player, &line);
            }
        }
        ApiNotice::GameStarted { game_id } => {
            events::game_started(lichess, hub, *game_id).await;
        }
    }
}

/// Delivers the notices other nodes send to this node's streams, until
/// shutdown.
pub fn relay(lichess: &Arc<Lichess>, hub: &Arc<Hub>) {
    let lichess = Arc::clone(lichess);
    let hub = Arc::clone(hub);
    let mut notices = hub.api_notices();
    let mut shutdown = hub.shutdown_signal();
    tokio::spawn(async move {
        loop {
            let payload = tokio::select! {
                received = notices.recv() => match received {
                    Ok(payload) => payload,
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "missed api notices from other nodes");
                        continue;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                _ = shutdown.changed() => return,
            };
            match serde_json::from_str::<NodeNotice>(&payload) {
                Ok(notice) if notice.node != hub.node_id() => {
                    deliver(&lichess, &hub, &notice.notice).await;
                }
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, payload, "an unreadable api notice"),
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_names_ids_only_and_round_trips() {
        let notice = NodeNotice {
            node: Uuid::new_v4(),
            notice: ApiNotice::Challenge {
                id: Uuid::new_v4(),
                status: "declined".to_owned(),
            },
        };
        let payload = serde_json::to_string(&notice).expect("serializes");
        assert!(payload.len() < 200, "far under the NOTIFY limit: {payload}");
        let back: NodeNotice = serde_json::from_str(&payload).expect("parses");
        assert_eq!(back.notice, notice.notice);
        assert_eq!(back.node, notice.node);
    }
}
