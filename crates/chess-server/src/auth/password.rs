//! Passwords: length bounds at the edge, Argon2id hashing off the async
//! threads.
//!
//! Only length is checked (NIST SP 800-63B): composition rules push people
//! towards predictable patterns. The upper bound caps the work one request
//! can cause. Hashing and verifying run in `spawn_blocking` (each costs tens
//! of milliseconds and 19 MiB with the OWASP parameters) behind a semaphore,
//! so a burst of sign-ins queues instead of exhausting memory or starving the
//! game clocks.

use std::fmt;
use std::sync::Arc;

use argon2::password_hash::phc::PasswordHash as Phc;
use argon2::password_hash::{PasswordHasher as _, PasswordVerifier as _};
use argon2::{Algorithm, Argon2, Params, Version};
use chess_store::PasswordHash;
use tokio::sync::Semaphore;

/// The fewest characters a password may have.
pub const MIN_PASSWORD_LEN: usize = 8;
/// The most characters a password may have.
pub const MAX_PASSWORD_LEN: usize = 128;

/// A password within the length bounds. Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(***)")
    }
}

/// Why a string is not an acceptable password.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PasswordError {
    /// Fewer than [`MIN_PASSWORD_LEN`] characters.
    #[error("a password needs at least {MIN_PASSWORD_LEN} characters, this one has {0}")]
    TooShort(usize),
    /// More than [`MAX_PASSWORD_LEN`] characters.
    #[error("a password has at most {MAX_PASSWORD_LEN} characters, this one has {0}")]
    TooLong(usize),
}

impl Password {
    /// Checks the length bounds (counted in characters, not bytes).
    ///
    /// # Errors
    /// [`PasswordError::TooShort`] or [`PasswordError::TooLong`].
    pub fn parse(raw: String) -> Result<Password, PasswordError> {
        let len = raw.chars().count();
        if len < MIN_PASSWORD_LEN {
            return Err(PasswordError::TooShort(len));
        }
        if len > MAX_PASSWORD_LEN {
            return Err(PasswordError::TooLong(len));
        }
        Ok(Password(raw))
    }

    fn expose(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

/// What checking a password found.
#[derive(Debug, PartialEq, Eq)]
pub enum Verification {
    /// The password is right. When the stored hash used older parameters,
    /// `upgraded` holds a fresh hash with the current ones to store.
    Match { upgraded: Option<PasswordHash> },
    /// Wrong password, or no such account.
    Mismatch,
}

/// A failure of the hashing machinery itself (never a wrong password).
#[derive(Debug, thiserror::Error)]
pub enum HashingError {
    /// A stored hash is not a valid Argon2 PHC string.
    #[error("stored password hash is corrupt: {0}")]
    CorruptHash(String),
    /// Argon2 refused to hash (bad parameters, out of memory).
    #[error("password hashing failed: {0}")]
    Argon2(String),
    /// The blocking task panicked or was cancelled.
    #[error("password hashing task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// Hashes and verifies passwords with Argon2id, at most `max_concurrent` at a
/// time.
#[derive(Clone)]
pub struct PasswordHasher {
    params: Params,
    permits: Arc<Semaphore>,
    /// A hash of a random password with the current parameters: verified
    /// against when the username is unknown, so that answer costs the same
    /// time as a wrong password and does not reveal which names exist.
    dummy: PasswordHash,
}

impl fmt::Debug for PasswordHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PasswordHasher")
            .field("params", &self.params)
            .field("available_permits", &self.permits.available_permits())
            .finish_non_exhaustive()
    }
}

impl PasswordHasher {
    /// A hasher with the `argon2` crate's defaults: Argon2id v19, 19 MiB,
    /// t=2, p=1 (OWASP's recommendation).
    ///
    /// # Errors
    /// [`HashingError::Argon2`] if the dummy hash cannot be computed.
    pub fn owasp(max_concurrent: usize) -> Result<PasswordHasher, HashingError> {
        PasswordHasher::new(Params::DEFAULT, max_concurrent)
    }

    /// A hasher with explicit parameters (tests use cheap ones). Computes the
    /// dummy hash at once, so call it at start-up, not per request.
    ///
    /// # Errors
    /// [`HashingError::Argon2`] if the parameters are unusable.
    pub fn new(params: Params, max_concurrent: usize) -> Result<PasswordHasher, HashingError> {
        let mut unguessable = [0u8; 32];
        rand::fill(&mut unguessable);
        let dummy = hash_now(&params, &unguessable)?;
        Ok(PasswordHasher {
            params,
            permits: Arc::new(Semaphore::new(max_concurrent.max(1))),
            dummy,
        })
    }

