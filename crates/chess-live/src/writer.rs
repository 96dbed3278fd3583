//! The node's one writer: group commit for every live game.
//!
//! Game owners hand their changes to the writer and wait for the answer. The
//! writer commits whatever has queued up while its previous commit was running
//! in one transaction (at most [`MAX_BATCH`] items), then answers each owner.
//! Under light load a change is committed at once, alone; under heavy load
//! the batches grow by themselves, and one log sync serves many moves. No
//! owner acknowledges a move before the transaction holding it committed.
//!
//! Between the two, many games each moving now and then (people thinking),
//! the batches stay small: a commit ends before many moves have come in.
//! There the writer lingers, about a millisecond at most, for more
//! ([`WriterSettings::linger`]): fewer commits for the same moves, less CPU
//! and fewer log syncs, a little more latency for the first move of a batch.
//!
//! Setting up a game goes the same way: a new guest, a new game and a seat
//! taken in a challenge each ride in the next batch rather than paying a
//! commit (and on SQLite a wait for the one write connection) of their own,
//! so a burst of new games does not queue ahead of the moves.
//!
//! On a shared store the same transaction notifies the other nodes of the
//! games it changed (see [`crate::notice`]), so they hear of a change
//! exactly when it is committed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{Notify, mpsc, oneshot};
use uuid::Uuid;

use crate::notice::{GAMES_CHANNEL, game_notices};
use crate::rows::{GameRow, PlayerRow};
use crate::store::{
    Batch, BatchOutcome, GameStore, GameWrite, SeatClaim, StoreError, StoreErrorKind, WriteOutcome,
};
use crate::telemetry::Telemetry;

/// Most items (game changes, new players, new games, seats taken) in one
/// transaction: a commit's sync is paid once for all of them, and with the
/// batch's updates and moves sent as one statement each, a larger batch
/// costs little more than the rows themselves.
pub const MAX_BATCH: usize = 1024;

/// A batch with fewer items than this may wait for more (see
/// [`WriterSettings::linger`]); one this large already shares its commit
/// well enough.
pub const LINGER_BELOW: usize = 16;

/// The writer lingers only with at least this many games live on the node.
/// With fewer, most of them are in the batch already or are waiting for
/// their player's answer to the last ack: waiting would delay those moves
/// and bring few others (20 games played flat out lost 15% of their moves
/// per second to a linger without this bound).
pub const LINGER_MIN_LIVE_GAMES: usize = 4 * LINGER_BELOW;

/// How the node's writer batches.
#[derive(Clone, Copy, Debug)]
pub struct WriterSettings {
    /// Changes that may wait for the writer (at least one); past it a
    /// change is refused as busy.
    pub queue: usize,
    /// Longest wait for more items when a batch has fewer than
    /// [`LINGER_BELOW`] and at least [`LINGER_MIN_LIVE_GAMES`] games are
    /// live; zero commits every batch as soon as it is taken.
    pub linger: Duration,
}

/// Why a change was not stored.
#[derive(Clone, Debug, thiserror::Error)]
pub enum WriteError {
    /// The database could not be reached or refused the batch: nothing was
    /// stored; the client may send the command again.
    #[error("the database is unavailable: {0}")]
    Unavailable(String),
    /// The connection broke while the batch was being written: its `COMMIT`
    /// may have gone through with only the answer lost. The owner asks the
    /// store before it refuses (`Owner::outcome_of_failed_write`).
    #[error("the connection to the database broke during the commit: {0}")]
    InDoubt(String),
    /// The queue is full: the database is not keeping up. Nothing was
    /// stored; the client may send the command again.
    #[error("the writer's queue is full")]
    Busy,
    /// The writer has stopped (the server is shutting down).
    #[error("the server is shutting down")]
    Stopped,
}

/// Where the answer to one queued item goes.
type Reply<T, E> = oneshot::Sender<Result<T, E>>;

/// One item waiting for the next batch, with its reply.
///
/// Game changes, one per move, are nearly every item: they are kept inline
/// (boxing them would cost an allocation per move to save room in the
/// queue's slots, which is allocated as it fills).
#[expect(clippy::large_enum_variant, reason = "moves are the common item")]
enum Pending {
    Player(PlayerRow, Reply<(), StoreError>),
    Game(GameRow, Reply<(), StoreError>),
    Claim(SeatClaim, Reply<bool, StoreError>),
    Write(GameWrite, Reply<WriteOutcome, WriteError>),
}

