//! SQLite's group commit, driven in place on the writer's own thread.
//!
//! sqlx runs every SQLite connection on a worker thread of its own and
//! hands each statement, and each statement's result, across threads. A
//! batch written as one multi-statement text through it still woke the
//! node's writer and that worker some eighteen times each (a message per
//! statement's result), and its rows went in through temporary tables that
//! a second text, parsed anew for each batch size, filled and emptied every
//! time. The writer's thread has nothing else to do while its batch is
//! written, so it drives SQLite itself: a connection of its own (rusqlite,
//! over the same SQLite library sqlx links), one prepared statement per row,
//! kept prepared from batch to batch.
//!
//! Only batches that need nothing else are written here: new players, new
//! games, seats taken, and changes to games with their new moves. A batch
//! that takes moves back, starts a rematch or ends a game an account wins
//! is handed back (`Ok(None)`, nothing written) and goes statement by
//! statement through sqlx, where the reward ledger settles rewards (the
//! ledger's rules exist once). The node's other SQLite writes (sign-ups,
//! seeks, tokens...) use the sqlx writer connection; the caller holds that
//! connection, the node's one SQLite write at a time, while a batch is
//! written here, so the two never wait on each other in SQLite's busy
//! handler.
//!
//! The statements are SQLite's of [`crate::sql`], the ones the
//! statement-by-statement path runs through sqlx, bound from the same
//! declaration of their values (`crate::sql::columns!`): a row is written
//! alike whichever way its batch went. Only [`sqlite::UPDATE_PLAY`], the
//! narrow update a move needs, and the check for a winning account are
//! this path's alone.

use std::path::PathBuf;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension as _, TransactionBehavior};

use chess_live::{Batch, BatchOutcome, BatchPath, PlayerRow, WriteOutcome};

use crate::batch::{fits_one_go, settling_winners};
use crate::sql::{
    ClaimColumns, GameColumns, GameUpdate, MoveColumns, MoveInsert, NewGameColumns, PlayerColumns,
    sqlite,
};
use crate::wal::WRITER_AUTOCHECKPOINT_PAGES;
use crate::{Result, StoreError};

/// How long the connection waits for SQLite's write lock (held by another
/// process, or by a new pooled connection checking that it may write).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The connection's page cache, in KiB when negative (SQLite's default is
/// 2 MiB). Each batch touches a few pages per game in play (its row, its
/// index entries, its moves); with thousands of games those pages fall out
/// of a small cache between two moves of the same game and are read back
/// from the file every time.
const CACHE_SIZE: &str = "-32768";

/// Prepared statements kept: the batch's seven, and room.
const STATEMENT_CACHE: usize = 16;

/// The writer's own SQLite connection, opened when first needed and again
/// after a failure that may have left it unusable.
#[derive(Debug)]
pub struct SqliteWriter {
    path: PathBuf,
    connection: Option<Connection>,
}

impl SqliteWriter {
    /// A writer for the database file at `path` (opened by its first batch).
    pub(super) fn new(path: PathBuf) -> SqliteWriter {
        SqliteWriter {
            path,
            connection: None,
        }
    }

    /// Writes `batch` in one transaction; `None`, with nothing written, when
    /// it is not for this path (see the module's comment).
    ///
    /// # Errors
    /// The database's error; nothing of the batch is stored.
    pub(super) fn write(&mut self, batch: &Batch) -> Result<Option<BatchOutcome>> {
        let connection = self.connection()?;
        let written = write_in(connection, batch);
        if let Err(error) = &written
            && !keeps_connection(connection, error)
        {
            tracing::warn!(%error, "reopening the writer's SQLite connection after this failure");
            self.connection = None;
        }
        written.map_err(StoreError::from)
    }

    /// Runs `sql` on the connection (opening it if needed): for tests and
    /// tools that set a connection's pragmas on every connection the server
    /// writes with (a full disk made with `max_page_count`, say).
    ///
    /// # Errors
    /// The database's error.
    pub(super) fn execute_batch(&mut self, sql: &str) -> Result<()> {
        Ok(self.connection()?.execute_batch(sql)?)
    }

    /// Closes the connection: the next batch opens a new one.
    pub(super) fn close(&mut self) {
        self.connection = None;
    }

    fn connection(&mut self) -> Result<&mut Connection> {
        if self.connection.is_none() {
            self.connection = Some(open(&self.path)?);
        }
        // Just set when it was empty.
        self.connection
            .as_mut()
            .ok_or_else(|| StoreError::Corrupt("the writer's connection vanished".into()))
    }
}

