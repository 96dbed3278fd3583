//! Several nodes on one Postgres: the listener that hears the other nodes'
//! notices (`LISTEN/NOTIFY`) and hands each to whoever on this node follows
//! it: game changes and presence to the live games' registry (their format
//! is `chess_live::notice`), lobby changes to the lobby, and the lichess
//! API's challenges and games to its event streams.
//!
//! A dropped listener connection may have lost notices: after reconnecting,
//! every hosted game rereads its row and asks again who is connected where,
//! so no connection misses a change. On SQLite there is one node, and no
//! listener.

use std::sync::Arc;
use std::time::Duration;

use chess_live::Registry;
use chess_live::notice::{
    GAMES_CHANNEL, PRESENCE_CHANNEL, PresenceNotice, notice_prefix, parse_game_notice,
};
use chess_store::{NoticeListener, Store};
use tokio::sync::{broadcast, watch};

use crate::metrics::Metrics;

/// The channel of lobby changes (`crate::lobby`).
pub const LOBBY_CHANNEL: &str = "chess_lobby";
/// The channel of the lichess-compatible API's challenges and games
/// (`crate::lichess::notices`).
pub const API_CHANNEL: &str = "chess_api";
/// Wait before reconnecting a failed listener.
const RECONNECT_AFTER: Duration = Duration::from_millis(500);
/// Other nodes' lobby and API notices waiting for their follower on this
/// node; a follower further behind skips the oldest.
const RELAYED: usize = 256;

/// Other nodes' lobby and lichess API notices, for their followers on this
/// node (each notice's payload as sent).
#[derive(Clone, Debug)]
pub struct NodeNotices {
    lobby: broadcast::Sender<String>,
    api: broadcast::Sender<String>,
    /// The moves of other nodes' changes, for the lobby sockets here.
    turns: crate::turns::Turns,
}

impl Default for NodeNotices {
    fn default() -> NodeNotices {
        NodeNotices {
            lobby: broadcast::channel(RELAYED).0,
            api: broadcast::channel(RELAYED).0,
            turns: crate::turns::Turns::default(),
        }
    }
}

impl NodeNotices {
    /// Lobby notices from other nodes, from now on.
    pub fn lobby(&self) -> broadcast::Receiver<String> {
        self.lobby.subscribe()
    }

    /// Who hears of the moves in their games, on this node: other nodes'
    /// moves reach them through the listener.
    pub fn turns(&self) -> crate::turns::Turns {
        self.turns.clone()
    }

    /// The lichess API's notices from other nodes, from now on.
    pub fn api(&self) -> broadcast::Receiver<String> {
        self.api.subscribe()
    }
}

/// Listens for other nodes' notices until shutdown, reconnecting after a
/// dropped connection and then asking every hosted game to catch up.
pub async fn listen(
    store: Store,
    registry: Arc<Registry>,
    relays: NodeNotices,
    metrics: Metrics,
    mut shutdown: watch::Receiver<bool>,
) {
    let node = registry.node_id();
    let own_notices = notice_prefix(node);
    loop {
        let mut listener = match connect(&store).await {
            Ok(Some(listener)) => listener,
            // SQLite: one node, nobody to hear.
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(%error, "the change listener cannot connect; retrying");
                tokio::select! {
                    () = tokio::time::sleep(RECONNECT_AFTER) => continue,
                    _ = shutdown.changed() => return,
                }
            }
        };
        // Whatever changed while no one listened: catch up from the store,
        // and ask again who is connected where.
        registry.catch_up_all();
        registry.resync_presence_all();
        loop {
            let received = tokio::select! {
                received = listener.next() => received,
                _ = shutdown.changed() => return,
            };
            match received {
                Ok(Some(notice)) => {
                    let payload = notice.payload.as_str();
                    match notice.channel.as_str() {
                        GAMES_CHANNEL if payload.starts_with(&own_notices) => {}
                        GAMES_CHANNEL => match parse_game_notice(payload) {
                            Some(notice) if notice.node != node => {
                                metrics.notification_received();
                                for game in notice.games {
                                    relays.turns.changed_elsewhere(&game);
                                    registry.changed_elsewhere(game);
                                }
                            }
                            Some(_) => {}
                            None => tracing::warn!(payload, "an unreadable game notice"),
                        },
                        PRESENCE_CHANNEL => match PresenceNotice::parse(payload) {
                            Some(notice) if notice.node != node => {
                                registry.presence_elsewhere(notice);
                            }
                            Some(_) => {}
                            None => tracing::warn!(payload, "an unreadable presence notice"),
                        },
                        LOBBY_CHANNEL => {
                            let _ = relays.lobby.send(payload.to_owned());
                        }
                        API_CHANNEL => {
                            let _ = relays.api.send(payload.to_owned());
                        }
                        _ => {}
                    }
                }
                // The connection dropped; notices may be lost.
                Ok(None) => {
                    tracing::warn!("the change listener lost its connection; catching up");
                    registry.catch_up_all();
                    registry.resync_presence_all();
                }
                Err(error) => {
                    tracing::warn!(%error, "the change listener failed; reconnecting");
                    break;
                }
            }
        }
        tokio::select! {
            () = tokio::time::sleep(RECONNECT_AFTER) => {}
            _ = shutdown.changed() => return,
        }
    }
}

async fn connect(store: &Store) -> chess_store::Result<Option<NoticeListener>> {
    store
        .listen(&[GAMES_CHANNEL, LOBBY_CHANNEL, API_CHANNEL, PRESENCE_CHANNEL])
        .await
}
