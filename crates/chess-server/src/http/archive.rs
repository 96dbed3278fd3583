//! A player's page and archive (`docs/protocol.md`, "Players"): the page
//! `/@/{username}`, its JSON (counts of wins, draws and losses), the archive
//! of finished games in keyset pages with filters, and the export of every
//! game of a player in the shape of lichess's `GET /api/games/user/{username}`
//! (`docs/lichess-api.md`), streamed page by page from the store.
//!
//! Only accounts have a page: a guest's name is not unique, so it names no
//! one. The archive itself is `store::archive`.

use axum::Json;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::header::{ACCEPT, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chess_game::Speed;
use chess_live::view::PlayerView;
use chess_live::{GameSnapshot, PlayerKind, now_ms};
use chess_rules::Color;
use serde::Deserialize;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::http::error::ApiError;
use crate::state::AppState;
use chess_store::accounts::Username;
use chess_store::{ArchiveCursor, ArchiveEntry, ArchiveFilter, Outcome, Store, StoredGame};

/// Entries of an archive page when the client names no limit, and the most
/// it may ask for.
const PAGE: i64 = 20;
const MAX_PAGE: i64 = 100;
/// Games an export reads from the store at a time: what it holds in memory
/// at once, whatever the number of games exported.
pub const EXPORT_PAGE: i64 = 100;

/// The player page, its JSON, the archive and the export.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/@/{username}", get(profile_page))
        .route("/api/players/{username}", get(profile))
        .route("/api/players/{username}/games", get(archive))
        .route("/api/games/user/{username}", get(export))
}

fn player_not_found() -> ApiError {
    ApiError::client(
        StatusCode::NOT_FOUND,
        "player_not_found",
        "no player with that username",
    )
}

fn bad_filter(message: impl Into<String>) -> ApiError {
    ApiError::client(StatusCode::UNPROCESSABLE_ENTITY, "bad_filter", message)
}

/// The player id of the account named `username` (any letter case), or
/// `404 player_not_found`.
///
/// # Errors
/// The `404`; the database error.
pub async fn account_named(state: &AppState, username: &str) -> Result<Uuid, ApiError> {
    Ok(account(state, username)
        .await?
        .ok_or_else(player_not_found)?
        .0)
}

/// The account named `username` (any letter case), as its player id and
/// the username as typed at sign-up; `None` when there is none.
async fn account(state: &AppState, username: &str) -> Result<Option<(Uuid, String)>, ApiError> {
    let Ok(username) = Username::parse(username) else {
        return Ok(None);
    };
    Ok(state
        .store
        .account_by_username(&username)
        .await?
        .map(|account| (account.player_id, account.username)))
}

/// The player page: the page itself for an account, a 404 page otherwise.
async fn profile_page(
    State(state): State<AppState>,
    Path(username): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let found = account(&state, &username).await?.is_some();
    let page = if found {
        "player.html"
    } else {
        "not-found.html"
    };
    let mut response = crate::http::web::page(state.web_dir.as_deref(), page, &headers).await;
    if !found {
        *response.status_mut() = StatusCode::NOT_FOUND;
    }
    Ok(response)
}

/// `GET /api/players/{username}`: who they are and their counts.
async fn profile(
    State(state): State<AppState>,
    Path(username): Path<String>,
) -> Result<Response, ApiError> {
    let (id, username) = account(&state, &username)
        .await?
        .ok_or_else(player_not_found)?;
    let counts = state.store.archive_counts(id).await?;
    Ok(Json(json!({
        "id": id,
        "username": username,
        "url": format!("/@/{username}"),
        "counts": counts,
    }))
    .into_response())
}

/// The archive's query: `speed`, `result`, `vs`, `before`, `limit`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ArchiveQuery {
    speed: Option<String>,
    result: Option<String>,
    vs: Option<String>,
    before: Option<String>,
    limit: Option<i64>,
}

/// A speed code (`blitz`, `ultra_bullet`, ...).
fn parse_speed(code: &str) -> Option<&'static str> {
    [
        Speed::UltraBullet,
        Speed::Bullet,
        Speed::Blitz,
        Speed::Rapid,
        Speed::Classical,
        Speed::Correspondence,
    ]
    .into_iter()
    .map(Speed::code)
    .find(|known| *known == code)
}

