//! The nodes sharing the store, as this node knows them: each says it is
//! alive every [`HEARTBEAT_EVERY`], and one silent for [`NODE_TIMEOUT`]
//! counts as gone: the players connected through it are no longer present,
//! and the premoves they set are void.

use std::collections::HashSet;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use uuid::Uuid;

use crate::clock::Clock;
use crate::store::{GameStore, StoreResult};

/// How often a node says it is alive.
pub(crate) const HEARTBEAT_EVERY: Duration = Duration::from_secs(2);
/// A node silent for this long counts as gone.
const NODE_TIMEOUT: Duration = Duration::from_secs(7);

/// This node and the others seen alive lately.
#[derive(Debug)]
pub(crate) struct NodeDirectory {
    node: Uuid,
    /// This node's name (its address): a restarted node's earlier runs
    /// under the same name are gone.
    name: String,
    /// Nodes seen alive lately (this one always counts).
    alive: RwLock<HashSet<Uuid>>,
    store: Arc<dyn GameStore>,
    /// The registry's clock: heartbeats are stamped, and silence judged, by it.
    clock: Arc<dyn Clock>,
}

impl NodeDirectory {
    /// A directory for a new node named `name` (its id is new at every
    /// start), keeping time by `clock`.
    pub fn new(store: Arc<dyn GameStore>, name: String, clock: Arc<dyn Clock>) -> NodeDirectory {
        let node = Uuid::new_v4();
        NodeDirectory {
            node,
            name,
            alive: RwLock::new(HashSet::from([node])),
            store,
            clock,
        }
    }

    /// This node's id.
    pub fn this_node(&self) -> Uuid {
        self.node
    }

    /// Registers this node in the store and learns which others are alive.
    ///
    /// # Errors
    /// The store's failure.
    pub async fn register(&self) -> StoreResult<()> {
        self.store
            .register_node(self.node, &self.name, self.clock.now())
            .await?;
        self.refresh().await;
        Ok(())
    }

    /// Tells the other nodes this one left: its premoves are void at once.
    pub async fn unregister(&self) {
        if let Err(error) = self.store.remove_node(self.node).await {
            tracing::warn!(%error, "unregistering the node failed");
        }
    }

    /// Whether node `node` is alive: known from the last heartbeat, or else
    /// asked of the store (a node that started since).
    pub async fn is_alive(&self, node: Uuid) -> bool {
        if self.known_alive(node) {
            return true;
        }
        self.refresh().await;
        self.known_alive(node)
    }

    fn known_alive(&self, node: Uuid) -> bool {
        node == self.node || self.alive.read().is_ok_and(|alive| alive.contains(&node))
    }

    /// Says this node is alive and learns which others are; the nodes that
    /// were alive and are gone now.
    pub async fn refresh(&self) -> Vec<Uuid> {
        let now = self.clock.now();
        let nodes = match self
            .store
            .heartbeat(self.node, &self.name, now, now.minus(NODE_TIMEOUT))
            .await
        {
            Ok(nodes) => nodes,
            Err(error) => {
                tracing::warn!(%error, "the node heartbeat failed");
                return Vec::new();
            }
        };
        let mut now_alive: HashSet<Uuid> = nodes.into_iter().collect();
        now_alive.insert(self.node);
        match self.alive.write() {
            Ok(mut alive) => {
                let gone = alive.difference(&now_alive).copied().collect();
                *alive = now_alive;
                gone
            }
            Err(_) => Vec::new(),
        }
    }
}
