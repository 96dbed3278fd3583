//! Players' archives of finished games: the `player_games` table, one row
//! per seat of a finished game, which the database keeps itself from
//! `games` (triggers of migration `20261203000600_player_archive`).
//!
//! Pages are keyset pages, newest first: a page asks for the games finished
//! before the last one the previous page showed, `(finished_at, game_id)`,
//! so reading page 500 costs what page 1 does, and a game finished while
//! someone pages neither repeats nor hides an entry. Each filter (speed,
//! outcome, opponent) has an index that starts with the player and ends with
//! the page order, so a page reads only its own rows (the Postgres plans are
//! checked by a test: no scan of `games`).

use std::collections::HashMap;

use chess_live::{GameRow, MoveRow, PlayerRow};
use chess_rules::ByColor;
use uuid::Uuid;

use crate::{GAME_COLUMNS, Result, Store, rows};

/// The result of a finished game from one player's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Win,
    Draw,
    Loss,
    /// Aborted before both players moved: in the archive, in no count.
    Aborted,
    /// A one-screen game: the player held both seats, so it is no win, draw
    /// or loss of theirs. In the archive (its seat is `white`, with no
    /// opponent), in no count.
    BothSides,
}

impl Outcome {
    fn code(self) -> &'static str {
        match self {
            Outcome::Win => "win",
            Outcome::Draw => "draw",
            Outcome::Loss => "loss",
            Outcome::Aborted => "aborted",
            Outcome::BothSides => "both_sides",
        }
    }

    fn parse(code: &str) -> Result<Outcome> {
        match code {
            "win" => Ok(Outcome::Win),
            "draw" => Ok(Outcome::Draw),
            "loss" => Ok(Outcome::Loss),
            "aborted" => Ok(Outcome::Aborted),
            "both_sides" => Ok(Outcome::BothSides),
            other => Err(crate::StoreError::Corrupt(format!(
                "archive outcome {other:?}"
            ))),
        }
    }
}

/// Which of a player's games a page or an export holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArchiveFilter {
    /// Only these speeds (`chess_game::Speed::code`); empty: every speed.
    pub speeds: Vec<&'static str>,
    pub outcome: Option<Outcome>,
    pub opponent: Option<Uuid>,
    /// Only games finished at or after this (unix ms).
    pub since: Option<i64>,
    /// Only games finished at or before this (unix ms).
    pub until: Option<i64>,
    /// Only rated games (`Some(true)`: those that changed the player's
    /// rating) or only casual ones (`Some(false)`); `None`: both. Only the
    /// export uses it: it is a semi-join on `rating_history`, which the
    /// planner may drive from that table and sort, so the archive's pages
    /// (checked to use indexes alone) leave it out.
    pub rated: Option<bool>,
}

/// Where a page starts: strictly older than this entry (its
/// `(finished_at, game_id)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchiveCursor {
    pub finished_at: i64,
    pub game_id: Uuid,
}

/// One finished game in a player's archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchiveEntry {
    pub game_id: Uuid,
    pub finished_at: i64,
    /// The seat the player held: `white` or `black`.
    pub color: String,
    pub speed: String,
    pub outcome: Outcome,
    /// The result's reason code.
    pub reason: String,
    /// JSON of the time control, as stored.
    pub time_control: String,
    pub opponent: Option<PlayerRow>,
}

/// Counts of a player's finished games (aborted and one-screen ones are in
/// none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ArchiveCounts {
    pub games: i64,
    pub wins: i64,
    pub draws: i64,
    pub losses: i64,
}

/// A stored game with what an export writes of it.
#[derive(Clone, Debug)]
pub struct StoredGame {
    pub row: GameRow,
    pub players: ByColor<Option<PlayerRow>>,
    pub moves: Vec<MoveRow>,
}

/// A value bound to a statement built at run time.
enum Param {
    Text(String),
    Int(i64),
}

