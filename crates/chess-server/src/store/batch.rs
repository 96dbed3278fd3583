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

use super::{GameRow, MoveRow, Result, Store, Transaction};
use crate::ledger::Recorded;

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

impl Store {
    /// Writes `writes` (at most one per game) in one transaction, with each
    /// notice in `notices` sent on Postgres channel `channel` when, and only
    /// if, it commits. An ending settles its reward in the same transaction.
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
        let mut written_moves: Vec<(Uuid, &MoveRow)> = Vec::new();
        let mut tx = self.begin().await?;
        for &index in &order {
            let write = &writes[index];
            let game = &write.row;
            if !write_game(&mut tx, write).await? {
                continue;
            }
            let reward = match &write.settle {
                Some(result) => {
                    let seats = chess_rules::ByColor {
                        white: game.white_id,
                        black: game.black_id,
                    };
                    tx.settle_reward(game.id, seats, result, game.updated_at)
                        .await?
                }
                None => None,
            };
            written_moves.extend(write.new_moves.iter().map(|mv| (game.id, mv)));
            outcomes[index] = WriteOutcome::Written { reward };
        }
        for chunk in written_moves.chunks(MOVES_PER_STATEMENT) {
            insert_moves(&mut tx, chunk).await?;
        }
        for notice in notices {
            tx.notify(channel, notice).await?;
        }
        tx.commit().await?;
        Ok(outcomes)
    }
}

/// The compare-and-set of one game (with its rematch, and the take-back's
/// deletion of moves); `false` if the stored version had moved on and
/// nothing was written.
async fn write_game(tx: &mut Transaction, write: &GameWrite) -> Result<bool> {
    let game = &write.row;
    with_conn!(tx, conn => {
        let updated = if let Some(rematch) = &write.rematch {
            // The rematch row must exist before the old game points at it;
            // a savepoint takes it back if the old game conflicts. (Rare:
            // other writes need no savepoint.)
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
            updated
        } else {
            update_game_query!(game, write.expected_version)
                .execute(&mut *conn)
                .await?
                .rows_affected()
        };
        if updated != 1 {
            return Ok(false);
        }
        if let Some(keep) = write.keep_moves {
            sqlx::query("delete from moves where game_id = $1 and ply >= $2")
                .bind(game.id.to_string())
                .bind(i64::from(keep))
                .execute(&mut *conn)
                .await?;
        }
        Ok(true)
    })
}

/// Inserts `moves` (at most [`MOVES_PER_STATEMENT`]) in one statement.
async fn insert_moves(tx: &mut Transaction, moves: &[(Uuid, &MoveRow)]) -> Result<()> {
    let mut sql = String::from(
        "insert into moves (game_id, ply, uci, san, clock_ms, played_at, record) values ",
    );
    for row in 0..moves.len() {
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
    with_conn!(tx, conn => {
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for (game_id, mv) in moves {
            query = query
                .bind(game_id.to_string())
                .bind(mv.ply)
                .bind(&mv.uci)
                .bind(&mv.san)
                .bind(mv.clock_ms)
                .bind(mv.played_at)
                .bind(&mv.record);
        }
        query.execute(&mut *conn).await?;
    });
    Ok(())
}
