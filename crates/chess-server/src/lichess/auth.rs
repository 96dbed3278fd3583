//! Personal access tokens: their text, their stored hash, their scopes, and
//! the extractor that turns `Authorization: Bearer <token>` into the account
//! it acts for.

use std::fmt;
use std::time::Instant;

use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::reply::ApiFailure;
use crate::auth::rate_limit::AddressKey;
use crate::http::extract::ClientAddress;
use crate::state::AppState;
use chess_live::now_ms;

/// The prefix of every token this server issues (lichess's personal tokens
/// start with `lip_` too), so a leaked one is recognisable in logs and scans.
pub const TOKEN_PREFIX: &str = "lip_";

/// What a token may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Play games with the Board API (people through another app or board).
    BoardPlay,
    /// Play games with the Bot API (engines; bot accounts only).
    BotPlay,
    /// Read incoming challenges (the event stream).
    ChallengeRead,
    /// Create, accept, decline and cancel challenges.
    ChallengeWrite,
    /// Create, join, withdraw from and end tournaments.
    TournamentWrite,
    /// Join clubs (lichess's teams).
    TeamWrite,
}

impl Scope {
    pub const ALL: [Scope; 6] = [
        Scope::BoardPlay,
        Scope::BotPlay,
        Scope::ChallengeRead,
        Scope::ChallengeWrite,
        Scope::TournamentWrite,
        Scope::TeamWrite,
    ];

    /// Lichess's name of the scope.
    pub const fn as_str(self) -> &'static str {
        match self {
            Scope::BoardPlay => "board:play",
            Scope::BotPlay => "bot:play",
            Scope::ChallengeRead => "challenge:read",
            Scope::ChallengeWrite => "challenge:write",
            Scope::TournamentWrite => "tournament:write",
            Scope::TeamWrite => "team:write",
        }
    }

    /// The scope named `text`.
    pub fn parse(text: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|scope| scope.as_str() == text)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses a stored, space-separated scope list (unknown names are ignored:
/// a scope retired later must not make old tokens unreadable).
pub fn parse_scopes(stored: &str) -> Vec<Scope> {
    stored.split_whitespace().filter_map(Scope::parse).collect()
}

/// A new random token text: the prefix and 32 random bytes in hex.
pub fn new_token() -> String {
    let bytes: [u8; 32] = rand::random();
    let mut text = String::with_capacity(TOKEN_PREFIX.len() + 64);
    text.push_str(TOKEN_PREFIX);
    text.push_str(&hex(&bytes));
    text
}

/// The stored form of a token: its SHA-256 in lowercase hex.
pub fn token_hash(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut text, byte| {
        let _ = write!(text, "{byte:02x}");
        text
    })
}

/// The account a request's bearer token acts for.
#[derive(Clone, Debug)]
pub struct ApiUser {
    pub player_id: Uuid,
    pub username: String,
    pub bot: bool,
    pub scopes: Vec<Scope>,
}

impl ApiUser {
    /// `403 Missing scope` unless the token has one of `any_of`.
    ///
    /// # Errors
    /// The `403` naming the scopes that would do.
    pub fn require(&self, any_of: &[Scope]) -> Result<(), ApiFailure> {
        if any_of.iter().any(|scope| self.scopes.contains(scope)) {
            return Ok(());
        }
        let names: Vec<&str> = any_of.iter().map(|scope| scope.as_str()).collect();
        Err(ApiFailure::new(
            StatusCode::FORBIDDEN,
            format!("Missing scope: this needs one of {}", names.join(", ")),
        ))
    }

    /// The lowercase username: lichess's user id.
    pub fn id(&self) -> String {
        self.username.to_lowercase()
    }
}

/// The token text of an `Authorization: Bearer` header, if there is one.
pub fn bearer(parts: &axum::http::HeaderMap) -> Option<&str> {
    let value = parts.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

/// Resolves the bearer token of a request.
///
/// # Errors
/// `401` for a missing, unknown or revoked token; `429` when this address
/// sent too many bad tokens lately (checked before the database is asked).
pub async fn authenticate(
    state: &AppState,
    headers: &axum::http::HeaderMap,
    address: std::net::IpAddr,
) -> Result<ApiUser, ApiFailure> {
    let Some(token) = bearer(headers) else {
        return Err(ApiFailure::new(
            StatusCode::UNAUTHORIZED,
            "Missing token: send Authorization: Bearer <personal access token>",
        ));
    };
    let key = AddressKey::from(address);
    let limits = &state.lichess.bad_tokens;
    limits
        .check(&key, Instant::now())
        .map_err(|retry| ApiFailure::too_many(retry.0))?;
    if !token.starts_with(TOKEN_PREFIX) || token.len() > 128 {
        limits.record(key, Instant::now());
        return Err(ApiFailure::new(StatusCode::UNAUTHORIZED, "No such token"));
    }
    let hash = token_hash(token);
    let cache = &state.lichess.tokens;
    let holder = match cache.get(&hash, Instant::now()) {
        Some(holder) => holder,
        None => {
            let Some(holder) = state.store.token_holder(&hash).await? else {
                limits.record(key, Instant::now());
                return Err(ApiFailure::new(StatusCode::UNAUTHORIZED, "No such token"));
            };
            cache.put(hash.clone(), holder.clone(), Instant::now());
            holder
        }
    };
    let now = now_ms().to_stored();
    let stale = holder
        .last_used_at
        .is_none_or(|used| now.saturating_sub(used) >= 60_000);
    if stale {
        cache.used(&hash, now);
        if let Err(error) = state.store.touch_token(holder.token_id, now).await {
            // Recording the use is bookkeeping: the request goes on.
            tracing::warn!(%error, "recording a token's use failed");
        }
    }
    Ok(ApiUser {
        player_id: holder.player_id,
        username: holder.username,
        bot: holder.bot,
        scopes: parse_scopes(&holder.scopes),
    })
}

impl FromRequestParts<AppState> for ApiUser {
    type Rejection = ApiFailure;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<ApiUser, ApiFailure> {
        let ClientAddress(address) = match ClientAddress::from_request_parts(parts, state).await {
            Ok(address) => address,
            Err(never) => match never {},
        };
        authenticate(state, &parts.headers, address).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_hash_to_fixed_hex() {
        let one = new_token();
        let two = new_token();
        assert_ne!(one, two);
        assert!(one.starts_with(TOKEN_PREFIX));
        assert_eq!(one.len(), TOKEN_PREFIX.len() + 64);
        let hash = token_hash(&one);
        assert_eq!(hash.len(), 64);
        assert_eq!(hash, token_hash(&one));
        assert_ne!(hash, token_hash(&two));
        // The SHA-256 of "abc", from FIPS 180-2.
        assert_eq!(
            token_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn scopes_round_trip_and_unknown_names_are_ignored() {
        for scope in Scope::ALL {
            assert_eq!(Scope::parse(scope.as_str()), Some(scope));
        }
        assert_eq!(
            parse_scopes("board:play  email:read challenge:write"),
            vec![Scope::BoardPlay, Scope::ChallengeWrite]
        );
    }

    #[test]
    fn bearer_reads_the_scheme_in_any_case() {
        let mut headers = axum::http::HeaderMap::new();
        assert_eq!(bearer(&headers), None);
        headers.insert(AUTHORIZATION, "bearer lip_x".parse().expect("header"));
        assert_eq!(bearer(&headers), Some("lip_x"));
        headers.insert(AUTHORIZATION, "Basic abc".parse().expect("header"));
        assert_eq!(bearer(&headers), None);
    }
}