/// A handle to the node's writer task.
#[derive(Clone, Debug)]
pub struct Writer {
    queue: mpsc::Sender<Pending>,
    stop: Arc<Notify>,
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pending::Player(player, _) => write!(f, "Pending::Player({})", player.id),
            Pending::Game(game, _) => write!(f, "Pending::Game({})", game.id),
            Pending::Claim(claim, _) => write!(f, "Pending::Claim({})", claim.game),
            Pending::Write(write, _) => write!(f, "Pending::Write({})", write.row.id),
        }
    }
}

impl Writer {
    /// Starts the writer of node `node` over `store`, batching as
    /// `settings` say (lingering only while `live_games` are many), and
    /// reporting to `telemetry`. It runs until [`Writer::stop`] (or until every
    /// handle is dropped).
    pub fn start(
        store: Arc<dyn GameStore>,
        node: Uuid,
        telemetry: Arc<dyn Telemetry>,
        live_games: LiveGames,
        settings: WriterSettings,
    ) -> (Writer, tokio::task::JoinHandle<()>) {
        let (queue, inbox) = mpsc::channel(settings.queue.max(1));
        let stop = Arc::new(Notify::new());
        let batch = Batcher {
            store,
            node,
            telemetry,
            live_games,
            linger: settings.linger,
        };
        let task = run_on_own_thread(run(batch, inbox, Arc::clone(&stop)));
        (Writer { queue, stop }, task)
    }

    /// How full the writer's queue is, as a share of its room (0 to 1):
    /// past 1 every change is refused `busy`.
    pub fn backlog(&self) -> f64 {
        let room = self.queue.max_capacity();
        let waiting = room.saturating_sub(self.queue.capacity());
        waiting as f64 / room.max(1) as f64
    }

    /// Commits what is queued, then stops: later writes are refused with
    /// [`WriteError::Stopped`].
    pub fn stop(&self) {
        self.stop.notify_one();
    }

    /// Commits `write` (with the changes of other games) and answers once
    /// the transaction committed.
    ///
    /// # Errors
    /// [`WriteError`] when nothing was stored; [`WriteError::Busy`] at once
    /// when the queue is full (waiting for room would only grow the lines in
    /// front of every game's owner).
    pub async fn write(&self, write: GameWrite) -> Result<WriteOutcome, WriteError> {
        let (reply, answer) = oneshot::channel();
        self.queue
            .try_send(Pending::Write(write, reply))
            .map_err(|error| match error {
                mpsc::error::TrySendError::Full(_) => WriteError::Busy,
                mpsc::error::TrySendError::Closed(_) => WriteError::Stopped,
            })?;
        answer.await.map_err(|_| WriteError::Stopped)?
    }

    /// Stores a new player (an existing id is left unchanged) in the next
    /// batch.
    ///
    /// # Errors
    /// The batch's failure, or an [unavailable](StoreErrorKind::Unavailable)
    /// error when the queue is full or the writer stopped: nothing was stored.
    pub async fn insert_player(&self, player: PlayerRow) -> Result<(), StoreError> {
        self.set_up(|reply| Pending::Player(player, reply)).await
    }

    /// Stores a new game in the next batch.
    ///
    /// # Errors
    /// As [`Writer::insert_player`].
    pub async fn insert_game(&self, game: GameRow) -> Result<(), StoreError> {
        self.set_up(|reply| Pending::Game(game, reply)).await
    }

    /// Takes a seat in an open challenge in the next batch: `false` if it
    /// was taken first.
    ///
    /// # Errors
    /// As [`Writer::insert_player`].
    pub async fn claim_seat(&self, claim: SeatClaim) -> Result<bool, StoreError> {
        self.set_up(|reply| Pending::Claim(claim, reply)).await
    }

    /// Queues the set-up item that `pending` makes of a reply, and waits
    /// for its answer.
    async fn set_up<T>(
        &self,
        pending: impl FnOnce(Reply<T, StoreError>) -> Pending,
    ) -> Result<T, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.queue
            .try_send(pending(reply))
            .map_err(|error| match error {
                mpsc::error::TrySendError::Full(_) => writer_unavailable("busy"),
                mpsc::error::TrySendError::Closed(_) => writer_unavailable("shutting down"),
            })?;
        answer
            .await
            .map_err(|_| writer_unavailable("shutting down"))?
    }
}

