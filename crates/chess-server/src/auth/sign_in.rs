//! The sign-in decision, composed from the rate limits and the hasher, so
//! that it cannot reveal whether a username exists.
//!
//! An unknown username and a wrong password take the same path: the limits
//! are checked and counted the same way, a full Argon2 verification runs
//! (against the dummy hash when there is no account), and the result is the
//! same [`SignInError::InvalidCredentials`], whose message names neither
//! case. The HTTP layer turns it into one status and one body.

use std::net::IpAddr;
use std::time::Instant;

use uuid::Uuid;

use super::account_limits::{AccountLimits, Refusal};
use super::password::{HashingError, Password, PasswordHasher, Verification};
use super::rate_limit::RetryAfter;
use chess_store::PasswordHash;
use chess_store::accounts::Username;
use chess_store::{AccountRow, StoreError};

/// A successful sign-in.
#[derive(Debug, PartialEq, Eq)]
pub struct SignedIn {
    /// The account's player id.
    pub player_id: Uuid,
    /// A rehash with the current Argon2 parameters, to store, when the
    /// stored hash used older ones.
    pub upgraded_hash: Option<PasswordHash>,
}

/// Why a sign-in failed.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    /// Unknown username or wrong password: deliberately the same.
    #[error("wrong username or password")]
    InvalidCredentials,
    /// Too many failures for this account or from this address.
    #[error(transparent)]
    TooManyAttempts(#[from] RetryAfter),
    /// The hashing machinery failed (not the person's fault).
    #[error(transparent)]
    Hashing(#[from] HashingError),
    /// The database could not count the attempt.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<Refusal> for SignInError {
    fn from(refusal: Refusal) -> SignInError {
        match refusal {
            Refusal::TooMany(retry) => SignInError::TooManyAttempts(retry),
            Refusal::Store(error) => SignInError::Store(error),
        }
    }
}

/// Decides a sign-in of `username` with `password` from `address`, given the
/// account the store found under the username's key (`None` if none).
///
/// # Errors
/// [`SignInError::TooManyAttempts`] before any hashing when a limit is
/// reached; [`SignInError::InvalidCredentials`] for an unknown user or a
/// wrong password (counted against both limits);
/// [`SignInError::Hashing`] if Argon2 fails; [`SignInError::Store`] if the
/// limits' database does.
pub async fn sign_in(
    hasher: &PasswordHasher,
    limits: &AccountLimits,
    username: &Username,
    password: &Password,
    account: Option<&AccountRow>,
    address: IpAddr,
    now: Instant,
) -> Result<SignedIn, SignInError> {
    // The turn is taken before the attempt is counted and held until it is
    // settled: attempts arriving together wait here, instead of all
    // counting as failures at once while they wait for the hasher.
    let turn = hasher.turn().await;
    let attempt = limits.begin_sign_in(&username.key(), address, now).await?;
    // An account of the host platform has no password: refused like an
    // unknown name, after the same dummy verification.
    let account = account.filter(|account| !account.password_hash.is_unusable());
    let verdict = hasher
        .verify_in_turn(
            &turn,
            password,
            account.map(|account| &account.password_hash),
        )
        .await?;
    match (verdict, account) {
        (Verification::Match { upgraded }, Some(account)) => {
            attempt.succeeded().await;
            Ok(SignedIn {
                player_id: account.player_id,
                upgraded_hash: upgraded,
            })
        }
        _ => {
            attempt.failed();
            Err(SignInError::InvalidCredentials)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;
    use std::time::Duration;

    use argon2::Params;

    use super::*;
    use crate::auth::rate_limit::{Backoff, Limit, SIGN_UPS_PER_ADDRESS, SignInLimits};

    const ADDRESS: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));

    fn hasher(t_cost: u32) -> PasswordHasher {
        PasswordHasher::new(Params::new(64, t_cost, 1, None).unwrap(), 2).unwrap()
    }

    fn limits() -> AccountLimits {
        let limit = Limit {
            max: 3,
            window: Duration::from_secs(60),
        };
        let no_delays = Backoff {
            free: 100,
            window: limit.window,
            first_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(1),
        };
        AccountLimits::in_memory(
            SignInLimits::new(limit, Limit { max: 10, ..limit }, no_delays),
            SIGN_UPS_PER_ADDRESS,
        )
    }

    fn password(raw: &str) -> Password {
        Password::parse(raw.to_owned()).unwrap()
    }

    /// One sign-in from [`ADDRESS`] with the password `secret`.
    async fn attempt(
        hasher: &PasswordHasher,
        limits: &AccountLimits,
        name: &Username,
        secret: &str,
        row: Option<&AccountRow>,
        now: Instant,
    ) -> Result<SignedIn, SignInError> {
        sign_in(hasher, limits, name, &password(secret), row, ADDRESS, now).await
    }

    async fn account(hasher: &PasswordHasher, name: &str, secret: &str) -> (Username, AccountRow) {
        let username = Username::parse(name).unwrap();
        let row = AccountRow {
            player_id: Uuid::new_v4(),
            username: name.to_owned(),
            password_hash: hasher.hash(&password(secret)).await.unwrap(),
            must_change_password: false,
        };
        (username, row)
    }

    #[tokio::test]
    async fn the_right_password_signs_in_whatever_the_username_case() {
        let (hasher, limits) = (hasher(1), limits());
        let (_, row) = account(&hasher, "Magnus", "correct horse").await;
        let typed = Username::parse("mAGNUS").unwrap();
        let signed_in = attempt(
            &hasher,
            &limits,
            &typed,
            "correct horse",
            Some(&row),
            Instant::now(),
        )
        .await
        .unwrap();
        assert_eq!(
            signed_in,
            SignedIn {
                player_id: row.player_id,
                upgraded_hash: None
            }
        );
    }

    #[tokio::test]
    async fn unknown_user_and_wrong_password_are_indistinguishable() {
        let (hasher, limits) = (hasher(1), limits());
        let (name, row) = account(&hasher, "Magnus", "correct horse").await;
        let now = Instant::now();
        let wrong = attempt(&hasher, &limits, &name, "wrong horse", Some(&row), now).await;
        let ghost = Username::parse("Nobody").unwrap();
        let unknown = attempt(&hasher, &limits, &ghost, "wrong horse", None, now).await;
        let (wrong, unknown) = (wrong.unwrap_err(), unknown.unwrap_err());
        assert!(matches!(wrong, SignInError::InvalidCredentials));
        assert!(matches!(unknown, SignInError::InvalidCredentials));
        assert_eq!(wrong.to_string(), unknown.to_string());
    }

    #[tokio::test]
    async fn an_account_of_the_host_platform_never_signs_in_with_a_password() {
        let (hasher, limits) = (hasher(1), limits());
        let name = Username::parse("platformer").unwrap();
        let row = AccountRow {
            player_id: Uuid::new_v4(),
            username: "platformer".to_owned(),
            password_hash: PasswordHash::unusable(),
            must_change_password: false,
        };
        // Whatever is typed, the stored marker itself included.
        for typed in ["!no-password:platform-account", "correct horse"] {
            let result = sign_in(
                &hasher,
                &limits,
                &name,
                &password(typed),
                Some(&row),
                ADDRESS,
                Instant::now(),
            )
            .await;
            assert!(
                matches!(result, Err(SignInError::InvalidCredentials)),
                "{typed}: {result:?}"
            );
        }
    }

    #[tokio::test]
    async fn unknown_usernames_are_locked_like_real_ones() {
        let (hasher, limits) = (hasher(1), limits());
        let ghost = Username::parse("Nobody").unwrap();
        let now = Instant::now();
        for _ in 0..3 {
            let result = attempt(&hasher, &limits, &ghost, "guess guess", None, now).await;
            assert!(matches!(result, Err(SignInError::InvalidCredentials)));
        }
        let locked = attempt(&hasher, &limits, &ghost, "guess guess", None, now).await;
        assert!(
            matches!(locked, Err(SignInError::TooManyAttempts(_))),
            "{locked:?}"
        );
    }

    #[tokio::test]
    async fn a_locked_account_refuses_even_the_right_password_until_the_window_passes() {
        let (hasher, limits) = (hasher(1), limits());
        let (name, row) = account(&hasher, "Magnus", "correct horse").await;
        let now = Instant::now();
        for _ in 0..3 {
            let _ = attempt(&hasher, &limits, &name, "wrong horse", Some(&row), now).await;
        }
        let right = password("correct horse");
        let locked = sign_in(&hasher, &limits, &name, &right, Some(&row), ADDRESS, now).await;
        assert!(
            matches!(locked, Err(SignInError::TooManyAttempts(_))),
            "{locked:?}"
        );
        let later = now + Duration::from_secs(60);
        assert!(
            sign_in(&hasher, &limits, &name, &right, Some(&row), ADDRESS, later)
                .await
                .is_ok()
        );
    }

    #[tokio::test]
    async fn a_success_resets_the_account_count() {
        let (hasher, limits) = (hasher(1), limits());
        let (name, row) = account(&hasher, "Magnus", "correct horse").await;
        let now = Instant::now();
        for _ in 0..2 {
            let _ = attempt(&hasher, &limits, &name, "wrong horse", Some(&row), now).await;
        }
        attempt(&hasher, &limits, &name, "correct horse", Some(&row), now)
            .await
            .unwrap();
        for _ in 0..2 {
            let _ = attempt(&hasher, &limits, &name, "wrong horse", Some(&row), now).await;
        }
        // Four failures in all, but never three in a row: not locked.
        assert!(
            attempt(&hasher, &limits, &name, "correct horse", Some(&row), now)
                .await
                .is_ok()
        );
    }

    #[tokio::test]
    async fn an_old_hash_is_upgraded_on_sign_in() {
        let old = hasher(1);
        let (name, row) = account(&old, "Magnus", "correct horse").await;
        let current = hasher(2);
        let signed_in = sign_in(
            &current,
            &limits(),
            &name,
            &password("correct horse"),
            Some(&row),
            ADDRESS,
            Instant::now(),
        )
        .await
        .unwrap();
        let upgraded = signed_in.upgraded_hash.expect("an upgrade");
        assert!(upgraded.as_str().contains("t=2"));
    }
}
