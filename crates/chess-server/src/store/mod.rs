//! Storage: one `Store` seam over SQLite (the embedded default) and Postgres,
//! chosen by the database URL's scheme.
//!
//! Both backends run the same SQL text (both accept `$1` placeholders,
//! `on conflict` and `returning`); the [`with_pool!`] macro expands a body once
//! per backend so the compiler checks it against each driver. Schemas live in
//! `migrations/sqlite` and `migrations/postgres`, kept in lockstep.
//!
//! Every change to a game is a compare-and-set on its `version`: the update says
//! `where id = $1 and version = $2`, and zero rows touched means someone else
//! (another node) changed it first: [`StoreError::Conflict`], reload and retry.

mod connect;
mod rows;

pub use rows::{GameRow, MoveRow, PlayerRow, SeekRow};

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
}

/// The connection pool of one backend.
#[derive(Clone, Debug)]
enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// Runs `$body` with `$pool` bound to the concrete pool of whichever backend
/// the store uses. The body is compiled once per backend.
macro_rules! with_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        match &$store.pool {
            Pool::Sqlite($pool) => $body,
            Pool::Postgres($pool) => $body,
        }
    };
}

/// The insert of a whole game row, for either backend.
macro_rules! insert_game_query {
    ($game:expr) => {
        sqlx::query(
            "insert into games (id, mode, white_id, black_id, computer_level, time_control, status, \
             result, state, version, rematch_of, rematch_id, created_at, updated_at) \
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        )
        .bind($game.id.to_string())
        .bind($game.mode.as_str())
        .bind($game.white_id.map(|id| id.to_string()))
        .bind($game.black_id.map(|id| id.to_string()))
        .bind($game.computer_level)
        .bind($game.time_control.clone())
        .bind($game.status.as_str())
        .bind($game.result.clone())
        .bind($game.state.clone())
        .bind($game.version)
        .bind($game.rematch_of.map(|id| id.to_string()))
        .bind($game.rematch_id.map(|id| id.to_string()))
        .bind($game.created_at)
        .bind($game.updated_at)
    };
}

/// The compare-and-set update of a game row, for either backend.
macro_rules! update_game_query {
    ($game:expr, $expected_version:expr) => {
        sqlx::query(
            "update games set white_id = $3, black_id = $4, status = $5, result = $6, state = $7, \
             version = $8, rematch_id = $9, updated_at = $10 where id = $1 and version = $2",
        )
        .bind($game.id.to_string())
        .bind($expected_version)
        .bind($game.white_id.map(|id| id.to_string()))
        .bind($game.black_id.map(|id| id.to_string()))
        .bind($game.status.as_str())
        .bind($game.result.clone())
        .bind($game.state.clone())
        .bind($game.version)
        .bind($game.rematch_id.map(|id| id.to_string()))
        .bind($game.updated_at)
    };
}

/// What [`Store::finish_game`] settles with the ledger.
#[derive(Clone, Copy, Debug)]
struct Settlement<'a> {
    result: &'a chess_game::GameResult,
    now_ms: i64,
}

/// The database: players, games, moves and seeks.
#[derive(Clone, Debug)]
pub struct Store {
    pool: Pool,
}

type Result<T> = std::result::Result<T, StoreError>;

const GAME_COLUMNS: &str = "id, mode, white_id, black_id, computer_level, time_control, status, \
     result, state, version, rematch_of, rematch_id, created_at, updated_at";

impl Store {
    /// The same pools, for the account endpoints.
    pub fn accounts_db(&self) -> crate::accounts::http::AccountsDb {
        match &self.pool {
            Pool::Sqlite(pool) => crate::accounts::http::AccountsDb::Sqlite(pool.clone()),
            Pool::Postgres(pool) => crate::accounts::http::AccountsDb::Postgres(pool.clone()),
        }
    }

    /// Whether this store runs on Postgres (else SQLite).
    pub fn is_postgres(&self) -> bool {
        matches!(self.pool, Pool::Postgres(_))
    }

    /// Closes the pool, waiting for checked-out connections to return.
    pub async fn close(&self) {
        with_pool!(self, pool => pool.close().await)
    }

    /// Whether the database answers.
    ///
    /// # Errors
    /// The database error.
    pub async fn ping(&self) -> Result<()> {
        with_pool!(self, pool => {
            sqlx::query("select 1").execute(pool).await?;
        });
        Ok(())
    }

