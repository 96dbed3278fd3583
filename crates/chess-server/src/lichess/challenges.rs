//! Challenges between accounts (`POST /api/challenge/{username}` and its
//! accept, decline and cancel) and the Board API seek, which lives in the
//! lobby while its request stays open.
//!
//! A challenge is a row in the store (`store::challenges`), so every node
//! sees it and a restart keeps it; answering it is one conditional update,
//! so of racing answers on any nodes exactly one counts. Accepting it
//! creates an online game in the live games' registry, as the web's challenges do. The
//! event streams hear of challenges through [`notices`](super::notices).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use chess_game::{GameSpec, RealTime, TimeControl};
use chess_live::{GameMode, NewGame, PlayerRow, now_ms};
use chess_rules::Color;
use serde_json::{Value, json};
use uuid::Uuid;

use super::auth::{ApiUser, Scope};
use super::events;
use super::form::{asks_rated, fields, number};
use super::notices::{self, ApiNotice};
use super::reply::{ApiFailure, KEEP_ALIVE, line, ndjson, ok};
use super::shapes::{self, ApiPlayer};
use chess_store::accounts::Username;

use crate::lobby::{ColorChoice, Lobby, SeekOutcome, SeekTerms};
use crate::state::AppState;
use chess_store::{ChallengeAnswer, ChallengeRow, Store};

/// Challenges one account may have waiting for answers.
const MAX_OUTGOING: i64 = 20;

/// The longest decline reason key kept.
const MAX_REASON_LEN: usize = 32;

/// How long a challenge waits for its answer. Lichess expires challenges
/// too; here an unanswered challenge older than this is treated as gone by
/// every read (it is neither listed, nor accepted, nor counted) and its row
/// is deleted when a later challenge is stored.
pub const CHALLENGE_LIFETIME_MS: i64 = 24 * 60 * 60 * 1000;

/// The oldest `created_at` a challenge may have and still be answered.
fn expired_before() -> i64 {
    now_ms().to_stored() - CHALLENGE_LIFETIME_MS
}

/// A challenge as the API shows it: its stored row with both accounts.
#[derive(Clone, Debug)]
pub struct Challenge {
    pub id: Uuid,
    pub challenger: ApiPlayer,
    pub dest: ApiPlayer,
    pub time_control: TimeControl,
    pub color: ColorChoice,
    /// `created`, `accepted`, `declined` or `canceled`.
    pub status: String,
    pub decline_reason: Option<String>,
    pub rated: bool,
}

impl Challenge {
    /// The challenge of `row` with its accounts read from the store; `None`
    /// if an account is gone.
    pub async fn load(store: &Store, row: ChallengeRow) -> Result<Option<Challenge>, ApiFailure> {
        let corrupt = |what: String| ApiFailure::internal(format!("challenge {}: {what}", row.id));
        let time_control: TimeControl = row
            .time_control
            .parse()
            .map_err(|error| corrupt(format!("time control: {error}")))?;
        let color: ColorChoice = row
            .color
            .parse()
            .map_err(|error| corrupt(format!("color: {error}")))?;
        let perf = chess_store::ratings::Perf::of(time_control.speed());
        let seats = [
            api_player(store, row.challenger_id).await?,
            api_player(store, row.dest_id).await?,
        ];
        let [Some(challenger), Some(dest)] = ApiPlayer::rated_pair(seats, store, perf).await?
        else {
            return Ok(None);
        };
        Ok(Some(Challenge {
            id: row.id,
            challenger,
            dest,
            time_control,
            color,
            status: row.status,
            decline_reason: row.decline_reason,
            rated: row.rated,
        }))
    }