/// Runs the writer on a thread of its own, with a runtime of its own.
///
/// A batch is a handful of round trips to the database, and each answer
/// wakes the writer. On the server's runtime that wake-up waits behind every
/// socket task ready to run: at 1,000 games flat out a batch spent more time
/// queued for the runtime than in the database, and getting the connection
/// back from the pool (the driver returns it through a task of its own, after a
/// ping) cost 15 ms a batch alone on SQLite. On its own thread the writer
/// runs as soon as the database answers. On SQLite the batch is written on this thread itself, which
/// blocks while SQLite works (`store::sqlite_writer`); a Postgres connection
/// is driven by the runtime that opened it, so the store opens the writer's
/// lazily, here (`store::connect`).
///
/// The handle finishes when the thread's work does.
fn run_on_own_thread(
    work: impl std::future::Future<Output = ()> + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    let (finished, done) = oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("chess-writer".to_owned())
        .spawn(move || {
            match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime.block_on(work),
                Err(error) => tracing::error!(%error, "the writer's runtime did not start"),
            }
            let _ = finished.send(());
        });
    if let Err(error) = thread {
        tracing::error!(%error, "the writer's thread did not start");
    }
    // Also finishes if the thread panicked (the sender is dropped).
    tokio::spawn(async move {
        let _ = done.await;
    })
}

/// What the writer task needs to commit a batch.
struct Batcher {
    store: Arc<dyn GameStore>,
    node: Uuid,
    telemetry: Arc<dyn Telemetry>,
    live_games: LiveGames,
    /// See [`WriterSettings::linger`].
    linger: Duration,
}

async fn run(batcher: Batcher, mut inbox: mpsc::Receiver<Pending>, stop: Arc<Notify>) {
    let mut batch: Vec<Pending> = Vec::with_capacity(MAX_BATCH);
    loop {
        let received = tokio::select! {
            received = inbox.recv_many(&mut batch, MAX_BATCH) => received,
            () = stop.notified() => {
                inbox.close();
                0
            }
        };
        if received == 0 {
            break;
        }
        if batcher.lingers_over(batch.len()) {
            wait_for_more(&mut inbox, &mut batch, batcher.linger).await;
        }
        batcher.commit(std::mem::take(&mut batch)).await;
    }
    // Stopping: what was queued before the close is still committed.
    while inbox.recv_many(&mut batch, MAX_BATCH).await > 0 {
        batcher.commit(std::mem::take(&mut batch)).await;
    }
}

