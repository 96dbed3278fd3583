//! Playing a game: the NDJSON game stream (`gameFull`, then a `gameState`
//! per change) and the actions (move, resign, abort, draw, take-back, chat).
//!
//! Every action is a command to the game's owner, the same one the web
//! sockets send, so the rules, clocks and automatic draws are the server's
//! own. A stream is built from the owner's broadcast, which holds a bounded
//! number of changes: a client that reads too slowly to keep up lags behind
//! it and its stream is ended (it reconnects and gets `gameFull` again);
//! nothing grows per stream.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use chess_game::EventKind;
use chess_rules::{Color, UciMove};
use serde::Deserialize;
use tokio::sync::broadcast;
use tokio::time::{Instant, sleep_until};
use uuid::Uuid;

use super::auth::{ApiUser, Scope};
use super::events::{api_players, snapshot};
use super::shapes::{self, GameSnapshot};
use super::{ApiFailure, KEEP_ALIVE, line, ndjson, ok};
use crate::clock::now_ms;
use crate::games::live::Outgoing;
use crate::games::model::{PlayerKind, Seat};
use crate::games::view::SharedSituation;
use crate::games::{Command, GameHandle, Hub, Refusal};
use crate::startup::AppState;

/// How long an opponent may have no connection (a socket of the web page,
/// an API stream) before the stream says `opponentGone`: long enough for a
/// page reload or a reconnecting client.
const OPPONENT_GONE_AFTER: Duration = Duration::from_secs(5);

/// Which API a request came through: the Board API (people, `board:play`,
/// not bot accounts) or the Bot API (`bot:play`, bot accounts only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Api {
    Board,
    Bot,
}

impl Api {
    fn of(uri: &Uri) -> Api {
        if uri.path().starts_with("/api/bot/") {
            Api::Bot
        } else {
            Api::Board
        }
    }

    fn check(self, user: &ApiUser) -> Result<(), ApiFailure> {
        match self {
            Api::Board => {
                user.require(&[Scope::BoardPlay])?;
                if user.bot {
                    return Err(ApiFailure::new(
                        StatusCode::FORBIDDEN,
                        "This endpoint cannot be used with a Bot account: use /api/bot/",
                    ));
                }
            }
            Api::Bot => {
                user.require(&[Scope::BotPlay])?;
                if !user.bot {
                    return Err(ApiFailure::new(
                        StatusCode::FORBIDDEN,
                        "This endpoint can only be used with a Bot account: \
                         POST /api/bot/account/upgrade first",
                    ));
                }
            }
        }
        Ok(())
    }
}

fn game_id(id: &str) -> Result<Uuid, ApiFailure> {
    Uuid::parse_str(id).map_err(|_| ApiFailure::no_such_game())
}

/// The caller's game `id` and the colour they play in it; `404` for a game
/// that does not exist or is not theirs.
async fn my_game(state: &AppState, user: &ApiUser, id: &str) -> Result<(Uuid, Color), ApiFailure> {
    let id = game_id(id)?;
    let player = user.player_id;
    let color = state
        .hub
        .inspect(id, false, move |entry| match entry.seat_of(Some(player)) {
            Seat::White => Some(Color::White),
            Seat::Black => Some(Color::Black),
            Seat::Both | Seat::None => None,
        })
        .await?
        .flatten();
    color
        .map(|color| (id, color))
        .ok_or_else(ApiFailure::no_such_game)
}

/// Runs `command` for `color` in game `id` (again with a fresh handle if the
/// owner unloaded meanwhile). A refusal is lichess's `400`.
async fn run(
    hub: &Arc<Hub>,
    id: Uuid,
    color: Color,
    command: impl Fn() -> Command,
) -> Result<(), ApiFailure> {
    for _ in 0..3 {
        let handle: GameHandle = hub.get(id).await?.ok_or_else(ApiFailure::no_such_game)?;
        match handle.command(Seat::of(color), command(), now_ms()).await {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(refusal @ Refusal::Unavailable)) => {
                return Err(ApiFailure::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    refusal.to_string(),
                ));
            }
            Ok(Err(refusal @ Refusal::Busy)) => {
                return Err(ApiFailure::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    refusal.to_string(),
                ));
            }
            Ok(Err(refusal)) => return Err(ApiFailure::bad_request(refusal.to_string())),
            Err(_gone) => continue,
        }
    }
    Err(ApiFailure::internal("the game kept unloading"))
}

#[derive(Debug, Deserialize)]
pub struct MoveQuery {
    #[serde(rename = "offeringDraw", default)]
    offering_draw: Option<String>,
}