/// `select ... from player_games` of `player` with `filter`, below `before`,
/// newest first: the statement and its parameters.
fn page_statement(
    columns: &str,
    player: Uuid,
    filter: &ArchiveFilter,
    before: Option<&ArchiveCursor>,
    limit: i64,
) -> (String, Vec<Param>) {
    let mut params = vec![Param::Text(player.to_string())];
    let mut sql = format!(
        "select {columns} from player_games pg left join players p on p.id = pg.opponent_id \
         left join accounts a on a.player_id = pg.opponent_id \
         where pg.player_id = $1"
    );
    let mut next = |sql: &mut String, clause: &str, param: Param| {
        params.push(param);
        let n = params.len();
        sql.push_str(&clause.replace('?', &format!("${n}")));
    };
    if !filter.speeds.is_empty() {
        sql.push_str(" and pg.speed in (");
        for (i, speed) in filter.speeds.iter().enumerate() {
            if i > 0 {
                sql.push_str(", ");
            }
            next(&mut sql, "?", Param::Text((*speed).to_owned()));
        }
        sql.push(')');
    }
    if let Some(outcome) = filter.outcome {
        next(
            &mut sql,
            " and pg.outcome = ?",
            Param::Text(outcome.code().to_owned()),
        );
    }
    if let Some(opponent) = filter.opponent {
        next(
            &mut sql,
            " and pg.opponent_id = ?",
            Param::Text(opponent.to_string()),
        );
    }
    if let Some(rated) = filter.rated {
        // A rated game is one whose ending changed this player's rating: its
        // history row, found by its primary key.
        sql.push_str(if rated {
            " and exists"
        } else {
            " and not exists"
        });
        sql.push_str(
            " (select 1 from rating_history rh \
             where rh.game_id = pg.game_id and rh.player_id = pg.player_id)",
        );
    }
    if let Some(since) = filter.since {
        next(&mut sql, " and pg.finished_at >= ?", Param::Int(since));
    }
    if let Some(until) = filter.until {
        next(&mut sql, " and pg.finished_at <= ?", Param::Int(until));
    }
    if let Some(before) = before {
        next(
            &mut sql,
            " and (pg.finished_at, pg.game_id) < (?",
            Param::Int(before.finished_at),
        );
        next(&mut sql, ", ?)", Param::Text(before.game_id.to_string()));
    }
    sql.push_str(&format!(
        " order by pg.finished_at desc, pg.game_id desc limit {limit}"
    ));
    (sql, params)
}

/// The columns of an archive page.
const ENTRY_COLUMNS: &str = "pg.game_id, pg.finished_at, pg.color, pg.speed, pg.outcome, \
     pg.reason, pg.time_control, p.id as opponent_id, p.kind as opponent_kind, \
     p.name as opponent_name, p.created_at as opponent_created_at, \
     coalesce(a.bot, false) as opponent_bot";

type EntryTuple = (
    String,
    i64,
    String,
    String,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<i64>,
    bool,
);

fn entry(tuple: EntryTuple) -> Result<ArchiveEntry> {
    let (
        game_id,
        finished_at,
        color,
        speed,
        outcome,
        reason,
        time_control,
        id,
        kind,
        name,
        at,
        bot,
    ) = tuple;
    let opponent = match (id, kind, name, at) {
        (Some(id), Some(kind), Some(name), Some(at)) => {
            Some(rows::player_row((id, kind, name, at, bot))?)
        }
        _ => None,
    };
    Ok(ArchiveEntry {
        game_id: rows::uuid(&game_id)?,
        finished_at,
        color,
        speed,
        outcome: Outcome::parse(&outcome)?,
        reason,
        time_control,
        opponent,
    })
}

/// `($first, $first+1, ...)` for `count` values.
fn placeholders(first: usize, count: usize) -> String {
    let list: Vec<String> = (first..first + count).map(|n| format!("${n}")).collect();
    format!("({})", list.join(", "))
}

impl Store {
    /// A page of `player`'s finished games matching `filter`, newest first,
    /// strictly older than `before` (the last entry of the page before).
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn archive_page(
        &self,
        player: Uuid,
        filter: &ArchiveFilter,
        before: Option<&ArchiveCursor>,
        limit: i64,
    ) -> Result<Vec<ArchiveEntry>> {
        let (sql, params) = page_statement(ENTRY_COLUMNS, player, filter, before, limit);
        let rows: Vec<EntryTuple> = with_conn!(self, conn => {
            // Planned at each call, for the table as it is then (as
            // `Store::games_where`).
            let mut query = sqlx::query_as(sqlx::AssertSqlSafe(sql)).persistent(false);
            for param in params {
                query = match param {
                    Param::Text(text) => query.bind(text),
                    Param::Int(int) => query.bind(int),
                };
            }
            query.fetch_all(&mut *conn).await?
        });
        rows.into_iter().map(entry).collect()
    }

