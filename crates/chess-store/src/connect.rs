//! Opening the database named by a URL and bringing its schema up to date.

use std::str::FromStr;
use std::time::Duration;

use sqlx::Connection;
use sqlx::migrate::MigrateDatabase;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::{Backend, Store, StoreError};

/// Connects to `database_url` (`sqlite://...` or `postgres://...`), creating an
/// SQLite file and its folder when missing, and applies the migrations.
///
/// # Errors
/// [`StoreError::UnsupportedUrl`] for another scheme; a connection, folder or
/// migration failure.
pub async fn connect(database_url: &str) -> Result<Store, StoreError> {
    if database_url.starts_with("sqlite:") {
        let options = SqliteConnectOptions::from_str(database_url)?
            .create_if_missing(true)
            // WAL lets readers work while a move is being written; FULL syncs
            // the log at every commit, so an acknowledged move survives a power
            // loss too (group commit makes that one sync per batch, not per move).
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(SQLITE_BUSY_TIMEOUT);
        if let Some(folder) = options.get_filename().parent()
            && !folder.as_os_str().is_empty()
        {
            std::fs::create_dir_all(folder)?;
        }
        let pool = sqlite_pool(8).connect_with(options.clone()).await?;
        sqlx::migrate!("../../migrations/sqlite").run(&pool).await?;
        // The connection of the node's SQLite writes other than the group
        // commit's (sign-ups, seeks, ...), and of the rare batches written
        // statement by statement; holding it is the node's one SQLite write
        // at a time (`store::sqlite_writer`).
        let writer = sqlite_pool(1)
            .after_connect(|connection, _| Box::pin(refuse_read_only(connection)))
            .connect_with(options.clone().pragma(
                "wal_autocheckpoint",
                crate::wal::WRITER_AUTOCHECKPOINT_PAGES,
            ))
            .await?;
        // The group commit's own connection; none for a database in memory,
        // which only sqlx's connections share.
        let in_memory = database_url.contains(":memory:") || database_url.contains("mode=memory");
        let sqlite_writer = (!in_memory).then(|| {
            std::sync::Arc::new(std::sync::Mutex::new(
                crate::sqlite_writer::SqliteWriter::new(options.get_filename().to_path_buf()),
            ))
        });
        Ok(Store {
            pool: Backend::Sqlite(pool),
            writer: Backend::Sqlite(writer),
            held_writer: crate::HeldWriter::default(),
            sqlite_writer,
            checkpointer: std::sync::Arc::default(),
            outbox_wake: std::sync::Arc::default(),
            platform_accounts_only: false,
            commit_observer: std::sync::Arc::default(),
        })
    } else if database_url.starts_with("postgres:") || database_url.starts_with("postgresql:") {
        // Like the SQLite file, a missing database is created on start.
        if !sqlx::Postgres::database_exists(database_url).await? {
            sqlx::Postgres::create_database(database_url).await?;
        }
        // An acknowledged move must survive the database server's power loss:
        // insist on synchronous commits even if the server's default says
        // otherwise (group commit makes that one WAL flush per batch).
        let options =
            PgConnectOptions::from_str(database_url)?.options([("synchronous_commit", "on")]);
        // The shared pool keeps the plans of its prepared statements, as
        // Postgres does by default: most are key lookups (a player, a game's
        // version, for every request and socket), planned once per
        // connection rather than at every execution as under forced custom
        // plans (planning made the pooled reads about a third of Postgres's
        // CPU per move at 1,000 games). A key lookup's kept plan uses its index whatever the
        // table's size when it was made; the lists whose plan depends on
        // it (a player's games, the games due) are planned at every call
        // (`persistent(false)`).
        let pool = postgres_pool(16).connect_with(options.clone()).await?;
        sqlx::migrate!("../../migrations/postgres")
            .run(&pool)
            .await?;
        // Opened by its first user, the node's writer, on the writer's own
        // runtime: a Postgres connection is driven by the runtime that
        // opened it (see `chess_live::writer`). Its statement-by-statement batches
        // lock and update games by arrays of ids, and a generic plan made
        // while games was small (a new database) scanned the whole table for
        // every batch long after it grew: it plans each execution for the
        // table as it is. (`chess_commit_batch` keeps its own plans; see its
        // migrations.)
        let writer = postgres_pool(1)
            .connect_lazy_with(options.options([("plan_cache_mode", "force_custom_plan")]));
        Ok(Store {
            pool: Backend::Postgres(pool),
            writer: Backend::Postgres(writer),
            held_writer: crate::HeldWriter::default(),
            sqlite_writer: None,
            checkpointer: std::sync::Arc::default(),
            outbox_wake: std::sync::Arc::default(),
            platform_accounts_only: false,
            commit_observer: std::sync::Arc::default(),
        })
    } else {
        Err(StoreError::UnsupportedUrl(database_url.to_owned()))
    }
}

/// A server's claim on its SQLite database, held for as long as it runs: an
/// exclusive `flock` on a file beside the database (its name and `-lock`),
/// which the kernel drops with the process, however it ends.
///
/// SQLite serves one node: nodes hear of each other's changes through
/// Postgres's notifications, and on SQLite a node takes the games it hosts
/// as stored without asking the file (`games::owner`). A second server on
/// the same database would serve stale games and never see the other's
/// moves, so it is refused at start instead.
///
/// The lock is not taken on the database file itself: closing any
/// descriptor of a file drops every POSIX lock the process holds on it,
/// SQLite's own included, so a claim released while this process still had
/// the database open (a test starting the server again) would have taken
/// SQLite's locks with it.
#[derive(Debug)]
pub struct SqliteClaim {
    _lock: std::fs::File,
}

