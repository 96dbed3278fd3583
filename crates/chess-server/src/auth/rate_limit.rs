//! In-memory rate limits: failed sign-ins per account and address, per
//! address and (as growing delays) per account; sign-ups and new guests per
//! address; game creation per player.
//!
//! A sliding log per key: the instants of the last `max` events inside the
//! window. It is exact (no burst at a window edge) and its memory per key is
//! bounded by `max`. Time is passed in as an [`Instant`] so tests advance it
//! instead of sleeping. The limits live in one node's memory: several nodes
//! each allow the full rate, which is acceptable for abuse control (the
//! money rules are enforced by the database, never here). The limits that
//! protect accounts are counted in the database instead when several nodes
//! share one ([`super::account_limits`]), by the same rules.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::hash::Hash;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use chess_store::limits::{Backoff, Limit, SignInRules};

/// Failed sign-ins of one username from one address before that address is
/// locked out of that account for a while. Tight, because it stops one
/// guesser without touching the owner elsewhere.
pub const SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS: Limit = Limit {
    max: 5,
    window: Duration::from_secs(15 * 60),
};
/// Failed sign-ins of one username from all addresses together: loose, and
/// a delay rather than a lockout, so guessing from many addresses slows to
/// one try a minute while the owner waits a minute at worst.
pub const SIGN_IN_BACKOFF_PER_ACCOUNT: Backoff = Backoff {
    free: 10,
    window: Duration::from_secs(15 * 60),
    first_delay: Duration::from_secs(1),
    max_delay: Duration::from_secs(60),
};
/// Failed sign-ins from one address (any usernames), against spraying.
pub const SIGN_IN_FAILURES_PER_ADDRESS: Limit = Limit {
    max: 20,
    window: Duration::from_secs(15 * 60),
};
/// Accounts one address may create.
pub const SIGN_UPS_PER_ADDRESS: Limit = Limit {
    max: 5,
    window: Duration::from_secs(60 * 60),
};
/// Games (seeks, challenges, computer and local games) one player may create.
pub const GAMES_PER_PLAYER: Limit = Limit {
    max: 30,
    window: Duration::from_secs(60),
};

/// Tournaments one account may create: enough for a club's week, not a
/// flood of listings.
pub const TOURNAMENTS_PER_ACCOUNT: Limit = Limit {
    max: 12,
    window: Duration::from_secs(24 * 60 * 60),
};

/// Classes (of up to 100 accounts each) one club leader may create: a
/// school's classes for the week, not a flood of accounts. Class accounts do
/// not count against [`SIGN_UPS_PER_ADDRESS`]: they are made by a signed-in
/// leader and limited here.
pub const CLASSES_PER_ACCOUNT: Limit = Limit {
    max: 5,
    window: Duration::from_secs(24 * 60 * 60),
};

/// Refused: try again after this long.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("too many attempts: try again in {} s", .0.as_secs_f64().ceil())]
pub struct RetryAfter(pub Duration);

/// Above this many keys, a write first drops the keys with no event left
/// inside the window, so idle keys cannot grow the map forever.
const PRUNE_ABOVE: usize = 10_000;

/// A sliding-log limiter keyed by `K`.
#[derive(Debug)]
pub struct RateLimiter<K> {
    limit: Limit,
    events: Mutex<Logs<K>>,
}

/// Every key's log, and when to prune them next.
#[derive(Debug)]
struct Logs<K> {
    by_key: HashMap<K, VecDeque<Instant>>,
    /// The number of keys above which the next write prunes: twice what the
    /// last prune kept, and never below [`PRUNE_ABOVE`]. Pruning at a fixed
    /// size scanned the whole map at every write once more keys than that
    /// were inside the window (game creations keyed by player, at a
    /// thousand new players a second); doubling makes a prune's scan cost
    /// a constant per write, and the map holds at most about twice the keys
    /// inside the window.
    prune_above: usize,
}

impl<K: Hash + Eq + Clone> RateLimiter<K> {
    /// A limiter allowing `limit` per key.
    pub fn new(limit: Limit) -> RateLimiter<K> {
        RateLimiter {
            limit,
            events: Mutex::new(Logs {
                by_key: HashMap::new(),
                prune_above: PRUNE_ABOVE,
            }),
        }
    }

