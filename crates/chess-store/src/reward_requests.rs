//! The reward ledger's outbox: `reward_requests`, one row per credited
//! entry, written by [`crate::Transaction::record_win`] in the entry's own
//! transaction and delivered by [`crate::outbox`].
//!
//! How a request reaches the platform exactly once for a receiver that
//! honours its key, whatever crashes:
//!
//! - the row commits with the entry or not at all, so no payment owed is
//!   ever missing from the outbox, and none is there that the ledger did not
//!   credit;
//! - a node claims due rows before it sends them: `claimed_until` is a lease
//!   and `claim` a random token. On Postgres the claim skips rows another
//!   node is claiming (`for update skip locked`), so each request is in one
//!   node's hands at a time; a node killed mid-delivery holds its rows only
//!   until the lease runs out, then any node (the same one restarted) sends
//!   them again with the same key;
//! - a delivery is recorded whoever holds the row; a failure only by the
//!   holder of the claim, so a node whose lease ran out cannot push back a
//!   request that another node is already delivering.

use uuid::Uuid;

use crate::rows::uuid;
use crate::{Result, Store, StoreError};

/// Where a request stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliveryState {
    /// Not yet accepted by the platform: being sent, or waiting for its next
    /// attempt.
    Pending,
    /// The platform answered 2xx.
    Delivered,
    /// The platform refused it for good (a 4xx other than 408 and 429); the
    /// reason is kept.
    Refused,
}

impl DeliveryState {
    /// The stored and wire form.
    pub const fn code(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Delivered => "delivered",
            DeliveryState::Refused => "refused",
        }
    }

    fn from_code(code: &str) -> Option<DeliveryState> {
        match code {
            "pending" => Some(DeliveryState::Pending),
            "delivered" => Some(DeliveryState::Delivered),
            "refused" => Some(DeliveryState::Refused),
            _ => None,
        }
    }
}

/// One reward request: what the platform is asked to pay, and how its
/// delivery went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RewardRequest {
    /// The ledger entry's id: the request's id and idempotency key.
    pub entry_id: i64,
    pub account_id: Uuid,
    /// The host platform's `sub` of the account; `None` for a local one.
    pub platform_subject: Option<String>,
    pub username: Option<String>,
    pub amount_cents: i64,
    pub currency: String,
    pub game_id: Uuid,
    /// The winner's colour, `white` or `black`.
    pub winner: String,
    /// How the game ended (`checkmate`, `resignation`...).
    pub reason: String,
    /// The UTC day the win counts towards, `yyyy-mm-dd`.
    pub day: String,
    /// Unix ms when the entry was written.
    pub created_at_ms: i64,
    pub state: DeliveryState,
    /// Deliveries started so far (this one included, for a claimed request).
    pub attempts: i64,
    /// The HTTP status of the last answer.
    pub last_status: Option<i64>,
    /// Why the last attempt failed, or why the platform refused it.
    pub last_error: Option<String>,
    /// Unix ms when it was delivered or refused.
    pub finished_at_ms: Option<i64>,
}

/// A request's columns as the outbox's statements return them
/// (`CLAIM_REWARD_REQUESTS`, `REWARD_REQUESTS_AFTER`), read by [`decode`].
type RequestTuple = (
    i64,
    String,
    Option<String>,
    Option<String>,
    i64,
    String,
    String,
    String,
    String,
    String,
    i64,
    String,
    i64,
    Option<i64>,
    Option<String>,
    Option<i64>,
);

/// The outbox's counts, for `/metrics`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutboxStats {
    pub pending: i64,
    pub delivered: i64,
    pub refused: i64,
    /// Unix ms the oldest pending request was written, if any is pending.
    pub oldest_pending_ms: Option<i64>,
}

/// The delivery of one of an account's rewards, for its account page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RewardDelivery {
    pub game_id: Uuid,
    pub state: DeliveryState,
    /// Why it was refused, or why the last attempt failed.
    pub last_error: Option<String>,
}

impl Store {
    /// Claims up to `limit` requests due at `now_ms` that nobody holds, for
    /// this node until `until_ms` under the token `claim`; each one's
    /// attempts counted. In entry order.
    ///
    /// # Errors
    /// The database error or a row that does not decode.
    pub async fn claim_reward_requests(
        &self,
        now_ms: i64,
        until_ms: i64,
        claim: &str,
        limit: u32,
    ) -> Result<Vec<RewardRequest>> {
        let rows: Vec<RequestTuple> = with_conn!(self.writes(), conn, sql => {
            sqlx::query_as(sql::CLAIM_REWARD_REQUESTS)
                .bind(now_ms)
                .bind(until_ms)
                .bind(claim)
                .bind(i64::from(limit))
                .fetch_all(&mut *conn)
                .await?
        });
        let mut requests = rows.into_iter().map(decode).collect::<Result<Vec<_>>>()?;
        requests.sort_by_key(|request| request.entry_id);
        Ok(requests)
    }

    /// Records that the platform accepted request `entry_id` (status
    /// `status`) at `now_ms`. False if it was no longer pending (another
    /// node's delivery was recorded first).
    ///
    /// # Errors
    /// The database error.
    pub async fn reward_request_delivered(
        &self,
        entry_id: i64,
        now_ms: i64,
        status: u16,
    ) -> Result<bool> {
        let changed = with_conn!(self.writes(), conn, sql => {
            sqlx::query(sql::REWARD_REQUEST_DELIVERED)
                .bind(entry_id)
                .bind(now_ms)
                .bind(i64::from(status))
                .execute(&mut *conn)
                .await?
                .rows_affected()
        });
        Ok(changed == 1)
    }

