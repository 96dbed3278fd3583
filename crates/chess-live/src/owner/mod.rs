//! One task per live game: it owns the game's state and is the only code that
//! changes it. Everything else talks to it through its [`GameHandle`]:
//! connections, the registry and the server's routes send typed messages and
//! wait for a oneshot answer; the owner's one `select!` also handles the
//! game's clock and first-move deadlines, the computer's move, and changes
//! that other nodes made. A command's change is handed to the node's writer
//! (group commit) and acknowledged and broadcast only once it is committed
//! ([`commit`]).
//!
//! The owner gets what it needs as an [`OwnerContext`] (the store, the
//! writer, the node's directory of live nodes, its presence outbox), never
//! the registry that spawned it: it reports to the registry by message
//! ([`OwnerReport`]). It unloads itself when the game is over and nobody
//! watches it, or after a while with no connection: it closes its mailbox
//! (so the registry loads the game afresh for the next request) and reports
//! that it stopped. A timed game nobody hosts is still flagged on time: its
//! deadline is stored with every change and the registry's sweeper loads
//! games whose deadline passed.

mod catch_up;
mod commit;
mod computer;
mod entry;
mod handle;
mod presence;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use chess_game::{Event, FirstMoveDeadlines, Game, GameSettings, TakeBack};
use chess_rules::{ByColor, Color};
use tokio::sync::{broadcast, mpsc, watch};
use uuid::Uuid;

pub(crate) use entry::Entry;
use handle::Message;
pub use handle::{Freshness, GameHandle, Gone, JoinError};

pub(crate) use self::commit::stored_deadline;
use self::commit::{Undo, move_version};
use self::computer::Thinking;
use crate::clock::{Clock, UnixMs};
use crate::command::{Applied, Command, Refusal};
use crate::model::{GameMode, GameStage, Seat};
use crate::nodes::NodeDirectory;
use crate::notice::PresenceOutbox;
use crate::rows::{GameRow, PlayerRow};
use crate::store::{GameStore, SeatClaim};
use crate::stored;
use crate::telemetry::Telemetry;
use crate::view::Outgoing;
use crate::writer::Writer;

/// Messages that may wait for a busy owner.
const MAILBOX: usize = 64;
/// Broadcasts a slow connection may fall behind before it starts again
/// from a full state. The channel allocates every slot when the game loads,
/// so this costs about 32 bytes per slot in every live game; a connection
/// that keeps up is at most a few events behind.
const OUTBOX: usize = 32;
/// An unfinished game with no connection on this node is unloaded after this long.
pub const IDLE_UNLOAD: Duration = Duration::from_secs(60);

/// What an owner tells the registry that hosts it.
#[derive(Debug)]
pub(crate) enum OwnerReport {
    /// The owner behind `handle` stopped (unloaded, or the node stops).
    Stopped(GameHandle),
    /// A rematch was stored: host its game.
    Rematch(Box<Entry>),
}

/// What every owner of the node needs: shared by all of them.
#[derive(Debug)]
pub(crate) struct OwnerContext {
    pub store: Arc<dyn GameStore>,
    pub writer: Writer,
    /// Which nodes are alive, this one included.
    pub nodes: Arc<NodeDirectory>,
    /// This node's presence notices to the others (shared stores only).
    pub presence: Arc<PresenceOutbox>,
    /// Milliseconds each side has for its first move in online games on a
    /// clock.
    pub first_move_deadline_ms: u64,
    pub telemetry: Arc<dyn Telemetry>,
    pub reports: mpsc::UnboundedSender<OwnerReport>,
    pub shutdown: watch::Receiver<bool>,
    /// The node's time: every moment an owner reads and every wait for one.
    pub clock: Arc<dyn Clock>,
}

impl OwnerContext {
    /// This node's id.
    pub fn node(&self) -> Uuid {
        self.nodes.this_node()
    }

    /// The current moment on the node's clock.
    pub fn now(&self) -> UnixMs {
        self.clock.now()
    }

    /// Game rules for a game of `mode`: first-move deadlines only between
    /// two people on a clock.
    pub fn settings_for(&self, mode: GameMode) -> GameSettings {
        let deadline = (mode == GameMode::Online).then_some(self.first_move_deadline_ms);
        GameSettings {
            first_move_deadline_ms: FirstMoveDeadlines {
                ultra_bullet: deadline,
                bullet: deadline,
                blitz: deadline,
                rapid: deadline,
                classical: deadline,
                correspondence: None,
            },
            ..GameSettings::default()
        }
    }
}

