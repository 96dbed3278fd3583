//! The bearer tokens this node resolved lately, so that a request through
//! the API (a move, most often) reads no row to learn whose token it
//! carries: a move sent as a `POST` would otherwise cost a database read
//! more than the same move on a game socket.
//!
//! A token revoked, or an account that became a bot, is forgotten at once
//! on the node that changed it and, through an `ApiNotice::TokensChanged`,
//! on the others. An entry is read again after [`TOKEN_CACHE_TTL`] anyway:
//! that bounds how long a change whose notice was lost (a listener that
//! reconnected) can go unseen.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use uuid::Uuid;

use chess_store::TokenHolder;

/// How long a resolved token is believed without reading it again.
pub const TOKEN_CACHE_TTL: Duration = Duration::from_secs(60);
/// Most tokens kept; past it the expired ones go, and if none had expired,
/// all of them (the next request of each reads its row again).
const MAX_TOKENS: usize = 65_536;

/// Resolved tokens by the SHA-256 of their text (never the text itself).
#[derive(Debug, Default)]
pub struct TokenCache {
    tokens: Mutex<HashMap<String, (TokenHolder, Instant)>>,
}

impl TokenCache {
    /// The holder of the token hashed `hash`, if it was resolved less than
    /// [`TOKEN_CACHE_TTL`] before `now`.
    pub fn get(&self, hash: &str, now: Instant) -> Option<TokenHolder> {
        let tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
        let (holder, read_at) = tokens.get(hash)?;
        (now.saturating_duration_since(*read_at) < TOKEN_CACHE_TTL).then(|| holder.clone())
    }

    /// Remembers that the token hashed `hash` was read as `holder` at `now`.
    pub fn put(&self, hash: String, holder: TokenHolder, now: Instant) {
        let mut tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
        if tokens.len() >= MAX_TOKENS && !tokens.contains_key(&hash) {
            tokens.retain(|_, (_, read_at)| {
                now.saturating_duration_since(*read_at) < TOKEN_CACHE_TTL
            });
            if tokens.len() >= MAX_TOKENS {
                tokens.clear();
            }
        }
        tokens.insert(hash, (holder, now));
    }

    /// Records a use of the token hashed `hash` at `used_at` (Unix ms), so
    /// that the next minute's requests do not record it again.
    pub fn used(&self, hash: &str, used_at: i64) {
        let mut tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((holder, _)) = tokens.get_mut(hash) {
            holder.last_used_at = Some(used_at);
        }
    }

    /// Forgets every token of `player`: one was revoked, or what they say of
    /// the account (its bot flag) changed.
    pub fn forget_player(&self, player: Uuid) {
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|_, (holder, _)| holder.player_id != player);
    }

    /// Forgets every token: changes may have been missed.
    pub fn forget_all(&self) {
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.tokens
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(player_id: Uuid) -> TokenHolder {
        TokenHolder {
            token_id: Uuid::new_v4(),
            player_id,
            username: "alice".to_owned(),
            bot: false,
            scopes: "board:play".to_owned(),
            last_used_at: None,
        }
    }

    #[test]
    fn a_token_is_believed_for_its_time_and_then_read_again() {
        let cache = TokenCache::default();
        let start = Instant::now();
        let alice = holder(Uuid::new_v4());
        assert_eq!(cache.get("h", start), None);
        cache.put("h".to_owned(), alice.clone(), start);
        assert_eq!(cache.get("h", start + TOKEN_CACHE_TTL / 2), Some(alice));
        assert_eq!(cache.get("h", start + TOKEN_CACHE_TTL), None);
        assert_eq!(cache.get("other", start), None);
    }

    #[test]
    fn forgetting_a_player_forgets_only_their_tokens() {
        let cache = TokenCache::default();
        let now = Instant::now();
        let (alice, bob) = (Uuid::new_v4(), Uuid::new_v4());
        cache.put("a1".to_owned(), holder(alice), now);
        cache.put("a2".to_owned(), holder(alice), now);
        cache.put("b1".to_owned(), holder(bob), now);
        cache.forget_player(alice);
        assert_eq!(cache.get("a1", now), None);
        assert_eq!(cache.get("a2", now), None);
        assert!(cache.get("b1", now).is_some());
        cache.forget_all();
        assert_eq!(cache.get("b1", now), None);
    }

    #[test]
    fn a_use_is_remembered_with_the_token() {
        let cache = TokenCache::default();
        let now = Instant::now();
        cache.put("h".to_owned(), holder(Uuid::new_v4()), now);
        cache.used("h", 1_234);
        assert_eq!(
            cache.get("h", now).and_then(|h| h.last_used_at),
            Some(1_234)
        );
    }

    #[test]
    fn a_full_cache_drops_the_expired_tokens_first_and_never_grows_past_its_bound() {
        let cache = TokenCache::default();
        let start = Instant::now();
        let later = start + TOKEN_CACHE_TTL;
        for n in 0..MAX_TOKENS - 1 {
            cache.put(format!("old{n}"), holder(Uuid::nil()), start);
        }
        cache.put("fresh".to_owned(), holder(Uuid::nil()), later);
        assert_eq!(cache.len(), MAX_TOKENS);
        cache.put("one more".to_owned(), holder(Uuid::nil()), later);
        assert_eq!(cache.len(), 2, "the expired ones went");
        assert!(cache.get("fresh", later).is_some());
        for n in 0..MAX_TOKENS {
            cache.put(format!("new{n}"), holder(Uuid::nil()), later);
        }
        assert!(cache.len() <= MAX_TOKENS);
    }
}