/// Adds to `batch` what arrives within `linger`, until it holds
/// [`LINGER_BELOW`] items. A stop asked meanwhile is seen right after
/// (`Notify` keeps it), and this batch is committed first.
async fn wait_for_more(
    inbox: &mut mpsc::Receiver<Pending>,
    batch: &mut Vec<Pending>,
    linger: Duration,
) {
    let until = tokio::time::Instant::now() + linger;
    while batch.len() < LINGER_BELOW {
        let room = MAX_BATCH - batch.len();
        match tokio::time::timeout_at(until, inbox.recv_many(batch, room)).await {
            // Closed, or the time is up.
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
}

/// The replies of a batch's items, in the batch's order.
#[derive(Default)]
struct Replies {
    players: Vec<Reply<(), StoreError>>,
    games: Vec<Reply<(), StoreError>>,
    claims: Vec<Reply<bool, StoreError>>,
    writes: Vec<Reply<WriteOutcome, WriteError>>,
}

/// Splits queued items into the batch to write and where its answers go.
fn split(pending: Vec<Pending>) -> (Batch, Replies) {
    let mut batch = Batch::default();
    let mut replies = Replies::default();
    for item in pending {
        match item {
            Pending::Player(player, reply) => {
                batch.players.push(player);
                replies.players.push(reply);
            }
            Pending::Game(game, reply) => {
                batch.games.push(game);
                replies.games.push(reply);
            }
            Pending::Claim(claim, reply) => {
                batch.claims.push(claim);
                replies.claims.push(reply);
            }
            Pending::Write(write, reply) => {
                batch.writes.push(write);
                replies.writes.push(reply);
            }
        }
    }
    (batch, replies)
}

/// The items of a batch paired again with their replies, to be written one
/// by one.
fn rejoin(batch: Batch, replies: Replies) -> impl Iterator<Item = Pending> {
    let players = batch
        .players
        .into_iter()
        .zip(replies.players)
        .map(|(player, reply)| Pending::Player(player, reply));
    let games = batch
        .games
        .into_iter()
        .zip(replies.games)
        .map(|(game, reply)| Pending::Game(game, reply));
    let claims = batch
        .claims
        .into_iter()
        .zip(replies.claims)
        .map(|(claim, reply)| Pending::Claim(claim, reply));
    let writes = batch
        .writes
        .into_iter()
        .zip(replies.writes)
        .map(|(write, reply)| Pending::Write(write, reply));
    players.chain(games).chain(claims).chain(writes)
}

impl Replies {
    /// Answers every item of a batch that committed.
    fn committed(self, outcome: BatchOutcome) {
        for reply in self.players.into_iter().chain(self.games) {
            let _ = reply.send(Ok(()));
        }
        for (reply, claimed) in self.claims.into_iter().zip(outcome.claimed) {
            let _ = reply.send(Ok(claimed));
        }
        for (reply, outcome) in self.writes.into_iter().zip(outcome.writes) {
            let _ = reply.send(Ok(outcome));
        }
    }

    /// Answers every item of a batch that failed with `error`.
    fn failed(self, error: StoreError) {
        let failure = if error.kind() == StoreErrorKind::InDoubt {
            WriteError::InDoubt(error.to_string())
        } else {
            WriteError::Unavailable(error.to_string())
        };
        for reply in self.writes {
            let _ = reply.send(Err(failure.clone()));
        }
        for reply in self.players.into_iter().chain(self.games) {
            let _ = reply.send(Err(error.clone()));
        }
        for reply in self.claims {
            let _ = reply.send(Err(error.clone()));
        }
    }
}

impl Batcher {
    /// Whether a batch of `items` waits for more before its commit (see
    /// [`WriterSettings::linger`]).
    fn lingers_over(&self, items: usize) -> bool {
        !self.linger.is_zero()
            && items < LINGER_BELOW
            && self.live_games.get() >= LINGER_MIN_LIVE_GAMES
    }

    /// Commits one batch and answers every owner in it.
    async fn commit(&self, pending: Vec<Pending>) {
        let started = std::time::Instant::now();
        let (batch, replies) = split(pending);
        // Only the changes that landed are announced: a notice carries the
        // change itself, which another node follows without rereading. A
        // seat taken changes the game without a new version: the other
        // nodes reread it all the same (its seats changed).
        let announce = |outcome: &BatchOutcome| {
            let written = batch
                .writes
                .iter()
                .zip(&outcome.writes)
                .filter(|(_, outcome)| **outcome == WriteOutcome::Written)
                .map(|(write, _)| (write.row.id, write.row.version, write.notice.as_deref()));
            let claimed = batch
                .claims
                .iter()
                .zip(&outcome.claimed)
                .filter(|(_, claimed)| **claimed)
                .map(|(claim, _)| (claim.game, claim.version, None));
            game_notices(self.node, written.chain(claimed))
        };
        match self
            .store
            .write_batch(&batch, GAMES_CHANNEL, &announce)
            .await
        {
            Ok(outcome) => {
                self.telemetry
                    .batch_committed(batch.writes.len(), started.elapsed(), outcome.path);
                self.telemetry.notices_sent(outcome.notices_sent);
                replies.committed(outcome);
            }
            // Unless the database is out of reach, one item may have broken
            // the batch (a constraint, a corrupt row): commit each alone so
            // the others are not refused for it.
            Err(error) if batch.len() > 1 && !is_out_of_reach(&error) => {
                tracing::warn!(%error, items = batch.len(), "a batch failed; writing its items one by one");
                for pending in rejoin(batch, replies) {
                    Box::pin(self.commit(vec![pending])).await;
                }
            }
            Err(error) => {
                self.telemetry.store_error(&error);
                tracing::error!(%error, items = batch.len(), "a batch could not be committed");
                replies.failed(error);
            }
        }
    }
}

/// Whether `error` means the database is out of reach, so that writing the
/// batch's items one by one would fail the same way, only slower.
fn is_out_of_reach(error: &StoreError) -> bool {
    matches!(
        error.kind(),
        StoreErrorKind::Unreachable | StoreErrorKind::InDoubt
    )
}

/// The error of a set-up item the writer could not take.
fn writer_unavailable(why: &str) -> StoreError {
    StoreError::new(
        StoreErrorKind::Unavailable,
        format!("the node's writer cannot take the write ({why})"),
    )
}

/// How many games the node hosts: the registry keeps it, the writer
/// lingers by it.
#[derive(Clone, Debug, Default)]
pub struct LiveGames(Arc<AtomicUsize>);

impl LiveGames {
    /// The node now hosts `count` games.
    pub fn set(&self, count: usize) {
        self.0.store(count, Ordering::Relaxed);
    }

    /// How many games the node hosts.
    pub fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}