/// `POST /api/{board,bot}/game/{id}/move/{uci}` (`?offeringDraw=true` offers
/// or accepts a draw with the move).
pub async fn play(
    State(state): State<AppState>,
    user: ApiUser,
    uri: Uri,
    Path((id, uci)): Path<(String, String)>,
    Query(query): Query<MoveQuery>,
) -> Result<Response, ApiFailure> {
    Api::of(&uri).check(&user)?;
    let (id, color) = my_game(&state, &user, &id).await?;
    let (turn, ply) = state
        .hub
        .inspect(id, false, |entry| (entry.game.turn(), entry.game.ply()))
        .await?
        .ok_or_else(ApiFailure::no_such_game)?;
    if turn != color {
        return Err(ApiFailure::bad_request(
            "Not your turn, or game already over",
        ));
    }
    let uci: UciMove = uci
        .parse()
        .map_err(|_| ApiFailure::bad_request(format!("Invalid UCI: {uci}")))?;
    run(&state.hub, id, color, || Command::Move { uci, ply }).await?;
    if query
        .offering_draw
        .is_some_and(|offering| offering.eq_ignore_ascii_case("true"))
    {
        // After the move, so the draw offer is the mover's (an offer
        // already on the table from the opponent is accepted). The move
        // stands either way: an offer the rules refuse (too early, too soon
        // after the last one) is simply not made, as on lichess.
        if let Err(refused) = draw_answer(&state.hub, id, color, true).await {
            tracing::debug!(?refused, "a draw offered with a move was not made");
        }
    }
    Ok(ok())
}

/// `POST .../resign`.
pub async fn resign(
    State(state): State<AppState>,
    user: ApiUser,
    uri: Uri,
    Path(id): Path<String>,
) -> Result<Response, ApiFailure> {
    act(&state, &user, &uri, &id, Command::Resign).await
}

/// `POST .../abort`.
pub async fn abort(
    State(state): State<AppState>,
    user: ApiUser,
    uri: Uri,
    Path(id): Path<String>,
) -> Result<Response, ApiFailure> {
    act(&state, &user, &uri, &id, Command::Abort).await
}

/// Runs `command` for `user`'s seat in game `id`, reached through `uri`'s API.
async fn act(
    state: &AppState,
    user: &ApiUser,
    uri: &Uri,
    id: &str,
    command: Command,
) -> Result<Response, ApiFailure> {
    Api::of(uri).check(user)?;
    let (id, color) = my_game(state, user, id).await?;
    run(&state.hub, id, color, || command.clone()).await?;
    Ok(ok())
}

/// Says yes (offer, or accept the opponent's offer) or no (decline the
/// opponent's offer, or withdraw one's own) to a draw.
async fn draw_answer(hub: &Arc<Hub>, id: Uuid, color: Color, yes: bool) -> Result<(), ApiFailure> {
    let offer = hub
        .inspect(id, false, |entry| entry.game.draw_offer())
        .await?
        .ok_or_else(ApiFailure::no_such_game)?;
    let command = match (yes, offer) {
        (true, Some(offerer)) if offerer != color => Command::DrawAccept,
        (true, Some(_)) => return Ok(()),
        (true, None) => Command::DrawOffer,
        (false, Some(offerer)) if offerer != color => Command::DrawDecline,
        (false, Some(_)) => Command::DrawWithdraw,
        (false, None) => return Ok(()),
    };
    run(hub, id, color, move || command.clone()).await
}

fn yes_or_no(answer: &str) -> Result<bool, ApiFailure> {
    match answer {
        "yes" | "true" | "accept" => Ok(true),
        "no" | "false" | "decline" => Ok(false),
        other => Err(ApiFailure::bad_request(format!(
            "Expected yes or no, not {other:?}"
        ))),
    }
}

/// `POST .../draw/{yes|no}`.
pub async fn draw(
    State(state): State<AppState>,
    user: ApiUser,
    uri: Uri,
    Path((id, answer)): Path<(String, String)>,
) -> Result<Response, ApiFailure> {
    Api::of(&uri).check(&user)?;
    let yes = yes_or_no(&answer)?;
    let (id, color) = my_game(&state, &user, &id).await?;
    draw_answer(&state.hub, id, color, yes).await?;
    Ok(ok())
}

