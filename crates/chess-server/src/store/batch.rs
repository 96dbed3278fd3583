//! Group commit: the changes of many games written in one transaction.
//!
//! A commit costs the same whether it carries one move or a hundred (the
//! database syncs its log once), so the node's writer hands the store every
//! change that arrived meanwhile. Each game's change stays a compare-and-set on
//! its version: a game that another node moved on is answered
//! [`WriteOutcome::Conflict`] alone, and the rest of the batch commits.

use chess_game::GameResult;
use sqlx::Connection as _;
use uuid::Uuid;

use super::{GameRow, MoveRow, Pool, Result, Store, StoreError};
use crate::ledger::{LedgerError, Recorded};

/// Most move rows in one `insert` statement (7 parameters each, far below
/// both databases' parameter limits).
const MOVES_PER_STATEMENT: usize = 256;

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
}

/// What became of one write of a batch that committed.
#[derive(Clone, Debug)]
pub enum WriteOutcome {
    /// Stored; the reward the ending settled, if it paid or was over the cap.
    Written { reward: Option<Recorded> },
    /// The stored version had moved on: nothing of this write was stored.
    Conflict,
}

fn ledger_error(error: LedgerError) -> StoreError {
    match error {
        LedgerError::Database(error) => StoreError::Database(error),
        LedgerError::Corrupt(what) => StoreError::Corrupt(what),
    }
}

impl Store {
    /// Writes `writes` (at most one per game) in one transaction, with each
    /// notice in `notices` sent on Postgres channel `channel` when, and only
    /// if, it commits (`NOTIFY` is transactional). On SQLite the transaction
    /// takes the write lock at its start (`BEGIN IMMEDIATE`), which the ledger
    /// needs and a single writer loses nothing by.
    ///
    /// Rows are locked in game-id order, so two nodes' batches cannot deadlock.
    ///
    /// # Errors
    /// A database error fails the whole batch: nothing of it is stored.
    pub async fn write_batch(
        &self,
        writes: &[GameWrite],
        channel: &str,
        notices: &[String],
    ) -> Result<Vec<WriteOutcome>> {
        let mut order: Vec<usize> = (0..writes.len()).collect();
        order.sort_by_key(|&index| writes[index].row.id);
        debug_assert!(
            order
                .windows(2)
                .all(|pair| writes[pair[0]].row.id != writes[pair[1]].row.id),
            "at most one write per game in a batch"
        );
        let mut outcomes = vec![WriteOutcome::Conflict; writes.len()];

        /// The body, once per backend: `$tx` is the open transaction,
        /// `$ledger` the backend's ledger module.
        macro_rules! batch_body {
            ($tx:ident, $ledger:path) => {{
                use $ledger as ledger;
                let mut written_moves: Vec<(Uuid, &MoveRow)> = Vec::new();
                for &index in &order {
                    let write = &writes[index];
                    let game = &write.row;
                    let updated = if let Some(rematch) = &write.rematch {
                        // The rematch row must exist before the old game points
                        // at it; a savepoint takes it back if the old game
                        // conflicts. (Rare: other writes need no savepoint.)
                        let mut step = $tx.begin().await?;
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
                        updated
                    } else {
                        update_game_query!(game, write.expected_version)
                            .execute(&mut *$tx)
                            .await?
                            .rows_affected()
                    };
                    if updated != 1 {
                        continue;
                    }
                    if let Some(keep) = write.keep_moves {
                        sqlx::query("delete from moves where game_id = $1 and ply >= $2")
                            .bind(game.id.to_string())
                            .bind(i64::from(keep))
                            .execute(&mut *$tx)
                            .await?;
                    }
                    let reward = match &write.settle {
                        Some(result) => {
                            let seats = chess_rules::ByColor {
                                white: game.white_id,
                                black: game.black_id,
                            };
                            ledger::settle_game(&mut $tx, game.id, seats, result, game.updated_at)
                                .await
                                .map_err(ledger_error)?
                        }
                        None => None,
                    };
                    written_moves.extend(write.new_moves.iter().map(|mv| (game.id, mv)));
                    outcomes[index] = WriteOutcome::Written { reward };
                }
                for chunk in written_moves.chunks(MOVES_PER_STATEMENT) {
                    let mut sql = String::from(
                        "insert into moves (game_id, ply, uci, san, clock_ms, played_at, record) values ",
                    );
                    for row in 0..chunk.len() {
                        let first = row * 7;
                        if row > 0 {
                            sql.push_str(", ");
                        }
                        sql.push_str(&format!(
                            "(${}, ${}, ${}, ${}, ${}, ${}, ${})",
                            first + 1,
                            first + 2,
                            first + 3,
                            first + 4,
                            first + 5,
                            first + 6,
                            first + 7
                        ));
                    }
                    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
                    for (game_id, mv) in chunk {
                        query = query
                            .bind(game_id.to_string())
                            .bind(mv.ply)
                            .bind(&mv.uci)
                            .bind(&mv.san)
                            .bind(mv.clock_ms)
                            .bind(mv.played_at)
                            .bind(&mv.record);
                    }
                    query.execute(&mut *$tx).await?;
                }
            }};
        }

        match &self.pool {
            Pool::Sqlite(pool) => {
                let mut tx = crate::ledger::sqlite::begin_immediate(pool).await?;
                batch_body!(tx, crate::ledger::sqlite);
                tx.commit().await?;
            }
            Pool::Postgres(pool) => {
                let mut tx = pool.begin().await?;
                batch_body!(tx, crate::ledger::postgres);
                for notice in notices {
                    sqlx::query("select pg_notify($1, $2)")
                        .bind(channel)
                        .bind(notice)
                        .execute(&mut *tx)
                        .await?;
                }
                tx.commit().await?;
            }
        }
        Ok(outcomes)
    }
}
