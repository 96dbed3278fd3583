//! Lichess's arena tournament API: `POST /api/tournament` creates an arena,
//! `GET /api/tournament/{id}` shows it with a page of its standings, `join`,
//! `withdraw` and `terminate` act on it, `results` and `games` export it,
//! and `GET /api/team/{id}/arena` lists a club's arenas. The arenas
//! themselves run on the server's director (`crate::tournament`); this
//! module only reads requests and writes lichess's shapes.

use axum::extract::{Path, Query, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Json, body::Body, body::Bytes};
use chess_live::now_ms;
use chess_store::tournaments::{Listing, TournamentError, TournamentRow, TournamentStatus};
use chess_tournament::arena::Mark;
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::Instant;

use super::auth::{ApiUser, Scope};
use super::form::{Fields, fields, flag, number};
use super::reply::{ApiFailure, line, ndjson, ok};
use super::shapes;
use crate::http::archive::{EXPORT_PAGE, Format};
use crate::state::AppState;
use crate::tournament::arenas::{self, ArenaSettings, ArenaView, CreateError, full_name};
use crate::tournament::standings::Standing;

/// Players on one page of `GET /api/tournament/{id}`'s standings.
pub const STANDING_PAGE: usize = 10;
/// Lines `results` writes unless asked for fewer.
const MAX_RESULTS: usize = 10_000;
/// Arenas `GET /api/team/{id}/arena` lists unless asked for fewer.
const TEAM_ARENAS: i64 = 100;
/// How soon an arena starts when the organiser names no time (lichess's
/// default `waitMinutes`).
const DEFAULT_WAIT_MINUTES: f64 = 5.0;

impl From<TournamentError> for ApiFailure {
    fn from(error: TournamentError) -> ApiFailure {
        let message = error.to_string();
        match error {
            TournamentError::NoSuchTournament => {
                ApiFailure::new(StatusCode::NOT_FOUND, "Tournament not found")
            }
            TournamentError::NotAClubLeader | TournamentError::NotTheOrganiser => {
                ApiFailure::new(StatusCode::FORBIDDEN, message)
            }
            TournamentError::Finished
            | TournamentError::NotAClubMember
            | TournamentError::RatingOutOfRange
            | TournamentError::NotAPlayer => ApiFailure::bad_request(message),
            TournamentError::IdTaken
            | TournamentError::LeaseLost
            | TournamentError::PlayerBusy
            | TournamentError::Store(_) => ApiFailure::internal(error),
        }
    }
}

/// Lichess's status number of a tournament.
const fn status_number(status: TournamentStatus) -> u32 {
    match status {
        TournamentStatus::Created => 10,
        TournamentStatus::Started => 20,
        TournamentStatus::Finished => 30,
    }
}

/// An arena as lichess's tournament lists show it.
pub fn arena_json(tournament: &TournamentRow, created_by: &str, players: usize, now: i64) -> Value {
    let perf = arenas::perf(tournament);
    let mut value = json!({
        "id": tournament.id,
        "createdBy": created_by.to_lowercase(),
        "system": "arena",
        "minutes": (tournament.ends_at - tournament.starts_at) / 60_000,
        "clock": {
            "limit": tournament.clock_base_s,
            "increment": tournament.clock_increment_s,
        },
        "rated": tournament.rated,
        "fullName": full_name(&tournament.name),
        "nbPlayers": players,
        "variant": shapes::variant(),
        "startsAt": tournament.starts_at,
        "finishesAt": tournament.ends_at,
        "status": status_number(tournament.status),
        "perf": { "key": perf.code(), "name": perf_name(perf.code()) },
        "berserkable": tournament.berserkable,
        "streakable": tournament.streaks,
    });
    match tournament.status {
        TournamentStatus::Created => {
            value["secondsToStart"] = json!(((tournament.starts_at - now) / 1000).max(0));
        }
        TournamentStatus::Started => {
            value["secondsToFinish"] = json!(((tournament.ends_at - now) / 1000).max(0));
        }
        TournamentStatus::Finished => {}
    }
    if let Some(club) = &tournament.club_id {
        value["teamMember"] = json!(club);
    }
    if let Some(rating) = tournament.min_rating {
        value["minRating"] = json!({ "rating": rating, "perf": perf.code() });
    }
    if let Some(rating) = tournament.max_rating {
        value["maxRating"] = json!({ "rating": rating, "perf": perf.code() });
    }
    value
}

fn perf_name(code: &str) -> String {
    let mut name = code.to_owned();
    if let Some(first) = name.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    name
}