    /// Whether one more event for `key` would be allowed at `now`, without
    /// recording anything.
    ///
    /// # Errors
    /// [`RetryAfter`] with the time until the oldest counted event leaves
    /// the window.
    pub fn check(&self, key: &K, now: Instant) -> Result<(), RetryAfter> {
        let mut events = self.lock();
        match events.by_key.get_mut(key) {
            Some(log) => self.admit(log, now),
            None => Ok(()),
        }
    }

    /// Counts an event for `key` at `now` if it is allowed.
    ///
    /// # Errors
    /// [`RetryAfter`] when the limit is reached; nothing is recorded then,
    /// so refused attempts do not extend the wait.
    pub fn hit(&self, key: K, now: Instant) -> Result<(), RetryAfter> {
        let mut events = self.lock();
        self.prune(&mut events, now);
        let log = events.by_key.entry(key).or_default();
        self.admit(log, now)?;
        log.push_back(now);
        Ok(())
    }

    /// Counts an event for `key` at `now` unconditionally (a failure that
    /// already happened), keeping only the newest `max`.
    pub fn record(&self, key: K, now: Instant) {
        let mut events = self.lock();
        self.prune(&mut events, now);
        let log = events.by_key.entry(key).or_default();
        log.push_back(now);
        while log.len() > self.limit.max {
            log.pop_front();
        }
    }

    /// Forgets every event of `key`.
    pub fn clear(&self, key: &K) {
        self.lock().by_key.remove(key);
    }

    /// How many events of `key` are inside the window at `now`, and the
    /// newest one's instant.
    pub fn recent(&self, key: &K, now: Instant) -> (usize, Option<Instant>) {
        let events = self.lock();
        let Some(log) = events.by_key.get(key) else {
            return (0, None);
        };
        let inside = log
            .iter()
            .filter(|at| now.saturating_duration_since(**at) < self.limit.window)
            .count();
        (inside, log.back().copied().filter(|_| inside > 0))
    }

    fn admit(&self, log: &mut VecDeque<Instant>, now: Instant) -> Result<(), RetryAfter> {
        while log
            .front()
            .is_some_and(|oldest| now.saturating_duration_since(*oldest) >= self.limit.window)
        {
            log.pop_front();
        }
        if log.len() < self.limit.max {
            return Ok(());
        }
        let oldest = log[0];
        Err(RetryAfter(
            self.limit
                .window
                .saturating_sub(now.saturating_duration_since(oldest)),
        ))
    }

    fn prune(&self, events: &mut Logs<K>, now: Instant) {
        if events.by_key.len() > events.prune_above {
            let window = self.limit.window;
            events.by_key.retain(|_, log| {
                log.back()
                    .is_some_and(|newest| now.saturating_duration_since(*newest) < window)
            });
            events.prune_above = PRUNE_ABOVE.max(2 * events.by_key.len());
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Logs<K>> {
        // A panic while holding this lock cannot leave a log half-written in
        // a way that matters: keep using the data.
        self.events
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The part of an address that identifies one client: the whole IPv4
/// address, or the /64 prefix of an IPv6 one (a single host usually owns a
/// whole /64 and could otherwise rotate through it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressKey {
    /// An IPv4 client (or an IPv4-mapped IPv6 address).
    V4(u32),
    /// The top 64 bits of an IPv6 address.
    V6Prefix(u64),
}

impl From<IpAddr> for AddressKey {
    fn from(address: IpAddr) -> AddressKey {
        match address {
            IpAddr::V4(v4) => AddressKey::V4(v4.to_bits()),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => AddressKey::V4(v4.to_bits()),
                // The shift leaves exactly the top 64 bits.
                #[allow(clippy::cast_possible_truncation)]
                None => AddressKey::V6Prefix((v6.to_bits() >> 64) as u64),
            },
        }
    }
}

/// As the database keys it: the IPv4 address, or the IPv6 prefix as a
/// network (`2001:db8:1:2::/64`).
impl fmt::Display for AddressKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            AddressKey::V4(bits) => Ipv4Addr::from_bits(bits).fmt(f),
            AddressKey::V6Prefix(prefix) => {
                write!(f, "{}/64", Ipv6Addr::from_bits(u128::from(prefix) << 64))
            }
        }
    }
}