/// The task owning one live game.
pub(crate) struct Owner {
    context: Arc<OwnerContext>,
    entry: Entry,
    /// The events the row keeps for other nodes, oldest first: kept up to
    /// date here (`entry.row.recent_events` is only what was last read).
    recent: VecDeque<Event>,
    mailbox: mpsc::Receiver<Message>,
    outbox: broadcast::Sender<Arc<Outgoing>>,
    handle: GameHandle,
    thinking: Option<Thinking>,
    /// When the owner last took a message, on the node's clock (so a test
    /// that moves the clock sees an idle game unload; a jump of the wall
    /// clock only moves an unload earlier or later).
    last_activity: UnixMs,
}

impl Owner {
    /// Starts the owner of `entry`; the handle that reaches it.
    pub(crate) fn spawn(context: Arc<OwnerContext>, entry: Entry) -> GameHandle {
        let span = tracing::info_span!("game", game_id = %entry.row.id);
        let (mailbox_sender, mailbox) = mpsc::channel(MAILBOX);
        let (outbox, _) = broadcast::channel(OUTBOX);
        let handle = GameHandle::new(entry.row.id, mailbox_sender, outbox.clone());
        let recent = catch_up::parse_recent(&entry.row);
        let last_activity = context.now();
        let owner = Owner {
            context,
            entry,
            recent,
            mailbox,
            outbox,
            handle: handle.clone(),
            thinking: None,
            last_activity,
        };
        tokio::spawn(tracing::Instrument::instrument(owner.run(), span));
        handle
    }

    fn id(&self) -> Uuid {
        self.entry.row.id
    }

    /// Whether the node is stopping.
    fn stopping(&self) -> bool {
        *self.context.shutdown.borrow()
    }

    fn store(&self) -> &dyn GameStore {
        self.context.store.as_ref()
    }

    /// Serves the game until it unloads or the node stops.
    async fn run(mut self) {
        let mut shutdown = self.context.shutdown.clone();
        if self.entry.row.mode == GameMode::Online && !self.is_over() {
            // Learn who is connected to this game on the other nodes.
            self.announce_presence(true);
        }
        // The deep paths (a command with its commit, a catch-up, a search's
        // move) are boxed while they run: their state would otherwise be
        // part of this task's future, which every live game holds for its
        // whole life (`footprint::the_owner_task_is_small`).
        // Loaded afresh: no connection is here yet, so a premove this node's
        // connections set, or a dead node's, is void.
        Box::pin(self.void_orphan_premoves(None)).await;
        Box::pin(self.settle(self.context.now())).await;
        self.think();
        loop {
            if *shutdown.borrow() {
                break;
            }
            let deadline = self.deadline();
            // Waits on the node's clock: an absent deadline leaves its
            // branch off (the wait is never polled).
            let deadline_passed = self
                .context
                .clock
                .sleep_until(deadline.unwrap_or(UnixMs::EPOCH));
            let idle_passed = self.context.clock.sleep_until(self.idle_check());
            tokio::select! {
                message = self.mailbox.recv() => match message {
                    Some(message) => {
                        self.last_activity = self.context.now();
                        Box::pin(self.on_message(message)).await;
                    }
                    None => break,
                },
                () = deadline_passed, if deadline.is_some() => {
                    Box::pin(self.settle(self.context.now())).await;
                }
                searched = async {
                    match self.thinking.as_mut() {
                        Some(thinking) => (&mut thinking.search).await,
                        None => std::future::pending().await,
                    }
                }, if self.thinking.is_some() => {
                    Box::pin(self.on_searched(searched.ok().flatten())).await;
                }
                () = idle_passed, if self.outbox.receiver_count() == 0 => {}
                _ = shutdown.changed() => {}
            }
            self.think();
            Box::pin(self.play_due_premove()).await;
            if self.unloadable() {
                break;
            }
        }
        if *shutdown.borrow() {
            // Before the game is let go: no other node may play the
            // premoves this node's connections set.
            Box::pin(self.void_local_premoves()).await;
        }
        // Closed first: from here on every sender learns the owner is gone
        // and the registry loads the game afresh for the next request. What
        // still queued is refused (its senders ask the registry again).
        self.mailbox.close();
        while self.mailbox.try_recv().is_ok() {}
        if let Some(thinking) = self.thinking.take() {
            thinking.search.abort();
        }
        let _ = self
            .context
            .reports
            .send(OwnerReport::Stopped(self.handle.clone()));
    }

    /// The moment the game's clock or first-move deadline must be checked.
    fn deadline(&self) -> Option<UnixMs> {
        if self.entry.row.status != GameStage::Playing {
            return None;
        }
        self.entry.game.next_deadline().map(UnixMs::from_millis)
    }

