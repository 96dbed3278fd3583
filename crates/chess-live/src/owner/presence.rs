//! Who is connected to a game, here and on the other nodes, and the
//! premoves that belong to connections.
//!
//! A premove belongs to the connection that set it: it is played only by
//! the node that connection is attached to, and only while it is attached.
//! Another node that makes the opponent's move leaves the premove due
//! (`Game::play_leaving_premove`), and the premove's own node plays it when
//! it catches up with that move. So no node plays a premove whose
//! connection is gone, whatever the timing of a crash: the connection's
//! node is gone with it. A connection that closes takes its premove with
//! it, a player's new connection starts from no premove, and a node that
//! stops voids its connections' premoves before it lets go of their games.
//! The row keeps which node's connection set each premove, so that a
//! premove whose node crashed is voided too: by the node that loads the
//! game next, and by every node hosting it once the dead node misses its
//! heartbeats.

use std::sync::Arc;

use chess_game::Event;
use chess_rules::{ByColor, Color};
use uuid::Uuid;

use super::Owner;
use super::commit::Undo;
use crate::command::{ConnectionId, Refusal};
use crate::model::Seat;
use crate::notice::PresenceNotice;
use crate::view::Outgoing;

/// This node's and every node's presence, to compare after a change.
type PresenceBefore = (ByColor<bool>, ByColor<bool>);

/// How many times voiding premoves is tried when other nodes keep changing
/// the game first.
const VOID_ATTEMPTS: usize = 3;

impl Owner {
    fn presence_now(&self) -> PresenceBefore {
        (self.entry.local_presence(), self.entry.presence())
    }

    /// After connections changed (`before` from [`Owner::presence_now`]):
    /// tells the other nodes if this node's presence changed, and this
    /// node's connections if a colour came or went everywhere.
    fn presence_changed(&mut self, (local_before, anywhere_before): PresenceBefore) {
        let (local, anywhere) = self.presence_now();
        if local != local_before {
            self.announce_presence(false);
        }
        for color in Color::ALL {
            let present = *anywhere.get(color);
            if present != *anywhere_before.get(color) {
                let _ = self
                    .outbox
                    .send(Arc::new(Outgoing::Presence { color, present }));
            }
        }
    }

    /// Tells the other nodes which colours have connections here (`asks`:
    /// and asks them for theirs). Only a shared store has other nodes.
    pub(super) fn announce_presence(&self, asks: bool) {
        if self.context.store.is_shared() {
            self.context.presence.push(PresenceNotice {
                node: self.context.node(),
                game: self.id(),
                present: self.entry.local_presence(),
                asks,
            });
        }
    }

    /// Connection `connection` holding `seat` opened on this node. The
    /// player starts from no premove: one set through an earlier connection
    /// (on any node) is void.
    pub(super) async fn connected(&mut self, connection: ConnectionId, seat: Seat) {
        let before = self.presence_now();
        let colors: Vec<Color> = Color::ALL
            .into_iter()
            .filter(|color| seat.holds(*color))
            .collect();
        self.void_premoves(&colors, "voiding an earlier connection's premove failed")
            .await;
        self.entry.connections.push((connection, seat));
        self.presence_changed(before);
    }

    /// Connection `connection` on this node closed: the premove it set, if
    /// any, goes with it.
    pub(super) async fn disconnected(&mut self, connection: ConnectionId) {
        let before = self.presence_now();
        let owned: Vec<Color> = Color::ALL
            .into_iter()
            .filter(|color| self.premove_set_by(*color, connection))
            .collect();
        self.entry
            .connections
            .retain(|(open, _)| *open != connection);
        self.void_premoves(&owned, "clearing a premove on disconnect failed")
            .await;
        self.presence_changed(before);
    }

    /// Whether the premove stored for `color` is the one `connection` set.
    fn premove_set_by(&self, color: Color, connection: ConnectionId) -> bool {
        matches!(
            *self.entry.premove_owners.get(color),
            Some((owner, premove)) if owner == connection && self.entry.game.premove(color) == Some(premove)
        )
    }