/// A player's sheet as lichess writes it: each counted game's points,
/// latest first, and whether they are on fire. Doubled games and draws
/// that scored nothing keep their digit; the web page marks them.
fn sheet_json(standing: &Standing) -> Value {
    let scores: String = standing
        .sheet
        .games
        .iter()
        .rev()
        .map(|game| char::from_digit(game.points, 10).unwrap_or('?'))
        .collect();
    let mut value = json!({ "scores": scores });
    if standing.sheet.on_fire {
        value["fire"] = json!(true);
    }
    value
}

/// One line of the standings, as lichess writes it.
fn standing_json(standing: &Standing) -> Value {
    let mut value = json!({
        "name": standing.username,
        "rank": standing.rank,
        "rating": standing.rating,
        "score": standing.sheet.total,
        "sheet": sheet_json(standing),
    });
    if standing.withdrawn {
        value["withdraw"] = json!(true);
    }
    value
}

/// The whole arena with page `page` (from 1) of its standings.
fn view_json(view: &ArenaView, page: usize, now: i64) -> Value {
    let tournament = &view.tournament;
    let mut value = arena_json(tournament, &view.created_by, view.players.len(), now);
    let players: Vec<Value> = view
        .standings
        .iter()
        .skip((page - 1) * STANDING_PAGE)
        .take(STANDING_PAGE)
        .map(standing_json)
        .collect();
    value["standing"] = json!({ "page": page, "players": players });
    value["isStarted"] = json!(tournament.status != TournamentStatus::Created);
    value["isFinished"] = json!(tournament.status == TournamentStatus::Finished);
    value["nbOngoing"] = json!(view.ongoing());
    if tournament.status == TournamentStatus::Finished {
        let podium: Vec<Value> = view
            .standings
            .iter()
            .take(3)
            .map(|standing| {
                let mut line = standing_json(standing);
                line["nb"] = json!(nb_json(standing));
                if let Some(performance) = standing.performance {
                    line["performance"] = json!(performance);
                }
                line
            })
            .collect();
        if let Some(winner) = view.standings.first() {
            value["winner"] = json!({
                "id": winner.username.to_lowercase(),
                "name": winner.username,
            });
        }
        value["podium"] = json!(podium);
    }
    value
}

/// A player's counts: games, berserks, wins (as lichess's podium has).
fn nb_json(standing: &Standing) -> Value {
    let berserks = standing.berserks.iter().filter(|berserk| **berserk).count();
    let doubled = standing
        .sheet
        .games
        .iter()
        .filter(|game| game.mark == Mark::Double)
        .count();
    json!({
        "game": standing.sheet.games.len(),
        "berserk": berserks,
        "onFire": doubled,
    })
}

/// `{id}`'s arena, or `404`.
async fn load(state: &AppState, id: &str) -> Result<ArenaView, ApiFailure> {
    ArenaView::load(&state.store, id)
        .await?
        .ok_or_else(|| TournamentError::NoSuchTournament.into())
}

/// Why a field is refused: lichess features this server does not have.
fn refuse_unsupported(fields: &Fields) -> Result<(), ApiFailure> {
    if let Some(variant) = fields.get("variant")
        && !variant.is_empty()
        && variant != "standard"
    {
        return Err(ApiFailure::bad_request(format!(
            "variant: only standard chess is played here, not {variant:?}"
        )));
    }
    for (field, what) in [
        ("position", "arenas from a set-up position"),
        ("password", "private arenas with a password"),
        ("teamBattleByTeam", "team battles"),
        ("description", "arena descriptions"),
        ("conditions.allowList", "allow lists"),
        (
            "conditions.nbRatedGame.nb",
            "a minimum number of rated games",
        ),
    ] {
        if fields.get(field).is_some_and(|value| !value.is_empty()) {
            return Err(ApiFailure::bad_request(format!(
                "{field}: {what} are not available here"
            )));
        }
    }
    Ok(())
}

/// A whole number in field `name`, if given.
fn whole(fields: &Fields, name: &str) -> Result<Option<i64>, ApiFailure> {
    number(fields, name)?
        .map(|value| {
            if value.fract() == 0.0 && value <= i64::MAX as f64 {
                Ok(value as i64)
            } else {
                Err(ApiFailure::bad_request(format!(
                    "{name}: expected a whole number, not {value}"
                )))
            }
        })
        .transpose()
}