/// The limits of [`SignInLimits::default`].
pub const SIGN_IN_RULES: SignInRules = SignInRules {
    per_account_and_address: SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS,
    per_address: SIGN_IN_FAILURES_PER_ADDRESS,
    per_account: SIGN_IN_BACKOFF_PER_ACCOUNT,
};

/// Failed sign-in limits. Unknown usernames are counted exactly like real
/// ones, so the limits reveal nothing about which names exist.
///
/// - per account and address, tight: a guesser is locked out of the account
///   from their address, while the owner, elsewhere, is not;
/// - per address, over every username: against spraying one password over
///   many accounts;
/// - per account, over every address: growing delays, never a lockout, so
///   guessing from many addresses slows down while the owner still gets in.
#[derive(Debug)]
pub struct SignInLimits {
    by_account_and_address: RateLimiter<(String, AddressKey)>,
    by_address: RateLimiter<AddressKey>,
    by_account: RateLimiter<String>,
    account_backoff: Backoff,
}

impl Default for SignInLimits {
    fn default() -> SignInLimits {
        SignInLimits::new(
            SIGN_IN_RULES.per_account_and_address,
            SIGN_IN_RULES.per_address,
            SIGN_IN_RULES.per_account,
        )
    }
}

impl SignInLimits {
    /// Limits with explicit bounds.
    pub fn new(
        per_account_and_address: Limit,
        per_address: Limit,
        per_account: Backoff,
    ) -> SignInLimits {
        SignInLimits {
            by_account_and_address: RateLimiter::new(per_account_and_address),
            by_address: RateLimiter::new(per_address),
            by_account: RateLimiter::new(Limit {
                max: per_account.remembered(),
                window: per_account.window,
            }),
            account_backoff: per_account,
        }
    }

    /// Whether a sign-in attempt may be checked at all. Call before hashing,
    /// so a refused attempt costs the server nothing.
    ///
    /// # Errors
    /// [`RetryAfter`] when this address has failed too often (on this
    /// account or on any), or the account's delay has not passed yet.
    pub fn check(
        &self,
        username_key: &str,
        address: IpAddr,
        now: Instant,
    ) -> Result<(), RetryAfter> {
        let address = AddressKey::from(address);
        self.by_address.check(&address, now)?;
        self.by_account_and_address
            .check(&(username_key.to_owned(), address), now)?;
        let (failures, latest) = self.by_account.recent(&username_key.to_owned(), now);
        if let Some(latest) = latest {
            let ready = latest + self.account_backoff.delay_after(failures);
            if now < ready {
                return Err(RetryAfter(ready - now));
            }
        }
        Ok(())
    }

    /// Counts a failed attempt against the account, the address and both.
    pub fn failed(&self, username_key: &str, address: IpAddr, now: Instant) {
        let address = AddressKey::from(address);
        self.by_account_and_address
            .record((username_key.to_owned(), address), now);
        self.by_address.record(address, now);
        self.by_account.record(username_key.to_owned(), now);
    }

    /// A right password clears the failures of this account from this
    /// address (the owner's typos). The account's delays stay: they are
    /// someone else's guesses, which the owner's sign-in must not reset. The
    /// address keeps its count too: owning one account must not reset a
    /// spraying budget.
    pub fn succeeded(&self, username_key: &str, address: IpAddr) {
        self.by_account_and_address
            .clear(&(username_key.to_owned(), AddressKey::from(address)));
    }
}

#[cfg(test)]
mod tests {
    use std::net::{Ipv4Addr, Ipv6Addr};

    use super::*;

    const THREE_PER_MINUTE: Limit = Limit {
        max: 3,
        window: Duration::from_secs(60),
    };

    #[test]
    fn allows_max_events_then_refuses_until_the_oldest_leaves_the_window() {
        let limiter = RateLimiter::new(THREE_PER_MINUTE);
        let t0 = Instant::now();
        for second in 0..3 {
            assert!(limiter.hit("k", t0 + Duration::from_secs(second)).is_ok());
        }
        assert_eq!(
            limiter.hit("k", t0 + Duration::from_secs(10)),
            Err(RetryAfter(Duration::from_secs(50)))
        );
        // Refused hits were not counted: the first slot frees at t0 + 60 s.
        assert!(limiter.hit("k", t0 + Duration::from_secs(59)).is_err());
        assert!(limiter.hit("k", t0 + Duration::from_secs(60)).is_ok());
        assert!(limiter.hit("k", t0 + Duration::from_secs(60)).is_err());
    }