    /// Lichess's challenge object; `direction` is `in` or `out` as the
    /// reader sees it.
    pub fn json(&self, direction: &str) -> Value {
        let speed = shapes::speed(self.time_control);
        let mut value = json!({
            "id": self.id,
            "url": format!("/api/challenge/{}", self.id),
            "status": self.status,
            "challenger": self.challenger.challenge_json(),
            "destUser": self.dest.challenge_json(),
            "variant": shapes::variant(),
            "rated": self.rated,
            "speed": speed,
            "timeControl": shapes::time_control(self.time_control),
            "color": self.color.as_str(),
            "finalColor": self.color.as_str(),
            "perf": { "name": speed },
            "direction": direction,
        });
        if let Some(reason) = &self.decline_reason {
            value["declineReasonKey"] = json!(reason);
            value["declineReason"] = json!(format!("The challenge was declined ({reason})."));
        }
        value
    }

    /// The event-stream lines this challenge's state gives each account:
    /// `(account, line)`. A new challenge goes to both accounts, a decline
    /// to the challenger, a cancel to the challenged account; an accepted
    /// one is told by the game's `gameStart`.
    pub fn event_lines(&self) -> Vec<(Uuid, Bytes)> {
        let event = |kind: &str, direction: &str| {
            line(&json!({ "type": kind, "challenge": self.json(direction) }))
        };
        match self.status.as_str() {
            "created" => vec![
                (self.dest.player_id, event("challenge", "in")),
                (self.challenger.player_id, event("challenge", "out")),
            ],
            "declined" => vec![(self.challenger.player_id, event("challengeDeclined", "out"))],
            "canceled" => vec![(self.dest.player_id, event("challengeCanceled", "in"))],
            _ => Vec::new(),
        }
    }
}

async fn api_player(store: &Store, player: Uuid) -> Result<Option<ApiPlayer>, ApiFailure> {
    Ok(store
        .player(player)
        .await?
        .map(|row| ApiPlayer::new(&row, None)))
}

/// The challenges waiting for `player`'s answer.
pub async fn incoming(store: &Store, player: Uuid) -> Result<Vec<Challenge>, ApiFailure> {
    let mut challenges = Vec::new();
    for row in store.challenges_to(player, expired_before()).await? {
        if let Some(challenge) = Challenge::load(store, row).await? {
            challenges.push(challenge);
        }
    }
    Ok(challenges)
}

/// Answers challenge `id` (text from the route) as `player`; `404` if it
/// is not waiting for this answer from `player` (unknown, expired, someone
/// else's, or answered already, perhaps a moment ago on another node).
async fn answer(
    state: &AppState,
    id: &str,
    player: Uuid,
    answer: ChallengeAnswer,
    decline_reason: Option<&str>,
) -> Result<Challenge, ApiFailure> {
    let not_found = || ApiFailure::new(axum::http::StatusCode::NOT_FOUND, "No such challenge");
    let id = Uuid::parse_str(id).map_err(|_| not_found())?;
    let row = state
        .store
        .answer_challenge(id, player, answer, decline_reason, expired_before())
        .await?
        .ok_or_else(not_found)?;
    Challenge::load(&state.store, row)
        .await?
        .ok_or_else(|| ApiFailure::new(axum::http::StatusCode::NOT_FOUND, "No such user"))
}

fn real_time(initial_s: f64, increment_s: f64) -> Result<TimeControl, ApiFailure> {
    // Whole milliseconds; the game crate checks the bounds.
    let initial_ms = (initial_s * 1000.0).round() as u64;
    let increment_ms = (increment_s * 1000.0).round() as u64;
    RealTime::new(initial_ms, increment_ms)
        .map(TimeControl::RealTime)
        .map_err(|error| ApiFailure::bad_request(error.to_string()))
}

/// The fields every game request shares: `variant` (only standard) and
/// `color` (`rated` is [`asks_rated`]).
fn common(fields: &HashMap<String, String>) -> Result<ColorChoice, ApiFailure> {
    if let Some(variant) = fields.get("variant")
        && !variant.is_empty()
        && variant != "standard"
    {
        return Err(ApiFailure::bad_request(format!(
            "Only standard chess is played here, not {variant:?}"
        )));
    }
    if fields.get("fen").is_some_and(|fen| !fen.is_empty()) {
        return Err(ApiFailure::bad_request(
            "Challenges from a position are not available through this API",
        ));
    }
    match fields.get("color").map(String::as_str) {
        None | Some("" | "random") => Ok(ColorChoice::Random),
        Some("white") => Ok(ColorChoice::White),
        Some("black") => Ok(ColorChoice::Black),
        Some(other) => Err(ApiFailure::bad_request(format!(
            "color: expected white, black or random, not {other:?}"
        ))),
    }
}

