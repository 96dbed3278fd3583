//! The node's one writer: group commit for every live game.
//!
//! Game owners hand their changes to the writer and wait for the answer. The
//! writer commits whatever has queued up while its previous commit was running
//! in one transaction (at most [`MAX_BATCH`] games), then answers each owner.
//! Under light load a change is committed at once, alone; under heavy load
//! the batches grow by themselves, and one log sync serves many moves. No
//! owner acknowledges a move before the transaction holding it committed.
//!
//! On Postgres the same transaction notifies the other nodes of the games it
//! changed (see [`super::notify`]), so they hear of a change exactly when it
//! is committed.

use std::sync::Arc;

use tokio::sync::{Notify, mpsc, oneshot};
use uuid::Uuid;

use super::notify::{GAMES_CHANNEL, game_notices};
use crate::metrics::Metrics;
use crate::store::{GameWrite, Store, StoreError, WriteOutcome};

/// Most games in one transaction: a commit's sync is paid once for all of
/// them, and with the batch's updates and moves sent as one statement each,
/// a larger batch costs little more than the rows themselves.
pub const MAX_BATCH: usize = 1024;

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

struct Pending {
    write: GameWrite,
    reply: oneshot::Sender<Result<WriteOutcome, WriteError>>,
}

/// A handle to the node's writer task.
#[derive(Clone, Debug)]
pub struct Writer {
    queue: mpsc::Sender<Pending>,
    stop: Arc<Notify>,
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("game", &self.write.row.id)
            .finish_non_exhaustive()
    }
}

impl Writer {
    /// Starts the writer of node `node` over `store`, with room for
    /// `queue` changes waiting (at least one). It runs until
    /// [`Writer::stop`] (or until every handle is dropped).
    pub fn start(
        store: Store,
        node: Uuid,
        metrics: Metrics,
        queue: usize,
    ) -> (Writer, tokio::task::JoinHandle<()>) {
        let (queue, inbox) = mpsc::channel(queue.max(1));
        let stop = Arc::new(Notify::new());
        let batch = Batcher {
            store,
            node,
            metrics,
        };
        let task = tokio::spawn(run(batch, inbox, Arc::clone(&stop)));
        (Writer { queue, stop }, task)
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
        let pending = Pending { write, reply };
        self.queue.try_send(pending).map_err(|error| match error {
            mpsc::error::TrySendError::Full(_) => WriteError::Busy,
            mpsc::error::TrySendError::Closed(_) => WriteError::Stopped,
        })?;
        answer.await.map_err(|_| WriteError::Stopped)?
    }
}

/// What the writer task needs to commit a batch.
struct Batcher {
    store: Store,
    node: Uuid,
    metrics: Metrics,
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
        batcher.commit(std::mem::take(&mut batch)).await;
    }
    // Stopping: what was queued before the close is still committed.
    while inbox.recv_many(&mut batch, MAX_BATCH).await > 0 {
        batcher.commit(std::mem::take(&mut batch)).await;
    }
}

impl Batcher {
    /// Commits one batch and answers every owner in it.
    async fn commit(&self, batch: Vec<Pending>) {
        let started = std::time::Instant::now();
        let (writes, replies): (Vec<GameWrite>, Vec<_>) = batch
            .into_iter()
            .map(|pending| (pending.write, pending.reply))
            .unzip();
        let notices = game_notices(
            self.node,
            writes.iter().map(|write| (write.row.id, write.row.version)),
        );
        match self
            .store
            .write_batch(&writes, GAMES_CHANNEL, &notices)
            .await
        {
            Ok(outcomes) => {
                self.metrics
                    .batch_committed(writes.len(), started.elapsed());
                if self.store.is_postgres() {
                    self.metrics
                        .notifications_sent(u64::try_from(notices.len()).unwrap_or(u64::MAX));
                }
                for (reply, outcome) in replies.into_iter().zip(outcomes) {
                    let _ = reply.send(Ok(outcome));
                }
            }
            Err(error) if writes.len() > 1 && !is_connection_failure(&error) => {
                // One write broke the batch (a constraint, a corrupt row):
                // commit each alone so the others are not refused for it.
                tracing::warn!(%error, games = writes.len(), "a batch failed; writing its games one by one");
                for (write, reply) in writes.into_iter().zip(replies) {
                    Box::pin(self.commit(vec![Pending { write, reply }])).await;
                }
            }
            Err(error) => {
                self.metrics.store_error(&error);
                tracing::error!(%error, games = writes.len(), "a batch could not be committed");
                let failure = if is_broken_mid_write(&error) {
                    WriteError::InDoubt(error.to_string())
                } else {
                    WriteError::Unavailable(error.to_string())
                };
                for reply in replies {
                    let _ = reply.send(Err(failure.clone()));
                }
            }
        }
    }
}

/// Whether `error` broke an open connection (so the batch's statements,
/// its `COMMIT` included, may have reached the database), as opposed to no
/// connection to be had or the database refusing the batch (rolled back).
fn is_broken_mid_write(error: &StoreError) -> bool {
    matches!(
        error,
        StoreError::Database(
            sqlx::Error::Io(_)
                | sqlx::Error::Tls(_)
                | sqlx::Error::Protocol(_)
                | sqlx::Error::WorkerCrashed
        )
    )
}

/// Whether `error` means the database is out of reach (so writing the
/// batch's games one by one would fail the same way, only slower).
fn is_connection_failure(error: &StoreError) -> bool {
    matches!(
        error,
        StoreError::Database(
            sqlx::Error::Io(_)
                | sqlx::Error::PoolTimedOut
                | sqlx::Error::PoolClosed
                | sqlx::Error::Tls(_)
                | sqlx::Error::Protocol(_)
                | sqlx::Error::WorkerCrashed
        )
    )
}
