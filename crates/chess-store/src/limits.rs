//! Rate limits counted in the database, so that every node sharing it counts
//! the same attempts: failed sign-ins and sign-ups, on Postgres
//! (`auth::account_limits` says what is counted where).
//!
//! Each limit is a sliding log per key in `rate_limit_logs`, counted by one
//! call of a function of `migrations/postgres/20261203000100_rate_limit_logs.sql`:
//! one round trip, with the key's rows locked, so attempts on one key take
//! turns whichever nodes they reach. Old logs are pruned by the counts
//! themselves. Times are the calling node's wall clock in unix ms, as every
//! time the store keeps.

use std::time::Duration;

use sqlx::PgPool;

use crate::{Result, Store};

/// At most `max` events per `window`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    /// Events allowed inside one window.
    pub max: usize,
    /// The sliding window.
    pub window: Duration,
}

/// Growing delays between attempts: the first `free` failures inside the
/// window cost nothing; after that, the next attempt must wait
/// `first_delay` after the latest failure, twice as long after each further
/// failure, never more than `max_delay`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// Failures inside the window that cause no delay.
    pub free: usize,
    /// How long a failure counts.
    pub window: Duration,
    /// The wait after the first failure past `free`.
    pub first_delay: Duration,
    /// The longest wait.
    pub max_delay: Duration,
}

impl Backoff {
    /// The wait after the latest of `failures` failures inside the window.
    pub fn delay_after(&self, failures: usize) -> Duration {
        let Some(past_free) = failures.checked_sub(self.free) else {
            return Duration::ZERO;
        };
        // 2^16 times any sensible first delay is past any sensible maximum.
        let doublings = u32::try_from(past_free).unwrap_or(u32::MAX).min(16);
        self.first_delay
            .saturating_mul(1 << doublings)
            .min(self.max_delay)
    }

    /// Failures worth remembering: past these the delay is at its maximum
    /// anyway, which bounds each account's log.
    pub fn remembered(&self) -> usize {
        self.free.saturating_add(17)
    }
}

/// The three failed sign-in limits a sign-in is counted against, in
/// the server's memory (one node) or in the database ([`SharedLimits`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignInRules {
    /// Per account and address: a lockout.
    pub per_account_and_address: Limit,
    /// Per address, over every username.
    pub per_address: Limit,
    /// Per account, over every address: growing delays.
    pub per_account: Backoff,
}

/// The limits a Postgres store counts ([`Store::shared_limits`]).
#[derive(Clone, Debug)]
pub struct SharedLimits {
    pool: PgPool,
}

/// The keys of the three logs a sign-in attempt is counted in.
#[derive(Clone, Copy, Debug)]
pub struct SignInKeys<'a> {
    /// The username's key and the address together (`magnus@198.51.100.7`).
    pub account_and_address: &'a str,
    /// The address (`198.51.100.7`, `2001:db8:1:2::/64`).
    pub address: &'a str,
    /// The username's key (`magnus`).
    pub account: &'a str,
}

impl Store {
    /// The limits counted in the database, on Postgres; `None` on SQLite,
    /// whose one node counts them in its memory.
    pub fn shared_limits(&self) -> Option<SharedLimits> {
        self.postgres_pool().map(|pool| SharedLimits { pool })
    }
}

impl SharedLimits {
    /// Checks a sign-in attempt at `now_ms` against `rules` and, if it may
    /// go on, counts it as a failure at once, so that attempts running at
    /// the same time (on any node) count each other: `None`. Take it back
    /// with [`SharedLimits::sign_in_succeeded`] if the password was right.
    /// `Some(wait)` when it is refused; nothing is counted then.
    ///
    /// # Errors
    /// The database error.
    pub async fn count_sign_in(
        &self,
        keys: SignInKeys<'_>,
        rules: &SignInRules,
        now_ms: i64,
    ) -> Result<Option<Duration>> {
        let account = rules.per_account;
        let wait_ms: i64 = sqlx::query_scalar(
            "select chess_sign_in_attempt($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        )
        .bind(keys.account_and_address)
        .bind(keys.address)
        .bind(keys.account)
        .bind(now_ms)
        .bind(count(rules.per_account_and_address.max))
        .bind(millis(rules.per_account_and_address.window))
        .bind(count(rules.per_address.max))
        .bind(millis(rules.per_address.window))
        .bind(count(account.free))
        .bind(millis(account.window))
        .bind(millis(account.first_delay))
        .bind(millis(account.max_delay))
        .bind(count(account.remembered()))
        .fetch_one(&self.pool)
        .await?;
        Ok(wait(wait_ms))
    }

    /// The attempt counted at `attempt_ms` had the right password: clears
    /// the failures of `keys.account_and_address` and takes the attempt
    /// back from the address's and the account's logs.
    ///
    /// # Errors
    /// The database error.
    pub async fn sign_in_succeeded(&self, keys: SignInKeys<'_>, attempt_ms: i64) -> Result<()> {
        sqlx::query("select chess_sign_in_succeeded($1, $2, $3, $4)")
            .bind(keys.account_and_address)
            .bind(keys.address)
            .bind(keys.account)
            .bind(attempt_ms)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Counts an event of limit `kind` for `key` at `now_ms` if `limit`
    /// allows it: `None`; otherwise `Some(wait)` until the oldest counted
    /// event leaves the window, and nothing is counted.
    ///
    /// # Errors
    /// The database error.
    pub async fn hit(
        &self,
        kind: &str,
        key: &str,
        limit: Limit,
        now_ms: i64,
    ) -> Result<Option<Duration>> {
        let wait_ms: i64 = sqlx::query_scalar("select chess_rate_limit_hit($1, $2, $3, $4, $5)")
            .bind(kind)
            .bind(key)
            .bind(now_ms)
            .bind(count(limit.max))
            .bind(millis(limit.window))
            .fetch_one(&self.pool)
            .await?;
        Ok(wait(wait_ms))
    }
}

/// A function's answer: 0 when counted, else the milliseconds to wait.
fn wait(wait_ms: i64) -> Option<Duration> {
    u64::try_from(wait_ms)
        .ok()
        .filter(|&ms| ms > 0)
        .map(Duration::from_millis)
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

fn count(events: usize) -> i32 {
    i32::try_from(events).unwrap_or(i32::MAX)
}
