//! Who is making a request: a verified identity, and a guest's in a signed
//! cookie (the request extractors are in [`super::extract`]).
//!
//! A guest token is an HS256 JWT with its own audience (`chess-guest`);
//! account sessions have theirs (`auth::session`), so a guest token can
//! never pass as an account. The algorithm is pinned: a token claiming any
//! other algorithm (including `none`) is refused.

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, HeaderValue};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use rand::Rng;
use rand::seq::IndexedRandom;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use chess_live::{PlayerRow, now_ms};

use super::cookies::{cookie_value, set_cookie as set_cookie_header};

use crate::http::error::ApiError;
use crate::settings::Secret;

/// The cookie holding a guest's token.
pub const GUEST_COOKIE: &str = "chess_guest";
const GUEST_AUDIENCE: &str = "chess-guest";
const ISSUER: &str = "chess-server";
/// A guest keeps their identity (and games) for a year in the same browser.
const GUEST_LIFETIME: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// A verified identity: who acts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub id: Uuid,
    pub name: String,
    /// The stored player, when resolving the identity read it: a route that
    /// needs the row takes it from here instead of reading it again.
    pub stored: Option<PlayerRow>,
}

#[derive(Debug, Serialize, Deserialize)]
struct GuestClaims {
    sub: String,
    name: String,
    aud: String,
    iss: String,
    iat: u64,
    exp: u64,
}

/// Why a request carries no usable identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdentityError {
    /// No identity cookie at all.
    Missing,
    /// A cookie that does not verify (forged, expired, malformed).
    Invalid,
}

impl From<IdentityError> for ApiError {
    fn from(error: IdentityError) -> ApiError {
        match error {
            IdentityError::Missing => ApiError::client(
                StatusCode::UNAUTHORIZED,
                "not_signed_in",
                "no identity cookie: open the site (GET /api/me) first",
            ),
            IdentityError::Invalid => ApiError::client(
                StatusCode::UNAUTHORIZED,
                "bad_identity",
                "the identity cookie is forged, expired or malformed",
            ),
        }
    }
}

/// Signs and verifies guest tokens. Clones share one set of keys: the
/// state of every request holds this, and copying the keys with their
/// `Validation` (three hash sets) on each request was 2% of the server's
/// CPU at 1,000 games flat out.
#[derive(Clone)]
pub struct GuestTokens(Arc<GuestKeys>);

#[derive(Clone)]
struct GuestKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    /// Whether the cookie is `Secure` (sent over HTTPS only).
    secure_cookies: bool,
}

impl std::fmt::Debug for GuestTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GuestTokens(***)")
    }
}

impl GuestTokens {
    /// Keys from the server secret.
    ///
    /// # Errors
    /// The crypto backend's refusal of the key.
    pub fn new(secret: &Secret) -> Result<GuestTokens, jsonwebtoken::errors::Error> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_audience(&[GUEST_AUDIENCE]);
        validation.set_issuer(&[ISSUER]);
        validation.set_required_spec_claims(&["exp", "iat", "iss", "aud", "sub"]);
        validation.leeway = 0;
        Ok(GuestTokens(Arc::new(GuestKeys {
            encoding: EncodingKey::from_secret(secret.expose())?,
            decoding: DecodingKey::from_secret(secret.expose())?,
            validation,
            secure_cookies: false,
        })))
    }

    /// The same keys, with `Secure` cookies when `secure` (the server is
    /// reached over HTTPS: the cookie must never travel in clear text).
    #[must_use]
    pub fn with_secure_cookies(self, secure: bool) -> GuestTokens {
        let mut keys = Arc::unwrap_or_clone(self.0);
        keys.secure_cookies = secure;
        GuestTokens(Arc::new(keys))
    }

    /// A signed token for `identity`.
    ///
    /// # Errors
    /// Signing failure (only with a broken crypto backend).
    pub fn issue(&self, identity: &Identity) -> Result<String, jsonwebtoken::errors::Error> {
        let now = now_ms().secs();
        let claims = GuestClaims {
            sub: identity.id.to_string(),
            name: identity.name.clone(),
            aud: GUEST_AUDIENCE.to_owned(),
            iss: ISSUER.to_owned(),
            iat: now,
            exp: now + GUEST_LIFETIME.as_secs(),
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.0.encoding)
    }

    /// The identity in `token`, if it verifies.
    ///
    /// # Errors
    /// [`IdentityError::Invalid`] for anything that does not verify.
    pub fn verify(&self, token: &str) -> Result<Identity, IdentityError> {
        let data = jsonwebtoken::decode::<GuestClaims>(token, &self.0.decoding, &self.0.validation)
            .map_err(|_| IdentityError::Invalid)?;
        let id = Uuid::parse_str(&data.claims.sub).map_err(|_| IdentityError::Invalid)?;
        Ok(Identity {
            id,
            name: data.claims.name,
            stored: None,
        })
    }

    /// The identity of a request from its cookie header.
    ///
    /// # Errors
    /// [`IdentityError::Missing`] without the cookie, [`IdentityError::Invalid`]
    /// when it does not verify.
    pub fn from_headers(&self, headers: &HeaderMap) -> Result<Identity, IdentityError> {
        let token = cookie_value(headers, GUEST_COOKIE).ok_or(IdentityError::Missing)?;
        self.verify(&token)
    }

    /// The `Set-Cookie` header value carrying `token`.
    pub fn cookie(&self, token: &str) -> HeaderValue {
        self.cookie_header(token, GUEST_LIFETIME.as_secs())
    }

    /// The `Set-Cookie` header value that makes the browser forget its guest.
    pub fn clearing_cookie(&self) -> HeaderValue {
        self.cookie_header("", 0)
    }

    fn cookie_header(&self, token: &str, max_age_secs: u64) -> HeaderValue {
        set_cookie_header(
            GUEST_COOKIE,
            token,
            "/",
            max_age_secs,
            self.0.secure_cookies,
        )
    }
}

