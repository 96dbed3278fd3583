//! Storage: one `Store` over SQLite (the embedded default) and Postgres,
//! chosen by the database URL's scheme. It is the live games' store
//! ([`chess_live::GameStore`], implemented in [`live`]) and answers every
//! other query of the server.
//!
//! Every query of the server is here: games, moves, seeks and players (this
//! file), account rows and sessions ([`accounts`]), the reward ledger
//! ([`ledger`]) and its outbox ([`reward_requests`]), node heartbeats ([`nodes`]) and group commit ([`batch`]).
//! Most queries are one SQL text for both backends (both accept `$1`
//! placeholders, `on conflict` and `returning`), run through one mechanism:
//! [`with_conn!`] runs a body on a connection of a [`Store`] or of a
//! [`Transaction`], expanded once per backend so the compiler checks it
//! against each driver; writes that must land together run in a
//! [`Transaction`] from [`Store::begin`].
//!
//! The statements of a batch (players, games, seats taken, games' changes,
//! moves) and of the reward ledger are written once per dialect instead, in
//! [`sql`]: the group commit writes a batch in one go (a function of
//! Postgres's, SQLite's own connection in [`sqlite_writer`]) or statement by
//! statement ([`batch`]), and both ways run those same statements. On SQLite
//! they are texts that rusqlite runs as well as sqlx, with SQLite's numbered
//! parameters; on Postgres, one function per statement, which the one-go
//! function calls too.
//!
//! Schemas live in `migrations/sqlite` and `migrations/postgres`, kept in
//! lockstep.
//!
//! Every change to a game is a compare-and-set on its `version`: the update says
//! `where id = ? and version = ?`, and zero rows touched means someone else
//! (another node) changed it first: [`StoreError::Conflict`], reload and retry.

mod connect;
mod live;
mod rows;
mod sql;
mod sqlite_writer;
#[cfg(feature = "testing")]
pub mod testing;

pub use rows::SeekRow;

use std::sync::{Arc, Mutex};

use chess_live::{
    Batch, GameRow, GameWrite, MoveRow, PlayerRow, SeatClaim, StoreErrorKind, WriteOutcome,
};
use sqlx::{PgPool, SqlitePool};
use uuid::Uuid;

/// A storage failure.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database URL's scheme is neither `sqlite:` nor `postgres:`.
    #[error("unsupported database url (expected sqlite://... or postgres://...): {0}")]
    UnsupportedUrl(String),
    /// The game's version changed since it was read: another writer won the race.
    #[error("the game changed concurrently")]
    Conflict,
    /// Creating the database folder failed.
    #[error("cannot create the database folder: {0}")]
    Folder(#[from] std::io::Error),
    /// A stored value could not be read back (a corrupt row).
    #[error("corrupt row: {0}")]
    Corrupt(String),
    /// Applying migrations failed.
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The database failed.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// SQLite failed on the group commit's own connection
    /// ([`sqlite_writer`]).
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The SQLite database's lock file could not be made or locked.
    #[error("cannot lock {path}: {source}")]
    Claim {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    /// Another server runs on this SQLite file.
    #[error(
        "another server is using {0}: SQLite serves one node (run several nodes on Postgres, \
         DATABASE_URL=postgres://...)"
    )]
    InUse(std::path::PathBuf),
}

impl StoreError {
    /// Whether the failure is the database's state rather than the request's:
    /// out of reach, locked, out of disk space or read-only. Nothing was
    /// stored, and the same request may succeed once the database is back.
    pub fn is_unavailable(&self) -> bool {
        match self {
            StoreError::Database(error) => database_unavailable(error),
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(error, _)) => {
                SQLITE_UNAVAILABLE.contains(&(error.extended_code & 0xff))
            }
            _ => false,
        }
    }

    /// What the failure means to the live games: whether the database was
    /// out of reach, broke mid-write, cannot take writes now, refused this
    /// write, or holds a value that cannot be read.
    pub fn kind(&self) -> StoreErrorKind {
        match self {
            // The connection broke while statements were under way: the
            // `COMMIT` may have reached the database.
            StoreError::Database(
                sqlx::Error::Io(_)
                | sqlx::Error::Tls(_)
                | sqlx::Error::Protocol(_)
                | sqlx::Error::WorkerCrashed,
            ) => StoreErrorKind::InDoubt,
            // No connection to be had: nothing was sent.
            StoreError::Database(sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed) => {
                StoreErrorKind::Unreachable
            }
            StoreError::Corrupt(_) => StoreErrorKind::Corrupt,
            error if error.is_unavailable() => StoreErrorKind::Unavailable,
            _ => StoreErrorKind::Refused,
        }
    }
}

