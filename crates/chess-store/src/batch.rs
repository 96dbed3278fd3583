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
//! The whole batch is usually written in one go. On Postgres it is one call
//! of the `chess_commit_batch` function ([`Store::write_at_once`]), its rows
//! bound as one array per column ([`GameColumns`], [`MoveColumns`]): one
//! round trip. On SQLite the writer's own connection writes it in place on
//! the writer's thread, a prepared statement per row
//! ([`crate::sqlite_writer`], [`Store::write_on_sqlite_writer`]). The rare
//! batch neither takes (a take-back, a rematch, an account's win to pay,
//! and on Postgres a game another node moved on) goes statement by
//! statement, where the reward ledger settles rewards.
//!
//! Both ways run the same statements, from [`crate::sql`]: on Postgres the
//! functions `chess_commit_batch` calls, each called here on its own; on
//! SQLite the texts the writer's own connection runs, run here by sqlx.

use std::time::Instant;

use chess_live::{Batch, BatchOutcome, BatchPath, GameRow, GameWrite, PlayerRow, WriteOutcome};
use sqlx::{Connection as _, Row as _};
use uuid::Uuid;

use crate::ledger::{EntryStatus, Recorded, rewarded_color};
use crate::ratings::{RatedEnding, rated_ending};
use crate::sql::{
    ClaimColumns, GameColumns, GameUpdate, MoveColumns, MoveInsert, NewGameColumns, PlayerColumns,
    postgres, sqlite,
};
use crate::{
    Backend, HELD_WRITER_IDLE_CHECK, HeldConnection, Result, Store, StoreError, Transaction,
};