/// `POST .../takeback/{yes|no}`: games between two people have no
/// take-backs on this server (as on the web page), so both are refused.
pub async fn takeback(
    State(state): State<AppState>,
    user: ApiUser,
    uri: Uri,
    Path((id, answer)): Path<(String, String)>,
) -> Result<Response, ApiFailure> {
    Api::of(&uri).check(&user)?;
    yes_or_no(&answer)?;
    my_game(&state, &user, &id).await?;
    Err(ApiFailure::bad_request(
        "Take-backs are not available in games between two people on this server",
    ))
}

/// `POST .../chat`: this server has no chat, so nothing could be shown to
/// the opponent; the message is refused rather than silently dropped.
pub async fn chat(
    State(state): State<AppState>,
    user: ApiUser,
    uri: Uri,
    Path(id): Path<String>,
) -> Result<Response, ApiFailure> {
    Api::of(&uri).check(&user)?;
    my_game(&state, &user, &id).await?;
    Err(ApiFailure::bad_request(
        "This server has no chat: the message was not delivered",
    ))
}

/// `GET /api/board/game/stream/{id}`.
pub async fn board_stream(
    State(state): State<AppState>,
    user: ApiUser,
    uri: Uri,
    Path(id): Path<String>,
) -> Result<Response, ApiFailure> {
    game_stream(state, user, uri, id).await
}

/// `GET /api/bot/game/stream/{id}`.
pub async fn bot_stream(
    State(state): State<AppState>,
    user: ApiUser,
    uri: Uri,
    Path(id): Path<String>,
) -> Result<Response, ApiFailure> {
    game_stream(state, user, uri, id).await
}

async fn game_stream(
    state: AppState,
    user: ApiUser,
    uri: Uri,
    id: String,
) -> Result<Response, ApiFailure> {
    Api::of(&uri).check(&user)?;
    let (id, color) = my_game(&state, &user, &id).await?;
    let handle = state
        .hub
        .get(id)
        .await?
        .ok_or_else(ApiFailure::no_such_game)?;
    // Subscribed before the full state is read: a change in between is
    // both in the state and on the channel, and is skipped by version.
    // Counted as the seat's connection, as a web socket is, until the
    // stream ends.
    let updates = handle.subscribe();
    let seat = Seat::of(color);
    handle.connected(seat).await;
    // Whether the opponent is connected is followed for people only: the
    // computer never has a connection.
    let opponent = !color;
    let opponent_present = handle
        .inspect(move |entry| {
            let person = entry
                .players
                .get(opponent)
                .as_ref()
                .is_some_and(|player| player.kind != PlayerKind::Computer);
            person.then(|| *entry.presence().get(opponent))
        })
        .await
        .map_err(|_gone| ApiFailure::no_such_game())?;
    let game = snapshot(&state.hub, id)
        .await?
        .ok_or_else(ApiFailure::no_such_game)?;
    let players = api_players(&state.store, &game).await?;
    let full = shapes::game_full(&game, &players);
    let follower = Follower {
        hub: Arc::clone(&state.hub),
        id,
        version: game.version,
        moves: game.moves.clone(),
        time_control: game.time_control,
        last: Some(shapes::game_state(
            &game.moves,
            &game.situation,
            game.time_control,
        )),
        over: game.is_over(),
        updates: Some(updates),
        shutdown: state.hub.shutdown_signal(),
        handle,
        seat,
        opponent: opponent_present.map(|present| OpponentPresence {
            color: opponent,
            absent_since: (!present).then(Instant::now),
            announced_gone: false,
        }),
    };
    let opening = line(&full);
    let lines = futures_util::stream::unfold(
        (Some(opening), follower),
        |(opening, mut follower)| async move {
            if let Some(opening) = opening {
                return Some((opening, (None, follower)));
            }
            let next = follower.next_line().await?;
            Some((next, (None, follower)))
        },
    );
    Ok(ndjson(lines))
}

/// One game stream's position in the game.
struct Follower {
    hub: Arc<Hub>,
    id: Uuid,
    /// The game version the client has seen.
    version: u64,
    moves: Vec<String>,
    time_control: chess_game::TimeControl,
    /// The latest `gameState` sent, so a change that shows nothing new (a
    /// premove, a rematch offer) sends nothing.
    last: Option<serde_json::Value>,
    over: bool,
    /// `None` only while the follower is dropped.
    updates: Option<broadcast::Receiver<Arc<Outgoing>>>,
    shutdown: tokio::sync::watch::Receiver<bool>,
    handle: GameHandle,
    seat: Seat,
    /// `None` when the opponent is the computer.
    opponent: Option<OpponentPresence>,
}

