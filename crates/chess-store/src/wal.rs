//! SQLite's write-ahead log copied back into the database file beside the
//! writer, not in its way.
//!
//! A committed page lives in the log (`-wal`) until a checkpoint copies it
//! into the database file and syncs that file. SQLite checkpoints by itself
//! in whichever connection's commit takes the log past 1,000 pages: always
//! the node's writer, which then copies thousands of pages and waits for
//! the file's sync before that commit returns and its moves are
//! acknowledged, every few batches. The [`Checkpointer`] does that work on
//! another connection instead, after the writer's commits, while the writer
//! goes on with the next batch (a passive checkpoint takes no lock a writer
//! needs). The writer keeps a checkpoint of its own past
//! [`WRITER_AUTOCHECKPOINT_PAGES`], which then finds little left to copy: a
//! log that is always being written to only starts again from its beginning
//! when a write transaction begins with every page of it copied, and only
//! the writer can see that moment.

use std::time::Duration;

use sqlx::Row as _;
use sqlx::SqlitePool;
use tokio::sync::mpsc;

use crate::{Backend, Result, Store};

/// How many pages the writer's own connection lets its log grow to before
/// its commit checkpoints, as SQLite does after 1,000 by default (see the
/// module's comment). With the [`Checkpointer`] keeping up, that checkpoint
/// copies what came since the last background one and lets the log start
/// over; without it (a store with no writer running) the log still stays
/// under about 40 MiB.
pub(super) const WRITER_AUTOCHECKPOINT_PAGES: &str = "10000";

/// The least time between two background checkpoints. Each one syncs the
/// database file, and a page the batches rewrote many times meanwhile (a
/// game's row, a page of its moves) is copied once: a longer pause copies
/// less, a shorter one leaves less for the writer's own checkpoint.
const CHECKPOINT_PAUSE: Duration = Duration::from_millis(100);

/// What one checkpoint did, as `pragma wal_checkpoint` answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalCheckpoint {
    /// The checkpoint could not run (another one was running).
    pub busy: bool,
    /// Pages in the log.
    pub log_pages: i64,
    /// Pages of the log now copied into the database file.
    pub copied_pages: i64,
}

impl Store {
    /// Copies the SQLite log's committed pages into the database file, as
    /// far as the open read transactions allow, without waiting for any
    /// lock (`pragma wal_checkpoint(passive)`). `None` on Postgres.
    ///
    /// # Errors
    /// The database error.
    pub async fn checkpoint_wal(&self) -> Result<Option<WalCheckpoint>> {
        match &self.pool {
            Backend::Sqlite(pool) => checkpoint(pool).await.map(Some),
            Backend::Postgres(_) => Ok(None),
        }
    }
}

/// One passive checkpoint on a connection of `pool`.
async fn checkpoint(pool: &SqlitePool) -> Result<WalCheckpoint> {
    let row = sqlx::query("pragma wal_checkpoint(passive)")
        .fetch_one(pool)
        .await?;
    Ok(WalCheckpoint {
        busy: row.try_get::<i64, _>(0)? != 0,
        log_pages: row.try_get(1)?,
        copied_pages: row.try_get(2)?,
    })
}

/// Runs background checkpoints of an SQLite store's log after its commits
/// (see the module's comment). The task ends when the checkpointer is
/// dropped with the last clone of its store.
#[derive(Debug)]
pub(super) struct Checkpointer {
    commits: mpsc::Sender<()>,
}

impl Store {
    /// Starts checkpointing the SQLite log after the group commit's batches
    /// (see the module's comment), telling `checkpointed` of each one (the
    /// server counts them in its metrics); nothing on Postgres, whose server
    /// checkpoints by itself, or when started already.
    pub fn start_checkpoints(&self, checkpointed: impl Fn(WalCheckpoint) + Send + 'static) {
        if let Backend::Sqlite(pool) = &self.pool {
            let _ = self
                .checkpointer
                .get_or_init(|| Checkpointer::start(pool.clone(), checkpointed));
        }
    }

    /// Says that a batch committed: its pages are to be copied.
    pub(super) fn batch_committed(&self) {
        if let Some(checkpointer) = self.checkpointer.get() {
            checkpointer.committed();
        }
    }
}

impl Checkpointer {
    /// Starts checkpointing the log of the database `pool` reaches. The
    /// task holds the pool, not the store, so that it ends with the store.
    fn start(
        pool: SqlitePool,
        checkpointed: impl Fn(WalCheckpoint) + Send + 'static,
    ) -> Checkpointer {
        // One waiting signal is enough: commits while a checkpoint runs are
        // all covered by the next one.
        let (commits, mut committed) = mpsc::channel(1);
        tokio::spawn(async move {
            while committed.recv().await.is_some() {
                // The store closed (the server is stopping): the last
                // connection to close checkpoints by itself.
                if pool.is_closed() {
                    return;
                }
                match checkpoint(&pool).await {
                    Ok(checkpoint) => checkpointed(checkpoint),
                    Err(_) if pool.is_closed() => return,
                    // The writer's own checkpoint still bounds the log.
                    Err(error) => tracing::warn!(%error, "a checkpoint of the SQLite log failed"),
                }
                tokio::time::sleep(CHECKPOINT_PAUSE).await;
            }
        });
        Checkpointer { commits }
    }

    /// Says that a transaction committed: its pages are to be copied.
    fn committed(&self) {
        // Full: a checkpoint is already due and will copy these pages too.
        let _ = self.commits.try_send(());
    }
}