    /// Hashes `password` with a fresh random salt.
    ///
    /// # Errors
    /// [`HashingError`] if Argon2 fails or the task dies.
    pub async fn hash(&self, password: &Password) -> Result<PasswordHash, HashingError> {
        let params = self.params.clone();
        let password = password.clone();
        self.blocking(move || hash_now(&params, password.expose()))
            .await
    }

    /// Checks `password` against `stored`, or against the dummy hash when
    /// there is no such account (`stored` is `None`): that costs the same
    /// time and always ends in [`Verification::Mismatch`].
    ///
    /// # Errors
    /// [`HashingError::CorruptHash`] if `stored` is not a valid PHC string;
    /// other [`HashingError`]s if the machinery fails.
    pub async fn verify(
        &self,
        password: &Password,
        stored: Option<&PasswordHash>,
    ) -> Result<Verification, HashingError> {
        self.blocking(self.verification(password, stored)).await
    }

    /// The blocking work of verifying `password` against `stored` (or the
    /// dummy hash).
    fn verification(
        &self,
        password: &Password,
        stored: Option<&PasswordHash>,
    ) -> impl FnOnce() -> Result<Verification, HashingError> + Send + 'static {
        let exists = stored.is_some();
        let target = stored.unwrap_or(&self.dummy).clone();
        let params = self.params.clone();
        let password = password.clone();
        move || {
            let phc =
                Phc::new(target.as_str()).map_err(|e| HashingError::CorruptHash(e.to_string()))?;
            let matches = Argon2::default()
                .verify_password(password.expose(), &phc)
                .is_ok();
            if !(matches && exists) {
                return Ok(Verification::Mismatch);
            }
            let upgraded = if is_current(&phc, &params) {
                None
            } else {
                Some(hash_now(&params, password.expose())?)
            };
            Ok(Verification::Match { upgraded })
        }
    }

    /// Waits for a turn at the hasher, to hold through a whole sign-in
    /// (counting the attempt, verifying, settling the count): then at most
    /// `max_concurrent` attempts are counted and not yet settled at any
    /// moment, however many arrive at once, so a classroom's burst of right
    /// passwords never reads as a burst of failures.
    pub async fn turn(&self) -> Turn {
        // The semaphore is never closed, so acquiring only waits.
        Turn {
            _permit: Arc::clone(&self.permits).acquire_owned().await.ok(),
        }
    }

    /// [`PasswordHasher::verify`] in a turn already held.
    ///
    /// # Errors
    /// As [`PasswordHasher::verify`].
    pub async fn verify_in_turn(
        &self,
        _turn: &Turn,
        password: &Password,
        stored: Option<&PasswordHash>,
    ) -> Result<Verification, HashingError> {
        let work = self.verification(password, stored);
        tokio::task::spawn_blocking(work).await?
    }

    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> Result<T, HashingError> + Send + 'static,
    ) -> Result<T, HashingError> {
        let turn = self.turn().await;
        let result = tokio::task::spawn_blocking(work).await?;
        drop(turn);
        result
    }
}

/// A turn at the hasher ([`PasswordHasher::turn`]); dropping it ends it.
#[derive(Debug)]
pub struct Turn {
    _permit: Option<tokio::sync::OwnedSemaphorePermit>,
}

fn hash_now(params: &Params, password: &[u8]) -> Result<PasswordHash, HashingError> {
    let argon2 = Argon2::new(Algorithm::Argon2id, Version::V0x13, params.clone());
    let phc = argon2
        .hash_password(password)
        .map_err(|e| HashingError::Argon2(e.to_string()))?;
    Ok(PasswordHash::from_stored(phc.to_string()))
}