/// The arena `fields` (lichess's names, which the web page sends too) ask
/// for at `now`, named `default_name` when they name none. The settings
/// are read, not yet checked ([`ArenaSettings::check`]).
///
/// # Errors
/// `400` for a field that cannot be read or a feature this server lacks.
pub fn settings(
    fields: &Fields,
    default_name: &str,
    now: i64,
) -> Result<ArenaSettings, ApiFailure> {
    refuse_unsupported(fields)?;
    let required = |name: &str| ApiFailure::bad_request(format!("{name}: required"));
    let clock_minutes = number(fields, "clockTime")?.ok_or_else(|| required("clockTime"))?;
    let increment = whole(fields, "clockIncrement")?.ok_or_else(|| required("clockIncrement"))?;
    let minutes = whole(fields, "minutes")?.ok_or_else(|| required("minutes"))?;
    let starts_at = match (whole(fields, "startDate")?, number(fields, "waitMinutes")?) {
        (Some(date), _) => date,
        (None, wait) => {
            let wait = wait.unwrap_or(DEFAULT_WAIT_MINUTES);
            if !(0.0..=60.0).contains(&wait) {
                return Err(ApiFailure::bad_request("waitMinutes: 0 to 60"));
            }
            now + (wait * 60_000.0).round() as i64
        }
    };
    let name = fields
        .get("name")
        .map(|name| name.trim())
        .filter(|name| !name.is_empty())
        .unwrap_or(default_name);
    let club_id = fields
        .get("conditions.teamMember.teamId")
        .filter(|club| !club.is_empty())
        .cloned();
    Ok(ArenaSettings {
        name: name.to_owned(),
        clock_base_s: (clock_minutes * 60.0).round() as i64,
        clock_increment_s: increment,
        minutes,
        starts_at,
        rated: flag(fields, "rated")?.unwrap_or(true),
        berserkable: flag(fields, "berserkable")?.unwrap_or(true),
        streaks: flag(fields, "streakable")?.unwrap_or(true),
        club_id,
        min_rating: whole(fields, "conditions.minRating.rating")?,
        max_rating: whole(fields, "conditions.maxRating.rating")?,
    })
}

