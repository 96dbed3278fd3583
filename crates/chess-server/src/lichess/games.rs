//! Playing a game: the NDJSON game stream (`gameFull`, then a `gameState`
//! per change) and the actions (move, resign, abort, draw, take-back, chat).
//!
//! Every action is one command to the game's owner, the same the web
//! sockets send, run for the caller's seat, so the rules, clocks and
//! automatic draws are the server's own. A stream watches the game through a
//! [`Viewer`], as a web socket does: a client that reads too slowly to keep
//! up with the game's bounded broadcast falls behind and its stream is ended
//! (it reconnects and gets `gameFull` again); nothing grows per stream.

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use chess_game::{EventKind, GameError, TimeControl};
use chess_live::view::PublicSituation;
use chess_live::{Command, Freshness, Outgoing, PlayerKind, Refusal, Seen, Viewer, now_ms};
use chess_rules::{Color, UciMove};
use serde::Deserialize;
use tokio::sync::watch;
use tokio::time::{Instant, sleep_until};
use uuid::Uuid;

use super::auth::{ApiUser, Scope};
use super::events::api_players;
use super::reply::{ApiFailure, KEEP_ALIVE, line, ndjson, ok};
use super::shapes;
use crate::state::AppState;

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

/// Runs `command` as `user` in game `id`: one request to the game's owner,
/// which decides the caller's seat. A game that does not exist or is not
/// the caller's is lichess's `404`; a refusal its `400`.
async fn run(
    state: &AppState,
    user: &ApiUser,
    id: Uuid,
    command: Command,
) -> Result<(), ApiFailure> {
    let outcome = state
        .registry
        .command(id, Some(user.player_id), command, now_ms())
        .await?
        .ok_or_else(ApiFailure::no_such_game)?;
    match outcome {
        Ok(_) => Ok(()),
        Err(Refusal::NotAPlayer) => Err(ApiFailure::no_such_game()),
        Err(refusal @ Refusal::Unavailable) => Err(ApiFailure::new(
            StatusCode::SERVICE_UNAVAILABLE,
            refusal.to_string(),
        )),
        Err(refusal @ Refusal::Busy) => Err(ApiFailure::new(
            StatusCode::TOO_MANY_REQUESTS,
            refusal.to_string(),
        )),
        Err(
            Refusal::Rules(GameError::NotYourTurn | GameError::GameOver) | Refusal::MoveTooLate,
        ) => Err(ApiFailure::bad_request(
            "Not your turn, or game already over",
        )),
        Err(refusal) => Err(ApiFailure::bad_request(refusal.to_string())),
    }
}

