//! `GET /api/stream/event`: one NDJSON stream per client of the account's
//! events (`gameStart`, `gameFinish`, `challenge`, `challengeCanceled`,
//! `challengeDeclined`), with an empty keep-alive line every
//! [`KEEP_ALIVE`](super::KEEP_ALIVE).
//!
//! Events reach streams through the [`EventBus`]: each stream has a bounded
//! queue, and a stream whose client does not read fast enough to keep it
//! from filling is ended (the client reconnects and gets the current
//! games again) rather than allowed to grow. Game endings come from one
//! watcher task per game started through this API, subscribed to the
//! game owner's broadcast; no stream polls the database.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::response::Response;
use chess_game::EventKind;
use chess_rules::{ByColor, Color};
use tokio::sync::{broadcast, mpsc};
use uuid::Uuid;

use super::auth::{ApiUser, Scope};
use super::shapes::{self, ApiPlayer, GameSnapshot};
use super::{ApiFailure, KEEP_ALIVE, Lichess, line, ndjson};
use crate::clock::now_ms;
use crate::games::live::Outgoing;
use crate::games::model::Seat;
use crate::games::{GameHandle, Hub};
use crate::startup::AppState;

/// Events one stream may have waiting before it counts as a slow reader.
const STREAM_QUEUE: usize = 32;
/// Current games sent when a stream opens (lichess sends every ongoing game).
const CURRENT_GAMES: i64 = 0;

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

    fn remove(&self, player: Uuid, id: u64) {
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
    fn claim(&self, game: Uuid) -> bool {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(game)
    }

    fn release(&self, game: Uuid) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&game);
    }
}

/// The players of a game as the API shows them, with their accounts' bot flags.
pub async fn api_players(
    state_store: &crate::store::Store,
    game: &GameSnapshot,
) -> Result<ByColor<Option<ApiPlayer>>, ApiFailure> {
    let mut players = ByColor::<Option<ApiPlayer>>::default();
    for color in Color::ALL {
        if let Some(row) = game.players.get(color) {
            let bot = state_store
                .api_account(row.id)
                .await?
                .is_some_and(|account| account.bot);
            *players.get_mut(color) = Some(ApiPlayer::new(row, bot, game.computer_level));
        }
    }
    Ok(players)
}

/// The snapshot of game `id`, up to date with the store; `None` if there
/// is no such game.
pub async fn snapshot(hub: &Arc<Hub>, id: Uuid) -> Result<Option<GameSnapshot>, ApiFailure> {
    Ok(hub
        .inspect(id, true, |entry| GameSnapshot::of(entry, now_ms()))
        .await?)
}

/// Tells both players of `game` (their open event streams) of it in
/// `kind` (`gameStart` or `gameFinish`).
async fn announce(lichess: &Lichess, store: &crate::store::Store, game: &GameSnapshot, kind: &str) {
    let players = match api_players(store, game).await {
        Ok(players) => players,
        Err(_) => return,
    };
    for color in Color::ALL {
        let Some(player) = players.get(color) else {
            continue;
        };
        let opponent = players.get(color.other()).as_ref();
        let value = serde_json::json!({
            "type": kind,
            "game": shapes::event_game(game, color, opponent),
        });
        lichess.events.send(player.player_id, &line(&value));
    }
}

/// A game the lobby started (a seek taken, a challenge link joined): if
/// either player has an event stream open here, both are told and the game
/// is followed (see [`start_following`]).
pub async fn game_started(lichess: &Arc<Lichess>, hub: &Arc<Hub>, game_id: Uuid) {
    let Ok(Some(game)) = snapshot(hub, game_id).await else {
        return;
    };
    let involved = Color::ALL.into_iter().any(|color| {
        game.players
            .get(color)
            .as_ref()
            .is_some_and(|row| lichess.events.is_listening(row.id))
    });
    if involved {
        start_following(lichess, hub, game_id).await;
    }
}

/// A game started through this API: both players' event streams get
/// `gameStart` (once, however many paths report the start), and a watcher
/// sends `gameFinish` when it ends.
pub async fn start_following(lichess: &Arc<Lichess>, hub: &Arc<Hub>, game_id: Uuid) {
    if !lichess.watched.claim(game_id) {
        return;
    }
    match snapshot(hub, game_id).await {
        Ok(Some(game)) => announce(lichess, hub.store(), &game, "gameStart").await,
        _ => {
            lichess.watched.release(game_id);
            return;
        }
    }
    spawn_watcher(lichess, hub, game_id);
}

/// Follows game `game_id` (already started) until it ends, unless it is
/// followed already.
pub fn watch(lichess: &Arc<Lichess>, hub: &Arc<Hub>, game_id: Uuid) {
    if lichess.watched.claim(game_id) {
        spawn_watcher(lichess, hub, game_id);
    }
}

/// Sends both players `gameFinish` when the game ends. It holds a
/// subscription to the owner's broadcast; no database polling.
fn spawn_watcher(lichess: &Arc<Lichess>, hub: &Arc<Hub>, game_id: Uuid) {
    let lichess = Arc::clone(lichess);
    let hub = Arc::clone(hub);
    tokio::spawn(async move {
        follow_until_over(&hub, game_id).await;
        lichess.watched.release(game_id);
        if let Ok(Some(game)) = snapshot(&hub, game_id).await
            && game.is_over()
        {
            announce(&lichess, hub.store(), &game, "gameFinish").await;
        }
    });
}

