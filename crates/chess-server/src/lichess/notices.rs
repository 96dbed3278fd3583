//! What the API's nodes tell each other, so an event stream on any node
//! hears of challenges and games made through another (`LISTEN/NOTIFY` on
//! Postgres, on the channel [`API_CHANNEL`]; on SQLite there is one node and
//! local delivery is all there is).
//!
//! A notice carries ids only, far under Postgres's 8,000-byte payload limit:
//! each node reads the challenge or game from the store and queues the
//! lines for its own open streams (`super::challenges::deliver`).

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::cluster::API_CHANNEL;
use chess_store::Store;

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
    /// A token of `player` was revoked, or the account became a bot: forget
    /// what this node remembers of their tokens
    /// ([`TokenCache`](super::token_cache::TokenCache)).
    TokensChanged { player: Uuid },
}

/// An [`ApiNotice`] with the node that sent it.
#[derive(Debug, Serialize, Deserialize)]
struct NodeNotice {
    node: Uuid,
    notice: ApiNotice,
}

/// Tells the other nodes of `notice`, sent by node `node`.
pub async fn tell_other_nodes(store: &Store, node: Uuid, notice: ApiNotice) {
    let payload = NodeNotice { node, notice };
    let payload = serde_json::to_string(&payload).unwrap_or_default();
    if let Err(error) = store.notify(API_CHANNEL, &payload).await {
        tracing::warn!(%error, "telling other nodes of an api change failed");
    }
}

/// The notice in `payload` if another node than `node` sent it.
pub fn from_another_node(payload: &str, node: Uuid) -> Option<ApiNotice> {
    match serde_json::from_str::<NodeNotice>(payload) {
        Ok(notice) => (notice.node != node).then_some(notice.notice),
        Err(error) => {
            tracing::warn!(%error, payload, "an unreadable api notice");
            None
        }
    }
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