    /// Stores a new player (an existing id is left unchanged).
    ///
    /// # Errors
    /// The database error.
    pub async fn insert_player(&self, player: &PlayerRow) -> Result<()> {
        with_pool!(self, pool => {
            sqlx::query(
                "insert into players (id, kind, name, created_at) values ($1, $2, $3, $4) \
                 on conflict (id) do nothing",
            )
            .bind(player.id.to_string())
            .bind(player.kind.as_str())
            .bind(&player.name)
            .bind(player.created_at)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// The player with this id.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn player(&self, id: Uuid) -> Result<Option<PlayerRow>> {
        let row: Option<(String, String, String, i64)> = with_pool!(self, pool => {
            sqlx::query_as("select id, kind, name, created_at from players where id = $1")
                .bind(id.to_string())
                .fetch_optional(pool)
                .await?
        });
        row.map(PlayerRow::from_tuple).transpose()
    }

    /// Stores a new game (version as given, usually 0).
    ///
    /// # Errors
    /// The database error.
    pub async fn insert_game(&self, game: &GameRow) -> Result<()> {
        with_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            insert_game_query!(game).execute(&mut *tx).await?;
            tx.commit().await?;
        });
        Ok(())
    }

    /// The game with this id.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn game(&self, id: Uuid) -> Result<Option<GameRow>> {
        let sql = format!("select {GAME_COLUMNS} from games where id = $1");
        let row: Option<rows::GameTuple> = with_pool!(self, pool => {
            sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id.to_string()).fetch_optional(pool).await?
        });
        row.map(GameRow::from_tuple).transpose()
    }

    /// The stored version of game `id`, to tell whether a cached copy is stale.
    ///
    /// # Errors
    /// The database error.
    pub async fn game_version(&self, id: Uuid) -> Result<Option<i64>> {
        let version: Option<(i64,)> = with_pool!(self, pool => {
            sqlx::query_as("select version from games where id = $1")
                .bind(id.to_string())
                .fetch_optional(pool)
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

    async fn games_where(&self, sql: &str, player: Option<Uuid>) -> Result<Vec<GameRow>> {
        let rows: Vec<rows::GameTuple> = with_pool!(self, pool => {
            let mut query = sqlx::query_as(sqlx::AssertSqlSafe(sql.to_owned()));
            if let Some(player) = player {
                query = query.bind(player.to_string());
            }
            query.fetch_all(pool).await?
        });
        rows.into_iter().map(GameRow::from_tuple).collect()
    }

    /// The moves of a game in ply order.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn moves(&self, game: Uuid) -> Result<Vec<MoveRow>> {
        let rows: Vec<(i64, String, String, Option<i64>, i64, String)> = with_pool!(self, pool => {
            sqlx::query_as(
                "select ply, uci, san, clock_ms, played_at, record from moves \
                 where game_id = $1 order by ply",
            )
            .bind(game.to_string())
            .fetch_all(pool)
            .await?
        });
        rows.into_iter().map(MoveRow::from_tuple).collect()
    }

    /// Writes a change of a game as one compare-and-set: the row is replaced by
    /// `game` only if its stored version is still `expected_version`; moves from
    /// ply `keep_moves` on are deleted (a take-back) and `new_moves` inserted, all
    /// in one transaction.
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
        self.write_game(game, expected_version, keep_moves, new_moves, None)
            .await
            .map(|_| ())
    }

    /// Like [`Store::update_game`] for the change that ends a game with
    /// `result`: in the same transaction, the reward ledger settles the game
    /// (`ledger::*::settle_game`), so the result and any payment commit
    /// together or not at all, and a game pays at most once whatever races.
    /// On SQLite the transaction takes the write lock at its start
    /// (`BEGIN IMMEDIATE`).
    ///
    /// # Errors
    /// As [`Store::update_game`]; a ledger failure rolls everything back.
    pub async fn finish_game(
        &self,
        game: &GameRow,
        expected_version: i64,
        new_moves: &[MoveRow],
        result: &chess_game::GameResult,
        now_ms: i64,
    ) -> Result<Option<crate::ledger::Recorded>> {
        let settlement = Settlement { result, now_ms };
        self.write_game(game, expected_version, None, new_moves, Some(settlement))
            .await
    }

    async fn write_game(
        &self,
        game: &GameRow,
        expected_version: i64,
        keep_moves: Option<u32>,
        new_moves: &[MoveRow],
        settlement: Option<Settlement<'_>>,
    ) -> Result<Option<crate::ledger::Recorded>> {
        /// The body, once per backend: `$tx` is the open transaction,
        /// `$ledger` the backend's ledger module.
        macro_rules! write_body {
            ($tx:ident, $ledger:path) => {{
                use $ledger as ledger;
                let updated = update_game_query!(game, expected_version)
                    .execute(&mut *$tx)
                    .await?;
                if updated.rows_affected() != 1 {
                    $tx.rollback().await?;
                    return Err(StoreError::Conflict);
                }
                if let Some(keep) = keep_moves {
                    sqlx::query("delete from moves where game_id = $1 and ply >= $2")
                        .bind(game.id.to_string())
                        .bind(i64::from(keep))
                        .execute(&mut *$tx)
                        .await?;
                }
                for mv in new_moves {
                    sqlx::query(
                        "insert into moves (game_id, ply, uci, san, clock_ms, played_at, record) \
                         values ($1, $2, $3, $4, $5, $6, $7)",
                    )
                    .bind(game.id.to_string())
                    .bind(mv.ply)
                    .bind(&mv.uci)
                    .bind(&mv.san)
                    .bind(mv.clock_ms)
                    .bind(mv.played_at)
                    .bind(&mv.record)
                    .execute(&mut *$tx)
                    .await?;
                }
                let recorded = match settlement {
                    Some(Settlement { result, now_ms }) => {
                        let seats = chess_rules::ByColor {
                            white: game.white_id,
                            black: game.black_id,
                        };
                        ledger::settle_game(&mut $tx, game.id, seats, result, now_ms)
                            .await
                            .map_err(|error| match error {
                                crate::ledger::LedgerError::Database(error) => {
                                    StoreError::Database(error)
                                }
                                crate::ledger::LedgerError::Corrupt(what) => {
                                    StoreError::Corrupt(what)
                                }
                            })?
                    }
                    None => None,
                };
                $tx.commit().await?;
                recorded
            }};
        }
        let recorded = match &self.pool {
            Pool::Sqlite(pool) => {
                let mut tx = if settlement.is_some() {
                    crate::ledger::sqlite::begin_immediate(pool).await?
                } else {
                    pool.begin().await?
                };
                write_body!(tx, crate::ledger::sqlite)
            }
            Pool::Postgres(pool) => {
                let mut tx = pool.begin().await?;
                write_body!(tx, crate::ledger::postgres)
            }
        };
        Ok(recorded)
    }

    /// Stores the rematch `new_game` and, in the same transaction, the old game
    /// `old_game` (which points at it) as a compare-and-set on `expected_version`.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] if the old game changed; nothing is written then.
    pub async fn insert_rematch(
        &self,
        old_game: &GameRow,
        expected_version: i64,
        new_game: &GameRow,
    ) -> Result<()> {
        with_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            insert_game_query!(new_game).execute(&mut *tx).await?;
            let updated = update_game_query!(old_game, expected_version).execute(&mut *tx).await?;
            if updated.rows_affected() != 1 {
                tx.rollback().await?;
                return Err(StoreError::Conflict);
            }
            tx.commit().await?;
        });
        Ok(())
    }

    /// Stores a new seek.
    ///
    /// # Errors
    /// The database error.
    pub async fn insert_seek(&self, seek: &SeekRow) -> Result<()> {
        with_pool!(self, pool => {
            sqlx::query(
                "insert into seeks (id, player_id, time_control, time_control_key, color, created_at) \
                 values ($1, $2, $3, $4, $5, $6)",
            )
            .bind(seek.id.to_string())
            .bind(seek.player_id.to_string())
            .bind(&seek.time_control)
            .bind(&seek.time_control_key)
            .bind(&seek.color)
            .bind(seek.created_at)
            .execute(pool)
            .await?;
        });
        Ok(())
    }

    /// Every open seek, oldest first.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn seeks(&self) -> Result<Vec<SeekRow>> {
        let rows: Vec<(String, String, String, String, String, i64)> = with_pool!(self, pool => {
            sqlx::query_as(
                "select id, player_id, time_control, time_control_key, color, created_at \
                 from seeks order by created_at, id",
            )
            .fetch_all(pool)
            .await?
        });
        rows.into_iter().map(SeekRow::from_tuple).collect()
    }

    /// Puts `player` in the empty `color` seat of an open challenge and starts
    /// it with `state` (the game is created when its second player arrives, so
    /// first-move deadlines count from then). `false` if the seat was taken
    /// first (exactly one of racing joiners wins).
    ///
    /// # Errors
    /// The database error.
    pub async fn claim_seat(
        &self,
        game: Uuid,
        white: bool,
        player: Uuid,
        state: &str,
        now: i64,
    ) -> Result<bool> {
        let sql = if white {
            "update games set white_id = $2, state = $3, status = 'playing', updated_at = $4 \
             where id = $1 and white_id is null and status = 'open'"
        } else {
            "update games set black_id = $2, state = $3, status = 'playing', updated_at = $4 \
             where id = $1 and black_id is null and status = 'open'"
        };
        let claimed = with_pool!(self, pool => {
            sqlx::query(sql)
                .bind(game.to_string())
                .bind(player.to_string())
                .bind(state)
                .bind(now)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(claimed == 1)
    }

    /// Removes a seek; `true` if this call removed it (so exactly one of several
    /// racing joiners wins).
    ///
    /// # Errors
    /// The database error.
    pub async fn delete_seek(&self, id: Uuid) -> Result<bool> {
        let result = with_pool!(self, pool => {
            sqlx::query("delete from seeks where id = $1")
                .bind(id.to_string())
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(result == 1)
    }
}

pub use connect::connect;