/// The live games see a failure as what it means to them, with the
/// database's own words.
impl From<StoreError> for chess_live::StoreError {
    fn from(error: StoreError) -> chess_live::StoreError {
        chess_live::StoreError::new(error.kind(), error)
    }
}

/// SQLite primary result codes that say the database cannot take a write
/// now: `SQLITE_BUSY`, `SQLITE_LOCKED`, `SQLITE_READONLY`, `SQLITE_IOERR`,
/// `SQLITE_FULL`, `SQLITE_CANTOPEN`.
const SQLITE_UNAVAILABLE: [i32; 6] = [5, 6, 8, 10, 13, 14];

fn database_unavailable(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Io(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(error) => {
            let Some(code) = error.code() else {
                return false;
            };
            if error
                .try_downcast_ref::<sqlx::sqlite::SqliteError>()
                .is_some()
            {
                // SQLite reports the extended code; its low byte is the primary one.
                code.parse::<i32>()
                    .is_ok_and(|code| SQLITE_UNAVAILABLE.contains(&(code & 0xff)))
            } else {
                // Postgres SQLSTATE: connection exceptions (08), insufficient
                // resources such as a full disk (53), the server shutting
                // down or starting (57P), a read-only transaction (25006).
                code.starts_with("08")
                    || code.starts_with("53")
                    || code.starts_with("57P")
                    || code == "25006"
            }
        }
        _ => false,
    }
}

/// One value per backend: the store's pool, or an open transaction.
#[derive(Clone, Debug)]
enum Backend<S, P> {
    Sqlite(S),
    Postgres(P),
}

impl<S, P> Backend<S, P> {
    fn as_ref(&self) -> Backend<&S, &P> {
        match self {
            Backend::Sqlite(sqlite) => Backend::Sqlite(sqlite),
            Backend::Postgres(postgres) => Backend::Postgres(postgres),
        }
    }

    fn as_mut(&mut self) -> Backend<&mut S, &mut P> {
        match self {
            Backend::Sqlite(sqlite) => Backend::Sqlite(sqlite),
            Backend::Postgres(postgres) => Backend::Postgres(postgres),
        }
    }
}

/// The connection pool of whichever backend the store uses.
type Pool = Backend<SqlitePool, PgPool>;

/// Runs `$body` with `$conn` a `&mut` connection of whichever backend `$db`
/// (a [`Store`] or a [`Transaction`]) uses: a connection from the pool for a
/// store, the transaction's own for a transaction. The body is compiled once
/// per backend, so the compiler checks the same SQL text against each driver:
///
/// ```ignore
/// with_conn!(self, conn => {
///     sqlx::query("delete from seeks where id = $1")
///         .bind(id.to_string())
///         .execute(&mut *conn)
///         .await?
/// })
/// ```
///
/// With `$conn, $sql =>`, the body also sees the backend's module of
/// statements ([`sql::sqlite`] or [`sql::postgres`]) as `$sql`, for a
/// statement each dialect writes its own way but binds alike:
///
/// ```ignore
/// with_conn!(tx, conn, sql => {
///     sqlx::query(sql::DELETE_MOVES_FROM)
///         .bind(game.id.to_string())
///         .bind(i64::from(keep))
///         .execute(&mut *conn)
///         .await?
/// })
/// ```
macro_rules! with_conn {
    ($db:expr, $conn:ident => $body:expr) => {
        with_conn!($db, $conn, _statements => $body)
    };
    ($db:expr, $conn:ident, $sql:ident => $body:expr) => {
        match $db.backend() {
            $crate::Backend::Sqlite(source) => {
                // Owned (from the pool) or borrowed (a transaction's): only
                // the owned one needs `mut`.
                #[allow(unused_mut)]
                let mut held = sqlx::Acquire::acquire(source).await?;
                let $conn: &mut sqlx::SqliteConnection = &mut *held;
                #[allow(unused_imports)]
                use $crate::sql::sqlite as $sql;
                $body
            }
            $crate::Backend::Postgres(source) => {
                #[allow(unused_mut)]
                let mut held = sqlx::Acquire::acquire(source).await?;
                let $conn: &mut sqlx::PgConnection = &mut *held;
                #[allow(unused_imports)]
                use $crate::sql::postgres as $sql;
                $body
            }
        }
    };
}

