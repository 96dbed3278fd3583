//! The ledger on Postgres.
//!
//! Runs in the caller's transaction at the default isolation, read
//! committed. The cap holds under any concurrency, on one node or many:
//! `update reward_days … where … and total_cents + 100 <= 500` locks the
//! account's row for the day, and a concurrent update of the same row waits
//! for that lock and then re-evaluates its condition against the committed
//! total. Two transactions writing the same game's entry meet on the unique
//! index: the second waits for the first and then finds the conflict.

use chess_game::GameResult;
use chess_rules::ByColor;
use sqlx::{Acquire, PgConnection, Postgres, Row, Transaction};
use uuid::Uuid;

use super::{
    DAILY_CAP_CENTS, DailyTotal, EntryStatus, LedgerEntry, LedgerError, REWARD_CENTS, Recorded,
    Seat, UtcDay, decode_entry,
};

/// Records the win of `game_id` by `account_id` at `now_ms` (unix ms) in
/// `tx`: [`REWARD_CENTS`] if the account's total for that UTC day stays
/// within [`DAILY_CAP_CENTS`], otherwise $0 marked over the cap. A game that
/// already has an entry gets nothing new ([`Recorded::AlreadyRecorded`]) and
/// the day's total is left as it was.
///
/// Call only for games [`super::reward_winner`] says pay, in the
/// transaction that stores the game's result; nothing is final until the
/// caller commits.
///
/// # Errors
/// [`LedgerError::Database`] if a statement fails; the caller's transaction
/// should then be rolled back.
pub async fn record_win(
    tx: &mut Transaction<'_, Postgres>,
    game_id: Uuid,
    account_id: Uuid,
    now_ms: i64,
) -> Result<Recorded, LedgerError> {
    let day = UtcDay::from_unix_ms(now_ms);
    let (game, account, day_text) = (game_id.to_string(), account_id.to_string(), day.to_string());

    // A savepoint: if the game turns out to be paid already, the raised
    // total is undone without touching the rest of the caller's transaction.
    let mut attempt = tx.begin().await?;
    sqlx::query(
        "insert into reward_days (account_id, day, total_cents) values ($1, $2, 0)
         on conflict (account_id, day) do nothing",
    )
    .bind(&account)
    .bind(&day_text)
    .execute(&mut *attempt)
    .await?;
    let raised = sqlx::query(
        "update reward_days set total_cents = total_cents + $3
         where account_id = $1 and day = $2 and total_cents + $3 <= $4",
    )
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
    let inserted = sqlx::query(
        "insert into reward_entries (game_id, account_id, amount_cents, day, status, created_at)
         values ($1, $2, $3, $4, $5, $6)
         on conflict (game_id) do nothing",
    )
    .bind(&game)
    .bind(&account)
    .bind(amount_cents)
    .bind(&day_text)
    .bind(status.code())
    .bind(now_ms)
    .execute(&mut *attempt)
    .await?
    .rows_affected();
    if inserted == 0 {
        attempt.rollback().await?;
        let earlier = entry_for_game(tx, game_id)
            .await?
            .ok_or_else(|| LedgerError::Corrupt(format!("entry of game {game_id} vanished")))?;
        return Ok(Recorded::AlreadyRecorded(earlier));
    }
    attempt.commit().await?;
    Ok(Recorded::New(LedgerEntry {
        game_id,
        account_id,
        amount_cents,
        day,
        status,
        created_at_ms: now_ms,
    }))
}

/// Settles a game that has just finished, in the transaction that stores
/// its result: reads both players' kinds from the `players` table (the
/// database's truth, not a cache that may predate a sign-up), asks
/// [`super::reward_winner`] whether the game pays, and if so records the win
/// with [`record_win`]. `None` when the game pays nothing.
///
/// # Errors
/// [`LedgerError`] if a statement fails or a player row does not decode.
pub async fn settle_game(
    tx: &mut Transaction<'_, Postgres>,
    game_id: Uuid,
    seats: ByColor<Option<Uuid>>,
    result: &GameResult,
    now_ms: i64,
) -> Result<Option<Recorded>, LedgerError> {
    let white = seat(tx, seats.white).await?;
    let black = seat(tx, seats.black).await?;
    match super::reward_winner(result, ByColor { white, black }) {
        Some(account_id) => record_win(tx, game_id, account_id, now_ms).await.map(Some),
        None => Ok(None),
    }
}

/// What the `players` table says holds a seat. An empty seat or an unknown
/// player counts as a guest: it never pays. A bot account counts as the
/// computer: an engine neither earns rewards nor pays them to its opponent.
async fn seat(conn: &mut PgConnection, player: Option<Uuid>) -> Result<Seat, LedgerError> {
    let Some(player) = player else {
        return Ok(Seat::Guest);
    };
    let kind: Option<(String, bool)> = sqlx::query_as(
        "select p.kind, coalesce(a.bot, false) from players p \
         left join accounts a on a.player_id = p.id where p.id = $1",
    )
    .bind(player.to_string())
    .fetch_optional(&mut *conn)
    .await?;
    Ok(match kind {
        Some((kind, true)) if kind == "account" => Seat::Computer,
        Some((kind, false)) if kind == "account" => Seat::Account(player),
        Some((kind, _)) if kind == "computer" => Seat::Computer,
        _ => Seat::Guest,
    })
}

/// The entry of `game_id`, if it has one.
///
/// # Errors
/// [`LedgerError`] if the query fails or the row does not decode.
pub async fn entry_for_game(
    conn: &mut PgConnection,
    game_id: Uuid,
) -> Result<Option<LedgerEntry>, LedgerError> {
    let row = sqlx::query(
        "select game_id, account_id, amount_cents, day, status, created_at
         from reward_entries where game_id = $1",
    )
    .bind(game_id.to_string())
    .fetch_optional(&mut *conn)
    .await?;
    row.map(|row| decode_row(&row)).transpose()
}

/// The account's credited total for `day`.
///
/// # Errors
/// [`LedgerError::Database`] if the query fails.
pub async fn daily_total(
    conn: &mut PgConnection,
    account_id: Uuid,
    day: UtcDay,
) -> Result<DailyTotal, LedgerError> {
    let total: Option<i64> = sqlx::query_scalar(
        "select total_cents from reward_days where account_id = $1 and day = $2",
    )
    .bind(account_id.to_string())
    .bind(day.to_string())
    .fetch_optional(&mut *conn)
    .await?;
    Ok(DailyTotal {
        day,
        total_cents: total.unwrap_or(0),
        cap_cents: DAILY_CAP_CENTS,
    })
}

/// The account's newest `limit` entries, newest first.
///
/// # Errors
/// [`LedgerError`] if the query fails or a row does not decode.
pub async fn entries(
    conn: &mut PgConnection,
    account_id: Uuid,
    limit: u32,
) -> Result<Vec<LedgerEntry>, LedgerError> {
    let rows = sqlx::query(
        "select game_id, account_id, amount_cents, day, status, created_at
         from reward_entries where account_id = $1
         order by created_at desc, id desc limit $2",
    )
    .bind(account_id.to_string())
    .bind(i64::from(limit))
    .fetch_all(&mut *conn)
    .await?;
    rows.iter().map(decode_row).collect()
}

fn decode_row(row: &sqlx::postgres::PgRow) -> Result<LedgerEntry, LedgerError> {
    decode_entry(
        row.try_get("game_id")?,
        row.try_get("account_id")?,
        row.try_get("amount_cents")?,
        row.try_get("day")?,
        row.try_get("status")?,
        row.try_get("created_at")?,
    )
}
