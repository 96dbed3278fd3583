//! Group commit: the changes of many games written in one transaction.
//!
//! A commit costs the same whether it carries one move or a hundred (the
//! database syncs its log once), so the node's writer hands the store every
//! change that arrived meanwhile: new players, new games and seats taken in
//! open challenges as well as the moves and endings of games in play. Each
//! game's change stays a compare-and-set on its version: a game that another
//! node moved on is answered [`WriteOutcome::Conflict`] alone, and the rest
//! of the batch commits.
//!
//! Every game's compare-and-set and every new move go to the database in one
//! statement each (on SQLite, the games' changes go through two: a plain
//! update for moves and offers, then the full one for the rest; see
//! [`BulkSql`]): Postgres reads the rows from one array per column
//! ([`GameColumns`], [`MoveColumns`]), SQLite from temporary tables of the
//! writer's connection, filled first with the rows as plain parameters
//! ([`SqliteFill`]). A batch costs the same few round trips whatever its
//! size (each statement is a round trip to sqlx's SQLite worker thread), and
//! the statement texts never change (prepared once per connection) but for
//! SQLite's fill, whose text has one `?` per value.
//!
//! The whole batch is usually one round trip for its players, games, seats
//! taken, changes and moves: on Postgres one call of the
//! `chess_commit_batch` function ([`Store::write_at_once`]), on SQLite one
//! multi-statement text run by sqlx's worker thread
//! ([`SQLITE_BATCH_AT_ONCE`], [`Store::write_sqlite_at_once`]). The rare
//! batch they do not take (a take-back, a rematch, an account's win to pay,
//! and on Postgres a game another node moved on) goes statement by
//! statement.

use chess_game::GameResult;
use serde::Serialize;
use sqlx::sqlite::{Sqlite, SqliteArguments, SqliteConnection};
use sqlx::{Arguments as _, Connection as _, Row as _};
use uuid::Uuid;

use super::{Backend, GameRow, MoveRow, PlayerRow, Result, Store, StoreError, Transaction};
use crate::clock::UnixMs;
use crate::ledger::{Recorded, rewarded_color};

/// One game's change, written as a compare-and-set on `expected_version`.
#[derive(Clone, Debug)]
pub struct GameWrite {
    /// The whole row after the change.
    pub row: GameRow,
    /// The version the row must still have; otherwise nothing of this write lands.
    pub expected_version: i64,
    /// A take-back: moves from this ply on are deleted first.
    pub keep_moves: Option<u32>,
    /// Moves played by the change, in ply order.
    pub new_moves: Vec<MoveRow>,
    /// The change ends the game with this result: the reward ledger settles it
    /// in the same transaction (exactly once, within the daily cap).
    pub settle: Option<GameResult>,
    /// The change starts a rematch: this new game is stored with it.
    pub rematch: Option<GameRow>,
    /// What other nodes are told of the change if it lands (the JSON of a
    /// `games::notify::ChangeNotice`); `None`: only that it happened.
    pub notice: Option<String>,
}

/// A seat taken in an open challenge, which starts the game: the update
/// touches nothing if the seat was taken first.
#[derive(Clone, Debug)]
pub struct SeatClaim {
    /// The challenge.
    pub game: Uuid,
    /// The white seat (else the black one).
    pub white: bool,
    /// Who sits down.
    pub player: Uuid,
    /// The started game's state.
    pub state: String,
    /// When the game starts.
    pub now: UnixMs,
    /// Its first deadline (first move or clock), if any.
    pub deadline_at: Option<UnixMs>,
    /// The game's version, which the claim leaves as it is: only named in
    /// the change notice to the other nodes.
    pub version: i64,
}

/// Everything one transaction of the group commit writes, in this order:
/// players first, then new games (which point at players), then seats taken
/// and game changes. At most one claim or write per game.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    /// New players (an existing id is left unchanged).
    pub players: Vec<PlayerRow>,
    /// New games.
    pub games: Vec<GameRow>,
    /// Seats taken in open challenges.
    pub claims: Vec<SeatClaim>,
    /// Changes to games, each a compare-and-set on the version.
    pub writes: Vec<GameWrite>,
}

impl Batch {
    /// A batch of game changes only.
    pub fn of_writes(writes: Vec<GameWrite>) -> Batch {
        Batch {
            writes,
            ..Batch::default()
        }
    }

    /// How many items the batch holds.
    pub fn len(&self) -> usize {
        self.players.len() + self.games.len() + self.claims.len() + self.writes.len()
    }

    /// Whether the batch holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the batch may be written in one round trip: it takes no
    /// moves back and starts no rematch (whose new game must exist before
    /// the old one points at it, and goes if the old one's write does not).
    fn fits_one_round_trip(&self) -> bool {
        self.writes
            .iter()
            .all(|write| write.rematch.is_none() && write.keep_moves.is_none())
    }
}

/// What became of a batch that committed, item by item in the batch's order.
#[derive(Clone, Debug, Default)]
pub struct BatchOutcome {
    /// Per claim: whether it took the seat (else it was taken first).
    pub claimed: Vec<bool>,
    /// Per game change.
    pub writes: Vec<WriteOutcome>,
    /// How many notices the batch sent.
    pub notices_sent: usize,
    /// How the batch was written.
    pub path: BatchPath,
}