/// Adds a `Set-Cookie` for a fresh guest token.
pub fn set_cookie(headers: &mut HeaderMap, tokens: &GuestTokens, token: &str) {
    headers.append(SET_COOKIE, tokens.cookie(token));
}

const ADJECTIVES: &[&str] = &[
    "brave", "calm", "clever", "eager", "gentle", "happy", "jolly", "keen", "lucky", "merry",
    "nimble", "proud", "quick", "quiet", "shy", "swift", "witty", "bold", "bright", "cosy",
];
const ANIMALS: &[&str] = &[
    "otter", "heron", "badger", "falcon", "fox", "hare", "lynx", "marten", "owl", "panda",
    "puffin", "raven", "seal", "stoat", "swan", "tiger", "walrus", "wolf", "yak", "zebra",
];

/// A random readable guest name such as `brave-otter-42`.
pub fn random_guest_name() -> String {
    let mut rng = rand::rng();
    let adjective = ADJECTIVES.choose(&mut rng).copied().unwrap_or("brave");
    let animal = ANIMALS.choose(&mut rng).copied().unwrap_or("otter");
    let number: u8 = rng.random_range(1..100);
    format!("{adjective}-{animal}-{number}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(secret: &str) -> GuestTokens {
        GuestTokens::new(&secret.parse().expect("long enough")).expect("valid key")
    }

    fn someone() -> Identity {
        Identity {
            id: Uuid::new_v4(),
            name: "brave-otter-42".to_owned(),
            stored: None,
        }
    }

    #[test]
    fn issued_token_verifies_to_the_same_identity() {
        let tokens = tokens(&"k".repeat(32));
        let identity = someone();
        let token = tokens.issue(&identity).expect("signs");
        assert_eq!(tokens.verify(&token), Ok(identity));
    }

    #[test]
    fn token_signed_with_another_key_is_invalid() {
        let token = tokens(&"a".repeat(32)).issue(&someone()).expect("signs");
        assert_eq!(
            tokens(&"b".repeat(32)).verify(&token),
            Err(IdentityError::Invalid)
        );
    }

    #[test]
    fn unsigned_token_is_invalid() {
        let tokens = tokens(&"k".repeat(32));
        let token = tokens.issue(&someone()).expect("signs");
        let mut parts = token.split('.');
        let (_header, claims) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        // {"alg":"none","typ":"JWT"}
        let forged = format!("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.{claims}.");
        assert_eq!(tokens.verify(&forged), Err(IdentityError::Invalid));
    }

    #[test]
    fn the_cookie_is_secure_only_when_asked() {
        let plain = tokens(&"k".repeat(32));
        let cookie = plain.cookie("a.b.c");
        assert!(!cookie.to_str().unwrap_or_default().contains("Secure"));
        let secure = plain.with_secure_cookies(true);
        for cookie in [secure.cookie("a.b.c"), secure.clearing_cookie()] {
            let cookie = cookie.to_str().unwrap_or_default().to_owned();
            assert!(cookie.ends_with("; Secure"), "{cookie}");
        }
    }

    #[test]
    fn guest_names_are_readable() {
        let name = random_guest_name();
        let parts: Vec<&str> = name.split('-').collect();
        assert_eq!(parts.len(), 3, "{name}");
        assert!(
            ADJECTIVES.contains(&parts[0]) && ANIMALS.contains(&parts[1]),
            "{name}"
        );
        assert!(
            parts[2].parse::<u8>().is_ok_and(|n| (1..100).contains(&n)),
            "{name}"
        );
    }
}