/// A page cursor: `{finished_at}.{game_id}` of the last entry seen.
fn cursor_text(entry: &ArchiveEntry) -> String {
    format!("{}.{}", entry.finished_at, entry.game_id)
}

fn parse_cursor(text: &str) -> Option<ArchiveCursor> {
    let (at, id) = text.split_once('.')?;
    Some(ArchiveCursor {
        finished_at: at.parse().ok()?,
        game_id: Uuid::parse_str(id).ok()?,
    })
}

/// The opponent filter: `None` when no account has that name (no game
/// can match).
async fn opponent_filter(state: &AppState, vs: &str) -> Result<Option<Uuid>, ApiError> {
    Ok(account(state, vs).await?.map(|(id, _)| id))
}

fn player_json(player: Option<&chess_live::PlayerRow>) -> Value {
    match player {
        Some(player) => {
            let mut value =
                serde_json::to_value(PlayerView::of(player, None, None)).unwrap_or(Value::Null);
            if player.kind == PlayerKind::Account {
                value["url"] = json!(format!("/@/{}", player.name));
            }
            value
        }
        None => Value::Null,
    }
}

fn entry_json(entry: &ArchiveEntry) -> Value {
    json!({
        "game_id": entry.game_id,
        "url": format!("/game/{}", entry.game_id),
        "finished_at": entry.finished_at,
        "color": entry.color,
        "speed": entry.speed,
        "result": entry.outcome,
        "reason": entry.reason,
        "time_control": serde_json::from_str::<Value>(&entry.time_control).unwrap_or(Value::Null),
        "opponent": player_json(entry.opponent.as_ref()),
    })
}

/// `GET /api/players/{username}/games`: one page of the archive, newest
/// first, and the cursor of the next page (`null` on the last).
async fn archive(
    State(state): State<AppState>,
    Path(username): Path<String>,
    query: Result<Query<ArchiveQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|error| bad_filter(error.body_text()))?;
    let (id, _) = account(&state, &username)
        .await?
        .ok_or_else(player_not_found)?;
    let mut filter = ArchiveFilter::default();
    if let Some(speed) = query.speed.as_deref().filter(|s| !s.is_empty()) {
        let speed = parse_speed(speed).ok_or_else(|| {
            bad_filter(
                "speed is one of ultra_bullet, bullet, blitz, rapid, classical, correspondence",
            )
        })?;
        filter.speeds.push(speed);
    }
    filter.outcome = match query.result.as_deref().filter(|s| !s.is_empty()) {
        None => None,
        Some("win") => Some(Outcome::Win),
        Some("draw") => Some(Outcome::Draw),
        Some("loss") => Some(Outcome::Loss),
        Some(_) => return Err(bad_filter("result is one of win, draw, loss")),
    };
    let limit = query.limit.unwrap_or(PAGE);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(bad_filter(format!("limit is from 1 to {MAX_PAGE}")));
    }
    let before = match query.before.as_deref().filter(|s| !s.is_empty()) {
        None => None,
        Some(text) => Some(parse_cursor(text).ok_or_else(|| {
            ApiError::client(
                StatusCode::UNPROCESSABLE_ENTITY,
                "bad_cursor",
                "before is the next cursor of an earlier page",
            )
        })?),
    };
    if let Some(vs) = query.vs.as_deref().filter(|s| !s.is_empty()) {
        match opponent_filter(&state, vs).await? {
            Some(opponent) => filter.opponent = Some(opponent),
            None => return Ok(Json(json!({ "games": [], "next": null })).into_response()),
        }
    }
    // One more than asked tells whether a next page exists.
    let mut entries = state
        .store
        .archive_page(id, &filter, before.as_ref(), limit + 1)
        .await?;
    let more = entries.len() > usize::try_from(limit).unwrap_or(usize::MAX);
    entries.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    let next = if more {
        entries.last().map(cursor_text)
    } else {
        None
    };
    let games: Vec<Value> = entries.iter().map(entry_json).collect();
    Ok(Json(json!({ "games": games, "next": next })).into_response())
}

/// Lichess's export query (`docs/lichess-api.md`): `max`, `since`, `until`
/// (ms), `perfType`, `vs`, `rated`; the others lichess knows are accepted
/// and ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExportQuery {
    max: Option<u64>,
    since: Option<i64>,
    until: Option<i64>,
    perf_type: Option<String>,
    vs: Option<String>,
    rated: Option<bool>,
}

