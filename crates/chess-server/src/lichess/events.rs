//! The games an account's event streams hear of: `gameStart` when a game
//! of theirs starts, and `gameFinish` when it ends, from one watcher per
//! game started through this API, a spectator's [`Viewer`] of the game; no
//! stream polls the database. The lines reach the streams through the
//! [`EventBus`](super::streams::EventBus).

use std::sync::Arc;

use chess_game::EventKind;
use chess_live::{Freshness, GameSnapshot, Outgoing, Registry, Seen, Viewer};
use chess_rules::{ByColor, Color};
use tokio::sync::watch as signal;
use uuid::Uuid;

use super::reply::{ApiFailure, line};
use super::shapes::{self, ApiPlayer};
use super::streams::Lichess;
use crate::state::AppState;
use chess_store::Store;

/// The players of a game as the API shows them, each account with its
/// rating in the game's speed. The game's rows carry the rest, the bot flags
/// included (final once a player holds a seat).
pub async fn api_players(
    store: &Store,
    game: &GameSnapshot,
) -> Result<ByColor<Option<ApiPlayer>>, ApiFailure> {
    let perf = chess_store::ratings::Perf::of(game.time_control.speed());
    let seat = |color| {
        game.players
            .get(color)
            .as_ref()
            .map(|row| ApiPlayer::new(row, game.computer_level))
    };
    let [white, black] =
        ApiPlayer::rated_pair([seat(Color::White), seat(Color::Black)], store, perf).await?;
    Ok(ByColor { white, black })
}

/// The snapshot of game `id`, up to date with the store; `None` if there
/// is no such game.
pub async fn snapshot(
    registry: &Arc<Registry>,
    id: Uuid,
) -> Result<Option<GameSnapshot>, ApiFailure> {
    Ok(registry.snapshot(id, Freshness::Stored).await?)
}

/// Tells both players of `game` (their open event streams) of it in
/// `kind` (`gameStart` or `gameFinish`).
async fn announce(lichess: &Lichess, store: &Store, game: &GameSnapshot, kind: &str) {
    let Ok(players) = api_players(store, game).await else {
        return;
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
pub async fn game_started(state: &AppState, game_id: Uuid) {
    let Ok(Some(game)) = snapshot(&state.registry, game_id).await else {
        return;
    };
    let involved = Color::ALL.into_iter().any(|color| {
        game.players
            .get(color)
            .as_ref()
            .is_some_and(|row| state.lichess.events.is_listening(row.id))
    });
    if involved {
        start_following(state, game_id).await;
    }
}

/// A game started through this API: both players' event streams get
/// `gameStart` (once, however many paths report the start), and a watcher
/// sends `gameFinish` when it ends.
pub async fn start_following(state: &AppState, game_id: Uuid) {
    if !state.lichess.watched.claim(game_id) {
        return;
    }
    match snapshot(&state.registry, game_id).await {
        Ok(Some(game)) => announce(&state.lichess, &state.store, &game, "gameStart").await,
        _ => {
            state.lichess.watched.release(game_id);
            return;
        }
    }
    spawn_watcher(state, game_id);
}

/// Follows game `game_id` (already started) until it ends, unless it is
/// followed already.
pub fn watch(state: &AppState, game_id: Uuid) {
    if state.lichess.watched.claim(game_id) {
        spawn_watcher(state, game_id);
    }
}

/// Sends both players `gameFinish` when the game ends, watching it as a
/// spectator: no database polling.
fn spawn_watcher(state: &AppState, game_id: Uuid) {
    let state = state.clone();
    tokio::spawn(async move {
        if let Ok(Some(mut viewer)) = Viewer::open(&state.registry, game_id, None).await {
            wait_for_the_end(&mut viewer, state.registry.shutdown_signal()).await;
        }
        state.lichess.watched.release(game_id);
        if let Ok(Some(game)) = snapshot(&state.registry, game_id).await
            && game.is_over()
        {
            announce(&state.lichess, &state.store, &game, "gameFinish").await;
        }
    });
}

/// Whether the game `viewer` watches is over (or no longer served).
async fn is_over(viewer: &Viewer) -> bool {
    viewer
        .snapshot(Freshness::Held)
        .await
        .map_or(true, |game| game.is_over())
}

/// Returns once the game `viewer` watches is over, its owner is gone, or
/// the node stops.
async fn wait_for_the_end(viewer: &mut Viewer, mut shutdown: signal::Receiver<bool>) {
    // Subscribed first, so an ending between the look and the wait is
    // still seen.
    if is_over(viewer).await {
        return;
    }
    loop {
        let received = tokio::select! {
            received = viewer.recv() => received,
            _ = shutdown.changed() => return,
        };
        match viewer.see(received).await {
            Some(Seen::Event(event))
                if matches!(
                    event.as_ref(),
                    Outgoing::Event {
                        kind: EventKind::GameEnded { .. },
                        ..
                    }
                ) =>
            {
                return;
            }
            Some(Seen::State(state)) if state.situation.shared.public.is_over() => return,
            // Missed changes: look again.
            Some(Seen::Behind) if is_over(viewer).await => return,
            Some(Seen::Closed) => return,
            _ => {}
        }
    }
}