    /// Records a failed attempt of request `entry_id` held under `claim`:
    /// due again at `next_at_ms`. False if the claim was no longer this
    /// node's (its lease ran out and another node took the request).
    ///
    /// # Errors
    /// The database error.
    pub async fn reward_request_retry(
        &self,
        entry_id: i64,
        claim: &str,
        next_at_ms: i64,
        status: Option<u16>,
        error: &str,
    ) -> Result<bool> {
        let changed = with_conn!(self.writes(), conn, sql => {
            sqlx::query(sql::REWARD_REQUEST_RETRY)
                .bind(entry_id)
                .bind(claim)
                .bind(next_at_ms)
                .bind(status.map(i64::from))
                .bind(error)
                .execute(&mut *conn)
                .await?
                .rows_affected()
        });
        Ok(changed == 1)
    }

    /// Records that the platform refused request `entry_id`, held under
    /// `claim`, for good at `now_ms` (status `status`, because `reason`).
    ///
    /// # Errors
    /// The database error.
    pub async fn reward_request_refused(
        &self,
        entry_id: i64,
        claim: &str,
        now_ms: i64,
        status: u16,
        reason: &str,
    ) -> Result<bool> {
        let changed = with_conn!(self.writes(), conn, sql => {
            sqlx::query(sql::REWARD_REQUEST_REFUSED)
                .bind(entry_id)
                .bind(claim)
                .bind(now_ms)
                .bind(i64::from(status))
                .bind(reason)
                .execute(&mut *conn)
                .await?
                .rows_affected()
        });
        Ok(changed == 1)
    }

    /// Gives back the requests still held under `claim` (a node stopping
    /// with deliveries unfinished): due at once for any node.
    ///
    /// # Errors
    /// The database error.
    pub async fn release_reward_claim(&self, claim: &str) -> Result<()> {
        with_conn!(self.writes(), conn, sql => {
            sqlx::query(sql::RELEASE_REWARD_CLAIM)
                .bind(claim)
                .execute(&mut *conn)
                .await?;
        });
        Ok(())
    }

    /// Up to `limit` requests after entry `after`, in entry order.
    ///
    /// # Errors
    /// The database error or a row that does not decode.
    pub async fn reward_requests_after(
        &self,
        after: i64,
        limit: u32,
    ) -> Result<Vec<RewardRequest>> {
        let rows: Vec<RequestTuple> = with_conn!(self, conn, sql => {
            sqlx::query_as(sql::REWARD_REQUESTS_AFTER)
                .bind(after)
                .bind(i64::from(limit))
                .fetch_all(&mut *conn)
                .await?
        });
        rows.into_iter().map(decode).collect()
    }

    /// The delivery of the account's newest `limit` requests, newest first.
    ///
    /// # Errors
    /// The database error or a row that does not decode.
    pub async fn account_reward_deliveries(
        &self,
        account_id: Uuid,
        limit: u32,
    ) -> Result<Vec<RewardDelivery>> {
        let rows: Vec<(String, String, Option<String>)> = with_conn!(self, conn, sql => {
            sqlx::query_as(sql::ACCOUNT_REWARD_DELIVERIES)
                .bind(account_id.to_string())
                .bind(i64::from(limit))
                .fetch_all(&mut *conn)
                .await?
        });
        rows.into_iter()
            .map(|(game_id, state, last_error)| {
                Ok(RewardDelivery {
                    game_id: uuid(&game_id)?,
                    state: state_of(&state)?,
                    last_error,
                })
            })
            .collect()
    }

    /// How many requests are in each state, and the oldest pending one.
    ///
    /// # Errors
    /// The database error or a state that does not decode.
    pub async fn outbox_stats(&self) -> Result<OutboxStats> {
        let rows: Vec<(String, i64, Option<i64>)> = with_conn!(self, conn, sql => {
            sqlx::query_as(sql::REWARD_REQUEST_STATS)
                .fetch_all(&mut *conn)
                .await?
        });
        let mut stats = OutboxStats::default();
        for (state, count, oldest) in rows {
            match state_of(&state)? {
                DeliveryState::Pending => {
                    stats.pending = count;
                    stats.oldest_pending_ms = oldest;
                }
                DeliveryState::Delivered => stats.delivered = count,
                DeliveryState::Refused => stats.refused = count,
            }
        }
        Ok(stats)
    }
}

fn state_of(code: &str) -> Result<DeliveryState> {
    DeliveryState::from_code(code)
        .ok_or_else(|| StoreError::Corrupt(format!("reward request state {code:?}")))
}

/// Reads a stored request; a row that does not decode was altered by hand.
fn decode(
    (
        entry_id,
        account_id,
        platform_subject,
        username,
        amount_cents,
        currency,
        game_id,
        winner,
        reason,
        day,
        created_at_ms,
        state,
        attempts,
        last_status,
        last_error,
        finished_at_ms,
    ): RequestTuple,
) -> Result<RewardRequest> {
    Ok(RewardRequest {
        entry_id,
        account_id: uuid(&account_id)?,
        platform_subject,
        username,
        amount_cents,
        currency,
        game_id: uuid(&game_id)?,
        winner,
        reason,
        day,
        created_at_ms,
        state: state_of(&state)?,
        attempts,
        last_status,
        last_error,
        finished_at_ms,
    })
}
