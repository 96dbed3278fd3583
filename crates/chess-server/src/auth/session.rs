//! Account sessions: short-lived HS256 JWTs, renewed while in use, signed by
//! a key ring that rotates by `kid`.
//!
//! Every token names its key in the header (`kid`); the ring signs with its
//! first key and verifies with any of them, so a new key can be put first
//! while tokens signed by the old one stay valid until they expire. The
//! algorithm is pinned to HS256: a header naming anything else, `none`
//! included, is refused before any key is touched. `exp`, `iat`, `iss`,
//! `aud` and `sub` are required. Account tokens carry their own audience
//! ([`ACCOUNT_AUDIENCE`]), different from the guest tokens' `chess-guest`, so
//! a guest token signed with the same secret still never passes as an account.
//!
//! Time is passed in (unix seconds) wherever this module decides something,
//! so tests need no clock. The `jsonwebtoken` crate also checks `exp` against
//! the real clock, with no leeway; that second check can only refuse more.

use std::collections::HashSet;
use std::fmt;
use std::time::Duration;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The `aud` of account session tokens.
pub const ACCOUNT_AUDIENCE: &str = "chess-account";
/// The `iss` of every token this server signs.
pub const ISSUER: &str = "chess-server";
/// The cookie holding an account session token.
pub const SESSION_COOKIE: &str = "chess_session";
/// How long one token is valid: short, so a stolen token is soon useless.
pub const SESSION_LIFETIME: Duration = Duration::from_secs(60 * 60);
/// How long renewals can keep one sign-in alive before the password is
/// asked again.
pub const MAX_SIGN_IN_AGE: Duration = Duration::from_secs(30 * 24 * 60 * 60);
/// The fewest secret bytes a signing key may have: 256 bits.
pub const MIN_SECRET_BYTES: usize = 32;
/// A token claiming to be issued further in the future than this is refused
/// (clocks of several nodes may differ a little).
const CLOCK_SKEW_SECS: u64 = 60;

/// Whether weak or missing secrets are tolerated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Real deployment: a strong secret must be configured.
    Production,
    /// Local development: a missing secret is generated, a weak one allowed.
    Development,
}

/// Why the configured keys cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KeyRingError {
    /// No key configured in production.
    #[error(
        "no session key configured: set SESSION_KEYS to `kid:secret` (a secret of at least {MIN_SECRET_BYTES} bytes)"
    )]
    Missing,
    /// An entry is not `kid:secret`.
    #[error("session key entry {0} is not of the form `kid:secret`")]
    Malformed(usize),
    /// A `kid` that is empty, too long or has characters other than
    /// letters, digits, `_` and `-`.
    #[error("session key id {0:?} must be 1 to 32 letters, digits, '_' or '-'")]
    BadKid(String),
    /// Two entries with one `kid`.
    #[error("session key id {0:?} appears twice")]
    DuplicateKid(String),
    /// A secret shorter than [`MIN_SECRET_BYTES`].
    #[error("session key {kid:?} has {len} bytes, at least {MIN_SECRET_BYTES} are required")]
    TooShort { kid: String, len: usize },
    /// A secret that is a placeholder or has almost no variety.
    #[error("session key {0:?} is a placeholder or a trivially guessable secret")]
    Weak(String),
}

/// One named signing secret. `Debug` hides the secret.
#[derive(Clone)]
struct Key {
    kid: String,
    encoding: EncodingKey,
    decoding: DecodingKey,
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({}: ***)", self.kid)
    }
}

/// The signing keys: the first signs, all verify.
#[derive(Clone, Debug)]
pub struct KeyRing {
    keys: Vec<Key>,
}