/// A lichess perf type name as a speed code.
fn lichess_speed(name: &str) -> Option<&'static str> {
    Some(match name {
        "ultraBullet" => Speed::UltraBullet.code(),
        "bullet" => Speed::Bullet.code(),
        "blitz" => Speed::Blitz.code(),
        "rapid" => Speed::Rapid.code(),
        "classical" => Speed::Classical.code(),
        "correspondence" => Speed::Correspondence.code(),
        _ => return None,
    })
}

/// What an export writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Pgn,
    Ndjson,
}

impl Format {
    /// NDJSON when the client accepts `application/x-ndjson`, else PGN (as
    /// lichess's exports choose).
    pub fn accepted(headers: &HeaderMap) -> Format {
        let ndjson = headers
            .get(ACCEPT)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|accept| accept.contains("application/x-ndjson"));
        if ndjson { Format::Ndjson } else { Format::Pgn }
    }

    pub const fn content_type(self) -> &'static str {
        match self {
            Format::Pgn => "application/x-chess-pgn; charset=utf-8",
            Format::Ndjson => "application/x-ndjson",
        }
    }

    /// `games` written one after the other: PGN games separated by a blank
    /// line, or one JSON game per line.
    ///
    /// # Errors
    /// A stored game that does not replay.
    pub fn write(self, games: Vec<StoredGame>) -> Result<String, chess_store::StoreError> {
        let now = now_ms();
        let mut chunk = String::new();
        for stored in games {
            let StoredGame {
                row,
                players,
                moves,
            } = stored;
            let game = GameSnapshot::from_stored(&row, players, &moves, now)
                .map_err(|error| chess_store::StoreError::Corrupt(error.to_string()))?;
            match self {
                Format::Pgn => {
                    chunk.push_str(&crate::http::pgn::export(&game));
                    chunk.push_str("\n\n");
                }
                Format::Ndjson => {
                    chunk.push_str(&lichess_game(&game).to_string());
                    chunk.push('\n');
                }
            }
        }
        Ok(chunk)
    }
}

/// `GET /api/games/user/{username}`: every finished game of the player,
/// newest first, as PGN (the default) or NDJSON (`Accept:
/// application/x-ndjson`), streamed: the store is read [`EXPORT_PAGE`]
/// games at a time, each page written before the next is read, so the
/// memory an export takes does not grow with the number of games.
async fn export(
    State(state): State<AppState>,
    Path(username): Path<String>,
    headers: HeaderMap,
    query: Result<Query<ExportQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|error| bad_filter(error.body_text()))?;
    let (id, _) = account(&state, &username)
        .await?
        .ok_or_else(player_not_found)?;
    let format = Format::accepted(&headers);
    let mut filter = ArchiveFilter {
        since: query.since,
        until: query.until,
        rated: query.rated,
        ..ArchiveFilter::default()
    };
    let mut nothing = false;
    if let Some(perf_types) = query.perf_type.as_deref().filter(|s| !s.is_empty()) {
        for name in perf_types.split(',') {
            filter.speeds.push(
                lichess_speed(name.trim())
                    .ok_or_else(|| bad_filter(format!("unknown perfType {name:?}")))?,
            );
        }
    }
    if let Some(vs) = query.vs.as_deref().filter(|s| !s.is_empty()) {
        match opponent_filter(&state, vs).await? {
            Some(opponent) => filter.opponent = Some(opponent),
            None => nothing = true,
        }
    }
    let remaining = if nothing {
        0
    } else {
        query.max.unwrap_or(u64::MAX)
    };
    let pages = ExportPages {
        store: state.store.clone(),
        player: id,
        filter,
        before: None,
        remaining,
        format,
    };
    let body = Body::from_stream(futures_util::stream::unfold(pages, ExportPages::next));
    let mut response = body.into_response();
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    Ok(response)
}

/// Where an export stands: the filter, the last game written, how many may
/// still be.
struct ExportPages {
    store: Store,
    player: Uuid,
    filter: ArchiveFilter,
    before: Option<ArchiveCursor>,
    remaining: u64,
    format: Format,
}

/// A failure while streaming: the response is cut short, so the client sees
/// an incomplete body rather than a complete-looking partial export.
#[derive(Debug, thiserror::Error)]
#[error("the export failed: {0}")]
struct ExportError(String);

