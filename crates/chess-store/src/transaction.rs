//! A write transaction on either backend.

use sqlx::{PgConnection, Postgres, Sqlite};

use crate::{Backend, Pool, Result};

/// Statements that commit together or not at all: a game's change and the
/// reward its ending pays, a sign-up and its first session. Run statements
/// in it with [`with_conn!`] or its methods, then [`Transaction::commit`];
/// dropped without a commit, it rolls back.
///
/// On SQLite it takes the write lock when it begins (`BEGIN IMMEDIATE`):
/// a transaction that reads before it writes (the ledger reads the day's
/// total, then raises it) can then neither be overtaken by another writer
/// nor fail late with `SQLITE_BUSY` when its read lock would be upgraded.
/// SQLite runs one writer at a time anyway, so nothing is lost by it.
/// Postgres runs at its default isolation, read committed; the statements
/// themselves are written to be safe under it (row locks and conditional
/// updates, see [`crate::ledger`]).
#[derive(Debug)]
pub struct Transaction {
    tx: Backend<sqlx::Transaction<'static, Sqlite>, sqlx::Transaction<'static, Postgres>>,
}

impl Transaction {
    pub(super) async fn begin(pool: &Pool) -> Result<Transaction> {
        let tx = match pool {
            Backend::Sqlite(pool) => Backend::Sqlite(pool.begin_with("BEGIN IMMEDIATE").await?),
            Backend::Postgres(pool) => Backend::Postgres(pool.begin().await?),
        };
        Ok(Transaction { tx })
    }

    /// The open transaction, for [`with_conn!`].
    pub(super) fn backend(
        &mut self,
    ) -> Backend<&mut sqlx::Transaction<'static, Sqlite>, &mut sqlx::Transaction<'static, Postgres>>
    {
        self.tx.as_mut()
    }

    /// Makes every statement of the transaction permanent.
    ///
    /// # Errors
    /// The database error; then nothing of the transaction is stored.
    pub async fn commit(self) -> Result<()> {
        match self.tx {
            Backend::Sqlite(tx) => tx.commit().await?,
            Backend::Postgres(tx) => tx.commit().await?,
        }
        Ok(())
    }

    /// Undoes every statement of the transaction.
    ///
    /// # Errors
    /// The database error (the database rolls back anyway when the
    /// connection ends).
    pub async fn rollback(self) -> Result<()> {
        match self.tx {
            Backend::Sqlite(tx) => tx.rollback().await?,
            Backend::Postgres(tx) => tx.rollback().await?,
        }
        Ok(())
    }

    /// Sends each of `payloads` on Postgres channel `channel` when, and
    /// only if, the transaction commits (`NOTIFY` is transactional), in one
    /// statement however many there are; nothing on SQLite, which has one
    /// node.
    ///
    /// # Errors
    /// The database error.
    pub async fn notify(&mut self, channel: &str, payloads: &[String]) -> Result<()> {
        if let Backend::Postgres(tx) = &mut self.tx {
            pg_notify_all(&mut *tx, channel, payloads).await?;
        }
        Ok(())
    }
}

/// `NOTIFY channel, payload` for each of `payloads`, in one statement (none
/// when there are none).
pub(super) async fn pg_notify_all(
    conn: &mut PgConnection,
    channel: &str,
    payloads: &[String],
) -> Result<()> {
    if !payloads.is_empty() {
        sqlx::query("select pg_notify($1, payload) from unnest($2::text[]) as payload")
            .bind(channel)
            .bind(payloads)
            .execute(conn)
            .await?;
    }
    Ok(())
}