impl KeyRing {
    /// Parses a ring from the value of `SESSION_KEYS`: comma-separated
    /// `kid:secret` entries, the signing key first. Without a value, development
    /// mode generates a random key (so the embedded default needs no set-up)
    /// and production refuses to start.
    ///
    /// # Errors
    /// A [`KeyRingError`] for a missing value in production, a malformed
    /// entry, a bad or duplicate `kid`, and (in production) a short or weak
    /// secret.
    pub fn from_config(value: Option<&str>, mode: Mode) -> Result<KeyRing, KeyRingError> {
        let value = value.map(str::trim).filter(|v| !v.is_empty());
        let Some(value) = value else {
            return match mode {
                Mode::Production => Err(KeyRingError::Missing),
                Mode::Development => Ok(KeyRing::generated()),
            };
        };
        let mut keys = Vec::new();
        let mut seen = HashSet::new();
        for (index, entry) in value.split(',').enumerate() {
            let (kid, secret) = entry
                .trim()
                .split_once(':')
                .ok_or(KeyRingError::Malformed(index + 1))?;
            check_kid(kid)?;
            if !seen.insert(kid) {
                return Err(KeyRingError::DuplicateKid(kid.to_owned()));
            }
            if mode == Mode::Production {
                check_strength(kid, secret.as_bytes())?;
            }
            keys.push(
                Key::new(kid, secret.as_bytes()).ok_or(KeyRingError::TooShort {
                    kid: kid.to_owned(),
                    len: 0,
                })?,
            );
        }
        Ok(KeyRing { keys })
    }

    /// A ring of one key, `kid`, with `secret` (at least
    /// [`MIN_SECRET_BYTES`]), without the placeholder checks of
    /// [`KeyRing::from_config`]: for a secret the server generated itself.
    ///
    /// # Errors
    /// [`KeyRingError::BadKid`] or [`KeyRingError::TooShort`].
    pub fn single(kid: &str, secret: &[u8]) -> Result<KeyRing, KeyRingError> {
        check_kid(kid)?;
        let too_short = || KeyRingError::TooShort {
            kid: kid.to_owned(),
            len: secret.len(),
        };
        if secret.len() < MIN_SECRET_BYTES {
            return Err(too_short());
        }
        Ok(KeyRing {
            keys: vec![Key::new(kid, secret).ok_or_else(too_short)?],
        })
    }

    /// A ring of one random 256-bit key, for development and tests.
    pub fn generated() -> KeyRing {
        let mut secret = [0u8; MIN_SECRET_BYTES];
        rand::fill(&mut secret);
        KeyRing {
            keys: vec![Key::new("dev", &secret).expect("a 32-byte secret is a valid HMAC key")],
        }
    }

    fn signing(&self) -> &Key {
        // `from_config` and `generated` never build an empty ring.
        &self.keys[0]
    }

    fn find(&self, kid: &str) -> Option<&Key> {
        self.keys.iter().find(|key| key.kid == kid)
    }
}

impl Key {
    fn new(kid: &str, secret: &[u8]) -> Option<Key> {
        Some(Key {
            kid: kid.to_owned(),
            encoding: EncodingKey::from_secret(secret).ok()?,
            decoding: DecodingKey::from_secret(secret).ok()?,
        })
    }
}

fn check_kid(kid: &str) -> Result<(), KeyRingError> {
    let valid = (1..=32).contains(&kid.len())
        && kid
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if valid {
        Ok(())
    } else {
        Err(KeyRingError::BadKid(kid.to_owned()))
    }
}

/// Words that mark a secret copied from an example rather than generated.
const PLACEHOLDER_WORDS: &[&str] = &[
    "changeme",
    "change-me",
    "change_me",
    "example",
    "default",
    "secret",
    "password",
];

/// Refuses a secret that is short, contains a placeholder word or has
/// almost no variety; `kid` names the key or the setting it came from.
///
/// # Errors
/// [`KeyRingError::TooShort`] or [`KeyRingError::Weak`].
pub fn check_strength(kid: &str, secret: &[u8]) -> Result<(), KeyRingError> {
    if secret.len() < MIN_SECRET_BYTES {
        return Err(KeyRingError::TooShort {
            kid: kid.to_owned(),
            len: secret.len(),
        });
    }
    let lowered = secret.to_ascii_lowercase();
    let placeholder = PLACEHOLDER_WORDS
        .iter()
        .any(|word| lowered.windows(word.len()).any(|w| w == word.as_bytes()));
    // A random 32-byte string (even hex) has at least 10 distinct bytes with
    // overwhelming probability; "aaaa…" or "abababab…" does not.
    let distinct = secret.iter().collect::<HashSet<_>>().len();
    if placeholder || distinct < 10 {
        return Err(KeyRingError::Weak(kid.to_owned()));
    }
    Ok(())
}