/// How a batch was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BatchPath {
    /// Statement by statement: a batch with a take-back, a rematch or an
    /// ending that may pay a reward, and on Postgres one with a game whose
    /// version moved on.
    #[default]
    Statements,
    /// In one round trip: on Postgres one call of the `chess_commit_batch`
    /// function, on SQLite one multi-statement text run by sqlx's worker
    /// thread ([`SQLITE_BATCH_AT_ONCE`]).
    OneStatement,
}

impl BatchPath {
    /// The label of `chess_commit_batches_total`.
    pub fn label(self) -> &'static str {
        match self {
            BatchPath::Statements => "statements",
            BatchPath::OneStatement => "one_statement",
        }
    }
}

/// What became of one write of a batch that committed.
#[derive(Clone, Debug)]
pub enum WriteOutcome {
    /// Stored; the reward the ending settled, if it paid or was over the cap.
    Written { reward: Option<Recorded> },
    /// The stored version had moved on: nothing of this write was stored.
    Conflict,
}

impl Store {
    /// Writes `batch` in one transaction, with the notices `announce`
    /// makes of what it wrote (every item's outcome known) sent on Postgres
    /// channel `channel` when, and only if, it commits. An ending settles
    /// its reward in the same transaction.
    ///
    /// On Postgres the batch first locks the rows of the games it changes in
    /// game-id order (and inserts players in id order), so two nodes'
    /// batches sharing rows wait for each other rather than deadlock.
    ///
    /// Batches run on the store's one writer connection, one at a time: the
    /// node's writer task calls this, and any other caller waits its turn.
    ///
    /// # Errors
    /// A database error fails the whole batch: nothing of it is stored.
    pub async fn write_batch(
        &self,
        batch: &Batch,
        channel: &str,
        announce: impl Fn(&BatchOutcome) -> Vec<String>,
    ) -> Result<BatchOutcome> {
        if let Some(outcome) = self.write_at_once(batch, channel, &announce).await? {
            return Ok(outcome);
        }
        if let Some(outcome) = self.write_sqlite_at_once(batch).await? {
            return Ok(outcome);
        }
        let writes = &batch.writes;
        let mut order: Vec<usize> = (0..writes.len()).collect();
        order.sort_by_key(|&index| writes[index].row.id);
        debug_assert!(
            order
                .windows(2)
                .all(|pair| writes[pair[0]].row.id != writes[pair[1]].row.id),
            "at most one write per game in a batch"
        );
        let mut outcomes = vec![WriteOutcome::Conflict; writes.len()];
        // The writer pool has one connection: the transaction takes it from
        // the pool, so a held one goes back first.
        self.held_writer.0.lock().await.take();
        let mut tx = Transaction::begin(&self.writer).await?;
        let sql = match tx.backend() {
            Backend::Sqlite(_) => &SQLITE,
            Backend::Postgres(tx) => {
                let mut ids: Vec<String> = writes
                    .iter()
                    .map(|write| write.row.id)
                    .chain(batch.claims.iter().map(|claim| claim.game))
                    .map(|id| id.to_string())
                    .collect();
                ids.sort_unstable();
                if !ids.is_empty() {
                    sqlx::query("select id from games where id = any($1) order by id for update")
                        .bind(&ids)
                        .fetch_all(&mut **tx)
                        .await?;
                }
                &POSTGRES
            }
        };

        let claimed = write_setup(&mut tx, batch).await?;
        let mut written = vec![false; writes.len()];
        for &index in &order {
            if let Some(rematch) = &writes[index].rematch {
                written[index] = write_with_rematch(&mut tx, &writes[index], rematch).await?;
            }
        }
        let mut bulk: Vec<GameUpdate<'_>> = order
            .iter()
            .map(|&index| &writes[index])
            .filter(|write| write.rematch.is_none())
            .map(GameUpdate::of)
            .collect();
        for update in [sql.update_play, Some(sql.update_games)]
            .into_iter()
            .flatten()
        {
            if bulk.is_empty() {
                break;
            }
            for id in update_games(&mut tx, update, &bulk).await? {
                let id = Uuid::parse_str(&id)
                    .map_err(|e| StoreError::Corrupt(format!("game id {id}: {e}")))?;
                if let Ok(at) = order.binary_search_by_key(&id, |&index| writes[index].row.id) {
                    written[order[at]] = true;
                }
            }
            // What the plain update left (seats, status, result or rematch
            // changed, or a lost compare-and-set) goes to the full one.
            bulk.retain(|update| {
                order
                    .binary_search_by_key(&update.id, |&index| writes[index].row.id)
                    .is_ok_and(|at| !written[order[at]])
            });
        }

        let mut new_moves: Vec<MoveInsert<'_>> = Vec::new();
        for &index in &order {
            if !written[index] {
                continue;
            }
            let write = &writes[index];
            let game = &write.row;
            if let Some(keep) = write.keep_moves {
                with_conn!(tx, conn => {
                    sqlx::query("delete from moves where game_id = $1 and ply >= $2")
                        .bind(game.id.to_string())
                        .bind(i64::from(keep))
                        .execute(&mut *conn)
                        .await?;
                });
            }
            let reward = match &write.settle {
                Some(result) => {
                    let seats = chess_rules::ByColor {
                        white: game.white_id,
                        black: game.black_id,
                    };
                    tx.settle_reward(game.id, seats, result, game.updated_at.to_stored())
                        .await?
                }
                None => None,
            };
            new_moves.extend(write.new_moves.iter().map(|mv| MoveInsert::of(game.id, mv)));
            outcomes[index] = WriteOutcome::Written { reward };
        }
        if !new_moves.is_empty() {
            match tx.backend() {
                Backend::Sqlite(tx) => {
                    let mut fill = SqliteFill::default();
                    MoveColumns::of(&new_moves).fill_sqlite("batch_moves", &mut fill)?;
                    fill.run(tx).await?;
                    sqlx::query(sql.insert_moves).execute(&mut **tx).await?;
                }
                Backend::Postgres(tx) => {
                    MoveColumns::of(&new_moves)
                        .bind(sqlx::query(sql.insert_moves))
                        .execute(&mut **tx)
                        .await?;
                }
            }
        }
        let mut outcome = BatchOutcome {
            claimed,
            writes: outcomes,
            notices_sent: 0,
            path: BatchPath::Statements,
        };
        if self.is_postgres() {
            let notices = announce(&outcome);
            tx.notify(channel, &notices).await?;
            outcome.notices_sent = notices.len();
        }
        tx.commit().await?;
        Ok(outcome)
    }
}

