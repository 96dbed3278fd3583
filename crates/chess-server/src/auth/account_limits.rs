//! The limits that protect accounts, counted where every node sees them:
//! failed sign-ins (per account and address, per address, and growing
//! delays per account; see [`SignInLimits`]) and sign-ups per address.
//!
//! On Postgres they are counted in the database ([`SharedLimits`]), so that
//! the nodes sharing it count the same attempts: each counting alone, N nodes
//! allowed N times the guesses. On SQLite, which serves one node, they stay
//! in that node's memory: exact, and no write on the one connection the
//! node's games are written through, which a flood of wrong passwords would
//! otherwise queue in front of the moves.
//!
//! A sign-in is checked before its password is hashed, so a refused attempt
//! costs nothing. In the database the check counts the attempt as a failure
//! in the same call (one round trip, with the keys' rows locked), and a
//! right password takes it back: attempts running at the same time on any
//! node count each other, where a check followed by a separate count would
//! let a burst of parallel guesses all through. An attempt that ends without
//! a verdict (a hashing error, a dropped request) stays counted there.

use std::net::IpAddr;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use super::rate_limit::{
    AddressKey, Limit, RateLimiter, RetryAfter, SIGN_IN_RULES, SIGN_UPS_PER_ADDRESS, SignInLimits,
    SignInRules,
};
use chess_store::limits::{SharedLimits, SignInKeys};
use chess_store::{Store, StoreError};

/// The limit kind of sign-ups in the database's logs.
const SIGN_UPS: &str = "sign_up_address";

/// Failed sign-ins and sign-ups, counted in memory or in the database.
#[derive(Debug)]
pub struct AccountLimits {
    counting: Counting,
}

#[derive(Debug)]
enum Counting {
    /// One node: its memory.
    Memory {
        sign_ins: Box<SignInLimits>,
        sign_ups: RateLimiter<AddressKey>,
    },
    /// Every node on the database: its `rate_limit_logs`.
    Database {
        limits: SharedLimits,
        sign_ins: SignInRules,
        sign_ups: Limit,
    },
}

/// Why an attempt may not go on.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// A limit is reached: try again later.
    #[error(transparent)]
    TooMany(#[from] RetryAfter),
    /// The database could not count it.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl AccountLimits {
    /// The default limits, in `store` when several nodes may share it
    /// (Postgres), else in memory.
    pub fn for_store(store: &Store) -> AccountLimits {
        match store.shared_limits() {
            Some(limits) => AccountLimits::in_database(limits, SIGN_IN_RULES, SIGN_UPS_PER_ADDRESS),
            None => AccountLimits::in_memory(SignInLimits::default(), SIGN_UPS_PER_ADDRESS),
        }
    }

    /// Limits counted in this node's memory.
    pub fn in_memory(sign_ins: SignInLimits, sign_ups: Limit) -> AccountLimits {
        AccountLimits {
            counting: Counting::Memory {
                sign_ins: Box::new(sign_ins),
                sign_ups: RateLimiter::new(sign_ups),
            },
        }
    }

    /// Limits counted in the database, by the same rules.
    pub fn in_database(
        limits: SharedLimits,
        sign_ins: SignInRules,
        sign_ups: Limit,
    ) -> AccountLimits {
        AccountLimits {
            counting: Counting::Database {
                limits,
                sign_ins,
                sign_ups,
            },
        }
    }

    /// Lets a sign-in attempt of `username_key` from `address` go on, or
    /// not. `now` is the in-memory limits' time (tests advance it); the
    /// database counts by the wall clock, which every node shares.
    ///
    /// # Errors
    /// [`Refusal::TooMany`] when this address has failed too often (on this
    /// account or on any) or the account's delay has not passed;
    /// [`Refusal::Store`] if the database fails.
    pub async fn begin_sign_in(
        &self,
        username_key: &str,
        address: IpAddr,
        now: Instant,
    ) -> Result<SignInAttempt<'_>, Refusal> {
        let attempt = SignInAttempt {
            limits: self,
            username_key: username_key.to_owned(),
            address,
            now,
            at_ms: unix_ms(),
        };
        match &self.counting {
            Counting::Memory { sign_ins, .. } => sign_ins.check(username_key, address, now)?,
            Counting::Database {
                limits, sign_ins, ..
            } => {
                let (account_and_address, address) = log_keys(username_key, address);
                let keys = SignInKeys {
                    account_and_address: &account_and_address,
                    address: &address,
                    account: username_key,
                };
                if let Some(wait) = limits.count_sign_in(keys, sign_ins, attempt.at_ms).await? {
                    return Err(RetryAfter(wait).into());
                }
            }
        }
        Ok(attempt)
    }

    /// Counts a sign-up from `address` if the limit allows one more.
    ///
    /// # Errors
    /// [`Refusal::TooMany`] when this address has signed up too often
    /// (nothing is counted then); [`Refusal::Store`] if the database fails.
    pub async fn sign_up(&self, address: IpAddr, now: Instant) -> Result<(), Refusal> {
        let address = AddressKey::from(address);
        match &self.counting {
            Counting::Memory { sign_ups, .. } => sign_ups.hit(address, now)?,
            Counting::Database {
                limits, sign_ups, ..
            } => {
                if let Some(wait) = limits
                    .hit(SIGN_UPS, &address.to_string(), *sign_ups, unix_ms())
                    .await?
                {
                    return Err(RetryAfter(wait).into());
                }
            }
        }
        Ok(())
    }
}

/// A sign-in attempt the limits let through; say how it ended.
#[derive(Debug)]
#[must_use = "a sign-in attempt must be reported as failed or succeeded"]
pub struct SignInAttempt<'a> {
    limits: &'a AccountLimits,
    username_key: String,
    address: IpAddr,
    /// When it began, on the in-memory limits' clock and on the wall clock.
    now: Instant,
    at_ms: i64,
}

impl SignInAttempt<'_> {
    /// A wrong password, or no such account: counted against the account,
    /// the address and both (in the database it already is).
    pub fn failed(self) {
        if let Counting::Memory { sign_ins, .. } = &self.limits.counting {
            sign_ins.failed(&self.username_key, self.address, self.now);
        }
    }

    /// The right password: the failures of this account from this address
    /// are forgiven, and in the database the attempt is taken back. Should
    /// the database fail then, the attempt stays counted as a failure, and
    /// the person still signs in.
    pub async fn succeeded(self) {
        match &self.limits.counting {
            Counting::Memory { sign_ins, .. } => {
                sign_ins.succeeded(&self.username_key, self.address);
            }
            Counting::Database { limits, .. } => {
                let (account_and_address, address) = log_keys(&self.username_key, self.address);
                let keys = SignInKeys {
                    account_and_address: &account_and_address,
                    address: &address,
                    account: &self.username_key,
                };
                if let Err(error) = limits.sign_in_succeeded(keys, self.at_ms).await {
                    tracing::warn!(
                        %error,
                        "a right password stays counted as a failed sign-in: the database failed"
                    );
                }
            }
        }
    }
}

/// The database's keys of a sign-in's logs per account and address
/// (`magnus@198.51.100.7`) and per address; the account's is the username's
/// key itself. A username has no `@`.
fn log_keys(username_key: &str, address: IpAddr) -> (String, String) {
    let address = AddressKey::from(address).to_string();
    (format!("{username_key}@{address}"), address)
}

fn unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}