/// The claims of an account session token, as signed.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
struct Claims {
    /// The account's player id.
    sub: String,
    iss: String,
    aud: String,
    /// Unix seconds.
    iat: u64,
    /// Unix seconds.
    exp: u64,
    /// This sign-in; renewals keep it, so signing out can revoke it.
    sid: String,
    /// Unix seconds of the password check that started this sign-in.
    auth_time: u64,
}

/// The claims of a presented token. Every field is optional so that a
/// missing claim is reported as missing (by `jsonwebtoken` for the
/// registered ones, by [`required`] for ours) rather than as bad JSON.
#[derive(Debug, Deserialize)]
struct IncomingClaims {
    sub: Option<String>,
    iat: Option<u64>,
    exp: Option<u64>,
    sid: Option<String>,
    auth_time: Option<u64>,
}

fn required<T>(claim: Option<T>, name: &str) -> Result<T, SessionError> {
    claim.ok_or_else(|| SessionError::MissingClaim(name.to_owned()))
}

/// A verified account session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Session {
    /// The account's player id.
    pub account_id: Uuid,
    /// The sign-in this token belongs to (kept across renewals).
    pub session_id: Uuid,
    /// Unix seconds when this token was issued.
    pub issued_at: u64,
    /// Unix seconds when this token expires.
    pub expires_at: u64,
    /// Unix seconds of the password check that started the sign-in.
    pub signed_in_at: u64,
}

impl Session {
    /// Whether the token should be replaced by a fresh one: past half its
    /// life, and the sign-in not yet at [`MAX_SIGN_IN_AGE`].
    pub fn needs_renewal(&self, now: u64) -> bool {
        let half_life = (self.expires_at - self.issued_at.min(self.expires_at)) / 2;
        now >= self.issued_at.saturating_add(half_life) && self.can_renew(now)
    }

    fn can_renew(&self, now: u64) -> bool {
        now < self.signed_in_at.saturating_add(MAX_SIGN_IN_AGE.as_secs())
    }
}

/// Why a token is not a valid account session. Clients only ever see one
/// generic answer; the variants are for logs and tests.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// Not three base64url parts with a JSON header, or an unknown algorithm
    /// name such as `none`.
    #[error("session token is malformed")]
    Malformed,
    /// A known algorithm other than HS256.
    #[error("session token uses a refused algorithm")]
    WrongAlgorithm,
    /// No `kid`, or one not in the ring.
    #[error("session token names no known key")]
    UnknownKey,
    /// The signature does not match (forged or altered).
    #[error("session token signature does not verify")]
    BadSignature,
    /// Past `exp`.
    #[error("session token has expired")]
    Expired,
    /// A guest token or another service's token.
    #[error("session token is for another audience")]
    WrongAudience,
    /// Not issued by this server.
    #[error("session token has another issuer")]
    WrongIssuer,
    /// A required claim is missing.
    #[error("session token lacks the {0:?} claim")]
    MissingClaim(String),
    /// A claim has the wrong type or value (`sub` not a uuid, `iat` in the future).
    #[error("session token has an invalid {0:?} claim")]
    BadClaim(String),
}

/// Issues, verifies and renews account session tokens.
#[derive(Clone, Debug)]
pub struct Sessions {
    ring: KeyRing,
    lifetime: Duration,
    validation: Validation,
}

impl Sessions {
    /// Sessions signed by `ring`, valid for [`SESSION_LIFETIME`].
    pub fn new(ring: KeyRing) -> Sessions {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_audience(&[ACCOUNT_AUDIENCE]);
        validation.set_issuer(&[ISSUER]);
        validation.set_required_spec_claims(&["exp", "iat", "iss", "aud", "sub"]);
        validation.leeway = 0;
        Sessions {
            ring,
            lifetime: SESSION_LIFETIME,
            validation,
        }
    }

