//! Challenges between accounts (`POST /api/challenge/{username}` and its
//! accept, decline and cancel) and the Board API seek, which lives in the
//! lobby while its request stays open.
//!
//! A challenge waits in memory on the node that received it until the
//! challenged account answers: it is an invitation, not a game, and a
//! restart forgets it (the challenger asks again). Accepting it creates an
//! online game through the hub, as the web's challenges do.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use chess_game::{GameSpec, RealTime, TimeControl};
use chess_rules::Color;
use serde_json::{Value, json};
use uuid::Uuid;

use super::auth::{ApiUser, Scope};
use super::events;
use super::shapes::{self, ApiPlayer};
use super::{ApiFailure, KEEP_ALIVE, line, ndjson, ok};
use crate::auth::username::Username;
use crate::games::NewGame;
use crate::games::lobby::SeekOutcome;
use crate::games::model::{ColorChoice, GameMode};
use crate::startup::AppState;
use crate::store::PlayerRow;

/// Challenges one account may have waiting for answers.
const MAX_OUTGOING: usize = 20;

/// A challenge waiting for its answer.
#[derive(Clone, Debug)]
pub struct Challenge {
    pub id: Uuid,
    pub challenger: ApiPlayer,
    pub dest: ApiPlayer,
    pub time_control: TimeControl,
    pub color: ColorChoice,
}

impl Challenge {
    /// Lichess's challenge object; `direction` is `in` or `out` as the
    /// reader sees it.
    pub fn json(&self, direction: &str) -> Value {
        self.json_with_status(direction, "created")
    }

    fn json_with_status(&self, direction: &str, status: &str) -> Value {
        let speed = shapes::speed(self.time_control);
        json!({
            "id": self.id,
            "url": format!("/api/challenge/{}", self.id),
            "status": status,
            "challenger": self.challenger.challenge_json(),
            "destUser": self.dest.challenge_json(),
            "variant": shapes::variant(),
            "rated": false,
            "speed": speed,
            "timeControl": shapes::time_control(self.time_control),
            "color": self.color.as_str(),
            "finalColor": match self.color {
                ColorChoice::White => "white",
                ColorChoice::Black => "black",
                ColorChoice::Random => "random",
            },
            "perf": { "name": speed },
            "direction": direction,
        })
    }
}

/// The challenges waiting on this node.
#[derive(Debug, Default)]
pub struct Challenges(Mutex<HashMap<Uuid, Challenge>>);

impl Challenges {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Uuid, Challenge>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The challenges waiting for `player`'s answer.
    pub fn incoming(&self, player: Uuid) -> Vec<Challenge> {
        self.lock()
            .values()
            .filter(|challenge| challenge.dest.player_id == player)
            .cloned()
            .collect()
    }

    fn add(&self, challenge: Challenge) -> Result<(), ApiFailure> {
        let mut all = self.lock();
        let outgoing = all
            .values()
            .filter(|waiting| waiting.challenger.player_id == challenge.challenger.player_id)
            .count();
        if outgoing >= MAX_OUTGOING {
            return Err(ApiFailure::bad_request(format!(
                "You have {MAX_OUTGOING} challenges waiting for an answer; cancel some first"
            )));
        }
        all.insert(challenge.id, challenge);
        Ok(())
    }

    /// Removes challenge `id` if `may_take` allows it.
    fn take(
        &self,
        id: &str,
        may_take: impl FnOnce(&Challenge) -> bool,
    ) -> Result<Challenge, ApiFailure> {
        let not_found = || ApiFailure::new(axum::http::StatusCode::NOT_FOUND, "No such challenge");
        let id = Uuid::parse_str(id).map_err(|_| not_found())?;
        let mut all = self.lock();
        match all.get(&id) {
            Some(challenge) if may_take(challenge) => all.remove(&id).ok_or_else(not_found),
            _ => Err(not_found()),
        }
    }
}

/// The fields of a form (or JSON object) body.
fn fields(headers: &HeaderMap, body: &Bytes) -> Result<HashMap<String, String>, ApiFailure> {
    let json = headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    if json {
        let object: serde_json::Map<String, Value> = serde_json::from_slice(body)
            .map_err(|error| ApiFailure::bad_request(format!("Invalid JSON body: {error}")))?;
        // Clients send unset fields as null (berserk does): absent.
        return Ok(object
            .into_iter()
            .filter_map(|(key, value)| match value {
                Value::Null => None,
                Value::String(text) => Some((key, text)),
                other => Some((key, other.to_string())),
            })
            .collect());
    }
    let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(body)
        .map_err(|error| ApiFailure::bad_request(format!("Invalid form body: {error}")))?;
    Ok(pairs.into_iter().collect())
}

fn number(fields: &HashMap<String, String>, name: &str) -> Result<Option<f64>, ApiFailure> {
    fields
        .get(name)
        .filter(|text| !text.is_empty())
        .map(|text| {
            text.parse::<f64>()
                .ok()
                .filter(|value| value.is_finite() && *value >= 0.0)
                .ok_or_else(|| {
                    ApiFailure::bad_request(format!("{name}: expected a number, not {text:?}"))
                })
        })
        .transpose()
}

fn real_time(initial_s: f64, increment_s: f64) -> Result<TimeControl, ApiFailure> {
    // Whole milliseconds; the game crate checks the bounds.
    let initial_ms = (initial_s * 1000.0).round() as u64;
    let increment_ms = (increment_s * 1000.0).round() as u64;
    RealTime::new(initial_ms, increment_ms)
        .map(TimeControl::RealTime)
        .map_err(|error| ApiFailure::bad_request(error.to_string()))
}

