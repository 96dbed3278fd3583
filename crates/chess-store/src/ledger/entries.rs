//! The reward ledger's tables: `reward_entries` and `reward_days`.
//!
//! The rules are in [`crate::ledger`]; this is how the database keeps them
//! under any concurrency, on any number of nodes:
//!
//! - each game is paid at most once: the game id is unique in
//!   `reward_entries`, and a second entry for it is refused there;
//! - the daily cap: the day's total only grows through
//!   `update … set total_cents = total_cents + 100 where … and total_cents + 100 <= 500`.
//!   On Postgres (read committed) that update locks the account's row for
//!   the day, and a concurrent one waits for the lock and then re-checks its
//!   condition against the committed total; on SQLite the transaction holds
//!   the write lock from its start ([`Transaction`]), so nothing slips in
//!   between reading the total and raising it;
//! - triggers refuse every update or delete of an entry (append-only).
//!
//! A win is recorded in the transaction that stores the game's result, so
//! the result and the payment commit together or not at all; a credited win
//! writes its reward request for the host platform in the same transaction
//! ([`crate::reward_requests`], the outbox).
//!
//! The statements are in [`crate::sql`], once per dialect, with the batch's.

use chess_game::GameResult;
use chess_rules::ByColor;
use sqlx::Connection as _;
use uuid::Uuid;

use crate::ledger::{
    DAILY_CAP_CENTS, DailyTotal, EntryStatus, LedgerEntry, REWARD_CENTS, Recorded, SeatHolder,
    UtcDay, reward_winner,
};
use crate::{Result, Store, StoreError, Transaction};

/// The currency of every reward request: amounts are US cents.
pub const REWARD_CURRENCY: &str = "USD";

/// An entry's columns, as the ledger's statements select them
/// (`REWARD_ENTRY_OF_GAME`, `REWARD_ENTRIES` in [`crate::sql`]), in the
/// order [`decode_entry`] reads them.
type EntryTuple = (String, String, i64, String, String, i64);

impl Transaction {
    /// Records the win of `game_id` by `account_id` at `now_ms` (unix ms):
    /// [`REWARD_CENTS`] if the account's total for that UTC day stays within
    /// [`DAILY_CAP_CENTS`], otherwise $0 marked over the cap. A game that
    /// already has an entry gets nothing new ([`Recorded::AlreadyRecorded`])
    /// and the day's total is left as it was. A credited entry writes its
    /// reward request (`result` names the winner and the ending) in the same
    /// savepoint; an over-cap one owes nothing and writes none.
    ///
    /// Call only for games [`reward_winner`] says pay, in the transaction
    /// that stores the game's result; nothing is final until it commits.
    ///
    /// # Errors
    /// The database error; the transaction should then be rolled back.
    pub async fn record_win(
        &mut self,
        game_id: Uuid,
        account_id: Uuid,
        result: &GameResult,
        now_ms: i64,
    ) -> Result<Recorded> {
        let winner = match result.winner {
            Some(chess_rules::Color::White) => "white",
            Some(chess_rules::Color::Black) => "black",
            None => {
                return Err(StoreError::Corrupt(format!(
                    "game {game_id} pays a reward with no winner"
                )));
            }
        };
        let day = UtcDay::from_unix_ms(now_ms);
        let (game, account, day_text) =
            (game_id.to_string(), account_id.to_string(), day.to_string());
        let inserted = with_conn!(self, conn, sql => {
            // A savepoint: if the game turns out to be paid already, the
            // raised total is undone without touching the rest of the
            // transaction.
            let mut attempt = conn.begin().await?;
            sqlx::query(sql::INSERT_REWARD_DAY)
                .bind(&account)
                .bind(&day_text)
                .execute(&mut *attempt)
                .await?;
            let raised = sqlx::query(sql::RAISE_REWARD_DAY)
                .bind(&account)
                .bind(&day_text)
                .bind(REWARD_CENTS)
                .bind(DAILY_CAP_CENTS)
                .execute(&mut *attempt)
                .await?
                .rows_affected();
            let (status, amount_cents) = if raised == 1 {
                (EntryStatus::Credited, REWARD_CENTS)
            } else {
                (EntryStatus::OverCap, 0)
            };
            let inserted = sqlx::query(sql::INSERT_REWARD_ENTRY)
                .bind(&game)
                .bind(&account)
                .bind(amount_cents)
                .bind(&day_text)
                .bind(status.code())
                .bind(now_ms)
                .execute(&mut *attempt)
                .await?
                .rows_affected();
            if inserted == 1 && status == EntryStatus::Credited {
                sqlx::query(sql::INSERT_REWARD_REQUEST)
                    .bind(&game)
                    .bind(winner)
                    .bind(result.reason.code())
                    .bind(REWARD_CURRENCY)
                    .execute(&mut *attempt)
                    .await?;
            }
            if inserted == 1 {
                attempt.commit().await?;
                Some((status, amount_cents))
            } else {
                attempt.rollback().await?;
                None
            }
        });
        match inserted {
            Some((status, amount_cents)) => Ok(Recorded::New(LedgerEntry {
                game_id,
                account_id,
                amount_cents,
                day,
                status,
                created_at_ms: now_ms,
            })),
            None => {
                let earlier = self.entry_for_game(game_id).await?.ok_or_else(|| {
                    StoreError::Corrupt(format!("reward entry of game {game_id} vanished"))
                })?;
                Ok(Recorded::AlreadyRecorded(earlier))
            }
        }
    }