/// Reads a [`GameRow`] from a fetched row of either backend (selected with
/// [`GAME_COLUMNS`]).
macro_rules! game_row {
    ($row:expr) => {{
        use sqlx::Row as _;
        let row = &$row;
        rows::game_row(rows::GameColumns {
            id: row.try_get("id")?,
            mode: row.try_get("mode")?,
            white_id: row.try_get("white_id")?,
            black_id: row.try_get("black_id")?,
            computer_level: row.try_get("computer_level")?,
            time_control: row.try_get("time_control")?,
            status: row.try_get("status")?,
            result: row.try_get("result")?,
            state: row.try_get("state")?,
            version: row.try_get("version")?,
            rematch_of: row.try_get("rematch_of")?,
            rematch_id: row.try_get("rematch_id")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
            deadline_at: row.try_get("deadline_at")?,
            recent_events: row.try_get("recent_events")?,
            premove_nodes: row.try_get("premove_nodes")?,
        })
    }};
}

pub mod accounts;
mod archive;
mod batch;
mod challenges;
pub mod classes;
pub mod clubs;
pub mod ledger;
pub mod limits;
mod listener;
mod nodes;
mod oidc;
pub mod ratings;
mod reward_requests;
mod tokens;
pub mod tournaments;
mod transaction;
mod wal;

pub use accounts::{AccountRow, PasswordHash, SignUpError, Username};
pub use archive::{ArchiveCounts, ArchiveCursor, ArchiveEntry, ArchiveFilter, Outcome, StoredGame};
pub use challenges::{ChallengeAnswer, ChallengeRow};
pub use ledger::REWARD_CURRENCY;
pub use listener::{Notice, NoticeListener};
pub use oidc::{PendingSignIn, PlatformSignUpError};
pub use ratings::{GameRatingChange, HistoryPoint, PlayerChange, StoredRating, shown};
pub use reward_requests::{DeliveryState, OutboxStats, RewardDelivery, RewardRequest};
pub use tokens::{ApiAccount, TokenHolder, TokenRow};
pub use transaction::Transaction;
pub use wal::WalCheckpoint;

/// Hears of each batch of the live games once it has committed: the store
/// publishes its commits through this and knows nothing of who listens
/// (registered with [`Store::observe_commits`]). Called on the writer's
/// task, after the commit and before the owners are answered: keep it
/// short and never block.
pub trait CommitObserver: Send + Sync + std::fmt::Debug {
    /// `batch` committed with `outcome`.
    fn committed(&self, batch: &Batch, outcome: &chess_live::BatchOutcome);
}

/// The database: players, games, moves and seeks.
#[derive(Clone, Debug)]
pub struct Store {
    pool: Pool,
    /// The group commit's own connection ([`Store::write_batch`]), so the
    /// node's writer never waits for a pooled connection behind the
    /// requests of thousands of sockets: at 1,000 games flat out on SQLite,
    /// a batch waited 28 ms on average for the shared pool, most of its
    /// 35 ms.
    ///
    /// On SQLite every other write goes through this one connection too
    /// ([`Store::writes`], [`Store::begin`]). SQLite writes one transaction
    /// at a time anyway, and a second connection that finds the write lock
    /// taken sleeps in SQLite's busy handler (1, 2, 5, 10 ms... between
    /// tries) instead of queueing: with batches committing back to back,
    /// game creations lost nearly every race (144 of 1,000 games seated).
    /// The pool hands its one connection out first come, first served.
    /// The writes that come with every new game (a guest, the game, the
    /// seat taken) ride in the batches instead ([`Batch`]): as writes of
    /// their own, each paid a commit and made the batches queue behind it
    /// when many games were being set up at once (docs/performance.md,
    /// "A game's set-up").
    writer: Pool,
    /// On Postgres, the writer pool's one connection, kept by the group
    /// commit from one batch to the next ([`HeldWriter`]).
    held_writer: HeldWriter,
    /// On SQLite, the group commit's own connection, driven in place on the
    /// writer's thread ([`sqlite_writer`]); `None` on Postgres.
    sqlite_writer: Option<Arc<Mutex<sqlite_writer::SqliteWriter>>>,
    /// On SQLite, copies the log into the database file after the group
    /// commit's batches, off the writer's path, once started
    /// ([`Store::start_checkpoints`]).
    checkpointer: Arc<std::sync::OnceLock<wal::Checkpointer>>,
    /// Woken when a batch that credited a win has committed: the outbox's
    /// deliverer ([`crate::outbox`]) sends its request at once instead of at
    /// its next poll.
    outbox_wake: Arc<tokio::sync::Notify>,
    /// Whether only the host platform's accounts earn rewards
    /// (`LOCAL_ACCOUNTS=false`; see `Transaction::settle_reward`).
    platform_accounts_only: bool,
    /// Who hears of the live games' batches this node commits, once the
    /// server registers it ([`Store::observe_commits`]).
    commit_observer: Arc<std::sync::OnceLock<Arc<dyn CommitObserver>>>,
}