/// The SQLSTATE `chess_commit_batch` raises when a game's version moved on.
const VERSION_MOVED_ON: &str = "CS001";
/// The SQLSTATE `chess_commit_batch` raises when an ending's winner is an
/// account: the reward ledger settles it statement by statement.
const REWARD_TO_SETTLE: &str = "CS002";

/// The call of `chess_commit_batch`, with its 51 parameters (the columns of
/// [`PlayerColumns`], [`NewGameColumns`], [`ClaimColumns`] and the claims'
/// notices, [`GameColumns`] and the endings' winners, [`MoveColumns`], the
/// channel and the changes' notices).
static COMMIT_BATCH: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let parameters: Vec<String> = (1..=51).map(|n| format!("${n}")).collect();
    format!("select chess_commit_batch({})", parameters.join(", "))
});

impl Store {
    /// The batch on Postgres in one round trip: new players, new games,
    /// seats taken and changes to games in play, written by the
    /// `chess_commit_batch` function in one statement (its own transaction)
    /// instead of seven or more. `None`, with nothing written, when the
    /// batch is not for it (a take-back, a rematch) or the function handed
    /// it back (a game's version moved on, an account won a game): the
    /// caller then writes it statement by statement, which refuses a stale
    /// game alone and settles rewards through the ledger.
    async fn write_at_once(
        &self,
        batch: &Batch,
        channel: &str,
        announce: &impl Fn(&BatchOutcome) -> Vec<String>,
    ) -> Result<Option<BatchOutcome>> {
        let Backend::Postgres(pool) = &self.writer else {
            return Ok(None);
        };
        if !batch.fits_one_round_trip() {
            return Ok(None);
        }
        let mut writes: Vec<&GameWrite> = batch.writes.iter().collect();
        writes.sort_by_key(|write| write.row.id);
        let updates: Vec<GameUpdate<'_>> =
            writes.iter().map(|write| GameUpdate::of(write)).collect();
        let new_moves = MoveInsert::all_of(writes.iter().copied());
        // The function hands the batch back if any of these is an account.
        let settling_winners = settling_winners(writes.iter().copied());
        // Every write lands or none does: their notices go out together. A
        // claim's goes out alone, if it takes its seat.
        let claims = batch.claims.len();
        let mut outcome = BatchOutcome {
            claimed: vec![false; claims],
            writes: vec![WriteOutcome::Written { reward: None }; batch.writes.len()],
            notices_sent: 0,
            path: BatchPath::OneStatement,
        };
        let notices = announce(&outcome);
        let claim_notices: Vec<Option<String>> = (0..claims)
            .map(|taken| {
                let alone = BatchOutcome {
                    claimed: (0..claims).map(|index| index == taken).collect(),
                    writes: vec![WriteOutcome::Conflict; batch.writes.len()],
                    ..BatchOutcome::default()
                };
                let mut notices = announce(&alone);
                debug_assert!(notices.len() <= 1, "one claim's notice fits in one");
                notices.pop()
            })
            .collect();
        let mut players: Vec<&PlayerRow> = batch.players.iter().collect();
        players.sort_by_key(|player| player.id);

        let call = sqlx::query(COMMIT_BATCH.as_str());
        let call = PlayerColumns::of(players).bind(call);
        let call = NewGameColumns::of(&batch.games).bind(call);
        let call = ClaimColumns::of(&batch.claims)
            .bind(call)
            .bind(&claim_notices);
        let call = GameColumns::of(&updates).bind(call).bind(&settling_winners);
        let call = MoveColumns::of(&new_moves)
            .bind(call)
            .bind(channel)
            .bind(&notices);
        let mut held = self.held_writer.0.lock().await;
        let connection = match &mut *held {
            Some(connection) => connection,
            empty => empty.insert(pool.acquire().await?),
        };
        let written = call.fetch_one(&mut **connection).await;
        if written
            .as_ref()
            .is_err_and(|error| !matches!(error, sqlx::Error::Database(_)))
        {
            // Broken, or in an unknown state: back to the pool, which
            // checks it and closes it if it is gone.
            *held = None;
        }
        drop(held);
        let row = match written {
            Ok(row) => row,
            Err(sqlx::Error::Database(error))
                if matches!(
                    error.code().as_deref(),
                    Some(VERSION_MOVED_ON | REWARD_TO_SETTLE)
                ) =>
            {
                return Ok(None);
            }
            Err(error) => return Err(error.into()),
        };
        // The batch has committed: an answer that cannot be read leaves it
        // in doubt, as a connection broken during the commit would (the
        // owners ask the store what landed).
        outcome.claimed = row
            .try_get::<Vec<bool>, _>(0)
            .ok()
            .filter(|claimed| claimed.len() == claims)
            .ok_or_else(|| {
                sqlx::Error::Protocol(format!(
                    "chess_commit_batch's answer is not one flag per claim ({claims})"
                ))
            })?;
        let claim_notices_sent = claim_notices
            .iter()
            .zip(&outcome.claimed)
            .filter(|(notice, claimed)| notice.is_some() && **claimed)
            .count();
        outcome.notices_sent = notices.len() + claim_notices_sent;
        Ok(Some(outcome))
    }