    /// Clears the premoves stored for `colors` (their player is gone, or
    /// back on a new connection), and commits that: again on the game as
    /// reread when another node changed it first (it may have made the
    /// opponent's move, leaving the premove due).
    async fn void_premoves(&mut self, colors: &[Color], failure: &str) {
        for _ in 0..VOID_ATTEMPTS {
            let now = self.context.now();
            let undo = Undo::Rewind(self.entry.game.checkpoint());
            let mut events: Vec<Event> = Vec::new();
            for color in colors {
                if self.entry.game.premove(*color).is_some() {
                    events.extend(self.entry.game.disconnected(*color, now.millis()));
                }
            }
            match self.commit(events, undo, now).await {
                Ok(()) => return,
                Err(Refusal::Conflict) => {}
                Err(refusal) => {
                    tracing::warn!(code = refusal.code(), "{failure}");
                    return;
                }
            }
        }
        tracing::warn!(code = "conflict", "{failure}");
    }

    /// Before the node lets go of the game (it stops): the premoves its
    /// connections set are void. No other node plays them anyway; voiding
    /// them keeps them out of every player's view at once.
    pub(super) async fn void_local_premoves(&mut self) {
        let owned: Vec<Color> = Color::ALL
            .into_iter()
            .filter(|color| self.entry.owns_premove(*color))
            .collect();
        self.void_premoves(&owned, "voiding a stopping node's premove failed")
            .await;
    }

    /// Voids the premoves whose connection is gone: set through this node by
    /// a connection no longer here, through no node this node knows, or
    /// through a node that is gone (`gone`, or found dead now). A premove
    /// another live node's connection set is left to that node. Run when a
    /// game is loaded (it has no connection here yet) and when a node dies.
    pub(super) async fn void_orphan_premoves(&mut self, gone: Option<Uuid>) {
        let mut orphans = Vec::new();
        for color in Color::ALL {
            if self.entry.game.premove(color).is_none() || self.entry.owns_premove(color) {
                continue;
            }
            let orphan = match *self.entry.row.premove_nodes.get(color) {
                Some(node) if node == self.context.node() => true,
                Some(node) => gone == Some(node) || !self.context.nodes.is_alive(node).await,
                None => true,
            };
            if orphan {
                orphans.push(color);
            }
        }
        if !orphans.is_empty() {
            self.void_premoves(
                &orphans,
                "voiding a premove whose connection is gone failed",
            )
            .await;
        }
    }

    /// Plays the premove the side to move has due, if a connection here
    /// set it (another node made the opponent's move and left it due).
    pub(super) async fn play_due_premove(&mut self) {
        let turn = self.entry.game.turn();
        if self.stopping() || !self.entry.is_playing() || !self.entry.owns_premove(turn) {
            return;
        }
        let now = self.context.now();
        let undo = Undo::Rewind(self.entry.game.checkpoint());
        let events = self.entry.game.play_premove(now.millis());
        if let Err(refusal) = self.commit(events, undo, now).await {
            tracing::warn!(code = refusal.code(), "playing a due premove failed");
        }
    }

    /// Node `node` said which colours it has connections for; `asks`: and
    /// wants to hear ours.
    pub(super) fn presence_elsewhere(&mut self, node: Uuid, present: ByColor<bool>, asks: bool) {
        let before = self.presence_now();
        let remote = &mut self.entry.remote_presence;
        remote.retain(|(known, _)| *known != node);
        if present.white || present.black {
            remote.push((node, present));
        }
        let local = self.entry.local_presence();
        if asks && (local.white || local.black) {
            self.announce_presence(false);
        }
        self.presence_changed(before);
    }

    /// Presence notices may have been lost: forget the other nodes' and ask again.
    pub(super) fn resync_presence(&mut self) {
        let before = self.presence_now();
        self.entry.remote_presence.clear();
        self.announce_presence(true);
        self.presence_changed(before);
    }
}