/// The colour `user` plays in game `id`; `404` for a game that does not
/// exist or is not theirs.
async fn my_color(state: &AppState, user: &ApiUser, id: &str) -> Result<Color, ApiFailure> {
    state
        .registry
        .snapshot(game_id(id)?, Freshness::Held)
        .await?
        .and_then(|game| game.color_of(user.player_id))
        .ok_or_else(ApiFailure::no_such_game)
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
    let id = game_id(&id)?;
    let uci: UciMove = uci
        .parse()
        .map_err(|_| ApiFailure::bad_request(format!("Invalid UCI: {uci}")))?;
    run(&state, &user, id, Command::MoveNow { uci }).await?;
    if query
        .offering_draw
        .is_some_and(|offering| offering.eq_ignore_ascii_case("true"))
    {
        // After the move, so the draw offer is the mover's (an offer
        // already on the table from the opponent is accepted). The move
        // stands either way: an offer the rules refuse (too early, too soon
        // after the last one) is simply not made, as on lichess.
        if let Err(refused) = run(&state, &user, id, Command::AnswerDraw { yes: true }).await {
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

/// `POST .../berserk`: in an arena game that allows it, before both sides
/// have moved.
pub async fn berserk(
    State(state): State<AppState>,
    user: ApiUser,
    uri: Uri,
    Path(id): Path<String>,
) -> Result<Response, ApiFailure> {
    act(&state, &user, &uri, &id, Command::Berserk).await
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

/// Runs `command` for `user` in game `id`, reached through `uri`'s API.
async fn act(
    state: &AppState,
    user: &ApiUser,
    uri: &Uri,
    id: &str,
    command: Command,
) -> Result<Response, ApiFailure> {
    Api::of(uri).check(user)?;
    run(state, user, game_id(id)?, command).await?;
    Ok(ok())
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

/// `POST .../draw/{yes|no}`: yes offers a draw or accepts the opponent's,
/// no declines the opponent's or withdraws one's own.
pub async fn draw(
    State(state): State<AppState>,
    user: ApiUser,
    uri: Uri,
    Path((id, answer)): Path<(String, String)>,
) -> Result<Response, ApiFailure> {
    Api::of(&uri).check(&user)?;
    let yes = yes_or_no(&answer)?;
    run(&state, &user, game_id(&id)?, Command::AnswerDraw { yes }).await?;
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
    my_color(&state, &user, &id).await?;
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
    my_color(&state, &user, &id).await?;
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
    // Watching as the caller, counted as their seat's connection (as a web
    // socket is) until the stream ends; subscribed before the game is read,
    // so a change in between is both in it and seen, and is skipped by
    // version.
    let viewer = Viewer::open(&state.registry, game_id(&id)?, Some(user.player_id))
        .await?
        .ok_or_else(ApiFailure::no_such_game)?;
    let game = viewer
        .snapshot(Freshness::Stored)
        .await
        .map_err(|_gone| ApiFailure::no_such_game())?;
    let Some(color) = game.color_of(user.player_id) else {
        return Err(ApiFailure::no_such_game());
    };
    let players = api_players(&state.store, &game).await?;
    let full = shapes::game_full(&game, &players);
    // Whether the opponent is connected is followed for people only: the
    // computer never has a connection.
    let opponent = color.other();
    let person = game
        .players
        .get(opponent)
        .as_ref()
        .is_some_and(|player| player.kind != PlayerKind::Computer);
    let follower = Follower {
        viewer,
        last: Some(shapes::game_state(
            &shapes::uci_moves(&game),
            &game.situation,
            game.time_control,
        )),
        moves: shapes::uci_moves(&game),
        time_control: game.time_control,
        over: game.is_over(),
        shutdown: state.registry.shutdown_signal(),
        opponent: person.then(|| OpponentPresence {
            color: opponent,
            absent_since: (!*game.presence.get(opponent)).then(Instant::now),
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

/// One game stream's position in the game. Dropping it (the game is over,
/// the client left or fell behind) counts the connection out, as a closing
/// socket does: the owner can unload a finished game and clear a premove
/// of a seat with no client.
struct Follower {
    viewer: Viewer,
    /// The moves the client has seen, in UCI.
    moves: Vec<String>,
    time_control: TimeControl,
    /// The latest `gameState` sent, so a change that shows nothing new (a
    /// premove, a rematch offer) sends nothing.
    last: Option<serde_json::Value>,
    over: bool,
    shutdown: watch::Receiver<bool>,
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

impl Follower {
    /// The next line to send; `None` ends the stream (the game is over, the
    /// client fell too far behind, or the server stops).
    async fn next_line(&mut self) -> Option<Bytes> {
        loop {
            if self.over || *self.shutdown.borrow() {
                return None;
            }
            let gone_at = self.opponent.as_ref().and_then(OpponentPresence::gone_at);
            let received = tokio::select! {
                received = self.viewer.recv() => received,
                () = sleep_until(gone_at.unwrap_or_else(Instant::now)), if gone_at.is_some() => {
                    return self.opponent.as_mut().map(OpponentPresence::gone);
                }
                () = tokio::time::sleep(KEEP_ALIVE) => return Some(Bytes::from_static(b"\n")),
                _ = self.shutdown.changed() => return None,
            };
            // Nothing to show: a change already shown.
            let Some(seen) = self.viewer.see(received).await else {
                continue;
            };
            let state = match seen {
                Seen::Event(event) => {
                    let Outgoing::Event {
                        kind, situation, ..
                    } = event.as_ref()
                    else {
                        continue;
                    };
                    self.apply(kind);
                    self.state_of(&situation.public)
                }
                // Seats changed, or the game caught up with another node
                // without the events: the whole game again.
                Seen::State(state) => {
                    self.moves = state.moves.iter().map(|mv| mv.uci.clone()).collect();
                    self.state_of(&state.situation.shared.public)
                }
                Seen::Behind => {
                    tracing::info!(game_id = %self.viewer.id(), "a game stream fell behind; ending it");
                    return None;
                }
                Seen::Redirect { .. } => continue,
                Seen::Presence { color, present } => {
                    let opponent = self.opponent.as_mut().filter(|o| o.color == color);
                    match opponent.and_then(|opponent| opponent.changed(present)) {
                        Some(line) => return Some(line),
                        None => continue,
                    }
                }
                // The game is no longer served (the server stops).
                Seen::Closed => return None,
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

    fn state_of(&self, situation: &PublicSituation) -> serde_json::Value {
        shapes::game_state(&self.moves, situation, self.time_control)
    }
}