    #[test]
    fn keys_are_independent() {
        let limiter = RateLimiter::new(THREE_PER_MINUTE);
        let t0 = Instant::now();
        for _ in 0..3 {
            limiter.hit("a", t0).unwrap();
        }
        assert!(limiter.hit("a", t0).is_err());
        assert!(limiter.hit("b", t0).is_ok());
    }

    #[test]
    fn check_records_nothing() {
        let limiter = RateLimiter::new(THREE_PER_MINUTE);
        let t0 = Instant::now();
        for _ in 0..10 {
            assert!(limiter.check(&"a", t0).is_ok());
        }
        for _ in 0..3 {
            limiter.record("a", t0);
        }
        assert!(limiter.check(&"a", t0).is_err());
        limiter.clear(&"a");
        assert!(limiter.check(&"a", t0).is_ok());
    }

    #[test]
    fn idle_keys_are_pruned_when_the_map_grows() {
        let limiter = RateLimiter::new(THREE_PER_MINUTE);
        let t0 = Instant::now();
        for key in 0..=PRUNE_ABOVE {
            limiter.record(key, t0);
        }
        let later = t0 + Duration::from_secs(61);
        limiter.record(usize::MAX, later);
        assert_eq!(limiter.lock().by_key.len(), 1);
    }

    #[test]
    fn keys_all_inside_the_window_are_pruned_again_only_once_they_double() {
        let limiter = RateLimiter::new(THREE_PER_MINUTE);
        let t0 = Instant::now();
        let live = PRUNE_ABOVE + 1;
        for key in 0..live {
            limiter.record(key, t0);
        }
        // This write prunes and finds every key inside the window.
        limiter.record(live, t0);
        assert_eq!(limiter.lock().by_key.len(), live + 1);

        // A minute later those keys are idle, but the map is not scanned
        // again until it has doubled: not at the next write...
        let later = t0 + Duration::from_secs(61);
        limiter.record(usize::MAX, later);
        assert_eq!(limiter.lock().by_key.len(), live + 2);
        // ...and once it has, the idle keys go: only the keys written at
        // `later` are left.
        for key in 0..live {
            limiter.record(usize::MAX - 1 - key, later);
        }
        assert_eq!(limiter.lock().by_key.len(), live + 1);
    }

    const NEVER_DELAYED: Backoff = Backoff {
        free: 1000,
        window: Duration::from_secs(60),
        first_delay: Duration::from_secs(1),
        max_delay: Duration::from_secs(1),
    };

    const DOUBLING: Backoff = Backoff {
        free: 3,
        window: Duration::from_secs(15 * 60),
        first_delay: Duration::from_secs(1),
        max_delay: Duration::from_secs(60),
    };