    /// When to look again whether the game can unload.
    fn idle_check(&self) -> UnixMs {
        if self.is_over() {
            UnixMs::EPOCH
        } else {
            self.last_activity.plus(IDLE_UNLOAD)
        }
    }

    fn is_over(&self) -> bool {
        self.entry.is_over()
    }

    /// Whether nothing keeps the game here: no connection, no search,
    /// nothing waiting in the mailbox, and it is over or has been quiet for
    /// [`IDLE_UNLOAD`].
    fn unloadable(&self) -> bool {
        self.outbox.receiver_count() == 0
            && self.thinking.is_none()
            && self.mailbox.is_empty()
            && (self.is_over() || self.context.now().since(self.last_activity) >= IDLE_UNLOAD)
    }

    async fn on_message(&mut self, message: Message) {
        match message {
            Message::Command {
                player,
                command,
                now,
                reply,
            } => {
                let seat = self.entry.seat_of(player);
                let outcome = self.apply(seat, command, now).await;
                let _ = reply.send(outcome);
            }
            Message::Join { player, reply } => {
                let outcome = self.join(*player).await;
                let _ = reply.send(outcome);
            }
            Message::Attach {
                player,
                connection,
                reply,
            } => {
                let seat = self.entry.seat_of(player);
                self.connected(connection, seat).await;
                let _ = reply.send(seat);
            }
            Message::Detach(connection) => self.disconnected(connection).await,
            Message::State {
                viewer,
                freshness,
                reply,
            } => {
                self.refresh(freshness).await;
                let _ = reply.send(Box::new(self.entry.state_for(viewer, self.context.now())));
            }
            Message::EventsAfter { version, reply } => {
                let _ = reply.send(self.entry.events_after(version));
            }
            Message::Snapshot { freshness, reply } => {
                self.refresh(freshness).await;
                let _ = reply.send(Box::new(self.entry.snapshot(self.context.now())));
            }
            Message::PresenceElsewhere {
                node,
                present,
                asks,
            } => self.presence_elsewhere(node, present, asks),
            Message::ResyncPresence => self.resync_presence(),
            Message::NodeGone(node) => {
                self.presence_elsewhere(node, ByColor::default(), false);
                self.void_orphan_premoves(Some(node)).await;
            }
            Message::ChangedElsewhere(notice) => self.changed_elsewhere(notice).await,
            Message::CheckTime => self.settle(self.context.now()).await,
        }
    }

    /// Catches up with the store first if `freshness` asks for it and the
    /// stored game moved past the held one.
    async fn refresh(&mut self, freshness: Freshness) {
        if freshness == Freshness::Stored && self.is_stale().await {
            self.catch_up().await;
        }
    }