    /// The statement of [`Store::archive_page`] and its text parameters, for
    /// a test that reads its query plan (`explain`). Integer parameters are
    /// written into the text.
    pub fn archive_page_sql(
        player: Uuid,
        filter: &ArchiveFilter,
        before: Option<&ArchiveCursor>,
        limit: i64,
    ) -> String {
        let (mut sql, params) = page_statement(ENTRY_COLUMNS, player, filter, before, limit);
        // Highest numbers first, so `$1` does not replace part of `$10`.
        for (i, param) in params.iter().enumerate().rev() {
            let literal = match param {
                Param::Text(text) => format!("'{}'", text.replace('\'', "''")),
                Param::Int(int) => int.to_string(),
            };
            sql = sql.replace(&format!("${}", i + 1), &literal);
        }
        sql
    }

    /// How many games `player` won, drew and lost (aborted and one-screen games not
    /// counted).
    ///
    /// # Errors
    /// The database error.
    pub async fn archive_counts(&self, player: Uuid) -> Result<ArchiveCounts> {
        let rows: Vec<(String, i64)> = with_conn!(self, conn => {
            sqlx::query_as(
                "select outcome, count(*) from player_games where player_id = $1 \
                 and outcome in ('win', 'draw', 'loss') group by outcome",
            )
            .bind(player.to_string())
            .fetch_all(&mut *conn)
            .await?
        });
        let mut counts = ArchiveCounts::default();
        for (outcome, count) in rows {
            match outcome.as_str() {
                "win" => counts.wins = count,
                "draw" => counts.draws = count,
                "loss" => counts.losses = count,
                _ => {}
            }
        }
        counts.games = counts.wins + counts.draws + counts.losses;
        Ok(counts)
    }

    /// The games `ids` with their players and moves, in the order of `ids`
    /// (missing ones left out): three queries for a whole page.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn stored_games(&self, ids: &[Uuid]) -> Result<Vec<StoredGame>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let games_sql = format!(
            "select {GAME_COLUMNS} from games where id in {}",
            placeholders(1, ids.len())
        );
        let moves_sql = format!(
            "select game_id, ply, uci, san, clock_ms, played_at, record from moves \
             where game_id in {} order by game_id, ply",
            placeholders(1, ids.len())
        );
        let games: Vec<GameRow> = with_conn!(self, conn => {
            let mut query = sqlx::query(sqlx::AssertSqlSafe(games_sql)).persistent(false);
            for id in ids {
                query = query.bind(id.to_string());
            }
            let rows = query.fetch_all(&mut *conn).await?;
            rows.iter().map(|row| game_row!(row)).collect::<Result<Vec<_>>>()?
        });
        type MoveTuple = (String, i64, String, String, Option<i64>, i64, String);
        let move_rows: Vec<MoveTuple> = with_conn!(self, conn => {
            let mut query = sqlx::query_as(sqlx::AssertSqlSafe(moves_sql)).persistent(false);
            for id in ids {
                query = query.bind(id.to_string());
            }
            query.fetch_all(&mut *conn).await?
        });
        let mut moves: HashMap<String, Vec<MoveRow>> = HashMap::new();
        for (game_id, ply, uci, san, clock_ms, played_at, record) in move_rows {
            moves.entry(game_id).or_default().push(rows::move_row((
                ply, uci, san, clock_ms, played_at, record,
            ))?);
        }
        let mut player_ids: Vec<String> = games
            .iter()
            .flat_map(|game| [game.white_id, game.black_id])
            .flatten()
            .map(|id| id.to_string())
            .collect();
        player_ids.sort();
        player_ids.dedup();
        let mut players: HashMap<Uuid, PlayerRow> = HashMap::new();
        if !player_ids.is_empty() {
            let players_sql = format!(
                "select p.id, p.kind, p.name, p.created_at, coalesce(a.bot, false) from players p \
                 left join accounts a on a.player_id = p.id where p.id in {}",
                placeholders(1, player_ids.len())
            );
            let rows: Vec<(String, String, String, i64, bool)> = with_conn!(self, conn => {
                let mut query = sqlx::query_as(sqlx::AssertSqlSafe(players_sql)).persistent(false);
                for id in &player_ids {
                    query = query.bind(id.clone());
                }
                query.fetch_all(&mut *conn).await?
            });
            for row in rows {
                let player = rows::player_row(row)?;
                players.insert(player.id, player);
            }
        }
        let mut by_id: HashMap<Uuid, GameRow> =
            games.into_iter().map(|game| (game.id, game)).collect();
        Ok(ids
            .iter()
            .filter_map(|id| by_id.remove(id))
            .map(|row| StoredGame {
                players: ByColor {
                    white: row.white_id.and_then(|id| players.get(&id).cloned()),
                    black: row.black_id.and_then(|id| players.get(&id).cloned()),
                },
                moves: moves.remove(&row.id.to_string()).unwrap_or_default(),
                row,
            })
            .collect())
    }
}