/// The Postgres writer's connection, held between batches: a connection
/// taken from a pool and given back costs a round trip each way (sqlx pings
/// it when it is handed out and again when it comes back), which made every
/// batch, one call of `chess_commit_batch`, three round trips to the
/// database instead of one, each a wake-up of the database's process on a
/// busy machine. It is kept only while it answers: a statement that fails
/// for anything but the function handing the batch back sends it back to
/// the pool (which checks it and closes it if it is gone), and so does a
/// batch written statement by statement in a transaction of its own. One
/// idle for longer than [`HELD_WRITER_IDLE_CHECK`] is pinged before its
/// next batch. Empty on SQLite, whose writer connection serves every write
/// of the node.
#[derive(Clone, Debug, Default)]
struct HeldWriter(std::sync::Arc<tokio::sync::Mutex<Option<HeldConnection>>>);

#[derive(Debug)]
struct HeldConnection {
    connection: sqlx::pool::PoolConnection<sqlx::Postgres>,
    /// When its last batch ended.
    last_used: std::time::Instant,
}

/// A held writer connection idle for longer than this is pinged before it
/// takes a batch. One that died while nobody wrote (the database restarted,
/// its backend terminated) would otherwise fail the next batch, long after
/// the database was back: the crash tool's `restart-database` and
/// `terminate-backends` faults found exactly that. A busy writer, whose
/// batches follow each other closely, sends no ping.
const HELD_WRITER_IDLE_CHECK: std::time::Duration = std::time::Duration::from_millis(50);

/// The connections a store writes with, for [`with_conn!`]: on SQLite the
/// writer's one connection, on Postgres the shared pool (its row locks let
/// writes run side by side).
struct Writes<'a>(&'a Store);

impl Writes<'_> {
    fn backend(&self) -> Backend<&SqlitePool, &PgPool> {
        self.0.write_pool().as_ref()
    }
}

/// What a store call returns.
pub type Result<T> = std::result::Result<T, StoreError>;

const GAME_COLUMNS: &str = "id, mode, white_id, black_id, computer_level, time_control, status, \
     result, state, version, rematch_of, rematch_id, created_at, updated_at, deadline_at, \
     recent_events, premove_nodes";

impl Store {
    /// The pool, for [`with_conn!`]: reads, and writes on Postgres.
    fn backend(&self) -> Backend<&SqlitePool, &PgPool> {
        self.pool.as_ref()
    }

