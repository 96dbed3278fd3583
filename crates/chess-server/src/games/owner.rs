//! One task per live game: it owns the game's state and is the only code that
//! changes it. Everything else talks to it through its [`GameHandle`]:
//! sockets, HTTP routes and the lobby send messages and wait for a oneshot
//! answer; the owner's one `select!` also handles the game's clock and
//! first-move deadlines, the computer's move, and changes that other nodes
//! made. A command's change is handed to the node's writer (group commit) and
//! acknowledged and broadcast only once it is committed.
//!
//! The owner unloads itself when the game is over and nobody watches it, or
//! after a while with no socket; the hub loads it again on demand. A timed
//! game nobody hosts is still flagged on time: its deadline is stored with
//! every change and the hub's sweeper loads games whose deadline passed.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use chess_engine::{Engine, Level};
use chess_game::{Checkpoint, Event, EventKind, Game};
use chess_rules::{ByColor, Color, Move};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio::task::JoinHandle;
use uuid::Uuid;

use super::hub::Hub;
use super::live::{Applied, Entry, Outgoing, Refusal, run, version_i64};
use super::notify::{ChangeNotice, GameChange, PresenceNotice};
use super::stored;
use super::view::{SharedSituation, public_event, status_of};
use super::writer::WriteError;
use crate::clock::{UnixMs, now_ms};
use crate::games::model::{GameMode, GameStage, PlayerKind, Seat};
use crate::store::{GameRow, GameWrite, PlayerRow, SeatClaim, StoreError, WriteOutcome};
use crate::ws::protocol::{Command, EventView};

/// Messages that may wait for a busy owner.
const MAILBOX: usize = 64;
/// Longest wait for the store to say whether a commit in doubt went through.
const IN_DOUBT_CHECK: Duration = Duration::from_secs(1);
/// Broadcasts a slow socket may fall behind before it is sent a full state
/// (a lichess stream ends instead). The channel allocates every slot when
/// the game loads, so this costs about 32 bytes per slot in every live game;
/// a socket that keeps up is at most a few events behind.
const OUTBOX: usize = 32;
/// The latest events kept in the row for other nodes to replay.
const RECENT_EVENTS: usize = 8;
/// An unfinished game with no socket on this node is unloaded after this long.
pub const IDLE_UNLOAD: Duration = Duration::from_secs(60);

/// The owner task was unloaded meanwhile: ask the hub for the game again.
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

type Inspection = Box<dyn FnOnce(&Entry) + Send>;

enum Message {
    Command {
        seat: Seat,
        command: Command,
        now: UnixMs,
        reply: oneshot::Sender<Result<Applied, Refusal>>,
    },
    /// Boxed: joins are rare, and the mailbox's slots are all as big as
    /// the biggest message (see `footprint` below).
    Join {
        player: Box<PlayerRow>,
        reply: oneshot::Sender<Result<Color, JoinError>>,
    },
    /// `fresh`: first make sure no other node moved the stored game on.
    Inspect {
        look: Inspection,
        fresh: bool,
    },
    Connected(Seat),
    Disconnected(Seat),
    /// Another node said which colours it has connections for; `asks`: and
    /// wants to hear ours.
    PresenceElsewhere {
        node: Uuid,
        present: ByColor<bool>,
        asks: bool,
    },
    /// Presence notices may have been lost: forget the other nodes' and ask again.
    ResyncPresence,
    /// Another node committed the change its notice describes (`None`:
    /// notices may have been lost, reread the game). Boxed like `Join`.
    ChangedElsewhere(Option<Box<ChangeNotice<'static>>>),
    /// The sweeper found the stored deadline due.
    CheckTime,
}

/// How the rest of the server reaches a live game's owner.
#[derive(Clone, Debug)]
pub struct GameHandle {
    pub id: Uuid,
    mailbox: mpsc::Sender<Message>,
    outbox: broadcast::Sender<Arc<Outgoing>>,
}

impl std::fmt::Debug for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Message::Command { .. } => "Command",
            Message::Join { .. } => "Join",
            Message::Inspect { .. } => "Inspect",
            Message::Connected(_) => "Connected",
            Message::Disconnected(_) => "Disconnected",
            Message::PresenceElsewhere { .. } => "PresenceElsewhere",
            Message::ResyncPresence => "ResyncPresence",
            Message::ChangedElsewhere(_) => "ChangedElsewhere",
            Message::CheckTime => "CheckTime",
        })
    }
}

impl GameHandle {
    /// Whether `self` and `other` reach the same owner task.
    pub fn same_owner(&self, other: &GameHandle) -> bool {
        self.mailbox.same_channel(&other.mailbox)
    }