    /// The batch on SQLite in one round trip to sqlx's worker thread
    /// ([`SQLITE_BATCH_AT_ONCE`]): its new players, new games, seats taken,
    /// changes and moves. `None`, with nothing written, when the batch is
    /// not for it (a take-back, a rematch) or an account may win a reward
    /// in it: the caller then writes it statement by statement, where the
    /// ledger settles rewards.
    ///
    /// # Errors
    /// A database error; the transaction is rolled back first, so nothing
    /// of the batch is stored.
    async fn write_sqlite_at_once(&self, batch: &Batch) -> Result<Option<BatchOutcome>> {
        let Backend::Sqlite(pool) = &self.writer else {
            return Ok(None);
        };
        if !batch.fits_one_round_trip() {
            return Ok(None);
        }
        let updates: Vec<GameUpdate<'_>> = batch.writes.iter().map(GameUpdate::of).collect();
        let new_moves = MoveInsert::all_of(&batch.writes);
        let mut fill = SqliteFill::default();
        PlayerColumns::of(&batch.players).fill_sqlite("batch_players", &mut fill)?;
        NewGameColumns::of(&batch.games).fill_sqlite("batch_games", &mut fill)?;
        ClaimColumns::of(&batch.claims).fill_sqlite("batch_claims", &mut fill)?;
        GameColumns::of(&updates).fill_sqlite("batch_changes", &mut fill)?;
        MoveColumns::of(&new_moves).fill_sqlite("batch_moves", &mut fill)?;
        let mut conn = pool.acquire().await?;
        // Only the connection's own temporary tables: nothing is written
        // yet if this fails.
        fill.run(&mut conn).await?;
        // `fetch_all`, not `fetch_one`: sqlx stops a text at the first row
        // asked for, which would leave the `commit` unrun.
        let answer = sqlx::query(SQLITE_BATCH_AT_ONCE)
            .bind(to_json(&settling_winners(&batch.writes))?)
            .fetch_all(&mut *conn)
            .await;
        let rows = match answer {
            Ok(rows) => rows,
            Err(error) => {
                // A statement failed: the ones after it, the commit too,
                // did not run. Roll back what ran (an error here means no
                // transaction was open: `begin` itself failed). A connection
                // whose state is unknown is not handed to the next batch.
                if let Err(rollback) = sqlx::query("rollback").execute(&mut *conn).await
                    && !rollback.to_string().contains("no transaction is active")
                {
                    tracing::warn!(%rollback, "closing the writer's connection after a failed rollback");
                    conn.close_on_drop();
                }
                if error.to_string().contains(SETTLE_THROUGH_THE_LEDGER) {
                    return Ok(None);
                }
                return Err(error.into());
            }
        };
        // The batch has committed: an answer that cannot be read leaves it
        // in doubt (the owners ask the store what landed).
        let ids = |column: usize| -> Result<Vec<Uuid>> {
            let mut ids: Vec<Uuid> = rows
                .first()
                .and_then(|row| row.try_get::<String, _>(column).ok())
                .and_then(|ids| serde_json::from_str(&ids).ok())
                .ok_or_else(|| {
                    sqlx::Error::Protocol("the batch's answer is not two lists of game ids".into())
                })?;
            ids.sort_unstable();
            Ok(ids)
        };
        let (written, claimed) = (ids(0)?, ids(1)?);
        let writes = batch
            .writes
            .iter()
            .map(|write| {
                if written.binary_search(&write.row.id).is_ok() {
                    WriteOutcome::Written { reward: None }
                } else {
                    WriteOutcome::Conflict
                }
            })
            .collect();
        Ok(Some(BatchOutcome {
            claimed: batch
                .claims
                .iter()
                .map(|claim| claimed.binary_search(&claim.game).is_ok())
                .collect(),
            writes,
            notices_sent: 0,
            path: BatchPath::OneStatement,
        }))
    }
}

/// The players who win a reward if they are accounts: the winners of the
/// writes' decisive endings (a draw, an abort or a game with nobody in the
/// winning seat pays nothing whoever plays).
fn settling_winners<'a>(writes: impl IntoIterator<Item = &'a GameWrite>) -> Vec<String> {
    writes
        .into_iter()
        .filter_map(|write| {
            let color = rewarded_color(write.settle.as_ref()?)?;
            let game = &write.row;
            let seats = chess_rules::ByColor {
                white: game.white_id,
                black: game.black_id,
            };
            seats.get(color).map(|id| id.to_string())
        })
        .collect()
}

/// Writes the batch's new players, new games and seat claims (in that
/// order, for the foreign keys); returns whether each claim took its seat.
/// One statement each: they are a few per game created, not per move.
async fn write_setup(tx: &mut Transaction, batch: &Batch) -> Result<Vec<bool>> {
    let mut players: Vec<&PlayerRow> = batch.players.iter().collect();
    players.sort_by_key(|player| player.id);
    with_conn!(tx, conn => {
        for player in players {
            insert_player_query!(player).execute(&mut *conn).await?;
        }
        for game in &batch.games {
            insert_game_query!(game).execute(&mut *conn).await?;
        }
        let mut claimed = Vec::with_capacity(batch.claims.len());
        for claim in &batch.claims {
            let rows = claim_seat_query!(claim).execute(&mut *conn).await?.rows_affected();
            claimed.push(rows == 1);
        }
        Ok(claimed)
    })
}