async fn follow_until_over(hub: &Arc<Hub>, game_id: Uuid) {
    let mut shutdown = hub.shutdown_signal();
    loop {
        let Ok(Some(handle)) = hub.get(game_id).await else {
            return;
        };
        let outcome = watch_once(&handle, &mut shutdown).await;
        // As a closing socket does: the owner of a finished game unloads
        // once nobody follows it, and only a message makes it look.
        handle.disconnected(Seat::None).await;
        match outcome {
            Watching::Over | Watching::Stopping => return,
            Watching::LookAgain => {}
        }
    }
}

/// How one subscription to a game's broadcast ended.
enum Watching {
    Over,
    Stopping,
    /// Missed changes, seats changed or the owner unloaded: look again.
    LookAgain,
}

async fn watch_once(
    handle: &GameHandle,
    shutdown: &mut tokio::sync::watch::Receiver<bool>,
) -> Watching {
    let mut updates = handle.subscribe();
    handle.connected(Seat::None).await;
    // Subscribed first, so an ending between the look and the wait is
    // still heard.
    match handle.inspect(|entry| !entry.is_playing()).await {
        Ok(true) => return Watching::Over,
        Ok(false) => {}
        Err(_) => return Watching::LookAgain,
    }
    loop {
        let update = tokio::select! {
            update = updates.recv() => update,
            _ = shutdown.changed() => return Watching::Stopping,
        };
        match update {
            Ok(outgoing) => match outgoing.as_ref() {
                Outgoing::Event {
                    kind: EventKind::GameEnded { .. },
                    ..
                } => return Watching::Over,
                Outgoing::Resync => return Watching::LookAgain,
                _ => {}
            },
            Err(broadcast::error::RecvError::Lagged(_) | broadcast::error::RecvError::Closed) => {
                return Watching::LookAgain;
            }
        }
    }
}

/// `GET /api/stream/event`.
pub async fn stream(State(state): State<AppState>, user: ApiUser) -> Result<Response, ApiFailure> {
    user.require(&[Scope::ChallengeRead, Scope::BoardPlay, Scope::BotPlay])?;
    let lichess = Arc::clone(&state.lichess);
    let (receiver, id) = lichess.events.listen(user.player_id);
    // What is already going on: the account's games in play and the
    // challenges waiting for it.
    let mut opening = Vec::new();
    let rows = state
        .store
        .games_of_player(user.player_id, CURRENT_GAMES)
        .await?;
    for row in rows {
        if row.status != crate::games::model::GameStage::Playing {
            continue;
        }
        let Some(game) = snapshot(&state.hub, row.id).await? else {
            continue;
        };
        if game.is_over() {
            continue;
        }
        let Some(color) = game.color_of(user.player_id) else {
            continue;
        };
        let players = api_players(&state.store, &game).await?;
        let value = serde_json::json!({
            "type": "gameStart",
            "game": shapes::event_game(&game, color, players.get(color.other()).as_ref()),
        });
        opening.push(line(&value));
        watch(&lichess, &state.hub, game.id);
    }
    for challenge in super::challenges::incoming(&state.store, user.player_id).await? {
        opening.push(line(&serde_json::json!({
            "type": "challenge",
            "challenge": challenge.json("in"),
        })));
    }
    let player = user.player_id;
    let shutdown = state.hub.shutdown_signal();
    Ok(ndjson(queue_stream(
        lichess, player, id, receiver, opening, shutdown,
    )))
}

/// The lines of one event stream: `opening`, then whatever the bus queues,
/// with keep-alive lines while idle; ends when the bus drops it.
fn queue_stream(
    lichess: Arc<Lichess>,
    player: Uuid,
    id: u64,
    receiver: mpsc::Receiver<Bytes>,
    opening: Vec<Bytes>,
    shutdown: tokio::sync::watch::Receiver<bool>,
) -> impl futures_util::Stream<Item = Bytes> + Send + 'static {
    struct Registration {
        lichess: Arc<Lichess>,
        player: Uuid,
        id: u64,
    }
    impl Drop for Registration {
        fn drop(&mut self) {
            self.lichess.events.remove(self.player, self.id);
        }
    }
    let registration = Registration {
        lichess,
        player,
        id,
    };
    let opening = std::collections::VecDeque::from(opening);
    futures_util::stream::unfold(
        (registration, receiver, opening, shutdown),
        |(registration, mut receiver, mut opening, mut shutdown)| async move {
            if let Some(first) = opening.pop_front() {
                return Some((first, (registration, receiver, opening, shutdown)));
            }
            if *shutdown.borrow() {
                return None;
            }
            let line = tokio::select! {
                received = receiver.recv() => received?,
                () = tokio::time::sleep(KEEP_ALIVE) => Bytes::from_static(b"\n"),
                // The server is stopping: end the response so it can.
                _ = shutdown.changed() => return None,
            };
            Some((line, (registration, receiver, opening, shutdown)))
        },
    )
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
