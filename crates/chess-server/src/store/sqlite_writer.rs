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

use std::path::PathBuf;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension as _, TransactionBehavior, params};

use chess_live::{Batch, BatchOutcome, BatchPath, GameRow, PlayerRow, UnixMs, WriteOutcome};

use super::batch::{fits_one_go, settling_winners};
use super::wal::WRITER_AUTOCHECKPOINT_PAGES;
use super::{Result, StoreError};

/// How long the connection waits for SQLite's write lock (held by another
/// process, or by a new pooled connection checking that it may write).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The connection's page cache, in KiB when negative (SQLite's default is
/// 2 MiB). Each batch touches a few pages per game in play (its row, its
/// index entries, its moves); with thousands of games those pages fall out
/// of a small cache between two moves of the same game and are read back
/// from the file every time.
const CACHE_SIZE: &str = "-32768";

/// Prepared statements kept: the batch's nine, and room.
const STATEMENT_CACHE: usize = 16;

/// The statements of a batch, one row each. Each mirrors the sqlx statement
/// of the same name in `store/mod.rs` (`insert_player_query!`,
/// `insert_game_query!`, `claim_seat_query!`, `update_game_query!`) or in
/// `store/batch.rs` (the moves' insert): keep them in step.
mod sql {
    pub const PLAYER_KIND: &str = "select kind from players where id = ?1";
    pub const INSERT_PLAYER: &str = "insert into players (id, kind, name, created_at) \
        values (?1, ?2, ?3, ?4) on conflict (id) do nothing";
    pub const INSERT_GAME: &str = "insert into games (id, mode, white_id, black_id, \
        computer_level, time_control, status, result, state, version, rematch_of, rematch_id, \
        created_at, updated_at, deadline_at, recent_events, premove_nodes) \
        values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)";
    pub const CLAIM_WHITE: &str = "update games set white_id = ?2, state = ?3, \
        status = 'playing', updated_at = ?4, deadline_at = ?5 \
        where id = ?1 and white_id is null and status = 'open'";
    pub const CLAIM_BLACK: &str = "update games set black_id = ?2, state = ?3, \
        status = 'playing', updated_at = ?4, deadline_at = ?5 \
        where id = ?1 and black_id is null and status = 'open'";
    /// The compare-and-set of a change that keeps the game's seats, status,
    /// result and rematch (a move, an offer): it writes only the columns
    /// such a change changes, because SQLite rewrites an index entry
    /// whenever its column is assigned, even to the value it had. A change
    /// it leaves (zero rows: those columns changed, or the version moved
    /// on) goes to [`UPDATE_GAME`].
    pub const UPDATE_PLAY: &str = "update games set state = ?3, version = ?4, \
        updated_at = ?5, deadline_at = ?6, recent_events = ?7, premove_nodes = ?8 \
        where id = ?1 and version = ?2 and status = ?9 and white_id is ?10 \
        and black_id is ?11 and result is ?12 and rematch_id is ?13";
    pub const UPDATE_GAME: &str = "update games set white_id = ?3, black_id = ?4, status = ?5, \
        result = ?6, state = ?7, version = ?8, rematch_id = ?9, updated_at = ?10, \
        deadline_at = ?11, recent_events = ?12, premove_nodes = ?13 \
        where id = ?1 and version = ?2";
    pub const INSERT_MOVE: &str = "insert into moves (game_id, ply, uci, san, clock_ms, \
        played_at, record) values (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
}

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
        let mut kind_of = tx.prepare_cached(sql::PLAYER_KIND)?;
        for winner in settling_winners(&batch.writes) {
            let kind: Option<String> = kind_of.query_row([&winner], |row| row.get(0)).optional()?;
            if kind.as_deref() == Some("account") {
                return Ok(None);
            }
        }
    }
    let mut players: Vec<&PlayerRow> = batch.players.iter().collect();
    players.sort_by_key(|player| player.id);
    {
        let mut insert = tx.prepare_cached(sql::INSERT_PLAYER)?;
        for player in players {
            insert.execute(params![
                player.id.to_string(),
                player.kind.as_str(),
                player.name,
                player.created_at.to_stored(),
            ])?;
        }
    }
    if !batch.games.is_empty() {
        let mut insert = tx.prepare_cached(sql::INSERT_GAME)?;
        for game in &batch.games {
            insert_game(&mut insert, game)?;
        }
    }
    let mut claimed = Vec::with_capacity(batch.claims.len());
    for claim in &batch.claims {
        let mut update = tx.prepare_cached(if claim.white {
            sql::CLAIM_WHITE
        } else {
            sql::CLAIM_BLACK
        })?;
        let taken = update.execute(params![
            claim.game.to_string(),
            claim.player.to_string(),
            claim.state,
            claim.now.to_stored(),
            claim.deadline_at.map(UnixMs::to_stored),
        ])?;
        claimed.push(taken == 1);
    }
    let mut writes = Vec::with_capacity(batch.writes.len());
    {
        let mut update_play = tx.prepare_cached(sql::UPDATE_PLAY)?;
        let mut update_game = tx.prepare_cached(sql::UPDATE_GAME)?;
        let mut insert_move = tx.prepare_cached(sql::INSERT_MOVE)?;
        for write in &batch.writes {
            let game = &write.row;
            let id = game.id.to_string();
            let white_id = game.white_id.map(|id| id.to_string());
            let black_id = game.black_id.map(|id| id.to_string());
            let rematch_id = game.rematch_id.map(|id| id.to_string());
            let premove_nodes = game.premove_nodes_json();
            let deadline_at = game.deadline_at.map(UnixMs::to_stored);
            let mut updated = update_play.execute(params![
                id,
                write.expected_version,
                game.state,
                game.version,
                game.updated_at.to_stored(),
                deadline_at,
                game.recent_events,
                premove_nodes,
                game.status.as_str(),
                white_id,
                black_id,
                game.result,
                rematch_id,
            ])?;
            if updated == 0 {
                updated = update_game.execute(params![
                    id,
                    write.expected_version,
                    white_id,
                    black_id,
                    game.status.as_str(),
                    game.result,
                    game.state,
                    game.version,
                    rematch_id,
                    game.updated_at.to_stored(),
                    deadline_at,
                    game.recent_events,
                    premove_nodes,
                ])?;
            }
            if updated == 0 {
                // The stored version moved on: nothing of this change lands.
                writes.push(WriteOutcome::Conflict);
                continue;
            }
            for mv in &write.new_moves {
                insert_move.execute(params![
                    id,
                    mv.ply,
                    mv.uci,
                    mv.san,
                    mv.clock_ms,
                    mv.played_at.to_stored(),
                    mv.record,
                ])?;
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

fn insert_game(insert: &mut rusqlite::CachedStatement<'_>, game: &GameRow) -> rusqlite::Result<()> {
    insert.execute(params![
        game.id.to_string(),
        game.mode.as_str(),
        game.white_id.map(|id| id.to_string()),
        game.black_id.map(|id| id.to_string()),
        game.computer_level,
        game.time_control,
        game.status.as_str(),
        game.result,
        game.state,
        game.version,
        game.rematch_of.map(|id| id.to_string()),
        game.rematch_id.map(|id| id.to_string()),
        game.created_at.to_stored(),
        game.updated_at.to_stored(),
        game.deadline_at.map(UnixMs::to_stored),
        game.recent_events,
        game.premove_nodes_json(),
    ])?;
    Ok(())
}