    /// Every broadcast from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Outgoing>> {
        self.outbox.subscribe()
    }

    async fn send(&self, message: Message) -> Result<(), Gone> {
        self.mailbox.send(message).await.map_err(|_| Gone)
    }

    /// Runs `command` for the holder of `seat`, received at server time `now`.
    ///
    /// # Errors
    /// [`Gone`] if the owner unloaded before it took the command.
    pub async fn command(
        &self,
        seat: Seat,
        command: Command,
        now: UnixMs,
    ) -> Result<Result<Applied, Refusal>, Gone> {
        let (reply, answer) = oneshot::channel();
        self.send(Message::Command {
            seat,
            command,
            now,
            reply,
        })
        .await?;
        answer.await.map_err(|_| Gone)
    }

    /// Seats `player` in the empty seat of this open challenge.
    ///
    /// # Errors
    /// [`Gone`] if the owner unloaded before it took the request.
    pub async fn join(&self, player: PlayerRow) -> Result<Result<Color, JoinError>, Gone> {
        let (reply, answer) = oneshot::channel();
        self.send(Message::Join {
            player: Box::new(player),
            reply,
        })
        .await?;
        answer.await.map_err(|_| Gone)
    }

    /// Reads the game's state with `look` (run by the owner, between commands).
    ///
    /// # Errors
    /// [`Gone`] if the owner unloaded before it took the request.
    pub async fn inspect<T: Send + 'static>(
        &self,
        look: impl FnOnce(&Entry) -> T + Send + 'static,
    ) -> Result<T, Gone> {
        self.inspect_with(look, false).await
    }

    /// Like [`GameHandle::inspect`], after checking the stored version (one
    /// small query, on Postgres only: see `Owner::is_stale`) and catching up
    /// if another node moved the game on: for full states, whose readers
    /// must not see a stale game even when a notice is still on its way.
    ///
    /// # Errors
    /// [`Gone`] if the owner unloaded before it took the request.
    pub async fn inspect_fresh<T: Send + 'static>(
        &self,
        look: impl FnOnce(&Entry) -> T + Send + 'static,
    ) -> Result<T, Gone> {
        self.inspect_with(look, true).await
    }

    async fn inspect_with<T: Send + 'static>(
        &self,
        look: impl FnOnce(&Entry) -> T + Send + 'static,
        fresh: bool,
    ) -> Result<T, Gone> {
        let (reply, answer) = oneshot::channel();
        let look: Inspection = Box::new(move |entry| {
            let _ = reply.send(look(entry));
        });
        self.send(Message::Inspect { look, fresh }).await?;
        answer.await.map_err(|_| Gone)
    }

    /// A socket of `seat` opened on this node.
    pub async fn connected(&self, seat: Seat) {
        let _ = self.send(Message::Connected(seat)).await;
    }

    /// A socket of `seat` on this node closed.
    pub async fn disconnected(&self, seat: Seat) {
        let _ = self.send(Message::Disconnected(seat)).await;
    }

    /// Another node changed the game, as `notice` says (`None`: notices may
    /// have been lost): the owner follows the change or rereads the game.
    /// Never waits (the listener serves every game).
    pub(super) fn changed_elsewhere(&self, notice: Option<Box<ChangeNotice<'static>>>) {
        self.send_from_listener(Message::ChangedElsewhere(notice));
    }

    /// Node `node` has connections for the colours in `present` (none: it
    /// has none left, or it died). Never waits.
    pub(super) fn presence_elsewhere(&self, node: Uuid, present: ByColor<bool>, asks: bool) {
        self.send_from_listener(Message::PresenceElsewhere {
            node,
            present,
            asks,
        });
    }

    /// Presence notices may have been lost. Never waits.
    pub(super) fn resync_presence(&self) {
        self.send_from_listener(Message::ResyncPresence);
    }

    /// Queues `message` without waiting: if the mailbox is full, a task
    /// waits for room, so the listener goes on serving every game.
    fn send_from_listener(&self, message: Message) {
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

    /// The sweeper found the game's stored deadline due.
    pub(super) fn check_time(&self) {
        let _ = self.mailbox.try_send(Message::CheckTime);
    }
}

/// A computer move being searched: the ply it is for and the search.
struct Thinking {
    ply: u32,
    color: Color,
    search: JoinHandle<Option<Move>>,
}

/// The task owning one live game.
pub(super) struct Owner {
    hub: Arc<Hub>,
    entry: Entry,
    /// The events the row keeps for other nodes, oldest first: kept up to
    /// date here (`entry.row.recent_events` is only what was last read).
    recent: VecDeque<Event>,
    mailbox: mpsc::Receiver<Message>,
    outbox: broadcast::Sender<Arc<Outgoing>>,
    handle: GameHandle,
    thinking: Option<Thinking>,
    last_activity: Instant,
}

impl Owner {
    /// An owner for `entry` and the handle that reaches it; run it with
    /// [`Owner::run`].
    pub(super) fn new(hub: Arc<Hub>, entry: Entry) -> (Owner, GameHandle) {
        let (mailbox_sender, mailbox) = mpsc::channel(MAILBOX);
        let (outbox, _) = broadcast::channel(OUTBOX);
        let handle = GameHandle {
            id: entry.row.id,
            mailbox: mailbox_sender,
            outbox: outbox.clone(),
        };
        let recent = parse_recent(&entry.row);
        let owner = Owner {
            hub,
            entry,
            recent,
            mailbox,
            outbox,
            handle: handle.clone(),
            thinking: None,
            last_activity: Instant::now(),
        };
        (owner, handle)
    }

    fn id(&self) -> Uuid {
        self.entry.row.id
    }

    /// Serves the game until it unloads or the server stops.
    pub(super) async fn run(mut self) {
        let mut shutdown = self.hub.shutdown_signal();
        if self.entry.row.mode == GameMode::Online && !self.is_over() {
            // Learn who is connected to this game on the other nodes.
            self.announce_presence(true);
        }
        // The deep paths (a command with its commit, a catch-up, a search's
        // move) are boxed while they run: their state would otherwise be
        // part of this task's future, which every live game holds for its
        // whole life (`footprint::the_owner_task_is_small`).
        Box::pin(self.settle(now_ms())).await;
        self.think();
        loop {
            if *shutdown.borrow() {
                break;
            }
            let deadline = self.deadline();
            let idle_check = self.idle_check();
            tokio::select! {
                message = self.mailbox.recv() => match message {
                    Some(message) => {
                        self.last_activity = Instant::now();
                        Box::pin(self.on_message(message)).await;
                    }
                    None => break,
                },
                () = sleep_until(deadline), if deadline.is_some() => {
                    Box::pin(self.settle(now_ms())).await;
                }
                searched = async {
                    match self.thinking.as_mut() {
                        Some(thinking) => (&mut thinking.search).await,
                        None => std::future::pending().await,
                    }
                }, if self.thinking.is_some() => {
                    Box::pin(self.on_searched(searched.ok().flatten())).await;
                }
                () = tokio::time::sleep(idle_check), if self.outbox.receiver_count() == 0 => {}
                _ = shutdown.changed() => {}
            }
            self.think();
            if self.unloadable() && self.hub.unload(&self.handle, || self.mailbox.is_empty()) {
                break;
            }
        }
        // Unregistered (or stopping): refuse whatever still queued, so its
        // senders ask the hub again.
        self.mailbox.close();
        while self.mailbox.try_recv().is_ok() {}
        if let Some(thinking) = self.thinking.take() {
            thinking.search.abort();
        }
        self.hub.forget(&self.handle);
    }

