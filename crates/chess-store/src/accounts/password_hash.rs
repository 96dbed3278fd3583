//! A stored password hash, kept opaque: hashing and checking passwords is
//! the server's (`auth::password`); the store only keeps the PHC string.

use std::fmt;

/// A stored password hash: a PHC string such as `$argon2id$v=19$m=19456,t=2,p=1$...`.
/// Its `Debug` hides the value so it never reaches a log.
#[derive(Clone, PartialEq, Eq)]
pub struct PasswordHash(String);

impl fmt::Debug for PasswordHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PasswordHash(***)")
    }
}

impl PasswordHash {
    /// Wraps a PHC string read from the store. It is parsed when used.
    pub fn from_stored(phc: String) -> PasswordHash {
        PasswordHash(phc)
    }

    /// The PHC string to store.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The hash of an account that has no password (it signs in through
    /// the host platform): not a PHC string, so no password can match it,
    /// and [`PasswordHash::is_unusable`] lets sign-in refuse it before
    /// hashing anything.
    pub fn unusable() -> PasswordHash {
        PasswordHash(UNUSABLE_HASH.to_owned())
    }

    /// Whether this is the hash of an account without a password.
    pub fn is_unusable(&self) -> bool {
        self.0 == UNUSABLE_HASH
    }
}

/// The stored hash of accounts without a password (a PHC string starts
/// with `$`).
const UNUSABLE_HASH: &str = "!no-password:platform-account";