    /// Settles the reward of a game that has just finished, in the
    /// transaction that stores its result: reads both players' kinds from the
    /// `players` table (the database's truth, not a cache that may predate a
    /// sign-up), asks [`reward_winner`] whether the game pays, and if so
    /// records the win with [`Transaction::record_win`]. `None` when the game
    /// pays nothing.
    ///
    /// # Errors
    /// The database error.
    /// With `platform_accounts_only` (`LOCAL_ACCOUNTS=false`), a local
    /// account counts as a guest: only the host platform's accounts are
    /// signed-in accounts for rewards, even one made before local accounts
    /// were switched off and still playing through an API token.
    pub async fn settle_reward(
        &mut self,
        game_id: Uuid,
        seats: ByColor<Option<Uuid>>,
        result: &GameResult,
        now_ms: i64,
        platform_accounts_only: bool,
    ) -> Result<Option<Recorded>> {
        let white = self.seat(seats.white, platform_accounts_only).await?;
        let black = self.seat(seats.black, platform_accounts_only).await?;
        match reward_winner(result, ByColor { white, black }) {
            Some(account_id) => self
                .record_win(game_id, account_id, result, now_ms)
                .await
                .map(Some),
            None => Ok(None),
        }
    }

    /// What the `players` table says holds a seat. An empty seat or an
    /// unknown player counts as a guest: it never pays. A bot account counts
    /// as the computer: an engine neither earns rewards nor pays them to its
    /// opponent.
    async fn seat(
        &mut self,
        player: Option<Uuid>,
        platform_accounts_only: bool,
    ) -> Result<SeatHolder> {
        let Some(player) = player else {
            return Ok(SeatHolder::Guest);
        };
        let kind: Option<(String, bool, bool)> = with_conn!(self, conn, sql => {
            sqlx::query_as(sql::SEAT_HOLDER)
                .bind(player.to_string())
                .fetch_optional(&mut *conn)
                .await?
        });
        Ok(match kind {
            Some((kind, false, platform)) if kind == "account" => {
                if platform || !platform_accounts_only {
                    SeatHolder::Account(player)
                } else {
                    SeatHolder::Guest
                }
            }
            Some((kind, _, _)) if kind == "account" || kind == "computer" => SeatHolder::Computer,
            _ => SeatHolder::Guest,
        })
    }

    /// The entry of `game_id`, if it has one.
    async fn entry_for_game(&mut self, game_id: Uuid) -> Result<Option<LedgerEntry>> {
        let row: Option<EntryTuple> = with_conn!(self, conn, sql => {
            sqlx::query_as(sql::REWARD_ENTRY_OF_GAME)
                .bind(game_id.to_string())
                .fetch_optional(&mut *conn)
                .await?
        });
        row.map(decode_entry).transpose()
    }
}

impl Store {
    /// The account's credited reward total for `day`.
    ///
    /// # Errors
    /// The database error.
    pub async fn reward_total(&self, account_id: Uuid, day: UtcDay) -> Result<DailyTotal> {
        let total: Option<i64> = with_conn!(self, conn, sql => {
            sqlx::query_scalar(sql::REWARD_TOTAL)
                .bind(account_id.to_string())
                .bind(day.to_string())
                .fetch_optional(&mut *conn)
                .await?
        });
        Ok(DailyTotal {
            day,
            total_cents: total.unwrap_or(0),
            cap_cents: DAILY_CAP_CENTS,
        })
    }

    /// The account's newest `limit` reward entries, newest first.
    ///
    /// # Errors
    /// The database error or a row that does not decode.
    pub async fn reward_entries(&self, account_id: Uuid, limit: u32) -> Result<Vec<LedgerEntry>> {
        let rows: Vec<EntryTuple> = with_conn!(self, conn, sql => {
            sqlx::query_as(sql::REWARD_ENTRIES)
                .bind(account_id.to_string())
                .bind(i64::from(limit))
                .fetch_all(&mut *conn)
                .await?
        });
        rows.into_iter().map(decode_entry).collect()
    }
}

/// Reads a stored entry; a row that does not decode was altered by hand.
fn decode_entry(
    (game_id, account_id, amount_cents, day, status, created_at_ms): EntryTuple,
) -> Result<LedgerEntry> {
    let uuid = |text: &str| {
        Uuid::parse_str(text).map_err(|e| StoreError::Corrupt(format!("id {text:?}: {e}")))
    };
    Ok(LedgerEntry {
        game_id: uuid(&game_id)?,
        account_id: uuid(&account_id)?,
        amount_cents,
        day: UtcDay::parse(&day).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        status: EntryStatus::from_code(&status)
            .ok_or_else(|| StoreError::Corrupt(format!("reward status {status:?}")))?,
        created_at_ms,
    })
}
