//! What the lichess API keeps in memory on this node: each account's open
//! event streams (the [`EventBus`]), the games watched for them, and the
//! API's own rate limits.
//!
//! Events reach streams through the bus: each stream has a bounded queue,
//! and a stream whose client does not read fast enough to keep it from
//! filling is ended (the client reconnects and gets the current games
//! again) rather than allowed to grow.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::body::Bytes;
use tokio::sync::mpsc;
use uuid::Uuid;

use super::token_cache::TokenCache;
use crate::auth::rate_limit::{AddressKey, Limit, RateLimiter, SIGN_IN_FAILURES_PER_ADDRESS};

/// Tokens one account may create per hour.
const TOKENS_PER_ACCOUNT: Limit = Limit {
    max: 20,
    window: Duration::from_secs(60 * 60),
};

/// What the API keeps in memory on this node.
#[derive(Debug)]
pub struct Lichess {
    pub(crate) events: EventBus,
    pub(crate) watched: Watched,
    /// Requests with a token that does not verify, per address: the same
    /// budget as failed sign-ins.
    pub(crate) bad_tokens: RateLimiter<AddressKey>,
    pub(crate) token_creations: RateLimiter<uuid::Uuid>,
    /// The bearer tokens this node resolved lately.
    pub(crate) tokens: TokenCache,
}

impl Lichess {
    /// The API's state, empty.
    pub fn new() -> Lichess {
        Lichess {
            events: EventBus::default(),
            watched: Watched::default(),
            bad_tokens: RateLimiter::new(SIGN_IN_FAILURES_PER_ADDRESS),
            token_creations: RateLimiter::new(TOKENS_PER_ACCOUNT),
            tokens: TokenCache::default(),
        }
    }
}

impl Default for Lichess {
    fn default() -> Lichess {
        Lichess::new()
    }
}

/// Events one stream may have waiting before it counts as a slow reader.
const STREAM_QUEUE: usize = 32;

/// Each account's open event streams: an id and the queue of each.
type Streams = HashMap<Uuid, Vec<(u64, mpsc::Sender<Bytes>)>>;

/// Lines for each account's open event streams.
#[derive(Debug, Default)]
pub struct EventBus {
    streams: Mutex<Streams>,
    next_id: AtomicU64,
}

impl EventBus {
    fn lock(&self) -> std::sync::MutexGuard<'_, Streams> {
        self.streams
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A new stream of `player`'s events.
    pub fn listen(&self, player: Uuid) -> (mpsc::Receiver<Bytes>, u64) {
        let (sender, receiver) = mpsc::channel(STREAM_QUEUE);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.lock().entry(player).or_default().push((id, sender));
        (receiver, id)
    }

    pub(crate) fn remove(&self, player: Uuid, id: u64) {
        let mut streams = self.lock();
        if let Some(list) = streams.get_mut(&player) {
            list.retain(|(stream, _)| *stream != id);
            if list.is_empty() {
                streams.remove(&player);
            }
        }
    }

    /// Whether `player` has an open event stream on this node.
    pub fn is_listening(&self, player: Uuid) -> bool {
        self.lock().contains_key(&player)
    }

    /// Queues `line` on every stream of `player`. A stream whose queue is
    /// full is dropped from the bus: its client stopped reading, and its
    /// stream ends once it has sent what is queued.
    pub fn send(&self, player: Uuid, line: &Bytes) {
        let mut streams = self.lock();
        let Some(list) = streams.get_mut(&player) else {
            return;
        };
        list.retain(|(_, sender)| match sender.try_send(line.clone()) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::info!(%player, "an event stream fell behind; ending it");
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        });
        if list.is_empty() {
            streams.remove(&player);
        }
    }

    /// How many event streams are open on this node (for tests and metrics).
    pub fn stream_count(&self) -> usize {
        self.lock().values().map(Vec::len).sum()
    }
}

/// The games a watcher follows, so each has one.
#[derive(Debug, Default)]
pub struct Watched(Mutex<HashSet<Uuid>>);

impl Watched {
    pub(crate) fn claim(&self, game: Uuid) -> bool {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(game)
    }

    pub(crate) fn release(&self, game: Uuid) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&game);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stream_that_falls_behind_is_dropped_not_grown() {
        let bus = EventBus::default();
        let (slow, fast) = (Uuid::new_v4(), Uuid::new_v4());
        let (mut slow_lines, _) = bus.listen(slow);
        let (mut fast_lines, _) = bus.listen(fast);
        for index in 0..STREAM_QUEUE {
            bus.send(slow, &Bytes::from(format!("{index}\n")));
        }
        assert!(bus.is_listening(slow), "a full queue is still fine");
        bus.send(slow, &Bytes::from_static(b"one too many\n"));
        assert!(!bus.is_listening(slow), "one more line drops the stream");
        assert_eq!(bus.stream_count(), 1, "the other account's stream stays");
        // The dropped stream still delivers what it had queued, then ends.
        for index in 0..STREAM_QUEUE {
            let line = slow_lines.recv().await.expect("a queued line");
            assert_eq!(line, Bytes::from(format!("{index}\n")));
        }
        assert_eq!(slow_lines.recv().await, None);
        // Nothing more is kept for it.
        bus.send(slow, &Bytes::from_static(b"later\n"));
        assert_eq!(bus.stream_count(), 1);
        bus.send(fast, &Bytes::from_static(b"hello\n"));
        assert_eq!(
            fast_lines.recv().await,
            Some(Bytes::from_static(b"hello\n"))
        );
    }

    #[tokio::test]
    async fn a_closed_stream_leaves_the_bus() {
        let bus = EventBus::default();
        let player = Uuid::new_v4();
        let (lines, id) = bus.listen(player);
        let (_other, _) = bus.listen(player);
        drop(lines);
        bus.send(player, &Bytes::from_static(b"x\n"));
        assert_eq!(bus.stream_count(), 1, "the closed one was removed on send");
        bus.remove(player, id);
        assert!(bus.is_listening(player));
    }
}