/// Whether `batch` may be written in one go (Postgres's function,
/// SQLite's own connection, see the module's comment): it takes no moves
/// back, starts no rematch (whose new game must exist before the old one
/// points at it, and goes if the old one's write does not) and ends no
/// rated game (whose ratings change in the same transaction, through
/// [`Transaction::rate_endings`]).
pub(super) fn fits_one_go(batch: &Batch) -> bool {
    batch.writes.iter().all(|write| {
        write.rematch.is_none() && write.keep_moves.is_none() && rated_ending(write).is_none()
    })
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
        if let Some(outcome) = self.write_on_sqlite_writer(batch).await? {
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
        match tx.backend() {
            Backend::Sqlite(_) => {}
            Backend::Postgres(tx) => {
                let mut ids: Vec<String> = writes
                    .iter()
                    .map(|write| write.row.id)
                    .chain(batch.claims.iter().map(|claim| claim.game))
                    .map(|id| id.to_string())
                    .collect();
                ids.sort_unstable();
                if !ids.is_empty() {
                    sqlx::query(postgres::LOCK_GAMES)
                        .bind(&ids)
                        .execute(&mut **tx)
                        .await?;
                }
            }
        }

        let claimed = write_setup(&mut tx, batch).await?;
        let mut written = vec![false; writes.len()];
        for &index in &order {
            if let Some(rematch) = &writes[index].rematch {
                written[index] = write_with_rematch(&mut tx, &writes[index], rematch).await?;
            }
        }
        let bulk: Vec<&GameWrite> = order
            .iter()
            .map(|&index| &writes[index])
            .filter(|write| write.rematch.is_none())
            .collect();
        for id in update_games(&mut tx, &bulk).await? {
            if let Ok(at) = order.binary_search_by_key(&id, |&index| writes[index].row.id) {
                written[order[at]] = true;
            }
        }

        // The rated endings that landed, rated together: their ratings rows
        // are locked in one order before any is written.
        let rated: Vec<RatedEnding> = order
            .iter()
            .filter(|&&index| written[index])
            .filter_map(|&index| rated_ending(&writes[index]))
            .collect();
        let rating_changes = if rated.is_empty() {
            Vec::new()
        } else {
            tx.rate_endings(&rated).await?
        };

        let mut new_moves: Vec<MoveInsert<'_>> = Vec::new();
        let mut rewards = Vec::new();
        for &index in &order {
            if !written[index] {
                continue;
            }
            let write = &writes[index];
            let game = &write.row;
            if let Some(keep) = write.keep_moves {
                with_conn!(tx, conn, sql => {
                    sqlx::query(sql::DELETE_MOVES_FROM)
                        .bind(game.id.to_string())
                        .bind(i64::from(keep))
                        .execute(&mut *conn)
                        .await?;
                });
            }
            if let Some(result) = &write.settle
                && let Some(recorded) = tx
                    .settle_reward(
                        game.id,
                        game.seats(),
                        result,
                        game.updated_at.to_stored(),
                        self.platform_accounts_only,
                    )
                    .await?
            {
                rewards.push(recorded);
            }
            new_moves.extend(write.new_moves.iter().map(|mv| MoveInsert::of(game.id, mv)));
            outcomes[index] = WriteOutcome::Written;
        }
        if !new_moves.is_empty() {
            insert_moves(&mut tx, &new_moves).await?;
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
        if rewards.iter().any(|recorded| {
            matches!(recorded, Recorded::New(entry) if entry.status == EntryStatus::Credited)
        }) {
            self.outbox_wake.notify_one();
        }
        for change in rating_changes {
            tracing::info!(
                game_id = %change.game_id,
                perf = change.perf.code(),
                white = change.white.change,
                black = change.black.change,
                "game rated"
            );
        }
        for recorded in rewards {
            let entry = recorded.entry();
            tracing::info!(
                game_id = %entry.game_id,
                account = %entry.account_id,
                cents = entry.amount_cents,
                status = entry.status.code(),
                "reward settled"
            );
        }
        Ok(outcome)
    }
}

/// The SQLSTATE `chess_commit_batch` raises when a game's version moved on.
const VERSION_MOVED_ON: &str = "CS001";
/// The SQLSTATE `chess_commit_batch` raises when an ending's winner is an
/// account: the reward ledger settles it statement by statement.
const REWARD_TO_SETTLE: &str = "CS002";

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
        if !fits_one_go(batch) {
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
            writes: vec![WriteOutcome::Written; batch.writes.len()],
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

        let call = sqlx::query(postgres::COMMIT_BATCH);
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
        let mut slot = self.held_writer.0.lock().await;
        let mut connection = match slot.take() {
            Some(mut kept) if kept.last_used.elapsed() > HELD_WRITER_IDLE_CHECK => {
                match kept.connection.ping().await {
                    Ok(()) => kept.connection,
                    Err(_) => {
                        // Back to the pool, which closes it, before taking
                        // another: the writer's pool has one connection.
                        drop(kept);
                        pool.acquire().await?
                    }
                }
            }
            Some(kept) => kept.connection,
            None => pool.acquire().await?,
        };
        let written = call.fetch_one(&mut *connection).await;
        let handed_back = matches!(
            &written,
            Err(sqlx::Error::Database(error))
                if matches!(error.code().as_deref(), Some(VERSION_MOVED_ON | REWARD_TO_SETTLE))
        );
        if written.is_ok() || handed_back {
            *slot = Some(HeldConnection {
                connection,
                last_used: Instant::now(),
            });
        }
        // Otherwise dropped: a failure other than the function's own
        // leaves the connection in a state not worth guessing (a backend
        // terminated answers with a database error, then its socket ends);
        // the pool checks it and closes it if it is gone.
        drop(slot);
        if handed_back {
            return Ok(None);
        }
        let row = written?;
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

    /// The batch on SQLite's group-commit connection, in place on this
    /// thread ([`crate::sqlite_writer`]): its new players, new games, seats
    /// taken, changes and moves. `None`, with nothing written, on Postgres,
    /// and when the batch is not for that path (a take-back, a rematch, an
    /// account's win to pay): the caller then writes it statement by
    /// statement.
    ///
    /// It holds the sqlx writer connection meanwhile: the node's one SQLite
    /// write at a time, handed out first come, first served, so a sign-up
    /// waits for the batch in the pool's line, never in SQLite's busy
    /// handler. On the multi-threaded runtime (requests, tests) the worker
    /// is marked as blocking while SQLite runs; the node's writer calls this
    /// from a thread of its own.
    ///
    /// # Errors
    /// A database error; nothing of the batch is stored.
    async fn write_on_sqlite_writer(&self, batch: &Batch) -> Result<Option<BatchOutcome>> {
        let (Backend::Sqlite(pool), Some(writer)) = (&self.writer, &self.sqlite_writer) else {
            return Ok(None);
        };
        if !fits_one_go(batch) {
            return Ok(None);
        }
        let turn = pool.acquire().await?;
        let written = blocking(|| {
            writer
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .write(batch)
        });
        drop(turn);
        written
    }
}

/// Runs `work`, which blocks its thread, from async code: on the
/// multi-threaded runtime the worker hands its other tasks over first
/// (`block_in_place`); on a current-thread runtime (the node's writer has
/// its own thread) it simply runs.
pub(super) fn blocking<T>(work: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current().map(|runtime| runtime.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(work),
        _ => work(),
    }
}

/// The players who win a reward if they are accounts: the winners of the
/// writes' decisive endings (a draw, an abort or a game with nobody in the
/// winning seat pays nothing whoever plays).
pub(super) fn settling_winners<'a>(writes: impl IntoIterator<Item = &'a GameWrite>) -> Vec<String> {
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
/// On SQLite one statement per row: they are a few per game created, not
/// per move.
async fn write_setup(tx: &mut Transaction, batch: &Batch) -> Result<Vec<bool>> {
    let mut players: Vec<&PlayerRow> = batch.players.iter().collect();
    players.sort_by_key(|player| player.id);
    match tx.backend() {
        Backend::Sqlite(tx) => {
            for player in players {
                PlayerColumns::bind_sqlite(player, sqlx::query(sqlite::INSERT_PLAYER))
                    .execute(&mut **tx)
                    .await?;
            }
            for game in &batch.games {
                insert_game_on_sqlite(tx, game).await?;
            }
            let mut claimed = Vec::with_capacity(batch.claims.len());
            for claim in &batch.claims {
                let rows = ClaimColumns::bind_sqlite(claim, sqlx::query(sqlite::CLAIM_SEAT))
                    .execute(&mut **tx)
                    .await?
                    .rows_affected();
                claimed.push(rows == 1);
            }
            Ok(claimed)
        }
        Backend::Postgres(tx) => {
            if !players.is_empty() {
                PlayerColumns::of(players)
                    .bind(sqlx::query(postgres::INSERT_PLAYERS))
                    .execute(&mut **tx)
                    .await?;
            }
            if !batch.games.is_empty() {
                NewGameColumns::of(&batch.games)
                    .bind(sqlx::query(postgres::INSERT_GAMES))
                    .execute(&mut **tx)
                    .await?;
            }
            if batch.claims.is_empty() {
                return Ok(Vec::new());
            }
            Ok(ClaimColumns::of(&batch.claims)
                .bind(sqlx::query(postgres::CLAIM_SEATS))
                .fetch_one(&mut **tx)
                .await?
                .try_get(0)?)
        }
    }
}

/// Stores `games` in `tx`, to commit with what else it writes (a
/// tournament's pairings with their games).
pub(crate) async fn insert_games(tx: &mut Transaction, games: &[GameRow]) -> Result<()> {
    match tx.backend() {
        Backend::Sqlite(tx) => {
            for game in games {
                insert_game_on_sqlite(tx, game).await?;
            }
        }
        Backend::Postgres(tx) => {
            if !games.is_empty() {
                NewGameColumns::of(games)
                    .bind(sqlx::query(postgres::INSERT_GAMES))
                    .execute(&mut **tx)
                    .await?;
            }
        }
    }
    Ok(())
}

/// A new game on SQLite through sqlx: a set-up's, or a rematch's in its
/// savepoint.
async fn insert_game_on_sqlite(tx: &mut sqlx::SqliteConnection, game: &GameRow) -> Result<()> {
    NewGameColumns::bind_sqlite(game, sqlx::query(sqlite::INSERT_GAME))
        .execute(tx)
        .await?;
    Ok(())
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
    let update = GameUpdate::of(write);
    let updated = match tx.backend() {
        Backend::Sqlite(tx) => {
            let mut step = tx.begin().await?;
            insert_game_on_sqlite(&mut step, rematch).await?;
            let updated = GameColumns::bind_sqlite(&update, sqlx::query(sqlite::UPDATE_GAME))
                .execute(&mut *step)
                .await?
                .rows_affected()
                == 1;
            finish_step(step, updated).await?;
            updated
        }
        Backend::Postgres(tx) => {
            let mut step = tx.begin().await?;
            NewGameColumns::of([rematch])
                .bind(sqlx::query(postgres::INSERT_GAMES))
                .execute(&mut *step)
                .await?;
            let updated = !updated_ids_on_postgres(&mut step, &[update])
                .await?
                .is_empty();
            finish_step(step, updated).await?;
            updated
        }
    };
    Ok(updated)
}

/// Keeps a savepoint's statements if `keep`, else takes them back.
async fn finish_step<DB: sqlx::Database>(
    step: sqlx::Transaction<'_, DB>,
    keep: bool,
) -> Result<()> {
    if keep {
        step.commit().await?;
    } else {
        step.rollback().await?;
    }
    Ok(())
}

/// Each of `writes` as a compare-and-set on its version; returns the ids of
/// the games updated. One statement on Postgres; on SQLite one per game
/// (this path takes only the rare batches the group commit's own connection
/// hands back, see [`crate::sqlite_writer`]).
async fn update_games(tx: &mut Transaction, writes: &[&GameWrite]) -> Result<Vec<Uuid>> {
    if writes.is_empty() {
        return Ok(Vec::new());
    }
    let updates: Vec<GameUpdate<'_>> = writes.iter().map(|write| GameUpdate::of(write)).collect();
    match tx.backend() {
        Backend::Sqlite(tx) => {
            let mut ids = Vec::new();
            for (write, update) in writes.iter().zip(&updates) {
                let updated = GameColumns::bind_sqlite(update, sqlx::query(sqlite::UPDATE_GAME))
                    .execute(&mut **tx)
                    .await?
                    .rows_affected();
                if updated == 1 {
                    ids.push(write.row.id);
                }
            }
            Ok(ids)
        }
        Backend::Postgres(tx) => updated_ids_on_postgres(tx, &updates).await,
    }
}

/// `updates` on Postgres, in one call of `chess_update_games`; the ids of
/// the games it changed.
async fn updated_ids_on_postgres(
    tx: &mut sqlx::PgConnection,
    updates: &[GameUpdate<'_>],
) -> Result<Vec<Uuid>> {
    let ids: Vec<String> = GameColumns::of(updates)
        .bind(sqlx::query(postgres::UPDATE_GAMES))
        .fetch_one(tx)
        .await?
        .try_get(0)?;
    ids.iter()
        .map(|id| {
            Uuid::parse_str(id).map_err(|e| StoreError::Corrupt(format!("game id {id}: {e}")))
        })
        .collect()
}

/// Inserts `moves`: one statement on Postgres, one per move on SQLite (as
/// [`update_games`]).
async fn insert_moves(tx: &mut Transaction, moves: &[MoveInsert<'_>]) -> Result<()> {
    match tx.backend() {
        Backend::Sqlite(tx) => {
            for mv in moves {
                MoveColumns::bind_sqlite(mv, sqlx::query(sqlite::INSERT_MOVE))
                    .execute(&mut **tx)
                    .await?;
            }
        }
        Backend::Postgres(tx) => {
            MoveColumns::of(moves)
                .bind(sqlx::query(postgres::INSERT_MOVES))
                .execute(&mut **tx)
                .await?;
        }
    }
    Ok(())
}
