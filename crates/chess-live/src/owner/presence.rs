//! Who is connected to a game, here and on the other nodes, and the
//! premoves that leave with their player: a premove stays only while its
//! player has a connection to the game.

use std::sync::Arc;

use chess_game::Event;
use chess_rules::{ByColor, Color};
use uuid::Uuid;

use super::Owner;
use super::commit::Undo;
use crate::clock::{UnixMs, now_ms};
use crate::model::Seat;
use crate::notice::PresenceNotice;
use crate::view::Outgoing;

/// This node's and every node's presence, to compare after a change.
type PresenceBefore = (ByColor<bool>, ByColor<bool>);

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

    /// A connection holding `seat` opened on this node.
    pub(super) fn connected(&mut self, seat: Seat) {
        let before = self.presence_now();
        for color in Color::ALL {
            if seat.holds(color) {
                *self.entry.connections.get_mut(color) += 1;
            }
        }
        self.presence_changed(before);
    }

    /// A connection holding `seat` closed; the last one of a colour takes
    /// its premove with it.
    pub(super) async fn disconnected(&mut self, seat: Seat) {
        let before = self.presence_now();
        let now = now_ms();
        let undo = Undo::Rewind(self.entry.game.checkpoint());
        let mut events = Vec::new();
        for color in Color::ALL {
            if !seat.holds(color) {
                continue;
            }
            let count = self.entry.connections.get_mut(color);
            *count = count.saturating_sub(1);
            if *count == 0 && self.entry.game.premove(color).is_some() {
                events.extend(self.entry.game.disconnected(color, now.millis()));
            }
        }
        if !events.is_empty()
            && let Err(refusal) = self.commit(events, undo, now, None).await
        {
            tracing::warn!(
                code = refusal.code(),
                "clearing a premove on disconnect failed"
            );
        }
        self.presence_changed(before);
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

    /// Clears premoves whose player is gone: set through a node that stopped,
    /// or through this node by a player with no connection left here.
    pub(super) async fn clear_orphan_premoves(&mut self, now: UnixMs) -> Vec<Event> {
        let mut events = Vec::new();
        for color in Color::ALL {
            if self.entry.game.premove(color).is_some() && !self.premove_holder_present(color).await
            {
                events.extend(self.entry.game.disconnected(color, now.millis()));
            }
        }
        events
    }

    async fn premove_holder_present(&self, color: Color) -> bool {
        match *self.entry.row.premove_nodes.get(color) {
            Some(node) if node == self.context.node() => *self.entry.connections.get(color) > 0,
            Some(node) => self.context.nodes.is_alive(node).await,
            None => false,
        }
    }
}