    /// How long each token lives.
    pub fn lifetime(&self) -> Duration {
        self.lifetime
    }

    /// A token for a fresh sign-in of `account_id` at `now` (unix seconds).
    ///
    /// # Errors
    /// Only if signing fails, which HMAC with a valid key does not.
    pub fn issue(&self, account_id: Uuid, now: u64) -> Result<String, jsonwebtoken::errors::Error> {
        self.sign(account_id, Uuid::new_v4(), now, now)
    }

    /// A token for a fresh sign-in of `account_id` recorded under
    /// `session_id` (so the server can end it), at `now` (unix seconds).
    ///
    /// # Errors
    /// Only if signing fails.
    pub fn issue_for(
        &self,
        account_id: Uuid,
        session_id: Uuid,
        now: u64,
    ) -> Result<String, jsonwebtoken::errors::Error> {
        self.sign(account_id, session_id, now, now)
    }

    /// A fresh token for the same sign-in as `session`, or `None` once the
    /// sign-in is older than [`MAX_SIGN_IN_AGE`].
    ///
    /// # Errors
    /// Only if signing fails.
    pub fn renew(
        &self,
        session: &Session,
        now: u64,
    ) -> Result<Option<String>, jsonwebtoken::errors::Error> {
        if !session.can_renew(now) {
            return Ok(None);
        }
        self.sign(
            session.account_id,
            session.session_id,
            session.signed_in_at,
            now,
        )
        .map(Some)
    }

    fn sign(
        &self,
        account_id: Uuid,
        session_id: Uuid,
        auth_time: u64,
        now: u64,
    ) -> Result<String, jsonwebtoken::errors::Error> {
        let key = self.ring.signing();
        let claims = Claims {
            sub: account_id.to_string(),
            iss: ISSUER.to_owned(),
            aud: ACCOUNT_AUDIENCE.to_owned(),
            iat: now,
            exp: now + self.lifetime.as_secs(),
            sid: session_id.to_string(),
            auth_time,
        };
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some(key.kid.clone());
        jsonwebtoken::encode(&header, &claims, &key.encoding)
    }

