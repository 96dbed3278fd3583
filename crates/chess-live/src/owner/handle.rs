//! How everything else reaches a live game's owner: a [`GameHandle`] sends
//! it a message and, for a request, waits for its answer on a oneshot. Each
//! request is typed; nobody runs code against the owner's state.

use std::sync::Arc;

use chess_rules::{ByColor, Color};
use tokio::sync::{broadcast, mpsc, oneshot};
use uuid::Uuid;

use crate::clock::UnixMs;
use crate::command::{Applied, Command, ConnectionId, Refusal};
use crate::model::Seat;
use crate::notice::ChangeNotice;
use crate::rows::PlayerRow;
use crate::store::StoreError;
use crate::view::{GameSnapshot, Outgoing, StateView};

/// The owner task was unloaded meanwhile: ask the registry for the game again.
#[derive(Clone, Copy, Debug, thiserror::Error)]
#[error("the game was unloaded; load it again")]
pub struct Gone;

/// Why joining an open challenge did not seat the player.
#[derive(Debug, thiserror::Error)]
pub enum JoinError {
    /// The seat was taken first (or the game is not open).
    #[error("the seat is taken")]
    Taken,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Whether a read may answer from the game as held, or must first make
/// sure no other node moved the stored game on (one small query on a
/// shared store, none otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freshness {
    /// As held: what a connection that follows the broadcasts needs.
    Held,
    /// Checked against the store first: for full states and snapshots,
    /// whose readers must not see a stale game while a notice is on its way.
    Stored,
}

/// What a game's owner is asked. Rare, big requests are boxed: the
/// mailbox's slots are all as big as the biggest message.
pub(super) enum Message {
    Command {
        player: Option<Uuid>,
        command: Command,
        now: UnixMs,
        reply: oneshot::Sender<Result<Applied, Refusal>>,
    },
    Join {
        player: Box<PlayerRow>,
        reply: oneshot::Sender<Result<Color, JoinError>>,
    },
    /// Connection `connection` of `player` opened on this node: count it
    /// for the player's seat, and answer the seat.
    Attach {
        player: Option<Uuid>,
        connection: ConnectionId,
        reply: oneshot::Sender<Seat>,
    },
    /// Connection `connection` on this node closed.
    Detach(ConnectionId),
    State {
        viewer: Option<Uuid>,
        freshness: Freshness,
        reply: oneshot::Sender<Box<StateView>>,
    },
    EventsAfter {
        version: u64,
        reply: oneshot::Sender<Option<Vec<Arc<Outgoing>>>>,
    },
    Snapshot {
        freshness: Freshness,
        reply: oneshot::Sender<Box<GameSnapshot>>,
    },
    /// Another node said which colours it has connections for; `asks`: and
    /// wants to hear ours.
    PresenceElsewhere {
        node: Uuid,
        present: ByColor<bool>,
        asks: bool,
    },
    /// Presence notices may have been lost: forget the other nodes' and ask again.
    ResyncPresence,
    /// Node `node` stopped saying it is alive: its connections are gone.
    NodeGone(Uuid),
    /// Another node committed the change its notice describes (`None`:
    /// notices may have been lost, reread the game).
    ChangedElsewhere(Option<Box<ChangeNotice<'static>>>),
    /// The sweeper found the stored deadline due.
    CheckTime,
}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Message::Command { .. } => "Command",
            Message::Join { .. } => "Join",
            Message::Attach { .. } => "Attach",
            Message::Detach(_) => "Detach",
            Message::State { .. } => "State",
            Message::EventsAfter { .. } => "EventsAfter",
            Message::Snapshot { .. } => "Snapshot",
            Message::PresenceElsewhere { .. } => "PresenceElsewhere",
            Message::ResyncPresence => "ResyncPresence",
            Message::NodeGone(_) => "NodeGone",
            Message::ChangedElsewhere(_) => "ChangedElsewhere",
            Message::CheckTime => "CheckTime",
        })
    }
}

/// How the rest of the node reaches a live game's owner.
#[derive(Clone, Debug)]
pub struct GameHandle {
    id: Uuid,
    mailbox: mpsc::Sender<Message>,
    outbox: broadcast::Sender<Arc<Outgoing>>,
}

impl GameHandle {
    pub(super) fn new(
        id: Uuid,
        mailbox: mpsc::Sender<Message>,
        outbox: broadcast::Sender<Arc<Outgoing>>,
    ) -> GameHandle {
        GameHandle {
            id,
            mailbox,
            outbox,
        }
    }

    /// A handle to game `id` whose owner has stopped already: what the
    /// registry holds between an owner's unload and its report.
    #[cfg(test)]
    pub(crate) fn closed(id: Uuid) -> GameHandle {
        let (mailbox, _) = mpsc::channel(1);
        let (outbox, _) = broadcast::channel(1);
        GameHandle::new(id, mailbox, outbox)
    }

    /// The game's id.
    pub fn id(&self) -> Uuid {
        self.id
    }

    /// Whether `self` and `other` reach the same owner task.
    pub(crate) fn same_owner(&self, other: &GameHandle) -> bool {
        self.mailbox.same_channel(&other.mailbox)
    }