/// Claims the SQLite database of `database_url` for this server, making its
/// lock file (and the folder) when missing; `None` for Postgres and
/// in-memory databases. Other connections to the database are not
/// affected.
///
/// # Errors
/// [`StoreError::InUse`] when another server holds it;
/// [`StoreError::Claim`] when the lock file cannot be made or locked.
pub fn claim_sqlite_file(database_url: &str) -> Result<Option<SqliteClaim>, StoreError> {
    if !database_url.starts_with("sqlite:")
        || database_url.contains(":memory:")
        || database_url.contains("mode=memory")
    {
        return Ok(None);
    }
    let options = SqliteConnectOptions::from_str(database_url)?;
    let database = options.get_filename().to_path_buf();
    let mut name = database.as_os_str().to_owned();
    name.push("-lock");
    let path = std::path::PathBuf::from(name);
    let claim_error = |source| StoreError::Claim {
        path: path.clone(),
        source,
    };
    if let Some(folder) = path.parent()
        && !folder.as_os_str().is_empty()
    {
        std::fs::create_dir_all(folder).map_err(claim_error)?;
    }
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(claim_error)?;
    match lock.try_lock() {
        Ok(()) => Ok(Some(SqliteClaim { _lock: lock })),
        Err(std::fs::TryLockError::WouldBlock) => Err(StoreError::InUse(database)),
        Err(std::fs::TryLockError::Error(source)) => Err(claim_error(source)),
    }
}

/// How long an SQLite connection waits for another one's write lock before
/// its statement fails with `SQLITE_BUSY`.
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Longest wait for a pooled connection: a request (or a batch) gets its
/// `unavailable` after this, not after sqlx's default 30 s.
const POOL_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

/// The options of an SQLite pool of at most `connections` connections.
fn sqlite_pool(connections: u32) -> SqlitePoolOptions {
    SqlitePoolOptions::new()
        .max_connections(connections)
        // The pool retries a connection it cannot open (see
        // `refuse_read_only`) until this runs out.
        .acquire_timeout(POOL_ACQUIRE_TIMEOUT)
        // An SQLite connection is a file handle in this process: it cannot
        // die idle as a network connection can, so it is not pinged (a
        // round trip to its worker thread) every time it is handed out.
        // sqlx still pings it when it comes back, which also makes sure a
        // rollback it queued has run.
        .test_before_acquire(false)
        // When a COMMIT fails (a full disk: SQLite writes its log at
        // commit and then rolls the transaction back itself), sqlx keeps
        // counting the transaction as open on that connection, and every
        // later `begin` on it fails. Such a connection is closed rather
        // than handed out (the pool pings a connection when it comes
        // back, so a rollback still queued has run by now).
        .before_acquire(|connection, _| {
            Box::pin(async move { Ok(!connection.is_in_transaction()) })
        })
        // SQLite opens a file it may not write (`chattr +i`, a read-only
        // mount, its permissions) read-only instead of failing, and such
        // a connection stays read-only after the file is writable again:
        // in the pool it would refuse every write it is given until the
        // pool retires it. A new connection is therefore refused when it
        // cannot write; the request waiting for it gets the store's
        // `SQLITE_READONLY` (`unavailable`), and the next one tries to
        // open the file afresh.
        .after_connect(|connection, _| Box::pin(refuse_read_only(connection)))
}

/// The options of a Postgres pool of at most `connections` connections.
fn postgres_pool(connections: u32) -> PgPoolOptions {
    PgPoolOptions::new()
        .max_connections(connections)
        .acquire_timeout(POOL_ACQUIRE_TIMEOUT)
}

/// `Err(SQLITE_READONLY)` when `connection` cannot write to its database.
/// A statement that changes no row still starts a write transaction, which a
/// connection opened read-only refuses before it asks for the write lock; on
/// a writable one it takes and releases the lock, or finds it held by
/// another connection (`SQLITE_BUSY`, which says the file is writable too).
/// The probe does not wait for a held lock: a new connection must not stall
/// for the busy timeout behind a long commit (it did, and the request that
/// needed it timed out waiting for the pool). Before the first migration the
/// table is missing: that error says nothing about writing and is let
/// through.
async fn refuse_read_only(connection: &mut sqlx::SqliteConnection) -> Result<(), sqlx::Error> {
    const SQLITE_READONLY: i32 = 8;
    sqlx::raw_sql("pragma busy_timeout = 0")
        .execute(&mut *connection)
        .await?;
    let probe = sqlx::query("update _sqlx_migrations set success = success where 0")
        .execute(&mut *connection)
        .await;
    let restore = format!("pragma busy_timeout = {}", SQLITE_BUSY_TIMEOUT.as_millis());
    sqlx::raw_sql(sqlx::AssertSqlSafe(restore))
        .execute(&mut *connection)
        .await?;
    match probe {
        Err(sqlx::Error::Database(error))
            if error
                .code()
                .and_then(|code| code.parse::<i32>().ok())
                .is_some_and(|code| code & 0xff == SQLITE_READONLY) =>
        {
            Err(sqlx::Error::Database(error))
        }
        _ => Ok(()),
    }
}
