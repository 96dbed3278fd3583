//! The limits that protect accounts as Postgres counts them
//! (`store::limits`): the rules of the in-memory limits of
//! `auth::rate_limit`, attempts running at once counting each other, and a
//! table that keeps only what still counts. On SQLite, one node, they stay
//! in memory. Times are passed in, so windows pass without sleeping.

use std::time::Duration;

use chess_server::auth::rate_limit::{Backoff, Limit, SignInRules};
use chess_store::Store;
use chess_store::limits::{SharedLimits, SignInKeys};

use crate::helpers::{Backend, TestDatabase, fresh_store};

const T0: i64 = 1_800_000_000_000;

const THREE_PER_MINUTE: Limit = Limit {
    max: 3,
    window: Duration::from_secs(60),
};

const NEVER_DELAYED: Backoff = Backoff {
    free: 1000,
    window: Duration::from_secs(60),
    first_delay: Duration::from_secs(1),
    max_delay: Duration::from_secs(1),
};

/// A fresh Postgres database's limits; `None` when Postgres tests are skipped.
async fn shared() -> Option<(SharedLimits, Store, TestDatabase)> {
    let (store, db) = fresh_store(Backend::Postgres).await?;
    let limits = store
        .shared_limits()
        .expect("Postgres counts in the database");
    Some((limits, store, db))
}

/// The three keys of `account` from `address`, as `auth::account_limits`
/// makes them.
fn keys<'a>(account_and_address: &'a str) -> SignInKeys<'a> {
    let (account, address) = account_and_address
        .split_once('@')
        .expect("account@address");
    SignInKeys {
        account_and_address,
        address,
        account,
    }
}

fn rules(per_account_and_address: Limit, per_address: Limit, per_account: Backoff) -> SignInRules {
    SignInRules {
        per_account_and_address,
        per_address,
        per_account,
    }
}

/// Whether an attempt at `at_ms` may go on (and is counted as a failure).
async fn attempt(
    limits: &SharedLimits,
    rules: &SignInRules,
    who: &str,
    at_ms: i64,
) -> Option<Duration> {
    limits
        .count_sign_in(keys(who), rules, at_ms)
        .await
        .expect("counted")
}