/// Whether the stream's client was told its opponent is gone.
struct OpponentPresence {
    color: Color,
    /// Since when the opponent has had no connection anywhere.
    absent_since: Option<Instant>,
    /// `opponentGone` with `gone: true` was the last presence line sent.
    announced_gone: bool,
}

impl OpponentPresence {
    /// When to say the opponent is gone, if they stay away until then.
    fn gone_at(&self) -> Option<Instant> {
        match self.absent_since {
            Some(since) if !self.announced_gone => Some(since + OPPONENT_GONE_AFTER),
            _ => None,
        }
    }

    /// The opponent came or went; a line to send if they came back after
    /// the client was told they were gone.
    fn changed(&mut self, present: bool) -> Option<Bytes> {
        if !present {
            self.absent_since.get_or_insert_with(Instant::now);
            return None;
        }
        self.absent_since = None;
        std::mem::take(&mut self.announced_gone).then(|| line(&shapes::opponent_gone(false)))
    }

    /// The opponent stayed away until [`OpponentPresence::gone_at`].
    fn gone(&mut self) -> Bytes {
        self.announced_gone = true;
        line(&shapes::opponent_gone(true))
    }
}

impl Drop for Follower {
    /// The stream ended (game over, client gone, fell behind): unsubscribe
    /// first, then tell the owner, as a closing socket does, so it can
    /// unload a finished game and clear a premove of a seat with no client.
    fn drop(&mut self) {
        drop(self.updates.take());
        let handle = self.handle.clone();
        let seat = self.seat;
        tokio::spawn(async move { handle.disconnected(seat).await });
    }
}

impl Follower {
    /// The next line to send; `None` ends the stream (the game is over, the
    /// client fell too far behind, or the server stops).
    async fn next_line(&mut self) -> Option<Bytes> {
        loop {
            if self.over || *self.shutdown.borrow() {
                return None;
            }
            let updates = self.updates.as_mut()?;
            let gone_at = self.opponent.as_ref().and_then(OpponentPresence::gone_at);
            let update = tokio::select! {
                update = updates.recv() => update,
                () = sleep_until(gone_at.unwrap_or_else(Instant::now)), if gone_at.is_some() => {
                    return self.opponent.as_mut().map(OpponentPresence::gone);
                }
                () = tokio::time::sleep(KEEP_ALIVE) => return Some(Bytes::from_static(b"\n")),
                _ = self.shutdown.changed() => return None,
            };
            let state = match update {
                Ok(outgoing) => match outgoing.as_ref() {
                    Outgoing::Event {
                        version,
                        kind,
                        situation,
                        ..
                    } => {
                        if *version <= self.version {
                            continue;
                        }
                        self.version = *version;
                        self.apply(kind);
                        self.state_of(situation)
                    }
                    // Seats changed, or the owner caught up with another node
                    // without the events: read the whole game again.
                    Outgoing::Resync => self.reread().await?,
                    Outgoing::Redirect { .. } => continue,
                    Outgoing::Presence { color, present } => {
                        let opponent = self.opponent.as_mut().filter(|o| o.color == *color);
                        match opponent.and_then(|opponent| opponent.changed(*present)) {
                            Some(line) => return Some(line),
                            None => continue,
                        }
                    }
                },
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::info!(game_id = %self.id, missed, "a game stream fell behind; ending it");
                    return None;
                }
                // The owner unloaded (the game is over and nobody else
                // watches): the stream is done too.
                Err(broadcast::error::RecvError::Closed) => return None,
            };
            if self.last.as_ref() == Some(&state) {
                continue;
            }
            self.over = state["status"] != "started" && state["status"] != "created";
            self.last = Some(state.clone());
            return Some(line(&state));
        }
    }

    fn apply(&mut self, kind: &EventKind) {
        match kind {
            EventKind::Move { ply, uci, .. } => {
                let ply = usize::try_from(*ply).unwrap_or(usize::MAX);
                self.moves.truncate(ply);
                self.moves.push(uci.clone());
            }
            EventKind::TakeBack { ply, .. } => {
                self.moves
                    .truncate(usize::try_from(*ply).unwrap_or(usize::MAX));
            }
            _ => {}
        }
    }

    fn state_of(&self, situation: &SharedSituation) -> serde_json::Value {
        shapes::game_state(&self.moves, situation, self.time_control)
    }

    async fn reread(&mut self) -> Option<serde_json::Value> {
        let game: GameSnapshot = snapshot(&self.hub, self.id).await.ok().flatten()?;
        self.version = game.version;
        self.moves = game.moves.clone();
        Some(shapes::game_state(
            &game.moves,
            &game.situation,
            game.time_control,
        ))
    }
}