/// The compare-and-set of a game whose change starts `rematch`; `false` if
/// the stored version had moved on and nothing was written. The rematch row
/// must exist before the old game points at it; a savepoint takes it back if
/// the old game conflicts. (Rare: other writes need no savepoint.)
async fn write_with_rematch(
    tx: &mut Transaction,
    write: &GameWrite,
    rematch: &GameRow,
) -> Result<bool> {
    let game = &write.row;
    with_conn!(tx, conn => {
        let mut step = conn.begin().await?;
        insert_game_query!(rematch).execute(&mut *step).await?;
        let updated = update_game_query!(game, write.expected_version)
            .execute(&mut *step)
            .await?
            .rows_affected();
        if updated == 1 {
            step.commit().await?;
        } else {
            step.rollback().await?;
        }
        Ok(updated == 1)
    })
}

/// `value` as JSON (plain data: cannot fail in practice).
fn to_json(value: &impl Serialize) -> Result<String> {
    serde_json::to_string(value).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// The statements of a batch in one dialect: the same work, but SQLite reads
/// the rows from its temporary tables (filled by [`SqliteFill`]), Postgres
/// from one array per column with `unnest` (bound by [`GameColumns`] and
/// [`MoveColumns`]).
struct BulkSql {
    /// Compare-and-set of the games whose seats, status, result and rematch
    /// stay as stored (a move, an offer): writes only what such a change
    /// changes, so that SQLite leaves the indexes on those columns alone (it
    /// rewrites an index entry whenever its column is assigned, even to the
    /// same value). Returns the ids it updated; the rest go to
    /// `update_games`. `None` on Postgres, whose updates write every index
    /// entry anyway (no update of a game is HOT: its deadline is indexed).
    update_play: Option<&'static str>,
    /// Compare-and-set of many games; returns the ids it updated.
    update_games: &'static str,
    /// Inserts many moves.
    insert_moves: &'static str,
}

/// The SQLite batch statements' pieces, as literals for `concat!`: a
/// game's change is a row `w` of `temp.batch_changes`.
macro_rules! sqlite_sql {
    // What a move or an offer changes.
    (play_columns) => {
        "state = w.state, version = w.version, updated_at = w.updated_at, \
        deadline_at = w.deadline_at, recent_events = w.recent_events, \
        premove_nodes = w.premove_nodes"
    };
    // What only a game's start, seats, end or rematch changes.
    (seat_columns) => {
        "white_id = w.white_id, black_id = w.black_id, status = w.status, result = w.result, \
        rematch_id = w.rematch_id"
    };
    // The compare-and-set of the games whose seats, status, result and
    // rematch stay as stored.
    (update_play) => {
        concat!(
            "update games set ",
            sqlite_sql!(play_columns),
            " from temp.batch_changes as w \
            where games.id = w.id and games.version = w.expected \
            and games.status = w.status \
            and games.white_id is w.white_id and games.black_id is w.black_id \
            and games.result is w.result and games.rematch_id is w.rematch_id"
        )
    };
    // The compare-and-set of every column (what `update_play` left).
    (update_games) => {
        concat!(
            "update games set ",
            sqlite_sql!(seat_columns),
            ", ",
            sqlite_sql!(play_columns),
            " from temp.batch_changes as w \
            where games.id = w.id and games.version = w.expected"
        )
    };
    (insert_moves) => {
        "insert into moves (game_id, ply, uci, san, clock_ms, played_at, record) \
        select game_id, ply, uci, san, clock_ms, played_at, record from temp.batch_moves"
    };
}

const SQLITE: BulkSql = BulkSql {
    update_play: Some(concat!(sqlite_sql!(update_play), " returning games.id")),
    update_games: concat!(sqlite_sql!(update_games), " returning games.id"),
    insert_moves: sqlite_sql!(insert_moves),
};

/// The temporary tables [`SQLITE_BATCH_AT_ONCE`] decides its batch into,
/// made once on the writer's connection when it opens
/// ([`create_sqlite_batch_tables`]), not in every batch.
const SQLITE_BATCH_TABLES: &str = "\
    create temp table if not exists batch_players (id text, kind text, name text, \
        created_at integer); \
    create temp table if not exists batch_games (id text, mode text, white_id text, \
        black_id text, computer_level integer, time_control text, status text, result text, \
        state text, version integer, rematch_of text, rematch_id text, created_at integer, \
        updated_at integer, deadline_at integer, recent_events text, premove_nodes text); \
    create temp table if not exists batch_claims (game text, white integer, player text, \
        state text, now integer, deadline_at integer); \
    create temp table if not exists batch_changes (id text, expected integer, white_id text, \
        black_id text, status text, result text, state text, version integer, rematch_id text, \
        updated_at integer, deadline_at integer, recent_events text, premove_nodes text); \
    create temp table if not exists batch_moves (game_id text, ply integer, uci text, \
        san text, clock_ms integer, played_at integer, record text); \
    create temp table if not exists batch_winners (id text not null, kind text, \
        constraint settle_through_the_ledger check (kind is not 'account')); \
    create temp table if not exists batch_claimed (id text primary key); \
    create temp table if not exists batch_written (id text primary key);";

/// Makes the writer connection's temporary tables for
/// [`SQLITE_BATCH_AT_ONCE`] (in memory: the connection has
/// `temp_store = memory`).
///
/// # Errors
/// The database error.
pub(super) async fn create_sqlite_batch_tables(
    connection: &mut sqlx::SqliteConnection,
) -> std::result::Result<(), sqlx::Error> {
    sqlx::raw_sql(SQLITE_BATCH_TABLES)
        .execute(connection)
        .await
        .map(|_| ())
}

/// The name of the check [`SQLITE_BATCH_AT_ONCE`] fails when an account
/// may win a reward in the batch: the ledger settles it statement by
/// statement.
const SETTLE_THROUGH_THE_LEDGER: &str = "settle_through_the_ledger";

/// A whole batch on SQLite in one text run by sqlx's worker thread: a round
/// trip to that thread instead of one per statement (begin, each set-up,
/// the updates, the moves, commit), each a wake-up of the worker and one
/// back. Its rows are in the connection's temporary tables
/// ([`SQLITE_BATCH_TABLES`]), filled by the round trip before
/// ([`SqliteFill`]). Under the write lock that `BEGIN IMMEDIATE` takes, the
/// seats that are still free and the games whose compare-and-set holds are
/// decided first, into `batch_claimed` and `batch_written`; the updates,
/// the moves and the answer then take exactly those, so a taken seat or a
/// stale game is refused alone, as statement by statement. The answer is
/// one row: the ids written and the ids whose seat was taken, as two JSON
/// arrays. A winner who is an account fails a named check before any game
/// is written (the batch then goes statement by statement, where the
/// ledger pays). Each step is the statement-by-statement path's
/// (`insert_player_query!`, `insert_game_query!`, `claim_seat_query!`,
/// [`SQLITE`]) reading its rows from the tables; the store contract runs
/// every kind of item through it on SQLite.
///
/// The one parameter is the winners of rewarding endings, a JSON array.
const SQLITE_BATCH_AT_ONCE: &str = concat!(
    "begin immediate; \
    delete from temp.batch_winners; \
    delete from temp.batch_claimed; \
    delete from temp.batch_written; \
    insert into players (id, kind, name, created_at) \
        select id, kind, name, created_at from temp.batch_players \
        where true on conflict (id) do nothing; \
    insert into temp.batch_winners (id, kind) \
        select w.value, players.kind from json_each($1) as w left join players on players.id = w.value; \
    insert into games (id, mode, white_id, black_id, computer_level, time_control, status, \
        result, state, version, rematch_of, rematch_id, created_at, updated_at, deadline_at, \
        recent_events, premove_nodes) \
        select id, mode, white_id, black_id, computer_level, time_control, status, result, \
        state, version, rematch_of, rematch_id, created_at, updated_at, deadline_at, \
        recent_events, premove_nodes from temp.batch_games; \
    insert into temp.batch_claimed (id) \
        select games.id from temp.batch_claims as c join games on games.id = c.game \
        where games.status = 'open' and case when c.white \
        then games.white_id is null else games.black_id is null end; \
    update games set \
        white_id = case when c.white then c.player else games.white_id end, \
        black_id = case when c.white then games.black_id else c.player end, \
        state = c.state, status = 'playing', updated_at = c.now, deadline_at = c.deadline_at \
        from temp.batch_claims as c \
        where games.id = c.game and c.game in (select id from temp.batch_claimed); \
    insert into temp.batch_written (id) \
        select games.id from temp.batch_changes as w join games on games.id = w.id \
        where games.version = w.expected; ",
    sqlite_sql!(update_play),
    "; ",
    sqlite_sql!(update_games),
    "; ",
    sqlite_sql!(insert_moves),
    " where game_id in (select id from temp.batch_written); \
    select (select json_group_array(id) from temp.batch_written), \
        (select json_group_array(id) from temp.batch_claimed); \
    commit;"
);

const POSTGRES: BulkSql = BulkSql {
    update_play: None,
    update_games: "update games set white_id = w.white_id, black_id = w.black_id, \
        status = w.status, result = w.result, state = w.state, version = w.version, \
        rematch_id = w.rematch_id, updated_at = w.updated_at, deadline_at = w.deadline_at, \
        recent_events = w.recent_events, premove_nodes = w.premove_nodes \
        from unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], \
        $7::text[], $8::bigint[], $9::text[], $10::bigint[], $11::bigint[], $12::text[], \
        $13::text[]) as w(id, expected, white_id, black_id, status, result, state, version, \
        rematch_id, updated_at, deadline_at, recent_events, premove_nodes) \
        where games.id = w.id and games.version = w.expected \
        returning games.id",
    insert_moves: "insert into moves (game_id, ply, uci, san, clock_ms, played_at, record) \
        select * from unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], \
        $6::bigint[], $7::text[])",
};

/// Runs `sql`, one of a [`BulkSql`]'s compare-and-sets, on `updates`;
/// returns the ids of the games it updated.
async fn update_games(
    tx: &mut Transaction,
    sql: &'static str,
    updates: &[GameUpdate<'_>],
) -> Result<Vec<String>> {
    let ids = match tx.backend() {
        Backend::Sqlite(tx) => {
            let mut fill = SqliteFill::default();
            GameColumns::of(updates).fill_sqlite("batch_changes", &mut fill)?;
            fill.run(tx).await?;
            sqlx::query(sql)
                .fetch_all(&mut **tx)
                .await?
                .iter()
                .map(|row| row.try_get(0))
                .collect::<std::result::Result<_, _>>()?
        }
        Backend::Postgres(tx) => GameColumns::of(updates)
            .bind(sqlx::query(sql))
            .fetch_all(&mut **tx)
            .await?
            .iter()
            .map(|row| row.try_get(0))
            .collect::<std::result::Result<_, _>>()?,
    };
    Ok(ids)
}

/// Most rows in one insert of a [`SqliteFill`]: SQLite takes at most
/// 32,766 parameters in a statement, and a batch may hold 1,024 changes
/// (`games::writer::MAX_BATCH`) of 13 columns each.
const SQLITE_FILL_ROWS: usize = 256;

/// Rows for SQLite's temporary batch tables ([`SQLITE_BATCH_TABLES`]) as
/// one text of plain `?` parameters, run in one round trip before the
/// statements that read them. Reading the rows from a JSON parameter
/// instead (`json_each`, then `value ->> 'column'`) turned each row's object
/// back into text and parsed it again for every column read: three times
/// the CPU of these inserts for a batch of moves (docs/performance.md,
/// "Twelfth pass"). The text is made for the batch's sizes and not kept
/// prepared (`persistent(false)`): a new size would take a slot of sqlx's
/// statement cache each time.
#[derive(Default)]
struct SqliteFill {
    sql: String,
    arguments: SqliteArguments,
}

impl SqliteFill {
    /// Empties temporary table `table` of the previous batch's rows.
    fn empty(&mut self, table: &str) {
        self.sql.push_str("delete from temp.");
        self.sql.push_str(table);
        self.sql.push_str("; ");
    }

    /// An insert of `rows` rows of `columns` into temporary table `table`,
    /// whose values are [`SqliteFill::add`]ed next, row by row.
    fn insert(&mut self, table: &str, columns: &[&str], rows: usize) {
        let row = format!("({})", vec!["?"; columns.len()].join(", "));
        self.sql.push_str("insert into temp.");
        self.sql.push_str(table);
        self.sql.push_str(" (");
        self.sql.push_str(&columns.join(", "));
        self.sql.push_str(") values ");
        self.sql.push_str(&vec![row.as_str(); rows].join(", "));
        self.sql.push_str("; ");
    }

    /// The next value of the text.
    fn add<'t>(&mut self, value: impl sqlx::Encode<'t, Sqlite> + sqlx::Type<Sqlite>) -> Result<()> {
        self.arguments
            .add(value)
            .map_err(|e| StoreError::Corrupt(format!("a batch's value for SQLite: {e}")))
    }

    /// Runs the text on `connection`.
    ///
    /// # Errors
    /// The database error.
    async fn run(self, connection: &mut SqliteConnection) -> Result<()> {
        sqlx::query_with(sqlx::AssertSqlSafe(self.sql), self.arguments)
            .persistent(false)
            .execute(connection)
            .await?;
        Ok(())
    }
}

/// A statement for Postgres, its parameters bound so far.
type PgQuery<'q> = sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>;

/// Declares rows bound to Postgres as one array per column: a struct of one
/// `Vec` per column, `of` to fill it from the rows, and `bind` to bind its
/// arrays, in the order declared, as the next parameters of a statement.
/// SQLite, which has no arrays, gets the same rows as plain parameters of
/// inserts into a temporary table whose columns are named as the fields
/// (`fill_sqlite`). Neither way does the node write JSON nor the database
/// parse it: parsing a batch's JSON, with every game's state and events
/// escaped inside it, was 7% of the machine's CPU on Postgres in the 1–3 s
/// thinking row (docs/performance.md, "Ninth pass"), and SQLite's
/// `value ->> 'column'` reread a row's whole object for every column
/// ("Twelfth pass").
macro_rules! column_arrays {
    ($(
        $(#[$meta:meta])*
        struct $name:ident<$a:lifetime> of $row:ty {
            $($column:ident: $type:ty = |$item:ident| $value:expr,)+
        }
    )+) => {$(
        $(#[$meta])*
        #[derive(Default)]
        struct $name<$a> {
            $($column: Vec<$type>,)+
        }

        impl<$a> $name<$a> {
            fn of(rows: impl IntoIterator<Item = $row>) -> $name<$a> {
                let mut columns = $name::default();
                for row in rows {
                    $(columns.$column.push({
                        let $item = row;
                        $value
                    });)+
                }
                columns
            }

            fn bind<'q>(self, query: PgQuery<'q>) -> PgQuery<'q> {
                query$(.bind(self.$column))+
            }

            /// Adds to `fill` the statements that empty the temporary
            /// table `table` and insert these rows into it, its columns
            /// named as the fields.
            fn fill_sqlite(mut self, table: &'static str, fill: &mut SqliteFill) -> Result<()> {
                const COLUMNS: &[&str] = &[$(stringify!($column)),+];
                let rows = [$(self.$column.len()),+][0];
                fill.empty(table);
                for start in (0..rows).step_by(SQLITE_FILL_ROWS) {
                    let end = rows.min(start + SQLITE_FILL_ROWS);
                    fill.insert(table, COLUMNS, end - start);
                    for index in start..end {
                        $(fill.add(std::mem::take(&mut self.$column[index]))?;)+
                    }
                }
                Ok(())
            }
        }
    )+};
}

column_arrays! {
    /// Game updates, in [`GameUpdate`]'s order.
    struct GameColumns<'a> of &'a GameUpdate<'a> {
        id: String = |update| update.id.to_string(),
        expected: i64 = |update| update.expected,
        white_id: Option<String> = |update| update.white_id.map(|id| id.to_string()),
        black_id: Option<String> = |update| update.black_id.map(|id| id.to_string()),
        status: &'static str = |update| update.status,
        result: Option<&'a str> = |update| update.result,
        state: &'a str = |update| update.state,
        version: i64 = |update| update.version,
        rematch_id: Option<String> = |update| update.rematch_id.map(|id| id.to_string()),
        updated_at: i64 = |update| update.updated_at,
        deadline_at: Option<i64> = |update| update.deadline_at,
        recent_events: &'a str = |update| update.recent_events,
        premove_nodes: Option<String> = |update| update.premove_nodes.clone(),
    }

    /// New moves, in [`MoveInsert`]'s order.
    struct MoveColumns<'a> of &'a MoveInsert<'a> {
        game_id: String = |mv| mv.game_id.to_string(),
        ply: i64 = |mv| mv.ply,
        uci: &'a str = |mv| mv.uci,
        san: &'a str = |mv| mv.san,
        clock_ms: Option<i64> = |mv| mv.clock_ms,
        played_at: i64 = |mv| mv.played_at,
        record: &'a str = |mv| mv.record,
    }

    /// New players, in the order of `insert_player_query!`.
    struct PlayerColumns<'a> of &'a PlayerRow {
        id: String = |player| player.id.to_string(),
        kind: &'static str = |player| player.kind.as_str(),
        name: &'a str = |player| &player.name,
        created_at: i64 = |player| player.created_at.to_stored(),
    }

    /// New games, in the order of `insert_game_query!`.
    struct NewGameColumns<'a> of &'a GameRow {
        id: String = |game| game.id.to_string(),
        mode: &'static str = |game| game.mode.as_str(),
        white_id: Option<String> = |game| game.white_id.map(|id| id.to_string()),
        black_id: Option<String> = |game| game.black_id.map(|id| id.to_string()),
        computer_level: Option<i64> = |game| game.computer_level,
        time_control: &'a str = |game| &game.time_control,
        status: &'static str = |game| game.status.as_str(),
        result: Option<&'a str> = |game| game.result.as_deref(),
        state: &'a str = |game| &game.state,
        version: i64 = |game| game.version,
        rematch_of: Option<String> = |game| game.rematch_of.map(|id| id.to_string()),
        rematch_id: Option<String> = |game| game.rematch_id.map(|id| id.to_string()),
        created_at: i64 = |game| game.created_at.to_stored(),
        updated_at: i64 = |game| game.updated_at.to_stored(),
        deadline_at: Option<i64> = |game| game.deadline_at.map(UnixMs::to_stored),
        recent_events: &'a str = |game| &game.recent_events,
        premove_nodes: Option<String> = |game| game.premove_nodes_json(),
    }

    /// Seats taken, in the order of `claim_seat_query!` (with the seat's
    /// colour as a flag).
    struct ClaimColumns<'a> of &'a SeatClaim {
        game: String = |claim| claim.game.to_string(),
        white: bool = |claim| claim.white,
        player: String = |claim| claim.player.to_string(),
        state: &'a str = |claim| &claim.state,
        now: i64 = |claim| claim.now.to_stored(),
        deadline_at: Option<i64> = |claim| claim.deadline_at.map(UnixMs::to_stored),
    }
}