/// `POST /api/tournament`.
pub async fn create(
    State(state): State<AppState>,
    user: ApiUser,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiFailure> {
    user.require(&[Scope::TournamentWrite])?;
    let now = now_ms().to_stored();
    let settings = settings(&fields(&headers, &body)?, &user.username, now)?;
    settings
        .check(now)
        .map_err(|bad| ApiFailure::bad_request(bad.0))?;
    state
        .tournament_limits
        .hit(user.player_id, Instant::now())
        .map_err(|retry| ApiFailure::too_many(retry.0))?;
    let row = arenas::create(&state.store, user.player_id, &settings)
        .await
        .map_err(|error| match error {
            CreateError::Settings(bad) => ApiFailure::bad_request(bad.0),
            CreateError::Refused(refused) => refused.into(),
        })?;
    tracing::info!(id = row.id, by = user.username, "arena created");
    Ok(Json(arena_json(&row, &user.username, 0, now)).into_response())
}

/// `GET /api/tournament/{id}`'s query.
#[derive(Debug, Deserialize)]
pub struct InfoQuery {
    page: Option<usize>,
}

/// `GET /api/tournament/{id}`: the arena and a page of its standings.
pub async fn info(
    State(state): State<AppState>,
    Path(id): Path<String>,
    query: Result<Query<InfoQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiFailure> {
    let Query(query) = query.map_err(|error| ApiFailure::bad_request(error.body_text()))?;
    let page = query.page.unwrap_or(1);
    if page == 0 {
        return Err(ApiFailure::bad_request("page: from 1"));
    }
    let view = load(&state, &id).await?;
    Ok(Json(view_json(&view, page, now_ms().to_stored())).into_response())
}

/// `POST /api/tournament/{id}/join`.
pub async fn join(
    State(state): State<AppState>,
    user: ApiUser,
    Path(id): Path<String>,
) -> Result<Response, ApiFailure> {
    user.require(&[Scope::TournamentWrite])?;
    arenas::join(&state.store, &id, user.player_id).await?;
    Ok(ok())
}

/// `POST /api/tournament/{id}/withdraw`.
pub async fn withdraw(
    State(state): State<AppState>,
    user: ApiUser,
    Path(id): Path<String>,
) -> Result<Response, ApiFailure> {
    user.require(&[Scope::TournamentWrite])?;
    arenas::withdraw(&state.store, &id, user.player_id).await?;
    Ok(ok())
}

/// `POST /api/tournament/{id}/terminate`: its organiser ends it now.
pub async fn terminate(
    State(state): State<AppState>,
    user: ApiUser,
    Path(id): Path<String>,
) -> Result<Response, ApiFailure> {
    user.require(&[Scope::TournamentWrite])?;
    state
        .store
        .terminate_tournament(&id, user.player_id, now_ms().to_stored())
        .await?;
    Ok(ok())
}

/// `GET /api/tournament/{id}/results`'s query.
#[derive(Debug, Deserialize)]
pub struct ResultsQuery {
    nb: Option<usize>,
    /// `true` in any letter case (Python clients send `True`), or `1`.
    sheet: Option<String>,
}

/// `GET /api/tournament/{id}/results`: the standings, one player a line.
pub async fn results(
    State(state): State<AppState>,
    Path(id): Path<String>,
    query: Result<Query<ResultsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiFailure> {
    let Query(query) = query.map_err(|error| ApiFailure::bad_request(error.body_text()))?;
    let sheet = query
        .sheet
        .as_deref()
        .is_some_and(|sheet| sheet.eq_ignore_ascii_case("true") || sheet == "1");
    let view = load(&state, &id).await?;
    let lines: Vec<Bytes> = view
        .standings
        .iter()
        .take(query.nb.unwrap_or(MAX_RESULTS))
        .map(|standing| {
            let mut value = json!({
                "rank": standing.rank,
                "score": standing.sheet.total,
                "rating": standing.rating,
                "username": standing.username,
            });
            if let Some(performance) = standing.performance {
                value["performance"] = json!(performance);
            }
            if sheet {
                value["sheet"] = sheet_json(standing);
            }
            line(&value)
        })
        .collect();
    Ok(ndjson(futures_util::stream::iter(lines)))
}

/// `GET /api/tournament/{id}/games`: its finished games in the order they
/// were paired, as PGN or (`Accept: application/x-ndjson`) NDJSON, read
/// from the store a page at a time.
pub async fn games(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiFailure> {
    let view = load(&state, &id).await?;
    let format = Format::accepted(&headers);
    let ids: Vec<uuid::Uuid> = view
        .games
        .iter()
        .filter(|game| game.finished)
        .map(|game| game.game_id)
        .collect();
    let pages: Vec<Vec<uuid::Uuid>> = ids
        .chunks(EXPORT_PAGE as usize)
        .map(<[uuid::Uuid]>::to_vec)
        .collect();
    let store = state.store.clone();
    let chunks = futures_util::stream::unfold(
        (store, pages.into_iter()),
        move |(store, mut pages)| async move {
            let page = pages.next()?;
            let chunk = match store.stored_games(&page).await {
                Ok(games) => format.write(games),
                Err(error) => Err(error),
            };
            let chunk = chunk.map(Bytes::from).map_err(|error| {
                tracing::error!(%error, "a tournament export failed");
                std::io::Error::other(error.to_string())
            });
            Some((chunk, (store, pages)))
        },
    );
    let mut response = Body::from_stream(chunks).into_response();
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    Ok(response)
}

/// `GET /api/team/{id}/arena`'s query.
#[derive(Debug, Deserialize)]
pub struct TeamArenaQuery {
    max: Option<i64>,
}

/// `GET /api/team/{id}/arena`: a club's arenas, running and upcoming
/// first, then the finished ones, latest first.
pub async fn team_arenas(
    State(state): State<AppState>,
    Path(club): Path<String>,
    query: Result<Query<TeamArenaQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiFailure> {
    let Query(query) = query.map_err(|error| ApiFailure::bad_request(error.body_text()))?;
    if state.store.club(&club).await?.is_none() {
        return Err(ApiFailure::new(StatusCode::NOT_FOUND, "No such team"));
    }
    let max = query.max.unwrap_or(TEAM_ARENAS).clamp(0, TEAM_ARENAS);
    let mut rows = Vec::new();
    for listing in [Listing::Running, Listing::Upcoming, Listing::Finished] {
        let left = max - i64::try_from(rows.len()).unwrap_or(max);
        if left <= 0 {
            break;
        }
        rows.extend(state.store.tournaments(listing, Some(&club), left).await?);
    }
    let now = now_ms().to_stored();
    let mut lines = Vec::with_capacity(rows.len());
    for row in rows {
        let (created_by, players) = arenas::listed(&state.store, &row).await?;
        lines.push(line(&arena_json(&row, &created_by, players, now)));
    }
    Ok(ndjson(futures_util::stream::iter(lines)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_lichess_numbers() {
        assert_eq!(status_number(TournamentStatus::Created), 10);
        assert_eq!(status_number(TournamentStatus::Started), 20);
        assert_eq!(status_number(TournamentStatus::Finished), 30);
    }
}