async fn rows(db: &TestDatabase) -> usize {
    db.raw("select 1 from rate_limit_logs").await.expect("rows")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_keeps_the_limits_in_memory() {
    let (store, _db) = fresh_store(Backend::Sqlite).await.expect("SQLite");
    assert!(store.shared_limits().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guesser_is_locked_out_of_one_account_from_one_address() {
    let Some((limits, _store, _db)) = shared().await else {
        return;
    };
    let many = Limit {
        max: 100,
        ..THREE_PER_MINUTE
    };
    let rules = rules(THREE_PER_MINUTE, many, NEVER_DELAYED);
    for second in 0..3 {
        let at = T0 + second * 1000;
        assert_eq!(
            attempt(&limits, &rules, "magnus@198.51.100.66", at).await,
            None
        );
    }
    // Locked until the first failure leaves the window...
    assert_eq!(
        attempt(&limits, &rules, "magnus@198.51.100.66", T0 + 10_000).await,
        Some(Duration::from_secs(50))
    );
    // ...and the refusals were not counted: the first slot frees at 60 s.
    assert!(
        attempt(&limits, &rules, "magnus@198.51.100.66", T0 + 59_999)
            .await
            .is_some()
    );
    assert_eq!(
        attempt(&limits, &rules, "magnus@198.51.100.66", T0 + 60_000).await,
        None
    );
    // The owner elsewhere, and the guesser on another account, go on.
    assert_eq!(
        attempt(&limits, &rules, "magnus@203.0.113.1", T0 + 10_000).await,
        None
    );
    assert_eq!(
        attempt(&limits, &rules, "hikaru@198.51.100.66", T0 + 10_000).await,
        None
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_from_many_addresses_bring_growing_delays_not_a_lockout() {
    let Some((limits, _store, _db)) = shared().await else {
        return;
    };
    let doubling = Backoff {
        free: 3,
        window: Duration::from_secs(15 * 60),
        first_delay: Duration::from_secs(1),
        max_delay: Duration::from_secs(60),
    };
    let rules = rules(THREE_PER_MINUTE, THREE_PER_MINUTE, doubling);
    let mut now = T0;
    let mut waits = Vec::new();
    // Each guess from a new address, as in auth::rate_limit's test of the
    // same name: the delays are the same.
    for guess in 0..12 {
        let who = format!("magnus@198.51.100.{guess}");
        if let Some(wait) = attempt(&limits, &rules, &who, now).await {
            waits.push(wait.as_secs());
            now += i64::try_from(wait.as_millis()).expect("ms");
            assert_eq!(attempt(&limits, &rules, &who, now).await, None, "{who}");
        }
    }
    assert_eq!(waits, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
    // The owner, from an address that never failed, waits at most the
    // largest delay, then gets in.
    let owner = "magnus@192.0.2.1";
    let wait = attempt(&limits, &rules, owner, now).await.expect("a delay");
    assert!(wait <= doubling.max_delay, "{wait:?}");
    let signed_in = now + i64::try_from(wait.as_millis()).expect("ms");
    assert_eq!(attempt(&limits, &rules, owner, signed_in).await, None);
    limits
        .sign_in_succeeded(keys(owner), signed_in)
        .await
        .expect("taken back");
    // Failures older than the window no longer count.
    let later = signed_in + 15 * 60 * 1000;
    assert_eq!(attempt(&limits, &rules, owner, later).await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_right_password_clears_the_owners_typos_but_not_the_address_count() {
    let Some((limits, _store, db)) = shared().await else {
        return;
    };
    let rules = rules(THREE_PER_MINUTE, THREE_PER_MINUTE, NEVER_DELAYED);
    let home = "magnus@198.51.100.1";
    for second in 0..2 {
        assert_eq!(attempt(&limits, &rules, home, T0 + second).await, None);
    }
    // The right password: counted as a failure while it was checked, then
    // taken back.
    assert_eq!(attempt(&limits, &rules, home, T0 + 2).await, None);
    limits
        .sign_in_succeeded(keys(home), T0 + 2)
        .await
        .expect("taken back");
    assert_eq!(attempt(&limits, &rules, home, T0 + 3).await, None);
    // Three failures in all on the address: its spraying budget is spent...
    assert!(
        attempt(&limits, &rules, "hikaru@198.51.100.1", T0 + 4)
            .await
            .is_some()
    );
    // ...while only the one after the success counts against the account
    // from there.
    let pair = db
        .raw(
            "select 1 from rate_limit_logs where kind = 'sign_in_account_address' \
             and key = 'magnus@198.51.100.1' and events = array[1800000000003::bigint]",
        )
        .await
        .expect("the log");
    assert_eq!(pair, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attempts_running_at_once_count_each_other() {
    let Some((limits, _store, _db)) = shared().await else {
        return;
    };
    let many = Limit {
        max: 100,
        ..THREE_PER_MINUTE
    };
    let rules = rules(THREE_PER_MINUTE, many, NEVER_DELAYED);
    // Twenty guesses at once (the pool has 16 connections): three get
    // through, as one after the other.
    let guesses = (0..20).map(|_| attempt(&limits, &rules, "magnus@198.51.100.66", T0));
    let through = futures_util::future::join_all(guesses)
        .await
        .iter()
        .filter(|refused| refused.is_none())
        .count();
    assert_eq!(through, 3);

    let sign_ups =
        (0..20).map(|_| limits.hit("sign_up_address", "198.51.100.66", THREE_PER_MINUTE, T0));
    let counted = futures_util::future::join_all(sign_ups)
        .await
        .into_iter()
        .map(|wait| wait.expect("counted"))
        .filter(Option::is_none)
        .count();
    assert_eq!(counted, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_ups_are_counted_in_a_sliding_window() {
    let Some((limits, _store, _db)) = shared().await else {
        return;
    };
    let hit = |at: i64| limits.hit("sign_up_address", "2001:db8:1:2::/64", THREE_PER_MINUTE, at);
    for at in [T0, T0 + 1_000, T0 + 2_000] {
        assert_eq!(hit(at).await.expect("counted"), None);
    }
    assert_eq!(
        hit(T0 + 30_000).await.expect("counted"),
        Some(Duration::from_secs(30))
    );
    // Exactly a window after the first, one more; not two.
    assert_eq!(hit(T0 + 60_000).await.expect("counted"), None);
    assert!(hit(T0 + 60_000).await.expect("counted").is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_leave_no_rows_and_logs_that_no_longer_count_are_pruned() {
    let Some((limits, _store, db)) = shared().await else {
        return;
    };
    let one_free = Backoff {
        free: 1,
        ..NEVER_DELAYED
    };
    let rules = rules(THREE_PER_MINUTE, THREE_PER_MINUTE, one_free);
    for account in 0..10 {
        let who = format!("player{account}@198.51.100.{account}");
        assert_eq!(attempt(&limits, &rules, &who, T0).await, None);
    }
    assert_eq!(rows(&db).await, 30);
    // player0 is delayed after its failure: a guess from a new address is
    // refused, and the rows it locked for it are gone again.
    assert!(
        attempt(&limits, &rules, "player0@203.0.113.9", T0)
            .await
            .is_some()
    );
    assert_eq!(rows(&db).await, 30);

    // A window later, two new attempts clear the thirty logs that no
    // longer count (up to sixteen each) and leave their own.
    let later = T0 + 60_001;
    for who in ["hikaru@192.0.2.1", "fabiano@192.0.2.2"] {
        assert_eq!(attempt(&limits, &rules, who, later).await, None);
    }
    assert_eq!(rows(&db).await, 6);
}