    /// Whether the owner stopped taking messages (it unloaded or stopped).
    pub(crate) fn is_closed(&self) -> bool {
        self.mailbox.is_closed()
    }

    /// Every broadcast from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<Outgoing>> {
        self.outbox.subscribe()
    }

    async fn send(&self, message: Message) -> Result<(), Gone> {
        self.mailbox.send(message).await.map_err(|_| Gone)
    }

    /// Sends `message` made with a reply channel and waits for the answer.
    async fn ask<T>(&self, message: impl FnOnce(oneshot::Sender<T>) -> Message) -> Result<T, Gone> {
        let (reply, answer) = oneshot::channel();
        self.send(message(reply)).await?;
        answer.await.map_err(|_| Gone)
    }

    /// Runs `command` for `player` (their seat in the game decides the
    /// colour they act for), received at server time `now`.
    ///
    /// # Errors
    /// [`Gone`] if the owner unloaded before it took the command.
    pub async fn command(
        &self,
        player: Option<Uuid>,
        command: Command,
        now: UnixMs,
    ) -> Result<Result<Applied, Refusal>, Gone> {
        self.ask(|reply| Message::Command {
            player,
            command,
            now,
            reply,
        })
        .await
    }

    /// Seats `player` in the empty seat of this open challenge.
    ///
    /// # Errors
    /// [`Gone`] if the owner unloaded before it took the request.
    pub async fn join(&self, player: PlayerRow) -> Result<Result<Color, JoinError>, Gone> {
        self.ask(|reply| Message::Join {
            player: Box::new(player),
            reply,
        })
        .await
    }

    /// Counts connection `connection` of `player` on this node; the seat it
    /// holds. A new connection of a player starts from no premove: one their
    /// earlier connections set is void.
    ///
    /// # Errors
    /// [`Gone`] if the owner unloaded before it took the request.
    pub(crate) async fn attach(
        &self,
        player: Option<Uuid>,
        connection: ConnectionId,
    ) -> Result<Seat, Gone> {
        self.ask(|reply| Message::Attach {
            player,
            connection,
            reply,
        })
        .await
    }

    /// Connection `connection` closed; the premove it set, if any, is void.
    /// Never waits: a full mailbox is waited for by a task of its own.
    pub(crate) fn detach(&self, connection: ConnectionId) {
        self.send_soon(Message::Detach(connection));
    }

    /// The full state for `viewer`.
    ///
    /// # Errors
    /// [`Gone`] if the owner unloaded before it took the request.
    pub async fn state(
        &self,
        viewer: Option<Uuid>,
        freshness: Freshness,
    ) -> Result<StateView, Gone> {
        self.ask(|reply| Message::State {
            viewer,
            freshness,
            reply,
        })
        .await
        .map(|state| *state)
    }

    /// The broadcasts after `version`, or `None` when they are not all kept.
    ///
    /// # Errors
    /// [`Gone`] if the owner unloaded before it took the request.
    pub(crate) async fn events_after(
        &self,
        version: u64,
    ) -> Result<Option<Vec<Arc<Outgoing>>>, Gone> {
        self.ask(|reply| Message::EventsAfter { version, reply })
            .await
    }

    /// The game, copied out.
    ///
    /// # Errors
    /// [`Gone`] if the owner unloaded before it took the request.
    pub async fn snapshot(&self, freshness: Freshness) -> Result<GameSnapshot, Gone> {
        self.ask(|reply| Message::Snapshot { freshness, reply })
            .await
            .map(|snapshot| *snapshot)
    }

    /// Another node changed the game, as `notice` says (`None`: notices may
    /// have been lost): the owner follows the change or rereads the game.
    /// Never waits (the listener serves every game).
    pub(crate) fn changed_elsewhere(&self, notice: Option<Box<ChangeNotice<'static>>>) {
        self.send_soon(Message::ChangedElsewhere(notice));
    }

    /// Node `node` has connections for the colours in `present` (none: it
    /// has none left, or it died). Never waits.
    pub(crate) fn presence_elsewhere(&self, node: Uuid, present: ByColor<bool>, asks: bool) {
        self.send_soon(Message::PresenceElsewhere {
            node,
            present,
            asks,
        });
    }

    /// Presence notices may have been lost. Never waits.
    pub(crate) fn resync_presence(&self) {
        self.send_soon(Message::ResyncPresence);
    }

    /// Node `node` is gone, with its connections. Never waits.
    pub(crate) fn node_gone(&self, node: Uuid) {
        self.send_soon(Message::NodeGone(node));
    }

    /// The sweeper found the game's stored deadline due. Never waits: a
    /// busy owner looks at its clock anyway.
    pub(crate) fn check_time(&self) {
        let _ = self.mailbox.try_send(Message::CheckTime);
    }

    /// Queues `message` without waiting: if the mailbox is full, a task
    /// waits for room, so the caller goes on (the listener serves every
    /// game; a closing connection must not wait for a busy game).
    fn send_soon(&self, message: Message) {
        match self.mailbox.try_send(message) {
            Ok(()) | Err(mpsc::error::TrySendError::Closed(_)) => {}
            Err(mpsc::error::TrySendError::Full(message)) => {
                let mailbox = self.mailbox.clone();
                tokio::spawn(async move {
                    let _ = mailbox.send(message).await;
                });
            }
        }
    }
}