    /// Where a statement that writes runs, for [`with_conn!`].
    fn writes(&self) -> Writes<'_> {
        Writes(self)
    }

    /// The pool writes use: the writer's one connection on SQLite, the
    /// shared pool on Postgres (see [`Store::writer`]).
    fn write_pool(&self) -> &Pool {
        match &self.writer {
            Backend::Sqlite(_) => &self.writer,
            Backend::Postgres(_) => &self.pool,
        }
    }

    /// Begins a write transaction: what runs in it commits together or not
    /// at all ([`Transaction`]).
    ///
    /// # Errors
    /// The database's error if no connection (or, on SQLite, no write lock
    /// within the busy timeout) can be had.
    pub async fn begin(&self) -> Result<Transaction> {
        Transaction::begin(self.write_pool()).await
    }

    /// The same store, paying rewards to the host platform's accounts only
    /// when `on` (`LOCAL_ACCOUNTS=false`).
    #[must_use]
    pub fn with_platform_accounts_only(mut self, on: bool) -> Store {
        self.platform_accounts_only = on;
        self
    }

    /// Woken whenever a batch that credited a win has committed, for the
    /// outbox's deliverer.
    pub fn outbox_wake(&self) -> Arc<tokio::sync::Notify> {
        Arc::clone(&self.outbox_wake)
    }

    /// Tells `observer` of every batch of the live games this node commits
    /// from now on (the server's lobby follows the moves so); only the first
    /// call counts.
    pub fn observe_commits(&self, observer: Arc<dyn CommitObserver>) {
        let _ = self.commit_observer.set(observer);
    }

    /// The Postgres pool; `None` on SQLite.
    pub(crate) fn postgres_pool(&self) -> Option<PgPool> {
        match &self.pool {
            Backend::Postgres(pool) => Some(pool.clone()),
            Backend::Sqlite(_) => None,
        }
    }

    /// The SQLite pools, the shared one and the writer's; empty on
    /// Postgres. For tests and tools that must reach the server's own
    /// connections (per-connection pragmas).
    #[cfg(feature = "testing")]
    pub(crate) fn sqlite_pools(&self) -> Vec<SqlitePool> {
        [&self.pool, &self.writer]
            .into_iter()
            .filter_map(|pool| match pool {
                Pool::Sqlite(pool) => Some(pool.clone()),
                Pool::Postgres(_) => None,
            })
            .collect()
    }

    /// Runs `sql` on the SQLite group commit's own connection
    /// ([`sqlite_writer`]), which is in none of [`Store::sqlite_pools`];
    /// nothing on Postgres. For tests and tools that set a connection's
    /// pragmas on every connection the server writes with.
    ///
    /// # Errors
    /// The database error.
    pub async fn on_sqlite_writer(&self, sql: &str) -> Result<()> {
        match &self.sqlite_writer {
            Some(writer) => batch::blocking(|| {
                writer
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .execute_batch(sql)
            }),
            None => Ok(()),
        }
    }

    /// Closes the SQLite group commit's own connection: the next batch opens
    /// a new one. For tests, as [`Store::on_sqlite_writer`].
    pub fn close_sqlite_writer(&self) {
        if let Some(writer) = &self.sqlite_writer {
            writer
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .close();
        }
    }

    /// Sends `payload` on Postgres channel `channel` now (outside any
    /// transaction); nothing on SQLite, which has one node.
    ///
    /// # Errors
    /// The database error.
    pub async fn notify(&self, channel: &str, payload: &str) -> Result<()> {
        self.notify_all(channel, &[payload.to_owned()]).await
    }

    /// Sends each of `payloads` on Postgres channel `channel` now, in one
    /// statement (outside any transaction); nothing on SQLite. Postgres
    /// delivers only one of identical payloads sent together: callers send
    /// distinct ones.
    ///
    /// # Errors
    /// The database error.
    pub async fn notify_all(&self, channel: &str, payloads: &[String]) -> Result<()> {
        if let Backend::Postgres(pool) = &self.pool {
            transaction::pg_notify_all(&mut *pool.acquire().await?, channel, payloads).await?;
        }
        Ok(())
    }

    /// Whether this store runs on Postgres (else SQLite).
    pub fn is_postgres(&self) -> bool {
        matches!(self.pool, Backend::Postgres(_))
    }

    /// Closes the pool, waiting for checked-out connections to return.
    pub async fn close(&self) {
        match &self.pool {
            Backend::Sqlite(pool) => pool.close().await,
            Backend::Postgres(pool) => pool.close().await,
        }
    }

    /// Whether the database answers.
    ///
    /// # Errors
    /// The database error.
    pub async fn ping(&self) -> Result<()> {
        with_conn!(self, conn => {
            sqlx::query("select 1").execute(&mut *conn).await?;
        });
        Ok(())
    }

    /// Stores a new player (an existing id is left unchanged).
    ///
    /// # Errors
    /// The database error.
    pub async fn insert_player(&self, player: &PlayerRow) -> Result<()> {
        let batch = Batch {
            players: vec![player.clone()],
            ..Batch::default()
        };
        self.write_batch(&batch, "", |_| Vec::new()).await?;
        Ok(())
    }

    /// The player with this id, with its account's bot flag.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn player(&self, id: Uuid) -> Result<Option<PlayerRow>> {
        let row: Option<(String, String, String, i64, bool)> = with_conn!(self, conn => {
            sqlx::query_as(
                "select p.id, p.kind, p.name, p.created_at, coalesce(a.bot, false) from players p \
                 left join accounts a on a.player_id = p.id where p.id = $1",
            )
                .bind(id.to_string())
                .fetch_optional(&mut *conn)
                .await?
        });
        row.map(rows::player_row).transpose()
    }

    /// Stores a new game (version as given, usually 0).
    ///
    /// # Errors
    /// The database error.
    pub async fn insert_game(&self, game: &GameRow) -> Result<()> {
        let batch = Batch {
            games: vec![game.clone()],
            ..Batch::default()
        };
        self.write_batch(&batch, "", |_| Vec::new()).await?;
        Ok(())
    }

    /// The game with this id.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn game(&self, id: Uuid) -> Result<Option<GameRow>> {
        let sql = format!("select {GAME_COLUMNS} from games where id = $1");
        with_conn!(self, conn => {
            let row = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(id.to_string())
                .fetch_optional(&mut *conn)
                .await?;
            match row {
                Some(row) => game_row!(row).map(Some),
                None => Ok(None),
            }
        })
    }

    /// The stored version of game `id`, to tell whether a cached copy is stale.
    ///
    /// # Errors
    /// The database error.
    pub async fn game_version(&self, id: Uuid) -> Result<Option<i64>> {
        let version: Option<(i64,)> = with_conn!(self, conn => {
            sqlx::query_as("select version from games where id = $1")
                .bind(id.to_string())
                .fetch_optional(&mut *conn)
                .await?
        });
        Ok(version.map(|(version,)| version))
    }

    /// Every game that is not finished (open challenges and games in play).
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn unfinished_games(&self) -> Result<Vec<GameRow>> {
        let sql = format!("select {GAME_COLUMNS} from games where status <> 'finished'");
        self.games_where(&sql, None).await
    }

    /// The games a player holds a seat in: unfinished ones and the `finished_limit`
    /// most recently finished, newest change first.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn games_of_player(&self, player: Uuid, finished_limit: i64) -> Result<Vec<GameRow>> {
        let unfinished = format!(
            "select {GAME_COLUMNS} from games where (white_id = $1 or black_id = $1) \
             and status <> 'finished' order by updated_at desc"
        );
        let finished = format!(
            "select {GAME_COLUMNS} from games where (white_id = $1 or black_id = $1) \
             and status = 'finished' order by updated_at desc limit {finished_limit}"
        );
        let mut games = self.games_where(&unfinished, Some(player)).await?;
        games.extend(self.games_where(&finished, Some(player)).await?);
        Ok(games)
    }

    /// Online games being played, newest change first.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn live_games(&self, limit: i64) -> Result<Vec<GameRow>> {
        let sql = format!(
            "select {GAME_COLUMNS} from games where status = 'playing' and mode = 'online' \
             order by updated_at desc limit {limit}"
        );
        self.games_where(&sql, None).await
    }

    /// The games `sql` selects. Planned at every call, for the table as it
    /// is then: a plan kept from a new database's empty table would scan
    /// the whole of it long after it has grown (see `store::connect`).
    async fn games_where(&self, sql: &str, player: Option<Uuid>) -> Result<Vec<GameRow>> {
        with_conn!(self, conn => {
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql.to_owned())).persistent(false);
            if let Some(player) = player {
                query = query.bind(player.to_string());
            }
            let rows = query.fetch_all(&mut *conn).await?;
            rows.iter().map(|row| game_row!(row)).collect()
        })
    }

    /// The moves of a game in ply order.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn moves(&self, game: Uuid) -> Result<Vec<MoveRow>> {
        self.moves_from(game, 0).await
    }

    /// The moves of `game` from ply `from_ply` on, in order.
    ///
    /// # Errors
    /// The database error, or [`StoreError::Corrupt`] for an unreadable row.
    pub async fn moves_from(&self, game: Uuid, from_ply: usize) -> Result<Vec<MoveRow>> {
        let from_ply = i64::try_from(from_ply).unwrap_or(i64::MAX);
        let rows: Vec<(i64, String, String, Option<i64>, i64, String)> = with_conn!(self, conn => {
            sqlx::query_as(
                "select ply, uci, san, clock_ms, played_at, record from moves \
                 where game_id = $1 and ply >= $2 order by ply",
            )
            .bind(game.to_string())
            .bind(from_ply)
            .fetch_all(&mut *conn)
            .await?
        });
        rows.into_iter().map(rows::move_row).collect()
    }

    /// Writes one change of a game as a compare-and-set: the row is replaced
    /// by `game` only if its stored version is still `expected_version`;
    /// moves from ply `keep_moves` on are deleted (a take-back) and
    /// `new_moves` inserted, all in one transaction. The live games write
    /// through [`Store::write_batch`]; this is the same for one game.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] if the version moved on (nothing is written), or a
    /// database error (also when a move's ply was already written).
    pub async fn update_game(
        &self,
        game: &GameRow,
        expected_version: i64,
        keep_moves: Option<u32>,
        new_moves: &[MoveRow],
    ) -> Result<()> {
        let write = GameWrite {
            row: game.clone(),
            expected_version,
            keep_moves,
            new_moves: new_moves.to_vec(),
            settle: None,
            rematch: None,
            notice: None,
        };
        match self
            .write_batch(&Batch::of_writes(vec![write]), "", |_| Vec::new())
            .await?
            .writes
            .pop()
        {
            Some(WriteOutcome::Written) => Ok(()),
            _ => Err(StoreError::Conflict),
        }
    }

    /// Stores a new seek.
    ///
    /// # Errors
    /// The database error.
    pub async fn insert_seek(&self, seek: &SeekRow) -> Result<()> {
        with_conn!(self.writes(), conn => {
            sqlx::query(
                "insert into seeks (id, player_id, time_control, time_control_key, color, created_at, \
                 rated, rating_min, rating_max) values ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            )
            .bind(seek.id.to_string())
            .bind(seek.player_id.to_string())
            .bind(&seek.time_control)
            .bind(&seek.time_control_key)
            .bind(&seek.color)
            .bind(seek.created_at.to_stored())
            .bind(seek.rated)
            .bind(seek.rating_range.map(|(min, _)| min))
            .bind(seek.rating_range.map(|(_, max)| max))
            .execute(&mut *conn)
            .await?;
        });
        Ok(())
    }

    /// Every open seek, oldest first.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn seeks(&self) -> Result<Vec<SeekRow>> {
        let rows: Vec<rows::SeekTuple> = with_conn!(self, conn => {
            sqlx::query_as(
                "select id, player_id, time_control, time_control_key, color, created_at, \
                 rated, rating_min, rating_max from seeks order by created_at, id",
            )
            .fetch_all(&mut *conn)
            .await?
        });
        rows.into_iter().map(SeekRow::from_tuple).collect()
    }

    /// Puts the claim's player in the empty seat of an open challenge and
    /// starts it (the game is created when its second player arrives, so
    /// first-move deadlines count from then). `false` if the seat was taken
    /// first (exactly one of racing joiners wins).
    ///
    /// # Errors
    /// The database error.
    pub async fn claim_seat(&self, claim: &SeatClaim) -> Result<bool> {
        let batch = Batch {
            claims: vec![claim.clone()],
            ..Batch::default()
        };
        let outcome = self.write_batch(&batch, "", |_| Vec::new()).await?;
        Ok(outcome.claimed.first().copied().unwrap_or(false))
    }

    /// Removes a seek; `true` if this call removed it (so exactly one of several
    /// racing joiners wins).
    ///
    /// # Errors
    /// The database error.
    pub async fn delete_seek(&self, id: Uuid) -> Result<bool> {
        let result = with_conn!(self.writes(), conn => {
            sqlx::query("delete from seeks where id = $1")
                .bind(id.to_string())
                .execute(&mut *conn)
                .await?
                .rows_affected()
        });
        Ok(result == 1)
    }
}

pub use connect::{SqliteClaim, claim_sqlite_file, connect};