impl ExportPages {
    /// The next page of the export as one chunk; `None` after the last.
    async fn next(mut self) -> Option<(Result<Bytes, ExportError>, ExportPages)> {
        if self.remaining == 0 {
            return None;
        }
        let limit = i64::try_from(self.remaining.min(EXPORT_PAGE as u64)).unwrap_or(EXPORT_PAGE);
        match self.page(limit).await {
            Ok(Some(chunk)) => Some((Ok(chunk), self)),
            Ok(None) => None,
            Err(error) => {
                tracing::error!(%error, player = %self.player, "an export failed");
                self.remaining = 0;
                Some((Err(ExportError(error.to_string())), self))
            }
        }
    }

    async fn page(&mut self, limit: i64) -> Result<Option<Bytes>, chess_store::StoreError> {
        let entries = self
            .store
            .archive_page(self.player, &self.filter, self.before.as_ref(), limit)
            .await?;
        let Some(last) = entries.last() else {
            return Ok(None);
        };
        self.before = Some(ArchiveCursor {
            finished_at: last.finished_at,
            game_id: last.game_id,
        });
        let written = u64::try_from(entries.len()).unwrap_or(u64::MAX);
        self.remaining = if written < u64::try_from(limit).unwrap_or(0) {
            0 // the last page
        } else {
            self.remaining.saturating_sub(written)
        };
        let ids: Vec<Uuid> = entries.iter().map(|entry| entry.game_id).collect();
        let games = self.store.stored_games(&ids).await?;
        Ok(Some(Bytes::from(self.format.write(games)?)))
    }
}

/// A finished game as lichess's game export writes it in NDJSON.
pub fn lichess_game(game: &GameSnapshot) -> Value {
    use crate::lichess::shapes;
    let tc = game.time_control;
    let situation = &game.situation;
    let player = |color: Color| match game.players.get(color) {
        Some(player) if player.kind == PlayerKind::Computer => {
            json!({ "aiLevel": game.computer_level.unwrap_or(1) })
        }
        Some(player) => json!({
            "user": { "name": player.name, "id": player.name.to_lowercase() },
        }),
        None => json!({}),
    };
    let moves: Vec<&str> = game.moves.iter().map(|mv| mv.san.as_str()).collect();
    let mut value = json!({
        "id": game.id,
        "rated": game.rated,
        "variant": "standard",
        "speed": shapes::speed(tc),
        "perf": shapes::speed(tc),
        "createdAt": game.created_at.to_stored(),
        "lastMoveAt": game.moves.last().map_or(game.updated_at.millis(), |mv| mv.at_ms),
        "status": shapes::status(situation.status, situation.result.as_ref()).0,
        "players": { "white": player(Color::White), "black": player(Color::Black) },
        "moves": moves.join(" "),
    });
    if let Some(winner) = situation.result.and_then(|result| result.winner) {
        value["winner"] = json!(shapes::color_name(winner));
    }
    if let (Some(initial), Some(increment)) = (tc.initial_ms(), tc.increment_ms()) {
        value["clock"] = json!({
            "initial": initial / 1000,
            "increment": increment / 1000,
            "totalTime": (initial + 40 * increment) / 1000,
        });
    } else {
        value["daysPerTurn"] = Value::Null;
    }
    let initial_fen = game.initial_position.fen();
    if initial_fen != chess_rules::Position::startpos().fen() {
        value["initialFen"] = json!(initial_fen);
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_bad_ones_are_refused() {
        let id = Uuid::new_v4();
        let cursor = parse_cursor(&format!("1700000000000.{id}")).expect("parses");
        assert_eq!(cursor.finished_at, 1_700_000_000_000);
        assert_eq!(cursor.game_id, id);
        for bad in ["", "12", "x.y", &format!("12.{id}x"), &format!(".{id}")] {
            assert!(parse_cursor(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn speed_names_are_the_game_crate_codes_and_lichess_names() {
        assert_eq!(parse_speed("ultra_bullet"), Some("ultra_bullet"));
        assert_eq!(parse_speed("ultraBullet"), None);
        assert_eq!(lichess_speed("ultraBullet"), Some("ultra_bullet"));
        assert_eq!(lichess_speed("correspondence"), Some("correspondence"));
        assert_eq!(lichess_speed("chess960"), None);
    }
}