fn limit_games(state: &AppState, player: Uuid) -> Result<(), ApiFailure> {
    state
        .game_limits
        .hit(player, Instant::now())
        .map_err(|retry| ApiFailure::too_many(retry.0))
}

async fn player_row(state: &AppState, user: &ApiUser) -> Result<PlayerRow, ApiFailure> {
    state
        .store
        .player(user.player_id)
        .await?
        .ok_or_else(|| ApiFailure::internal("an account without a player row"))
}

/// `POST /api/challenge/{username}`.
pub async fn create(
    State(state): State<AppState>,
    user: ApiUser,
    Path(target): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiFailure> {
    user.require(&[Scope::ChallengeWrite, Scope::BotPlay, Scope::BoardPlay])?;
    let fields = fields(&headers, &body)?;
    let color = common(&fields)?;
    let time_control = match (
        number(&fields, "clock.limit")?,
        number(&fields, "clock.increment")?,
        number(&fields, "days")?,
    ) {
        (Some(limit), increment, _) => real_time(limit, increment.unwrap_or(0.0))?,
        (None, Some(_), _) => {
            return Err(ApiFailure::bad_request("clock.increment needs clock.limit"));
        }
        // Correspondence has no per-move days here: a move may take as
        // long as it takes (docs/lichess-api.md).
        (None, None, _) => TimeControl::Correspondence,
    };
    let no_user = || ApiFailure::new(axum::http::StatusCode::NOT_FOUND, "No such user");
    let key = Username::parse(&target).map_err(|_| no_user())?;
    let dest = state
        .store
        .api_account_by_key(&key.key())
        .await?
        .ok_or_else(no_user)?;
    if dest.player_id == user.player_id {
        return Err(ApiFailure::bad_request("You cannot challenge yourself"));
    }
    limit_games(&state, user.player_id)?;
    let row = ChallengeRow {
        id: Uuid::new_v4(),
        challenger_id: user.player_id,
        dest_id: dest.player_id,
        time_control: time_control.to_string(),
        color: color.as_str().to_owned(),
        status: "created".to_owned(),
        decline_reason: None,
        created_at: now_ms().to_stored(),
        rated: asks_rated(&fields) && !user.bot && !dest.bot,
    };
    if !state
        .store
        .insert_challenge(&row, MAX_OUTGOING, expired_before())
        .await?
    {
        return Err(ApiFailure::bad_request(format!(
            "You have {MAX_OUTGOING} challenges waiting for an answer; cancel some first"
        )));
    }
    let challenge = Challenge::load(&state.store, row)
        .await?
        .ok_or_else(no_user)?;
    publish_challenge(&state, &challenge).await;
    Ok(axum::Json(json!({ "challenge": challenge.json("out") })).into_response())
}

/// `POST /api/challenge/{id}/accept`: the game starts.
pub async fn accept(
    State(state): State<AppState>,
    user: ApiUser,
    Path(id): Path<String>,
) -> Result<Response, ApiFailure> {
    user.require(&[Scope::ChallengeWrite, Scope::BotPlay, Scope::BoardPlay])?;
    // The game starts here: a node that cannot keep up takes none.
    let _creating = state.admission.creation().map_err(ApiFailure::from)?;
    let challenge = answer(&state, &id, user.player_id, ChallengeAnswer::Accepted, None).await?;
    // The players as the answer read them (`Challenge::load`).
    let (challenger, dest) = (challenge.challenger.row(), challenge.dest.row());
    let (white, black) = match challenge.color.resolve() {
        Color::White => (challenger, dest),
        Color::Black => (dest, challenger),
    };
    // Only the one accept whose update matched gets here: one game.
    let live = state
        .registry
        .create(NewGame {
            // The game is the challenge, as on lichess: a client that
            // accepted or made it streams the game by the challenge's id.
            id: challenge.id,
            mode: GameMode::Online,
            spec: GameSpec::standard(challenge.time_control)
                .with_takeback(false)
                .with_rated(challenge.rated),
            white: Some(white),
            black: Some(black),
            computer_level: None,
        })
        .await?;
    publish(&state, ApiNotice::GameStarted { game_id: live.id() }).await;
    Ok(ok())
}

/// `POST /api/challenge/{id}/decline` (an optional `reason` field).
pub async fn decline(
    State(state): State<AppState>,
    user: ApiUser,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiFailure> {
    user.require(&[Scope::ChallengeWrite, Scope::BotPlay, Scope::BoardPlay])?;
    let reason = fields(&headers, &body)
        .ok()
        .and_then(|mut fields| fields.remove("reason"))
        // Lichess's reasons are short keys (`later`, `tooFast`...): anything
        // else is not stored as given.
        .filter(|reason| {
            !reason.is_empty()
                && reason.len() <= MAX_REASON_LEN
                && reason.bytes().all(|byte| byte.is_ascii_alphanumeric())
        })
        .unwrap_or_else(|| "generic".to_owned());
    let challenge = answer(
        &state,
        &id,
        user.player_id,
        ChallengeAnswer::Declined,
        Some(&reason),
    )
    .await?;
    publish_challenge(&state, &challenge).await;
    Ok(ok())
}

/// `POST /api/challenge/{id}/cancel`: the challenger takes it back.
pub async fn cancel(
    State(state): State<AppState>,
    user: ApiUser,
    Path(id): Path<String>,
) -> Result<Response, ApiFailure> {
    user.require(&[Scope::ChallengeWrite, Scope::BotPlay, Scope::BoardPlay])?;
    let challenge = answer(&state, &id, user.player_id, ChallengeAnswer::Canceled, None).await?;
    publish_challenge(&state, &challenge).await;
    Ok(ok())
}

/// Cancels a seek whose request went away before anyone took it.
struct OpenSeek {
    lobby: Arc<Lobby>,
    player: Uuid,
    seek_id: Option<Uuid>,
}

impl Drop for OpenSeek {
    fn drop(&mut self) {
        if let Some(seek_id) = self.seek_id.take() {
            let lobby = Arc::clone(&self.lobby);
            let player = self.player;
            tokio::spawn(async move {
                // Already taken or cancelled is fine: nothing to undo.
                let _ = lobby.cancel(player, seek_id).await;
            });
        }
    }
}

/// `POST /api/board/seek` (`time` in minutes, `increment` in seconds, or
/// `days`; `color`; `rated=false`). A real-time seek stays in the lobby,
/// where people on the web see it too, while the response streams
/// keep-alive lines; it ends when someone takes the seek (the game is on
/// the event stream) and closing it cancels the seek. A correspondence
/// seek answers `{"id"}` at once and stays until taken. Bots may seek.
pub async fn seek(
    State(state): State<AppState>,
    user: ApiUser,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiFailure> {
    // Bots may seek here too (lichess lets only people seek): their seek is
    // in the web lobby, so people find a club's bots without a challenge UI.
    user.require(&[Scope::BoardPlay, Scope::BotPlay])?;
    let _creating = state.admission.creation().map_err(ApiFailure::from)?;
    let fields = fields(&headers, &body)?;
    let color = common(&fields)?;
    let time_control = match (
        number(&fields, "time")?,
        number(&fields, "increment")?,
        number(&fields, "days")?,
    ) {
        (Some(minutes), increment, _) => real_time(minutes * 60.0, increment.unwrap_or(0.0))?,
        (None, None, Some(_)) => TimeControl::Correspondence,
        _ => {
            return Err(ApiFailure::bad_request(
                "A seek needs time (minutes) and increment (seconds), or days",
            ));
        }
    };
    limit_games(&state, user.player_id)?;
    let player = player_row(&state, &user).await?;
    // Listening before the seek exists, so its being taken is never missed.
    let started = state.lobby.started_games();
    let outcome = state
        .lobby
        .create(
            player,
            time_control,
            color,
            SeekTerms {
                rated: asks_rated(&fields) && !user.bot,
                rating_range: None,
            },
        )
        .await
        .map_err(ApiFailure::internal)?;
    let seek_id = match outcome {
        SeekOutcome::Joined(game_id) => {
            events::start_following(&state, game_id).await;
            return Ok(ndjson(futures_util::stream::empty()));
        }
        SeekOutcome::Created(seek) => seek.id,
    };
    if time_control == TimeControl::Correspondence {
        return Ok(axum::Json(json!({ "id": seek_id })).into_response());
    }
    let guard = OpenSeek {
        lobby: Arc::clone(&state.lobby),
        player: user.player_id,
        seek_id: Some(seek_id),
    };
    let shutdown = state.registry.shutdown_signal();
    let lines = futures_util::stream::unfold(
        (Some(guard), started, shutdown),
        move |(guard, mut started, mut shutdown)| {
            let state = state.clone();
            async move {
                let mut guard = guard?;
                loop {
                    tokio::select! {
                        game = started.next() => match game {
                            Some(game) if game.seek_id == Some(seek_id) => {
                                // Taken: nothing to cancel when the request ends.
                                guard.seek_id = None;
                                events::start_following(&state, game.game_id).await;
                                return None;
                            }
                            Some(_) => continue,
                            None => return None,
                        },
                        () = tokio::time::sleep(KEEP_ALIVE) => {
                            return Some((Bytes::from_static(b"\n"), (Some(guard), started, shutdown)));
                        }
                        _ = shutdown.changed() => return None,
                    }
                }
            }
        },
    );
    Ok(ndjson(lines))
}

/// Acts on `notice` on this node: queues the lines it gives the open event
/// streams, or forgets the tokens it names.
pub async fn deliver(state: &AppState, notice: &ApiNotice) {
    match notice {
        // An acceptance is told by the game's `gameStart`, not by a line of its own.
        ApiNotice::Challenge { status, .. } if status == "accepted" => {}
        ApiNotice::Challenge { id, status } => {
            let expired_before = now_ms().to_stored() - CHALLENGE_LIFETIME_MS;
            let row = match state.store.challenge(*id, expired_before).await {
                Ok(Some(row)) => row,
                // Expired meanwhile: nothing to tell.
                Ok(None) => return,
                Err(error) => {
                    tracing::warn!(%error, %id, "reading a challenge to announce failed");
                    return;
                }
            };
            let mut challenge = match Challenge::load(&state.store, row).await {
                Ok(Some(challenge)) => challenge,
                Ok(None) | Err(_) => return,
            };
            if *status != challenge.status {
                // Announce the step the notice is about, not a later one.
                challenge.status.clone_from(status);
                if status != "declined" {
                    challenge.decline_reason = None;
                }
            }
            for (player, line) in challenge.event_lines() {
                state.lichess.events.send(player, &line);
            }
        }
        ApiNotice::GameStarted { game_id } => {
            events::game_started(state, *game_id).await;
        }
        ApiNotice::TokensChanged { player } => state.lichess.tokens.forget_player(*player),
    }
}

/// Delivers `notice` to this node's streams and tells the other nodes.
pub(crate) async fn publish(state: &AppState, notice: ApiNotice) {
    deliver(state, &notice).await;
    notices::tell_other_nodes(&state.store, state.registry.node_id(), notice).await;
}

/// Tells the event streams of both accounts, here and on the other nodes,
/// of `challenge`'s new state. This node has it in hand; the others read it.
async fn publish_challenge(state: &AppState, challenge: &Challenge) {
    for (player, line) in challenge.event_lines() {
        state.lichess.events.send(player, &line);
    }
    let notice = ApiNotice::Challenge {
        id: challenge.id,
        status: challenge.status.clone(),
    };
    notices::tell_other_nodes(&state.store, state.registry.node_id(), notice).await;
}