/// Whether `phc` was made with Argon2id v19 and exactly `params`.
fn is_current(phc: &Phc, params: &Params) -> bool {
    let same_algorithm = phc.algorithm.as_str() == Algorithm::Argon2id.as_str();
    let same_version = phc.version == Some(Version::V0x13.into());
    let same_params = Params::try_from(phc).is_ok_and(|stored| {
        stored.m_cost() == params.m_cost()
            && stored.t_cost() == params.t_cost()
            && stored.p_cost() == params.p_cost()
    });
    same_algorithm && same_version && same_params
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cheap parameters: the logic is the same, the tests stay fast.
    fn cheap(t_cost: u32) -> Params {
        Params::new(64, t_cost, 1, None).unwrap()
    }

    fn password(raw: &str) -> Password {
        Password::parse(raw.to_owned()).unwrap()
    }

    #[test]
    fn length_bounds_count_characters() {
        assert_eq!(
            Password::parse("1234567".into()),
            Err(PasswordError::TooShort(7))
        );
        assert!(Password::parse("12345678".into()).is_ok());
        assert!(Password::parse("x".repeat(128)).is_ok());
        assert_eq!(
            Password::parse("x".repeat(129)),
            Err(PasswordError::TooLong(129))
        );
        // Eight two-byte characters: eight characters, accepted.
        assert!(Password::parse("éééééééé".into()).is_ok());
        // No composition rules: spaces and a single repeated letter are fine.
        assert!(Password::parse("correct horse".into()).is_ok());
    }

    #[test]
    fn debug_output_never_shows_secrets() {
        let secret = password("hunter2hunter2");
        assert_eq!(format!("{secret:?}"), "Password(***)");
        let hash = PasswordHash::from_stored("$argon2id$v=19$secret".into());
        assert!(!format!("{hash:?}").contains("argon2"));
    }

    #[tokio::test]
    async fn a_hash_verifies_its_own_password_only() {
        let hasher = PasswordHasher::new(cheap(1), 2).unwrap();
        let hash = hasher.hash(&password("correct horse")).await.unwrap();
        assert!(hash.as_str().starts_with("$argon2id$v=19$m=64,t=1,p=1$"));
        assert_eq!(
            hasher
                .verify(&password("correct horse"), Some(&hash))
                .await
                .unwrap(),
            Verification::Match { upgraded: None }
        );
        assert_eq!(
            hasher
                .verify(&password("correct horsE"), Some(&hash))
                .await
                .unwrap(),
            Verification::Mismatch
        );
    }

    #[tokio::test]
    async fn two_hashes_of_one_password_differ_by_salt() {
        let hasher = PasswordHasher::new(cheap(1), 2).unwrap();
        let a = hasher.hash(&password("same password")).await.unwrap();
        let b = hasher.hash(&password("same password")).await.unwrap();
        assert_ne!(a, b);
    }

    #[tokio::test]
    async fn an_unknown_account_never_matches_not_even_the_dummy_password() {
        let hasher = PasswordHasher::new(cheap(1), 2).unwrap();
        let verdict = hasher.verify(&password("anything at all"), None).await;
        assert_eq!(verdict.unwrap(), Verification::Mismatch);
    }

    #[tokio::test]
    async fn raised_parameters_upgrade_the_hash_on_a_right_password_only() {
        let old = PasswordHasher::new(cheap(1), 2).unwrap();
        let new = PasswordHasher::new(cheap(2), 2).unwrap();
        let stored = old.hash(&password("correct horse")).await.unwrap();

        let Verification::Match {
            upgraded: Some(upgraded),
        } = new
            .verify(&password("correct horse"), Some(&stored))
            .await
            .unwrap()
        else {
            panic!("a right password with old parameters must be upgraded");
        };
        assert!(upgraded.as_str().contains("m=64,t=2,p=1"));
        // The upgraded hash is current and still verifies.
        assert_eq!(
            new.verify(&password("correct horse"), Some(&upgraded))
                .await
                .unwrap(),
            Verification::Match { upgraded: None }
        );
        // A wrong password upgrades nothing.
        assert_eq!(
            new.verify(&password("wrong horse"), Some(&stored))
                .await
                .unwrap(),
            Verification::Mismatch
        );
    }

    #[tokio::test]
    async fn a_corrupt_stored_hash_is_an_error_not_a_mismatch() {
        let hasher = PasswordHasher::new(cheap(1), 2).unwrap();
        let corrupt = PasswordHash::from_stored("not a phc string".into());
        let verdict = hasher
            .verify(&password("correct horse"), Some(&corrupt))
            .await;
        assert!(matches!(verdict, Err(HashingError::CorruptHash(_))));
    }

    #[tokio::test]
    async fn the_owasp_hasher_writes_the_owasp_parameters() {
        let hasher = PasswordHasher::owasp(1).unwrap();
        let hash = hasher.hash(&password("correct horse")).await.unwrap();
        assert!(hash.as_str().starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
    }
}