    /// Runs `command` for the player holding `seat`.
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
        let (played, ply) = loop {
            attempt += 1;
            let color = self.entry.acting_color(seat);
            if let Command::Move { uci, ply } = &command
                && let Some(ack) = self.entry.replayed_move(color, *uci, *ply)
            {
                return Ok(ack);
            }
            // The ply a move is played at: the one it names, or the current one.
            let ply = match &command {
                Command::Move { ply, .. } => Some(*ply),
                Command::MoveNow { .. } => Some(self.entry.game.ply()),
                _ => None,
            };
            let undo = Undo::before(&self.entry.game, &command);
            // The opponent's premove is played with the move only if it is
            // this node's to play (and this node is not stopping: its
            // connections are closing); otherwise it is left due.
            let their_premove_here = !self.stopping() && self.entry.owns_premove(color.other());
            match run(
                &mut self.entry.game,
                self.entry.row.mode,
                color,
                &command,
                their_premove_here,
                now,
            ) {
                Ok(events) => {
                    let played = ply.and_then(|ply| move_version(&events, ply, color));
                    // A premove belongs to the connection that set it (were
                    // it not stored after all, the record matches nothing).
                    if let Command::Premove {
                        connection: Some(connection),
                        ..
                    } = &command
                        && let Some(premove) = self.entry.game.premove(color)
                    {
                        *self.entry.premove_owners.get_mut(color) = Some((*connection, premove));
                    }
                    match self.commit(events, undo, now).await {
                        Ok(()) => break (played, ply),
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
        let (Command::Move { uci, .. } | Command::MoveNow { uci }, Some(ply)) = (command, ply)
        else {
            return Ok(Applied::Done);
        };
        match played {
            Some(version) => {
                self.context
                    .telemetry
                    .move_committed(self.context.now().since(now));
                Ok(Applied::Ack { ply, uci, version })
            }
            // Settling the clock ended the game first: the move came too late.
            None => Err(Refusal::MoveTooLate),
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
        let events = self.entry.game.check_time(now.millis());
        if events.is_empty() {
            let deadline = stored_deadline(&self.entry.game, self.entry.row.status);
            if deadline != self.entry.row.deadline_at {
                match self
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
        if let Err(refusal) = self.commit(events, undo, now).await {
            tracing::warn!(code = refusal.code(), "settling the clock failed");
            if refusal == Refusal::Unavailable {
                // Back off a little before the timer retries a failing store.
                tokio::time::sleep(Duration::from_millis(200)).await;
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
        let now = self.context.now();
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
        match self.context.writer.claim_seat(claim).await {
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
        let game = Game::new(spec, self.context.settings_for(row.mode), now.millis());
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
}

/// Runs one command on `game` for `color`; a move plays the opponent's
/// premove after it only if `their_premove_here` (else it is left due).
fn run(
    game: &mut Game,
    mode: GameMode,
    color: Color,
    command: &Command,
    their_premove_here: bool,
    now: UnixMs,
) -> Result<Vec<Event>, Refusal> {
    // The game counts in plain milliseconds.
    let now = now.millis();
    let between_people = |feature: &'static str| {
        if mode == GameMode::Online {
            Ok(())
        } else {
            Err(Refusal::NotOnline { feature })
        }
    };
    let play = |game: &mut Game, uci, ply| {
        if their_premove_here {
            game.play(color, uci, ply, now)
        } else {
            game.play_leaving_premove(color, uci, ply, now)
        }
    };
    let events = match command {
        Command::Move { uci, ply } => play(game, *uci, Some(*ply))?,
        Command::MoveNow { uci } => play(game, *uci, None)?,
        Command::Premove { uci, charge_ms, .. } => {
            between_people("premoves")?;
            game.set_premove(
                color,
                uci.from(),
                uci.to(),
                uci.promotion(),
                u64::from(*charge_ms),
                now,
            )?
        }
        Command::CancelPremove => game.cancel_premove(color, now)?,
        Command::Resign => game.resign(color, now)?,
        Command::Berserk => game.berserk(color, now)?,
        Command::Abort => game.abort(now)?,
        Command::DrawOffer => {
            between_people("draw offers")?;
            game.offer_draw(color, now)?
        }
        Command::DrawAccept => {
            between_people("draw offers")?;
            game.accept_draw(color, now)?
        }
        Command::DrawDecline => {
            between_people("draw offers")?;
            game.decline_draw(color, now)?
        }
        Command::DrawWithdraw => {
            between_people("draw offers")?;
            game.withdraw_draw(color, now)?
        }
        Command::AnswerDraw { yes } => {
            between_people("draw offers")?;
            match (*yes, game.draw_offer()) {
                (true, Some(offerer)) if offerer != color => game.accept_draw(color, now)?,
                (true, None) => game.offer_draw(color, now)?,
                (false, Some(offerer)) if offerer != color => game.decline_draw(color, now)?,
                (false, Some(_)) => game.withdraw_draw(color, now)?,
                // Yes to one's own offer, no to nothing: nothing to say.
                (true, Some(_)) | (false, None) => Vec::new(),
            }
        }
        Command::RematchOffer => {
            let mut events = game.offer_rematch(color, now)?;
            // One person holds both seats, or the other seat is the computer,
            // which always agrees: the offer is accepted at once.
            if mode != GameMode::Online && game.rematch_spec().is_none() {
                events.extend(game.accept_rematch(color.other(), now)?);
            }
            events
        }
        Command::RematchAccept => game.accept_rematch(color, now)?,
        Command::RematchDecline => game.decline_rematch(color, now)?,
        Command::RematchWithdraw => game.withdraw_rematch(color, now)?,
        Command::Takeback => {
            let which = match mode {
                GameMode::Computer => TakeBack::ToTurnOf(color),
                GameMode::Local | GameMode::Online => TakeBack::LastMove,
            };
            game.take_back(which, now)?
        }
    };
    Ok(events)
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
             Outgoing {} B, Entry {} B, Game {} B, GameRow {} B, Owner {} B",
            std::mem::size_of::<Command>(),
            std::mem::size_of::<PlayerRow>(),
            32 * message,
            std::mem::size_of::<Outgoing>(),
            std::mem::size_of::<Entry>(),
            std::mem::size_of::<Game>(),
            std::mem::size_of::<GameRow>(),
            std::mem::size_of::<Owner>(),
        );
        assert!(message <= 56, "a mailbox message is {message} bytes");
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