/// The fields every game request shares: `rated` (only false), `variant`
/// (only standard) and `color`.
fn common(fields: &HashMap<String, String>) -> Result<ColorChoice, ApiFailure> {
    if fields
        .get("rated")
        .is_some_and(|rated| rated.eq_ignore_ascii_case("true"))
    {
        return Err(ApiFailure::bad_request(
            "Rated games are not available on this server: send rated=false",
        ));
    }
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

fn api_player_of(row: &PlayerRow, bot: bool) -> ApiPlayer {
    ApiPlayer::new(row, bot, None)
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
    let challenger_row = player_row(&state, &user).await?;
    let dest_row = state
        .store
        .player(dest.player_id)
        .await?
        .ok_or_else(no_user)?;
    let challenge = Challenge {
        id: Uuid::new_v4(),
        challenger: api_player_of(&challenger_row, user.bot),
        dest: api_player_of(&dest_row, dest.bot),
        time_control,
        color,
    };
    state.lichess.challenges.add(challenge.clone())?;
    let events = &state.lichess.events;
    events.send(
        dest.player_id,
        &line(&json!({ "type": "challenge", "challenge": challenge.json("in") })),
    );
    events.send(
        user.player_id,
        &line(&json!({ "type": "challenge", "challenge": challenge.json("out") })),
    );
    Ok(axum::Json(json!({ "challenge": challenge.json("out") })).into_response())
}

/// `POST /api/challenge/{id}/accept`: the game starts.
pub async fn accept(
    State(state): State<AppState>,
    user: ApiUser,
    Path(id): Path<String>,
) -> Result<Response, ApiFailure> {
    user.require(&[Scope::ChallengeWrite, Scope::BotPlay, Scope::BoardPlay])?;
    let challenge = state
        .lichess
        .challenges
        .take(&id, |challenge| challenge.dest.player_id == user.player_id)?;
    let players = async {
        let challenger = state.store.player(challenge.challenger.player_id).await?;
        let dest = state.store.player(challenge.dest.player_id).await?;
        Ok::<_, crate::store::StoreError>(challenger.zip(dest))
    }
    .await?;
    let Some((challenger, dest)) = players else {
        return Err(ApiFailure::new(
            axum::http::StatusCode::NOT_FOUND,
            "No such user",
        ));
    };
    let (white, black) = match challenge.color.resolve() {
        Color::White => (challenger, dest),
        Color::Black => (dest, challenger),
    };
    let live = state
        .hub
        .create(NewGame {
            mode: GameMode::Online,
            spec: GameSpec::standard(challenge.time_control).with_takeback(false),
            white: Some(white),
            black: Some(black),
            computer_level: None,
        })
        .await?;
    events::start_following(&state.lichess, &state.hub, live.id).await;
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
        .filter(|reason| !reason.is_empty())
        .unwrap_or_else(|| "generic".to_owned());
    let challenge = state
        .lichess
        .challenges
        .take(&id, |challenge| challenge.dest.player_id == user.player_id)?;
    let mut value = challenge.json_with_status("out", "declined");
    value["declineReasonKey"] = json!(reason);
    value["declineReason"] = json!(format!("The challenge was declined ({reason})."));
    state.lichess.events.send(
        challenge.challenger.player_id,
        &line(&json!({ "type": "challengeDeclined", "challenge": value })),
    );
    Ok(ok())
}

/// `POST /api/challenge/{id}/cancel`: the challenger takes it back.
pub async fn cancel(
    State(state): State<AppState>,
    user: ApiUser,
    Path(id): Path<String>,
) -> Result<Response, ApiFailure> {
    user.require(&[Scope::ChallengeWrite, Scope::BotPlay, Scope::BoardPlay])?;
    let challenge = state.lichess.challenges.take(&id, |challenge| {
        challenge.challenger.player_id == user.player_id
    })?;
    state.lichess.events.send(
        challenge.dest.player_id,
        &line(&json!({
            "type": "challengeCanceled",
            "challenge": challenge.json_with_status("in", "canceled"),
        })),
    );
    Ok(ok())
}

/// Cancels a seek whose request went away before anyone took it.
struct OpenSeek {
    lobby: Arc<crate::games::lobby::Lobby>,
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
        .create(player, time_control, color)
        .await
        .map_err(ApiFailure::internal)?;
    let seek_id = match outcome {
        SeekOutcome::Joined(game_id) => {
            events::start_following(&state.lichess, &state.hub, game_id).await;
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
    let lichess = Arc::clone(&state.lichess);
    let hub = Arc::clone(&state.hub);
    let shutdown = state.hub.shutdown_signal();
    let lines = futures_util::stream::unfold(
        (Some(guard), started, shutdown),
        move |(guard, mut started, mut shutdown)| {
            let lichess = Arc::clone(&lichess);
            let hub = Arc::clone(&hub);
            async move {
                let mut guard = guard?;
                loop {
                    tokio::select! {
                        game = started.next() => match game {
                            Some(game) if game.seek_id == Some(seek_id) => {
                                // Taken: nothing to cancel when the request ends.
                                guard.seek_id = None;
                                events::start_following(&lichess, &hub, game.game_id).await;
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
