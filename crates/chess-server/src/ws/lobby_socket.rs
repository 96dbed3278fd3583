//! The lobby socket: the open seeks, then every change, live; a seek's
//! owner is taken to the game it started, and hears of every move in their
//! games (`moved`, from [`crate::turns`]). Only `ping` is understood from
//! the client.

use std::sync::Arc;

use axum::extract::ws::{Message, WebSocket};
use tokio::sync::broadcast;
use uuid::Uuid;

use crate::lobby::{Lobby, LobbyEvent};
use crate::ws::game_socket::{CLOSE_SESSION_ENDED, SessionEnds, close_frame};
use chess_live::now_ms;

/// Serves one lobby socket until it closes. When it was the viewer's last
/// lobby socket, their real-time seeks are cancelled.
///
/// `session_ends` resolves when the account session the socket was opened
/// with ends (signed out, password changed, expired): the socket is then
/// closed, as game sockets are.
pub async fn serve(
    lobby: Arc<Lobby>,
    socket: WebSocket,
    viewer: Option<Uuid>,
    session_ends: SessionEnds,
) {
    if let Some(player) = viewer {
        lobby.watcher_joined(player);
    }
    stream(&lobby, socket, viewer, session_ends).await;
    if let Some(player) = viewer {
        lobby.watcher_left(player).await;
    }
}

async fn stream(
    lobby: &Lobby,
    mut socket: WebSocket,
    viewer: Option<Uuid>,
    mut session_ends: SessionEnds,
) {
    let mut events = lobby.subscribe();
    // The moves in the viewer's games (`moved`), wherever they are played.
    let mut following = viewer.map(|player| lobby.turns().follow(player));
    let mut shutdown = lobby.shutdown_signal();
    let snapshot = match lobby.seeks(viewer).await {
        Ok(seeks) => serde_json::json!({ "type": "seeks", "seeks": seeks }),
        Err(error) => {
            tracing::error!(%error, "listing seeks failed");
            return;
        }
    };
    if socket
        .send(Message::Text(snapshot.to_string().into()))
        .await
        .is_err()
    {
        return;
    }
    loop {
        let message = tokio::select! {
            event = events.recv() => match event {
                Ok(LobbyEvent::Added(seek)) => Some(serde_json::json!({ "type": "seek_added", "seek": seek.view(viewer) })),
                Ok(LobbyEvent::Removed(seek_id)) => Some(serde_json::json!({ "type": "seek_removed", "seek_id": seek_id })),
                Ok(LobbyEvent::Started { seek_id, game_id, owner }) => (viewer == Some(owner)).then(|| {
                    let mut message = serde_json::json!({
                        "type": "game_started", "game_id": game_id, "url": format!("/game/{game_id}"),
                    });
                    if let Some(seek_id) = seek_id {
                        message["seek_id"] = serde_json::json!(seek_id);
                    }
                    message
                }),
                Err(broadcast::error::RecvError::Lagged(_)) => match lobby.seeks(viewer).await {
                    Ok(seeks) => Some(serde_json::json!({ "type": "seeks", "seeks": seeks })),
                    Err(_) => return,
                },
                Err(broadcast::error::RecvError::Closed) => return,
            },
            moved = async {
                match following.as_mut() {
                    Some(following) => following.receiver.recv().await,
                    None => std::future::pending().await,
                }
            } => match moved {
                Ok(moved) => Some(serde_json::json!({
                    "type": "moved", "game_id": moved.game_id, "moves": moved.moves, "at": moved.at,
                })),
                // Too far behind: the page rereads its whole list on any `moved`.
                Err(broadcast::error::RecvError::Lagged(_)) => None,
                Err(broadcast::error::RecvError::Closed) => return,
            },
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Text(text))) => Some(lobby_reply(text.as_str())),
                Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                Some(Ok(_)) => None,
            },
            () = &mut session_ends => {
                // The socket no longer speaks for the account (its
                // `is_yours` flags and `game_started` messages).
                let _ = socket.send(close_frame(CLOSE_SESSION_ENDED, "session ended")).await;
                return;
            }
            _ = shutdown.changed() => return,
        };
        if let Some(message) = message
            && socket
                .send(Message::Text(message.to_string().into()))
                .await
                .is_err()
        {
            return;
        }
    }
}

/// The reply to a message on the lobby socket: only `ping` is understood.
fn lobby_reply(text: &str) -> serde_json::Value {
    let parsed: Option<serde_json::Value> = serde_json::from_str(text).ok();
    match parsed
        .as_ref()
        .and_then(|value| value.get("type"))
        .and_then(|t| t.as_str())
    {
        Some("ping") => serde_json::json!({
            "type": "pong",
            "t": parsed.as_ref().and_then(|value| value.get("t")).cloned().unwrap_or(serde_json::Value::Null),
            "server_time": now_ms(),
        }),
        Some(other) => serde_json::json!({
            "type": "error", "code": "unknown_message_type",
            "message": format!("the lobby socket only understands ping, not {other:?}"), "in_reply_to": other,
        }),
        None => serde_json::json!({
            "type": "error", "code": "malformed_message",
            "message": "expected a json object with a \"type\"", "in_reply_to": null,
        }),
    }
}