    /// The session in `token`, checked at `now` (unix seconds).
    ///
    /// # Errors
    /// A [`SessionError`] saying why the token is refused.
    pub fn verify(&self, token: &str, now: u64) -> Result<Session, SessionError> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| SessionError::Malformed)?;
        if header.alg != Algorithm::HS256 {
            return Err(SessionError::WrongAlgorithm);
        }
        let key = header
            .kid
            .as_deref()
            .and_then(|kid| self.ring.find(kid))
            .ok_or(SessionError::UnknownKey)?;
        let claims = jsonwebtoken::decode::<IncomingClaims>(token, &key.decoding, &self.validation)
            .map_err(|e| match e.into_kind() {
                ErrorKind::InvalidSignature => SessionError::BadSignature,
                ErrorKind::ExpiredSignature => SessionError::Expired,
                ErrorKind::InvalidAudience => SessionError::WrongAudience,
                ErrorKind::InvalidIssuer => SessionError::WrongIssuer,
                ErrorKind::InvalidAlgorithm => SessionError::WrongAlgorithm,
                ErrorKind::MissingRequiredClaim(claim) => SessionError::MissingClaim(claim),
                // A claim of the wrong type, such as a string `exp`.
                ErrorKind::Json(error) => SessionError::BadClaim(error.to_string()),
                _ => SessionError::Malformed,
            })?
            .claims;
        let (iat, exp) = (required(claims.iat, "iat")?, required(claims.exp, "exp")?);
        let auth_time = required(claims.auth_time, "auth_time")?;
        if now >= exp {
            return Err(SessionError::Expired);
        }
        if iat > now + CLOCK_SKEW_SECS || iat > exp {
            return Err(SessionError::BadClaim("iat".into()));
        }
        if auth_time > iat {
            return Err(SessionError::BadClaim("auth_time".into()));
        }
        let uuid = |claim: Option<String>, name: &str| {
            Uuid::parse_str(&required(claim, name)?)
                .map_err(|_| SessionError::BadClaim(name.to_owned()))
        };
        Ok(Session {
            account_id: uuid(claims.sub, "sub")?,
            session_id: uuid(claims.sid, "sid")?,
            issued_at: iat,
            expires_at: exp,
            signed_in_at: auth_time,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::{SystemTime, UNIX_EPOCH};

    use serde_json::json;

    use super::*;

    const SECRET_A: &str = "k7Qw9zX2mN4pR8tV1bY6cH3jL5sD0fGa";
    const SECRET_B: &str = "Zr4Tq8Wn2Ls6Px0Vm3Kc7Hb1Jd5Gf9Ya";

    fn now() -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("the clock is after 1970")
            .as_secs()
    }

    fn sessions(config: &str) -> Sessions {
        Sessions::new(KeyRing::from_config(Some(config), Mode::Production).unwrap())
    }

    /// Signs arbitrary claims with `secret` under `kid`, as a forger holding
    /// (or guessing) a key would.
    fn sign_raw(
        claims: &serde_json::Value,
        kid: Option<&str>,
        secret: &str,
        alg: Algorithm,
    ) -> String {
        let mut header = Header::new(alg);
        header.kid = kid.map(str::to_owned);
        jsonwebtoken::encode(
            &header,
            claims,
            &EncodingKey::from_secret(secret.as_bytes()).unwrap(),
        )
        .unwrap()
    }

    fn valid_claims(now: u64) -> serde_json::Value {
        json!({
            "sub": Uuid::new_v4().to_string(),
            "iss": ISSUER,
            "aud": ACCOUNT_AUDIENCE,
            "iat": now,
            "exp": now + 600,
            "sid": Uuid::new_v4().to_string(),
            "auth_time": now,
        })
    }

    #[test]
    fn an_issued_token_verifies_to_its_account() {
        let sessions = sessions(&format!("a:{SECRET_A}"));
        let account = Uuid::new_v4();
        let now = now();
        let token = sessions.issue(account, now).unwrap();
        let session = sessions.verify(&token, now).unwrap();
        assert_eq!(session.account_id, account);
        assert_eq!(session.expires_at, now + SESSION_LIFETIME.as_secs());
        assert_eq!(session.signed_in_at, now);
    }

    #[test]
    fn hand_signed_claims_with_the_right_key_verify() {
        // Guards the forgery tests below: their tokens differ from this one
        // in exactly the property each test names.
        let now = now();
        let token = sign_raw(&valid_claims(now), Some("a"), SECRET_A, Algorithm::HS256);
        assert!(
            sessions(&format!("a:{SECRET_A}"))
                .verify(&token, now)
                .is_ok()
        );
    }

    #[test]
    fn forged_and_invalid_tokens_are_each_refused_for_their_reason() {
        let sessions = sessions(&format!("a:{SECRET_A}"));
        let now = now();
        let with = |change: &dyn Fn(&mut serde_json::Value)| {
            let mut claims = valid_claims(now);
            change(&mut claims);
            sign_raw(&claims, Some("a"), SECRET_A, Algorithm::HS256)
        };
        let without = |claim: &str| with(&|c| drop(c.as_object_mut().unwrap().remove(claim)));
        let good = sessions.issue(Uuid::new_v4(), now).unwrap();
        let other = sessions.issue(Uuid::new_v4(), now).unwrap();
        let good_parts: Vec<&str> = good.split('.').collect();
        let other_parts: Vec<&str> = other.split('.').collect();
        // `{"alg":"none","typ":"JWT"}` in base64url.
        let alg_none = format!("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.{}.", good_parts[1]);
        let cases: Vec<(&str, String, SessionError)> = vec![
            ("garbage", "not.a.jwt".into(), SessionError::Malformed),
            ("empty", String::new(), SessionError::Malformed),
            ("alg none", alg_none, SessionError::Malformed),
            (
                "HS512 with the right key",
                sign_raw(&valid_claims(now), Some("a"), SECRET_A, Algorithm::HS512),
                SessionError::WrongAlgorithm,
            ),
            (
                "wrong key",
                sign_raw(&valid_claims(now), Some("a"), SECRET_B, Algorithm::HS256),
                SessionError::BadSignature,
            ),
            (
                "unknown kid",
                sign_raw(&valid_claims(now), Some("zz"), SECRET_A, Algorithm::HS256),
                SessionError::UnknownKey,
            ),
            (
                "no kid",
                sign_raw(&valid_claims(now), None, SECRET_A, Algorithm::HS256),
                SessionError::UnknownKey,
            ),
            (
                "claims of another token under this signature",
                format!("{}.{}.{}", good_parts[0], other_parts[1], good_parts[2]),
                SessionError::BadSignature,
            ),
            (
                "expired",
                with(&|c| {
                    c["iat"] = json!(now - 7200);
                    c["auth_time"] = json!(now - 7200);
                    c["exp"] = json!(now - 3600);
                }),
                SessionError::Expired,
            ),
            (
                "guest audience",
                with(&|c| c["aud"] = json!("chess-guest")),
                SessionError::WrongAudience,
            ),
            (
                "other issuer",
                with(&|c| c["iss"] = json!("evil")),
                SessionError::WrongIssuer,
            ),
            (
                "no exp",
                without("exp"),
                SessionError::MissingClaim("exp".into()),
            ),
            (
                "no iat",
                without("iat"),
                SessionError::MissingClaim("iat".into()),
            ),
            (
                "no iss",
                without("iss"),
                SessionError::MissingClaim("iss".into()),
            ),
            (
                "no aud",
                without("aud"),
                SessionError::MissingClaim("aud".into()),
            ),
            (
                "no sub",
                without("sub"),
                SessionError::MissingClaim("sub".into()),
            ),
            (
                "sub not a uuid",
                with(&|c| c["sub"] = json!("admin")),
                SessionError::BadClaim("sub".into()),
            ),
            (
                "issued in the future",
                with(&|c| {
                    c["iat"] = json!(now + 3600);
                    c["auth_time"] = json!(now + 3600);
                    c["exp"] = json!(now + 7200);
                }),
                SessionError::BadClaim("iat".into()),
            ),
        ];
        for (name, token, expected) in cases {
            assert_eq!(sessions.verify(&token, now), Err(expected), "{name}");
        }
        for claim in ["sid", "auth_time"] {
            let result = sessions.verify(&without(claim), now);
            assert_eq!(
                result,
                Err(SessionError::MissingClaim(claim.into())),
                "no {claim}"
            );
        }
        let result = sessions.verify(&with(&|c| c["exp"] = json!("tomorrow")), now);
        assert!(
            matches!(result, Err(SessionError::BadClaim(_))),
            "{result:?}"
        );
    }

    #[test]
    fn a_token_expires_at_its_exp_second_by_the_injected_clock() {
        let sessions = sessions(&format!("a:{SECRET_A}"));
        let now = now();
        let token = sessions.issue(Uuid::new_v4(), now).unwrap();
        let exp = now + SESSION_LIFETIME.as_secs();
        assert!(sessions.verify(&token, exp - 1).is_ok());
        assert_eq!(sessions.verify(&token, exp), Err(SessionError::Expired));
    }

    #[test]
    fn rotation_signs_with_the_new_key_and_still_accepts_the_old() {
        let now = now();
        let account = Uuid::new_v4();
        let before = sessions(&format!("old:{SECRET_A}"));
        let old_token = before.issue(account, now).unwrap();

        let after = sessions(&format!("new:{SECRET_B},old:{SECRET_A}"));
        assert_eq!(after.verify(&old_token, now).unwrap().account_id, account);
        let new_token = after.issue(account, now).unwrap();
        let header = jsonwebtoken::decode_header(&new_token).unwrap();
        assert_eq!(header.kid.as_deref(), Some("new"));

        // Once the old key is retired, its tokens stop working.
        let retired = sessions(&format!("new:{SECRET_B}"));
        assert_eq!(
            retired.verify(&old_token, now),
            Err(SessionError::UnknownKey)
        );
        assert!(retired.verify(&new_token, now).is_ok());
    }

    #[test]
    fn renewal_starts_at_half_life_and_keeps_the_sign_in() {
        let sessions = sessions(&format!("a:{SECRET_A}"));
        let start = now();
        let token = sessions.issue(Uuid::new_v4(), start).unwrap();
        let session = sessions.verify(&token, start).unwrap();
        let half = SESSION_LIFETIME.as_secs() / 2;
        assert!(!session.needs_renewal(start + half - 1));
        assert!(session.needs_renewal(start + half));

        let renewed = sessions.renew(&session, start + half).unwrap().unwrap();
        let renewed = sessions.verify(&renewed, start + half).unwrap();
        assert_eq!(renewed.session_id, session.session_id);
        assert_eq!(renewed.signed_in_at, start);
        assert_eq!(
            renewed.expires_at,
            start + half + SESSION_LIFETIME.as_secs()
        );
    }

    #[test]
    fn a_sign_in_older_than_the_maximum_age_is_not_renewed() {
        let sessions = sessions(&format!("a:{SECRET_A}"));
        let issued = now();
        let session = Session {
            account_id: Uuid::new_v4(),
            session_id: Uuid::new_v4(),
            issued_at: issued,
            expires_at: issued + SESSION_LIFETIME.as_secs(),
            signed_in_at: issued - MAX_SIGN_IN_AGE.as_secs(),
        };
        assert!(!session.needs_renewal(issued + SESSION_LIFETIME.as_secs() - 1));
        assert_eq!(sessions.renew(&session, issued + 1).unwrap(), None);
        // One second younger, the same sign-in is still renewed.
        let younger = Session {
            signed_in_at: session.signed_in_at + 2,
            ..session
        };
        assert!(sessions.renew(&younger, issued + 1).unwrap().is_some());
    }

    #[test]
    fn production_refuses_missing_short_weak_and_placeholder_secrets() {
        let cases: &[(Option<&str>, KeyRingError)] = &[
            (None, KeyRingError::Missing),
            (Some("  "), KeyRingError::Missing),
            (Some("no-colon"), KeyRingError::Malformed(1)),
            (
                Some("a:short"),
                KeyRingError::TooShort {
                    kid: "a".into(),
                    len: 5,
                },
            ),
            (
                Some("a:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
                KeyRingError::Weak("a".into()),
            ),
            (
                Some("a:change-me-to-a-long-random-string-please"),
                KeyRingError::Weak("a".into()),
            ),
            (
                Some("a:k7Qw9zX2mN4pR8tV1bY6cH3jL5sD0fGa,a:Zr4Tq8Wn2Ls6Px0Vm3Kc7Hb1Jd5Gf9Ya"),
                KeyRingError::DuplicateKid("a".into()),
            ),
            (
                Some("bad kid:k7Qw9zX2mN4pR8tV1bY6cH3jL5sD0fGa"),
                KeyRingError::BadKid("bad kid".into()),
            ),
        ];
        for (value, expected) in cases {
            assert_eq!(
                KeyRing::from_config(*value, Mode::Production).unwrap_err(),
                *expected,
                "{value:?}"
            );
        }
        assert!(KeyRing::from_config(Some(&format!("a:{SECRET_A}")), Mode::Production).is_ok());
    }

    #[test]
    fn development_generates_a_missing_key_and_tolerates_a_weak_one() {
        let generated = Sessions::new(KeyRing::from_config(None, Mode::Development).unwrap());
        let token = generated.issue(Uuid::new_v4(), now()).unwrap();
        assert!(generated.verify(&token, now()).is_ok());
        // Two generated rings never share a key.
        let other = Sessions::new(KeyRing::generated());
        assert_eq!(other.verify(&token, now()), Err(SessionError::BadSignature));

        assert!(KeyRing::from_config(Some("dev:short"), Mode::Development).is_ok());
    }

    #[test]
    fn debug_output_hides_secrets() {
        let ring = KeyRing::from_config(Some(&format!("a:{SECRET_A}")), Mode::Production).unwrap();
        let shown = format!("{:?}", Sessions::new(ring));
        assert!(!shown.contains(SECRET_A), "{shown}");
    }
}