/// One game's compare-and-set: a row of a batch's [`GameColumns`].
struct GameUpdate<'a> {
    id: Uuid,
    expected: i64,
    white_id: Option<Uuid>,
    black_id: Option<Uuid>,
    status: &'static str,
    result: Option<&'a str>,
    state: &'a str,
    version: i64,
    rematch_id: Option<Uuid>,
    updated_at: i64,
    deadline_at: Option<i64>,
    recent_events: &'a str,
    premove_nodes: Option<String>,
}

impl<'a> GameUpdate<'a> {
    fn of(write: &'a GameWrite) -> GameUpdate<'a> {
        let game = &write.row;
        GameUpdate {
            id: game.id,
            expected: write.expected_version,
            white_id: game.white_id,
            black_id: game.black_id,
            status: game.status.as_str(),
            result: game.result.as_deref(),
            state: &game.state,
            version: game.version,
            rematch_id: game.rematch_id,
            updated_at: game.updated_at.to_stored(),
            deadline_at: game.deadline_at.map(UnixMs::to_stored),
            recent_events: &game.recent_events,
            premove_nodes: game.premove_nodes_json(),
        }
    }
}

/// One new move: a row of a batch's [`MoveColumns`].
struct MoveInsert<'a> {
    game_id: Uuid,
    ply: i64,
    uci: &'a str,
    san: &'a str,
    clock_ms: Option<i64>,
    played_at: i64,
    record: &'a str,
}

impl<'a> MoveInsert<'a> {
    /// The new moves of `writes`, in their order.
    fn all_of(writes: impl IntoIterator<Item = &'a GameWrite>) -> Vec<MoveInsert<'a>> {
        writes
            .into_iter()
            .flat_map(|write| {
                write
                    .new_moves
                    .iter()
                    .map(|mv| MoveInsert::of(write.row.id, mv))
            })
            .collect()
    }

    fn of(game_id: Uuid, mv: &'a MoveRow) -> MoveInsert<'a> {
        MoveInsert {
            game_id,
            ply: mv.ply,
            uci: &mv.uci,
            san: &mv.san,
            clock_ms: mv.clock_ms,
            played_at: mv.played_at.to_stored(),
            record: &mv.record,
        }
    }
}