    /// The moment the game's clock or first-move deadline must be checked.
    fn deadline(&self) -> Option<UnixMs> {
        if self.entry.row.status != GameStage::Playing {
            return None;
        }
        self.entry.game.next_deadline().map(UnixMs::from_millis)
    }

    /// When to look again whether the game can unload.
    fn idle_check(&self) -> Duration {
        if self.is_over() {
            Duration::ZERO
        } else {
            IDLE_UNLOAD.saturating_sub(self.last_activity.elapsed())
        }
    }

    fn is_over(&self) -> bool {
        self.entry.row.status == GameStage::Finished || self.entry.game.is_over()
    }

    /// Whether nothing keeps the game here: no socket, no search, and it is
    /// over or has been quiet for [`IDLE_UNLOAD`].
    fn unloadable(&self) -> bool {
        self.outbox.receiver_count() == 0
            && self.thinking.is_none()
            && (self.is_over() || self.last_activity.elapsed() >= IDLE_UNLOAD)
    }

    async fn on_message(&mut self, message: Message) {
        match message {
            Message::Command {
                seat,
                command,
                now,
                reply,
            } => {
                let outcome = self.apply(seat, command, now).await;
                let _ = reply.send(outcome);
            }
            Message::Join { player, reply } => {
                let outcome = self.join(*player).await;
                let _ = reply.send(outcome);
            }
            Message::Inspect { look, fresh } => {
                if fresh && self.is_stale().await {
                    self.catch_up().await;
                }
                look(&self.entry);
            }
            Message::Connected(seat) => {
                let before = self.presence_now();
                for color in Color::ALL {
                    if seat.holds(color) {
                        *self.entry.connections.get_mut(color) += 1;
                    }
                }
                self.presence_changed(before);
            }
            Message::Disconnected(seat) => {
                let before = self.presence_now();
                self.disconnected(seat).await;
                self.presence_changed(before);
            }
            Message::PresenceElsewhere {
                node,
                present,
                asks,
            } => {
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
            Message::ResyncPresence => {
                let before = self.presence_now();
                self.entry.remote_presence.clear();
                self.announce_presence(true);
                self.presence_changed(before);
            }
            Message::ChangedElsewhere(notice) => self.changed_elsewhere(notice).await,
            Message::CheckTime => self.settle(now_ms()).await,
        }
    }

    /// This node's and every node's presence, to compare after a change.
    fn presence_now(&self) -> (ByColor<bool>, ByColor<bool>) {
        (self.entry.local_presence(), self.entry.presence())
    }

    /// After connections changed (`before` from [`Owner::presence_now`]):
    /// tells the other nodes if this node's presence changed, and this
    /// node's clients if a colour came or went everywhere.
    fn presence_changed(
        &mut self,
        (local_before, anywhere_before): (ByColor<bool>, ByColor<bool>),
    ) {
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
    /// and asks them for theirs).
    fn announce_presence(&self, asks: bool) {
        self.hub.announce_presence(PresenceNotice {
            node: self.hub.node_id(),
            game: self.id(),
            present: self.entry.local_presence(),
            asks,
        });
    }

    /// Runs `command` for the viewer holding `seat`.
    async fn apply(
        &mut self,
        seat: Seat,
        command: Command,
        now: UnixMs,
    ) -> Result<Applied, Refusal> {
        if seat == Seat::None {
            return Err(Refusal::NotAPlayer);
        }
        if self.entry.row.status == GameStage::Open {
            return Err(Refusal::NotStarted);
        }
        // Two attempts: a command lost to another node's change (the
        // compare-and-set failed and the game was reloaded) is tried once
        // more on the fresh game.
        let mut attempt = 0;
        let played = loop {
            attempt += 1;
            let color = self.entry.acting_color(seat);
            if let Command::Move { uci, ply } = &command
                && let Some(ack) = self.entry.replayed_move(color, *uci, *ply)
            {
                return Ok(ack);
            }
            let undo = Undo::before(&self.entry.game, &command);
            let mut events = self.clear_orphan_premoves(now).await;
            match run(
                &mut self.entry.game,
                self.entry.row.mode,
                color,
                &command,
                now,
            ) {
                Ok(more) => {
                    events.extend(more);
                    let played = match &command {
                        Command::Move { ply, .. } => move_version(&events, *ply, color),
                        _ => None,
                    };
                    let setter = matches!(command, Command::Premove { .. }).then_some(color);
                    match self.commit(events, undo, now, setter).await {
                        Ok(()) => break played,
                        Err(Refusal::Conflict) if attempt == 1 => {}
                        Err(refusal) => return Err(refusal),
                    }
                }
                Err(refusal) => {
                    // Refused by the rules: not even the cleared premoves stay.
                    self.undo(undo).await;
                    // A stale copy may refuse what the stored game allows.
                    if attempt == 1 && self.is_stale().await {
                        self.catch_up().await;
                        continue;
                    }
                    return Err(refusal);
                }
            }
        };
        let Command::Move { uci, ply } = command else {
            return Ok(Applied::Done);
        };
        match played {
            Some(version) => {
                self.hub.metrics().move_committed(now_ms().since(now));
                Ok(Applied::Ack { ply, uci, version })
            }
            // Settling the clock ended the game first: the move came too late.
            None => Err(Refusal::MoveTooLate),
        }
    }

    /// Whether the stored game moved past this copy. Never on SQLite: it has
    /// one node, and every change to a game that node hosts goes through
    /// this owner, so the copy is what is stored (a read per full state and
    /// per refused command, four for every game set up, saved).
    async fn is_stale(&self) -> bool {
        if !self.hub.store().is_postgres() {
            return false;
        }
        match self.hub.store().game_version(self.id()).await {
            Ok(Some(stored)) => stored != self.entry.row.version,
            Ok(None) => false,
            Err(error) => {
                tracing::warn!(%error, "reading a game's stored version failed");
                false
            }
        }
    }

    /// Clears premoves whose player is gone: set through a node that stopped,
    /// or through this node by a player with no socket left here.
    async fn clear_orphan_premoves(&mut self, now: UnixMs) -> Vec<Event> {
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
            Some(node) if node == self.hub.node_id() => *self.entry.connections.get(color) > 0,
            Some(node) => self.hub.is_node_alive(node).await,
            None => false,
        }
    }

    /// Applies what time and absent players decided: a flag, an overdue
    /// first move, premoves of players who are gone. Keeps the stored
    /// deadline right when nothing changed, so the sweeper does not come back.
    async fn settle(&mut self, now: UnixMs) {
        if self.entry.row.status != GameStage::Playing {
            return;
        }
        let undo = Undo::Rewind(self.entry.game.checkpoint());
        let mut events = self.clear_orphan_premoves(now).await;
        events.extend(self.entry.game.check_time(now.millis()));
        if events.is_empty() {
            let deadline = stored_deadline(&self.entry.game, self.entry.row.status);
            if deadline != self.entry.row.deadline_at {
                match self
                    .hub
                    .store()
                    .set_deadline(self.id(), self.entry.row.version, deadline)
                    .await
                {
                    Ok(true) => self.entry.row.deadline_at = deadline,
                    Ok(false) => self.catch_up().await,
                    Err(error) => tracing::warn!(%error, "storing a game's deadline failed"),
                }
            }
            return;
        }
        if let Err(refusal) = self.commit(events, undo, now, None).await {
            tracing::warn!(code = refusal.code(), "settling the clock failed");
            if refusal == Refusal::Unavailable {
                // Back off a little before the timer retries a failing store.
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }

    /// A socket of `seat` closed; the last one of a colour takes its
    /// premove with it.
    async fn disconnected(&mut self, seat: Seat) {
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
        if events.is_empty() {
            return;
        }
        if let Err(refusal) = self.commit(events, undo, now, None).await {
            tracing::warn!(
                code = refusal.code(),
                "clearing a premove on disconnect failed"
            );
        }
    }

    /// Stores the game's change (reached by `events`, already applied to the
    /// game; `undo` returns to the stored game) through the node's writer as
    /// a compare-and-set on the stored version, then broadcasts the events.
    /// When the change cannot be stored the game is returned to what is
    /// stored. `premove_setter` is the colour whose premove this node's
    /// socket just set.
    async fn commit(
        &mut self,
        events: Vec<Event>,
        undo: Undo,
        now: UnixMs,
        premove_setter: Option<Color>,
    ) -> Result<(), Refusal> {
        if events.is_empty() {
            return Ok(());
        }
        let next = &self.entry.game;
        let took_back = events
            .iter()
            .any(|event| matches!(event.kind, EventKind::TakeBack { .. }));
        let first_new = if took_back {
            next.moves().len()
        } else {
            undo.moves_before()
        };
        let new_moves: Vec<_> = (first_new..next.moves().len())
            .filter_map(|ply| stored::move_row(next, ply))
            .collect();
        // Only other nodes read the recent events, and they exist only on
        // Postgres: on SQLite the row need not carry (and rewrite) them.
        let mut recent = VecDeque::new();
        if self.hub.store().is_postgres() {
            recent = self.recent.clone();
            remember_recent(&mut recent, events.iter().cloned());
        }

        let mut row = self.entry.row.clone();
        row.status = status_of(next, row.status);
        row.result = next.result().map(|result| {
            serde_json::json!({ "winner": result.winner, "reason": result.reason.code() })
                .to_string()
        });
        row.state = stored::state_json(next);
        row.version = version_i64(next.version());
        row.updated_at = now;
        row.deadline_at = stored_deadline(next, row.status);
        row.recent_events = if recent.is_empty() {
            "[]".to_owned()
        } else {
            serde_json::to_string(&recent).unwrap_or_else(|_| "[]".to_owned())
        };
        row.premove_nodes = ByColor::new_with(|color| {
            if next.premove(color).is_none() {
                None
            } else if premove_setter == Some(color) {
                Some(self.hub.node_id())
            } else {
                *self.entry.row.premove_nodes.get(color)
            }
        });

        let rematch = events
            .iter()
            .any(|event| matches!(event.kind, EventKind::RematchAccepted { .. }))
            .then(|| next.rematch_spec())
            .flatten()
            .map(|spec| self.rematch_of(spec, now));
        if let Some((new_row, _)) = &rematch {
            row.rematch_id = Some(new_row.id);
        }
        // The change that ends the game settles its reward in the same
        // transaction: exactly once, within the daily cap.
        let settle = (self.entry.row.status != GameStage::Finished
            && row.status == GameStage::Finished)
            .then(|| next.result())
            .flatten();
        // Other nodes follow the change from its notice, unless it takes
        // moves back or starts a rematch (they reread those).
        let notice =
            (self.hub.store().is_postgres() && !took_back && rematch.is_none()).then(|| {
                ChangeNotice {
                    id: row.id,
                    version: row.version,
                    change: Some(GameChange {
                        from_version: self.entry.row.version,
                        white_id: row.white_id,
                        black_id: row.black_id,
                        status: row.status,
                        result: row.result.as_deref().map(Cow::Borrowed),
                        state: Cow::Borrowed(&row.state),
                        updated_at: row.updated_at,
                        deadline_at: row.deadline_at,
                        premove_nodes: row.premove_nodes,
                        moves: Cow::Borrowed(&new_moves),
                        events: Cow::Borrowed(&events),
                    }),
                }
                .to_json()
            });
        let write = GameWrite {
            row: row.clone(),
            expected_version: self.entry.row.version,
            keep_moves: took_back.then(|| u32::try_from(next.moves().len()).unwrap_or(u32::MAX)),
            new_moves,
            settle,
            rematch: rematch.as_ref().map(|(new_row, _)| new_row.clone()),
            notice,
        };
        let written = match self.hub.writer().write(write).await {
            Err(WriteError::InDoubt(error)) => self.outcome_of_failed_write(&row, error).await,
            written => written,
        };
        if !matches!(written, Ok(WriteOutcome::Written { .. })) {
            self.undo(undo).await;
        }
        match written {
            Ok(WriteOutcome::Written { reward }) => {
                if let Some(recorded) = reward {
                    let entry = recorded.entry();
                    tracing::info!(
                        account = %entry.account_id,
                        cents = entry.amount_cents,
                        status = entry.status.code(),
                        "reward settled"
                    );
                }
            }
            Ok(WriteOutcome::Conflict) => {
                self.catch_up().await;
                return Err(Refusal::Conflict);
            }
            Err(WriteError::Unavailable(_) | WriteError::InDoubt(_) | WriteError::Stopped) => {
                return Err(Refusal::Unavailable);
            }
            Err(WriteError::Busy) => return Err(Refusal::Busy),
        }

        self.entry.row = row;
        self.recent = recent;
        self.broadcast(events, now);
        if let Some((new_row, new_game)) = rematch {
            let players = ByColor {
                white: self.entry.players.black.clone(),
                black: self.entry.players.white.clone(),
            };
            self.hub.adopt(Entry::new(new_row, new_game, players));
        }
        Ok(())
    }

    /// A write whose commit failed may be stored all the same: the `COMMIT`
    /// went through and only its answer was lost with the connection. Asks
    /// the store (on another connection) which it was, so that a move is not
    /// refused although it was played: the row as written means stored.
    /// Anything else stays a refusal; if the write was stored after all and
    /// the store could not say so now, the next write's compare-and-set
    /// fails and the owner rereads the game.
    async fn outcome_of_failed_write(
        &self,
        attempted: &GameRow,
        error: String,
    ) -> Result<WriteOutcome, WriteError> {
        // Bounded: a database that stays away must not hold up the refusal.
        let stored =
            tokio::time::timeout(IN_DOUBT_CHECK, self.hub.store().game(attempted.id)).await;
        match stored {
            Ok(Ok(Some(stored))) if was_stored(&stored, attempted) => {
                tracing::warn!(
                    %error,
                    "a write reported as failed was stored all the same; going on with it"
                );
                Ok(WriteOutcome::Written { reward: None })
            }
            _ => Err(WriteError::Unavailable(error)),
        }
    }

    /// Returns the game to what is stored after a change that was not.
    async fn undo(&mut self, undo: Undo) {
        let undone = match undo {
            Undo::Rewind(checkpoint) => self.entry.game.rewind(checkpoint).is_ok(),
            Undo::Restore(game) => {
                self.entry.game = *game;
                true
            }
        };
        if !undone {
            tracing::error!("a change that was not stored could not be undone; rereading the game");
            self.reload(true).await;
        }
    }

    /// Sends `events` (already part of the game) to every socket, in order.
    fn broadcast(&mut self, events: Vec<Event>, now: UnixMs) {
        let entry = &mut self.entry;
        let situation = SharedSituation::of(&entry.game, entry.row.mode, entry.row.status, now);
        let mut rematch = None;
        for event in events {
            let public = match &event.kind {
                EventKind::RematchAccepted { .. } => {
                    rematch = entry.row.rematch_id;
                    rematch.map(|game_id| EventView::RematchStarted { game_id })
                }
                kind => public_event(kind),
            };
            let outgoing = Arc::new(Outgoing::Event {
                version: event.version,
                kind: event.kind,
                public,
                situation: Box::new(situation.clone()),
            });
            entry.remember(&outgoing);
            let _ = self.outbox.send(outgoing);
        }
        if let Some(game_id) = rematch {
            let _ = self.outbox.send(Arc::new(Outgoing::Redirect { game_id }));
        }
    }

    /// Brings the game up to date with the store after another node changed
    /// it (or a compare-and-set was lost), replaying the missed events to the
    /// sockets in order when the row still holds them all, else sending
    /// everyone a full state.
    async fn catch_up(&mut self) {
        self.reload(false).await;
    }

    /// [`Owner::catch_up`]; `always` replaces the game even when the stored
    /// version is the one held (the held game cannot be trusted).
    async fn reload(&mut self, always: bool) {
        let cached = self.entry.game.version();
        let before_status = self.entry.row.status;
        let row = match self.hub.store().game(self.id()).await {
            Ok(Some(row)) => row,
            Ok(None) => {
                tracing::error!("a hosted game's row vanished");
                return;
            }
            Err(error) => {
                tracing::error!(%error, "rereading a game failed");
                return;
            }
        };
        let seats_changed =
            row.white_id != self.entry.row.white_id || row.black_id != self.entry.row.black_id;
        if !always
            && !seats_changed
            && row.version == self.entry.row.version
            && row.status == before_status
        {
            return;
        }
        // A joined challenge starts a new game: everyone needs the full state.
        let seats_changed = seats_changed || before_status == GameStage::Open;
        if !always && !seats_changed && self.advance_to(&row).await {
            self.entry.row = row;
        } else {
            match self.hub.load_entry(self.id()).await {
                Ok(Some(fresh)) => {
                    let connections = self.entry.connections;
                    let remote_presence = std::mem::take(&mut self.entry.remote_presence);
                    self.entry = fresh;
                    self.entry.connections = connections;
                    self.entry.remote_presence = remote_presence;
                }
                Ok(None) => {
                    tracing::error!("a hosted game's row vanished");
                    return;
                }
                Err(error) => {
                    tracing::error!(%error, "rereading a game failed");
                    return;
                }
            }
        }
        let recent = parse_recent(&self.entry.row);
        // New seats make a new game: no replay, everyone gets the full state.
        let missed: Vec<Event> = if seats_changed {
            Vec::new()
        } else {
            recent
                .iter()
                .filter(|event| event.version > cached)
                .cloned()
                .collect()
        };
        self.recent = recent;
        self.replay_or_resync(cached, missed);
    }

    /// Another node committed a change, as `notice` says: follow it from
    /// the notice when it continues the game as held, else reread the game.
    async fn changed_elsewhere(&mut self, notice: Option<Box<ChangeNotice<'static>>>) {
        // A seat taken keeps the version and carries no change: reread.
        if let Some(notice) = notice
            && let ChangeNotice {
                version,
                change: Some(change),
                ..
            } = *notice
        {
            if version <= self.entry.row.version {
                // Already held: this node reread the row since.
                return;
            }
            if self.follow(change) {
                return;
            }
        }
        self.hub.metrics().remote_change_reread();
        self.catch_up().await;
    }

    /// Applies another node's `change` without reading the store, when it
    /// was made over the version held, with the seats held, and its moves
    /// continue the held ones; `false` (nothing changed) otherwise.
    fn follow(&mut self, change: GameChange<'static>) -> bool {
        let row = &self.entry.row;
        if row.version != change.from_version
            || row.status == GameStage::Open
            || row.white_id != change.white_id
            || row.black_id != change.black_id
        {
            return false;
        }
        let cached = self.entry.game.version();
        let held_moves = self.entry.game.moves().len();
        if change
            .moves
            .first()
            .is_some_and(|first| usize::try_from(first.ply).ok() != Some(held_moves))
        {
            return false;
        }
        if let Err(error) = stored::advance(&mut self.entry.game, &change.state, &change.moves) {
            tracing::warn!(%error, "a notice's change does not continue the held game");
            return false;
        }
        let row = &mut self.entry.row;
        row.status = change.status;
        row.result = change.result.map(Cow::into_owned);
        row.state = change.state.into_owned();
        row.version = version_i64(self.entry.game.version());
        row.updated_at = change.updated_at;
        row.deadline_at = change.deadline_at;
        row.premove_nodes = change.premove_nodes;
        let events = change.events.into_owned();
        remember_recent(&mut self.recent, events.iter().cloned());
        // Counted before the sockets hear of it (a test reads the count
        // once they have).
        self.hub.metrics().remote_change_followed();
        self.replay_or_resync(cached, events);
        true
    }

    /// Sends the sockets the events that brought the game from version
    /// `cached` to the one held, when `missed` is exactly those; else a full
    /// state.
    fn replay_or_resync(&mut self, cached: u64, missed: Vec<Event>) {
        let replayable = missed
            .first()
            .is_some_and(|event| event.version == cached + 1)
            && missed
                .last()
                .is_some_and(|event| event.version == self.entry.game.version());
        tracing::debug!(
            from = cached,
            to = self.entry.game.version(),
            replayable,
            "caught up with another node's change"
        );
        if replayable {
            self.broadcast(missed, now_ms());
        } else {
            self.entry.history.clear();
            let _ = self.outbox.send(Arc::new(Outgoing::Resync));
        }
    }

    /// Brings the held game up to the stored `row` reading only the moves
    /// played since; `false` (the game unchanged) when the stored moves do
    /// not continue the held ones (moves were taken back) or cannot be read.
    async fn advance_to(&mut self, row: &GameRow) -> bool {
        let held = self.entry.game.moves().len();
        // From the last held move: it must still be stored as it is held.
        let from = held.saturating_sub(1);
        let rows = match self.hub.store().moves_from(self.id(), from).await {
            Ok(rows) => rows,
            Err(error) => {
                tracing::warn!(%error, "reading a game's new moves failed");
                return false;
            }
        };
        let new = match self.entry.game.moves().last() {
            None => &rows[..],
            Some(last) => match rows.split_first() {
                Some((first, new)) if stored::is_move(first, last) => new,
                _ => return false,
            },
        };
        match stored::advance(&mut self.entry.game, &row.state, new) {
            Ok(()) => true,
            Err(error) => {
                tracing::warn!(%error, "the stored game does not continue the held one");
                false
            }
        }
    }

    /// Seats `player` in the empty seat; the game starts now (first-move
    /// deadlines count from here).
    async fn join(&mut self, player: PlayerRow) -> Result<Color, JoinError> {
        if self.entry.row.status != GameStage::Open {
            return Err(JoinError::Taken);
        }
        let color = if self.entry.players.white.is_none() {
            Color::White
        } else {
            Color::Black
        };
        let now = now_ms();
        let game = Game::new(
            self.entry.game.spec().clone(),
            *self.entry.game.settings(),
            now.millis(),
        );
        let state = stored::state_json(&game);
        let deadline = stored_deadline(&game, GameStage::Playing);
        let claim = SeatClaim {
            game: self.id(),
            white: color == Color::White,
            player: player.id,
            state: state.clone(),
            now,
            deadline_at: deadline,
            version: self.entry.row.version,
        };
        match self.hub.writer().claim_seat(claim).await {
            Ok(true) => {}
            Ok(false) => {
                self.catch_up().await;
                return Err(JoinError::Taken);
            }
            Err(error) => {
                // The claim may have committed with only the answer lost:
                // the stored row says.
                self.catch_up().await;
                if self.entry.players.get(color).as_ref().map(|p| p.id) == Some(player.id) {
                    return Ok(color);
                }
                return Err(error.into());
            }
        }
        let row = &mut self.entry.row;
        match color {
            Color::White => row.white_id = Some(player.id),
            Color::Black => row.black_id = Some(player.id),
        }
        row.status = GameStage::Playing;
        row.state = state;
        row.updated_at = now;
        row.deadline_at = deadline;
        *self.entry.players.get_mut(color) = Some(player);
        self.entry.game = game;
        self.entry.history.clear();
        let _ = self.outbox.send(Arc::new(Outgoing::Resync));
        Ok(color)
    }

    /// The rematch of this game (seats swapped) as a new row and game.
    fn rematch_of(&self, spec: chess_game::GameSpec, now: UnixMs) -> (GameRow, Game) {
        let row = &self.entry.row;
        let game = Game::new(spec, self.hub.settings_for(row.mode), now.millis());
        let new_row = GameRow {
            id: Uuid::new_v4(),
            mode: row.mode,
            white_id: row.black_id,
            black_id: row.white_id,
            computer_level: row.computer_level,
            time_control: row.time_control.clone(),
            status: GameStage::Playing,
            result: None,
            state: stored::state_json(&game),
            version: 0,
            rematch_of: Some(row.id),
            rematch_id: None,
            created_at: now,
            updated_at: now,
            deadline_at: stored_deadline(&game, GameStage::Playing),
            recent_events: "[]".to_owned(),
            premove_nodes: ByColor::default(),
        };
        (new_row, game)
    }

    /// Starts the engine if the computer is to move and no search runs.
    fn think(&mut self) {
        if self.thinking.is_some() {
            return;
        }
        let Some(input) = search_input(&self.entry) else {
            return;
        };
        let (ply, color) = (input.ply, input.turn);
        let search = tokio::task::spawn_blocking(move || input.search());
        self.thinking = Some(Thinking { ply, color, search });
    }

    /// Plays the engine's move, unless the game moved on meanwhile (a
    /// take-back): then the next search starts from the new position.
    async fn on_searched(&mut self, best: Option<Move>) {
        let Some(thinking) = self.thinking.take() else {
            return;
        };
        let Some(best) = best else {
            tracing::warn!(ply = thinking.ply, "the engine found no move");
            return;
        };
        if self.entry.game.ply() != thinking.ply || !self.entry.is_playing() {
            return;
        }
        let command = Command::Move {
            uci: best.to_uci(),
            ply: thinking.ply,
        };
        if let Err(refusal) = self
            .apply(Seat::of(thinking.color), command, now_ms())
            .await
        {
            tracing::info!(
                ply = thinking.ply,
                code = refusal.code(),
                "the engine's move was not played"
            );
            if matches!(refusal, Refusal::Unavailable | Refusal::Busy) {
                // Do not search in a loop against a failing or saturated store.
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

/// How a game returns to what is stored when a change applied to it could
/// not be stored (the database refused it or another node changed the game).
enum Undo {
    /// Rewind to a checkpoint: cheap, for every change but a take-back.
    Rewind(Checkpoint),
    /// Put back a copy of the whole game: a take-back removes history that a
    /// checkpoint does not keep.
    Restore(Box<Game>),
}

impl Undo {
    /// The way back from `command` about to run on `game`.
    fn before(game: &Game, command: &Command) -> Undo {
        match command {
            Command::Takeback => Undo::Restore(Box::new(game.clone())),
            _ => Undo::Rewind(game.checkpoint()),
        }
    }

    /// How many moves the game had before the change.
    fn moves_before(&self) -> usize {
        match self {
            Undo::Rewind(checkpoint) => checkpoint.moves(),
            Undo::Restore(game) => game.moves().len(),
        }
    }
}

/// The version of the event in which `color` played ply `ply`, if it did.
fn move_version(events: &[Event], ply: u32, color: Color) -> Option<u64> {
    events.iter().find_map(|event| match &event.kind {
        EventKind::Move {
            ply: played_ply,
            color: mover,
            ..
        } if *played_ply == ply && *mover == color => Some(event.version),
        _ => None,
    })
}

/// The deadline stored with a game in `status`: when a timer must look at it.
pub(super) fn stored_deadline(game: &Game, status: GameStage) -> Option<UnixMs> {
    if status != GameStage::Playing || game.is_over() {
        return None;
    }
    game.next_deadline().map(UnixMs::from_millis)
}

/// Adds `events` to the recent events kept for other nodes, dropping the
/// oldest beyond [`RECENT_EVENTS`].
fn remember_recent(recent: &mut VecDeque<Event>, events: impl IntoIterator<Item = Event>) {
    recent.extend(events);
    while recent.len() > RECENT_EVENTS {
        recent.pop_front();
    }
}

fn parse_recent(row: &GameRow) -> VecDeque<Event> {
    serde_json::from_str(&row.recent_events).unwrap_or_else(|error| {
        tracing::warn!(%error, game_id = %row.id, "unreadable recent events; other nodes will resync");
        VecDeque::new()
    })
}

async fn sleep_until(at: Option<UnixMs>) {
    let wait = at.map_or(Duration::ZERO, |at| at.since(now_ms()));
    tokio::time::sleep(wait).await;
}

/// What the engine needs to choose a move, copied out of the game.
struct SearchInput {
    level: Level,
    position: chess_rules::Position,
    history: Vec<u64>,
    remaining: Option<Duration>,
    increment: Duration,
    seed: u64,
    turn: Color,
    ply: u32,
}

impl SearchInput {
    /// The engine's move (blocking: run it off the async workers).
    fn search(self) -> Option<Move> {
        let mut engine = Engine::new(self.level, self.seed);
        let stop = AtomicBool::new(false);
        let limits = self.level.limits(self.remaining, self.increment);
        engine
            .search(&self.position, &self.history, limits, &stop)
            .best_move
    }
}

/// The search to run if the computer is to move in `entry`'s game.
fn search_input(entry: &Entry) -> Option<SearchInput> {
    if entry.row.mode != GameMode::Computer || !entry.is_playing() {
        return None;
    }
    let turn = entry.game.turn();
    let computer_moves = entry
        .players
        .get(turn)
        .as_ref()
        .is_some_and(|player| player.kind == PlayerKind::Computer);
    if !computer_moves {
        return None;
    }
    let level = entry
        .row
        .computer_level
        .and_then(|level| u8::try_from(level).ok())
        .and_then(Level::from_number)?;
    let ply = entry.game.ply();
    Some(SearchInput {
        level,
        position: entry.game.position().clone(),
        history: (0..ply)
            .filter_map(|i| entry.game.position_at(i).map(|p| p.zobrist_key()))
            .collect(),
        remaining: entry
            .game
            .remaining_ms(now_ms().millis())
            .map(|clocks| Duration::from_millis(*clocks.get(turn))),
        increment: Duration::from_millis(entry.game.time_control().increment_ms().unwrap_or(0)),
        // Different games and moves play differently; the game id keeps it reproducible.
        seed: u64::from(ply)
            ^ u64::try_from(entry.row.id.as_u128() & u128::from(u64::MAX)).unwrap_or(0),
        turn,
        ply,
    })
}

/// Whether `stored` is the row `attempted` wrote: the same version, state
/// and time (another node's change from the same version would differ in
/// its state or its time).
fn was_stored(stored: &GameRow, attempted: &GameRow) -> bool {
    stored.version == attempted.version
        && stored.updated_at == attempted.updated_at
        && stored.state == attempted.state
}

#[cfg(test)]
mod failed_writes {
    use super::*;
    use crate::games::model::GameMode;

    fn row(version: i64, state: &str, updated_at: i64) -> GameRow {
        GameRow {
            id: Uuid::nil(),
            mode: GameMode::Online,
            white_id: None,
            black_id: None,
            computer_level: None,
            time_control: "{}".to_owned(),
            status: GameStage::Playing,
            result: None,
            state: state.to_owned(),
            version,
            rematch_of: None,
            rematch_id: None,
            created_at: UnixMs::from_stored(0),
            updated_at: UnixMs::from_stored(updated_at),
            deadline_at: None,
            recent_events: "[]".to_owned(),
            premove_nodes: ByColor::default(),
        }
    }

    #[test]
    fn the_row_as_written_means_the_write_was_stored() {
        let attempted = row(8, r#"{"moves":["e2e4"]}"#, 1_000);
        assert!(was_stored(&attempted.clone(), &attempted));
    }

    #[test]
    fn the_version_before_or_another_change_means_it_was_not() {
        let attempted = row(8, r#"{"moves":["e2e4"]}"#, 1_000);
        let before = row(7, "{}", 900);
        assert!(!was_stored(&before, &attempted));
        let other_node = row(8, r#"{"moves":["d2d4"]}"#, 1_000);
        assert!(!was_stored(&other_node, &attempted));
        let same_move_later = row(8, r#"{"moves":["e2e4"]}"#, 1_001);
        assert!(!was_stored(&same_move_later, &attempted));
    }
}

#[cfg(test)]
mod footprint {
    use super::*;

    /// Tokio's bounded mpsc allocates its slots in blocks of 32 when the
    /// channel is created, so every live game pays 32 messages' worth for
    /// its mailbox even when nothing waits in it: rare big requests are
    /// boxed to keep that block small.
    #[test]
    fn an_empty_mailbox_stays_small() {
        let message = std::mem::size_of::<Message>();
        eprintln!(
            "Message {message} B (Command {} B, PlayerRow {} B), mailbox block {} B; \
             Outgoing {} B, SharedSituation {} B, Entry {} B, Game {} B, GameRow {} B, Owner {} B",
            std::mem::size_of::<Command>(),
            std::mem::size_of::<PlayerRow>(),
            32 * message,
            std::mem::size_of::<Outgoing>(),
            std::mem::size_of::<SharedSituation>(),
            std::mem::size_of::<Entry>(),
            std::mem::size_of::<Game>(),
            std::mem::size_of::<GameRow>(),
            std::mem::size_of::<Owner>(),
        );
        assert!(message <= 48, "a mailbox message is {message} bytes");
    }

    /// Every live game's task is allocated at this size for its whole life;
    /// the rare deep paths (a command, a catch-up) are boxed while they run.
    #[test]
    fn the_owner_task_is_small() {
        fn future_size<F: std::future::Future>(_make: impl Fn(Owner) -> F) -> usize {
            std::mem::size_of::<F>()
        }
        let task = future_size(Owner::run);
        eprintln!(
            "owner task future {task} B (Owner {} B)",
            std::mem::size_of::<Owner>()
        );
        assert!(task <= 3072, "the owner task is {task} bytes");
    }
}