/// Opens the writer's connection with the settings of the node's others
/// (`store::connect`): WAL, a sync at every commit, foreign keys, and the
/// writer's large page cache and rare own checkpoint (`store::wal`).
///
/// A file the server may not write is opened read-only by SQLite rather
/// than refused, and such a connection stays read-only after the file is
/// writable again: it is refused (`SQLITE_READONLY`, so `unavailable`), and
/// the next batch tries the file afresh.
fn open(path: &std::path::Path) -> Result<Connection> {
    let connection = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    if connection.is_readonly(rusqlite::MAIN_DB)? {
        return Err(StoreError::Sqlite(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_READONLY),
            Some(format!("{} can only be read", path.display())),
        )));
    }
    connection.busy_timeout(BUSY_TIMEOUT)?;
    connection.execute_batch(&format!(
        "pragma journal_mode = wal; pragma synchronous = full; pragma foreign_keys = on; \
         pragma cache_size = {CACHE_SIZE}; \
         pragma wal_autocheckpoint = {WRITER_AUTOCHECKPOINT_PAGES};"
    ))?;
    connection.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    Ok(connection)
}

/// Whether the connection may serve the next batch after `error`: yes when
/// SQLite refused the batch and rolled it back (a constraint, a full disk,
/// the lock held too long), no when it may be unusable or is still in a
/// transaction that could not be rolled back.
fn keeps_connection(connection: &Connection, error: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode;
    let refused = match error.sqlite_error_code() {
        Some(
            ErrorCode::ConstraintViolation
            | ErrorCode::DiskFull
            | ErrorCode::DatabaseBusy
            | ErrorCode::DatabaseLocked
            | ErrorCode::TooBig
            | ErrorCode::ReadOnly,
        ) => true,
        // Not an error of SQLite's (a value that would not convert): the
        // transaction was dropped, so rolled back.
        None => true,
        Some(_) => false,
    };
    refused && connection.is_autocommit()
}

/// The batch in one transaction on `connection`; a dropped transaction
/// rolls back, so an error or a hand-back leaves nothing written.
fn write_in(connection: &mut Connection, batch: &Batch) -> rusqlite::Result<Option<BatchOutcome>> {
    if !fits_one_go(batch) {
        return Ok(None);
    }
    let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    {
        // An account that wins here is paid by the ledger, statement by
        // statement: hand the batch back before anything is written.
        let mut kind_of = tx.prepare_cached(sqlite::PLAYER_KIND)?;
        for winner in settling_winners(&batch.writes) {
            let kind: Option<String> = kind_of.query_row([&winner], |row| row.get(0)).optional()?;
            if kind.as_deref() == Some("account") {
                return Ok(None);
            }
        }
    }
    let mut players: Vec<&PlayerRow> = batch.players.iter().collect();
    players.sort_by_key(|player| player.id);
    if !players.is_empty() {
        let mut insert = tx.prepare_cached(sqlite::INSERT_PLAYER)?;
        for player in players {
            PlayerColumns::execute_sqlite(player, &mut insert)?;
        }
    }
    if !batch.games.is_empty() {
        let mut insert = tx.prepare_cached(sqlite::INSERT_GAME)?;
        for game in &batch.games {
            NewGameColumns::execute_sqlite(game, &mut insert)?;
        }
    }
    let mut claimed = Vec::with_capacity(batch.claims.len());
    if !batch.claims.is_empty() {
        let mut claim_seat = tx.prepare_cached(sqlite::CLAIM_SEAT)?;
        for claim in &batch.claims {
            claimed.push(ClaimColumns::execute_sqlite(claim, &mut claim_seat)? == 1);
        }
    }
    let mut writes = Vec::with_capacity(batch.writes.len());
    if !batch.writes.is_empty() {
        let mut update_play = tx.prepare_cached(sqlite::UPDATE_PLAY)?;
        let mut update_game = tx.prepare_cached(sqlite::UPDATE_GAME)?;
        let mut insert_move = tx.prepare_cached(sqlite::INSERT_MOVE)?;
        for write in &batch.writes {
            let update = GameUpdate::of(write);
            // The two updates take the same values: the narrow one first.
            let updated = GameColumns::execute_sqlite(&update, &mut update_play)? == 1
                || GameColumns::execute_sqlite(&update, &mut update_game)? == 1;
            if !updated {
                // The stored version moved on: nothing of this change lands.
                writes.push(WriteOutcome::Conflict);
                continue;
            }
            for mv in &write.new_moves {
                MoveColumns::execute_sqlite(&MoveInsert::of(write.row.id, mv), &mut insert_move)?;
            }
            writes.push(WriteOutcome::Written);
        }
    }
    tx.commit()?;
    Ok(Some(BatchOutcome {
        claimed,
        writes,
        notices_sent: 0,
        path: BatchPath::OneStatement,
    }))
}