    fn address(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(198, 51, 100, last))
    }

    #[test]
    fn a_guesser_locks_only_their_own_address_out_of_the_account() {
        let many = Limit {
            max: 100,
            ..THREE_PER_MINUTE
        };
        let limits = SignInLimits::new(THREE_PER_MINUTE, many, NEVER_DELAYED);
        let t0 = Instant::now();
        let (guesser, owner) = (address(66), address(1));
        for _ in 0..3 {
            limits.check("magnus", guesser, t0).unwrap();
            limits.failed("magnus", guesser, t0);
        }
        assert!(limits.check("magnus", guesser, t0).is_err());
        assert!(limits.check("magnus", owner, t0).is_ok());
        assert!(limits.check("hikaru", guesser, t0).is_ok());
        assert!(
            limits
                .check("magnus", guesser, t0 + Duration::from_secs(60))
                .is_ok()
        );
    }

    #[test]
    fn failures_from_many_addresses_bring_growing_delays_not_a_lockout() {
        let limits = SignInLimits::new(THREE_PER_MINUTE, THREE_PER_MINUTE, DOUBLING);
        let t0 = Instant::now();
        let mut now = t0;
        // Each guess from a new address: no per-address limit is reached.
        let mut waits = Vec::new();
        for guess in 0..12u8 {
            match limits.check("magnus", address(guess), now) {
                Ok(()) => {}
                Err(RetryAfter(wait)) => {
                    waits.push(wait);
                    now += wait;
                    limits.check("magnus", address(guess), now).unwrap();
                }
            }
            limits.failed("magnus", address(guess), now);
        }
        // Three free failures, then 1, 2, 4, ... seconds, capped at a minute.
        let seconds: Vec<u64> = waits.iter().map(Duration::as_secs).collect();
        assert_eq!(seconds, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        // The owner, from an address that never failed, waits at most the
        // largest delay, then gets in.
        let owner = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));
        let Err(RetryAfter(wait)) = limits.check("magnus", owner, now) else {
            panic!("a delay is due");
        };
        assert!(wait <= DOUBLING.max_delay);
        assert!(limits.check("magnus", owner, now + wait).is_ok());
        // Failures older than the window no longer count.
        assert!(limits.check("magnus", owner, now + DOUBLING.window).is_ok());
        assert_eq!(
            limits
                .by_account
                .recent(&"magnus".to_owned(), now + DOUBLING.window)
                .0,
            0
        );
    }

    #[test]
    fn delays_double_from_the_first_past_the_free_ones_up_to_the_maximum() {
        let delays: Vec<u64> = (0..12)
            .map(|failures| DOUBLING.delay_after(failures).as_secs())
            .collect();
        assert_eq!(delays, [0, 0, 0, 1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(DOUBLING.delay_after(usize::MAX), DOUBLING.max_delay);
    }

    #[test]
    fn failed_sign_ins_lock_the_address_for_every_account() {
        let many = Limit {
            max: 100,
            ..THREE_PER_MINUTE
        };
        let limits = SignInLimits::new(many, THREE_PER_MINUTE, NEVER_DELAYED);
        let t0 = Instant::now();
        let sprayer = IpAddr::V4(Ipv4Addr::new(203, 0, 113, 9));
        for name in ["a1", "a2", "a3"] {
            limits.failed(name, sprayer, t0);
        }
        assert!(limits.check("a4", sprayer, t0).is_err());
        assert!(
            limits
                .check("a4", IpAddr::V4(Ipv4Addr::LOCALHOST), t0)
                .is_ok()
        );
    }

    #[test]
    fn success_clears_the_owners_typos_but_not_the_address_count() {
        let limits = SignInLimits::new(THREE_PER_MINUTE, THREE_PER_MINUTE, NEVER_DELAYED);
        let t0 = Instant::now();
        let home = address(1);
        for _ in 0..2 {
            limits.failed("magnus", home, t0);
        }
        limits.succeeded("magnus", home);
        limits.failed("magnus", home, t0);
        // Three failures in all on the address: its spraying budget is spent.
        assert!(limits.check("hikaru", home, t0).is_err());
        let (failures, _) = limits
            .by_account_and_address
            .recent(&("magnus".to_owned(), AddressKey::from(home)), t0);
        assert_eq!(failures, 1);
    }

    #[test]
    fn ipv6_addresses_are_grouped_by_their_64_bit_prefix() {
        let a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(AddressKey::from(a), AddressKey::from(b));
        assert_ne!(AddressKey::from(a), AddressKey::from(c));
        // An IPv4-mapped address is the IPv4 client it maps.
        let mapped = IpAddr::V6(Ipv4Addr::new(192, 0, 2, 1).to_ipv6_mapped());
        let v4 = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));
        assert_eq!(AddressKey::from(mapped), AddressKey::from(v4));
        // No IPv6 prefix collides with an IPv4 address.
        let low = IpAddr::V6(Ipv6Addr::from_bits(u128::from(u32::MAX)));
        assert_ne!(AddressKey::from(low), AddressKey::from(v4));
    }

    #[test]
    fn address_keys_read_as_addresses_and_networks() {
        let cases = [
            ("198.51.100.7", "198.51.100.7"),
            ("::ffff:198.51.100.7", "198.51.100.7"),
            ("2001:db8:1:2:ffff::9", "2001:db8:1:2::/64"),
            ("::1", "::/64"),
        ];
        for (address, key) in cases {
            let address: IpAddr = address.parse().unwrap();
            assert_eq!(AddressKey::from(address).to_string(), key);
        }
    }

    #[test]
    fn retry_after_reads_as_a_sentence() {
        assert_eq!(
            RetryAfter(Duration::from_millis(300)).to_string(),
            "too many attempts: try again in 1 s"
        );
    }
}
