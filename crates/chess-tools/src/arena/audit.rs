//! The audit at the end of an arena run, from the stored rows (read with
//! plain SQL, not through the server) and what the players saw: the rules
//! of docs/tournaments.md that a whole arena must keep.

use std::collections::HashMap;

use chess_tournament::arena::{
    ArenaClock, FinishedGame, Mark, Outcome, Sheet, closing_window, pairing_wait,
};
use serde_json::Value;

use crate::arena::player::{PlayerLog, SeenGame};
use crate::arena::report::{Report, Waits};
use crate::crash::audit::{TextRow, read_only};

/// The director's tick: a pass that is due runs at the next one.
const DIRECTOR_TICK_MS: i64 = 1_000;
/// The share of waits that must be within the documented wait.
pub const WAITS_WITHIN: f64 = 0.95;

/// A time the arena's pairing was interrupted: a node killed at `from`,
/// pairings possible again by `to` (unix ms).
#[derive(Clone, Copy, Debug)]
pub struct Outage {
    pub from: i64,
    pub to: i64,
}

impl Outage {
    fn overlaps(&self, from: i64, to: i64) -> bool {
        from < self.to && to > self.from
    }
}

// The run's database holds one tournament: the queries need no id.
const TOURNAMENT: &str = "select cast(starts_at as text), cast(ends_at as text), \
     cast(clock_base_s as text), cast(clock_increment_s as text), cast(streaks as text), status \
     from tournaments";
const PLAYERS: &str =
    "select cast(player_id as text), cast(joined_at as text) from tournament_players";
const GAMES: &str = "select cast(p.game_id as text), cast(p.white_id as text), \
     cast(p.black_id as text), cast(p.paired_at as text), g.status, \
     coalesce(cast(g.result as text), ''), cast(g.updated_at as text), \
     cast((select count(*) from moves m where m.game_id = g.id) as text) \
     from tournament_pairings p join games g on g.id = p.game_id \
     order by p.paired_at, p.game_id";

/// The tournament's row.
#[derive(Clone, Debug)]
pub struct StoredArena {
    pub starts_at: i64,
    pub ends_at: i64,
    pub clock: ArenaClock,
    pub streaks: bool,
    pub status: String,
}

/// One pairing and its game.
#[derive(Clone, Debug)]
struct StoredGame {
    id: String,
    white: String,
    black: String,
    paired_at: i64,
    finished: bool,
    result: Value,
    /// When it ended, once finished.
    updated_at: i64,
    plies: u64,
}

impl StoredGame {
    fn opponent_of(&self, player: &str) -> &str {
        if self.white == player {
            &self.black
        } else {
            &self.white
        }
    }

    /// The result from `player`'s side.
    fn outcome_for(&self, player: &str) -> Outcome {
        let color = if self.white == player {
            "white"
        } else {
            "black"
        };
        match self.result["winner"].as_str() {
            None => Outcome::Draw,
            Some(winner) if winner == color => Outcome::Win,
            Some(_) => Outcome::Loss,
        }
    }

    /// Whether the game counts in the standings: over by the end, not aborted.
    fn counts(&self, arena: &StoredArena) -> bool {
        self.finished && self.updated_at <= arena.ends_at && self.result["reason"] != "aborted"
    }
}

fn number(row: &TextRow, column: usize) -> i64 {
    row.get(column).and_then(|n| n.parse().ok()).unwrap_or(0)
}

fn text(row: &TextRow, column: usize) -> String {
    row.get(column).cloned().unwrap_or_default()
}

/// Reads the arena's rows.
///
/// # Errors
/// The database error, or a tournament that is not there.
async fn read(
    database_url: &str,
) -> Result<(StoredArena, HashMap<String, i64>, Vec<StoredGame>), String> {
    let mut results = read_only(database_url, &[TOURNAMENT, PLAYERS, GAMES])
        .await
        .map_err(|error| error.to_string())?;
    let games = results.pop().unwrap_or_default();
    let players = results.pop().unwrap_or_default();
    let tournament = results
        .pop()
        .and_then(|rows| rows.into_iter().next())
        .ok_or("no tournament row")?;
    let seconds = |column| u64::try_from(number(&tournament, column)).unwrap_or(0) * 1000;
    let arena = StoredArena {
        starts_at: number(&tournament, 0),
        ends_at: number(&tournament, 1),
        clock: ArenaClock {
            base_ms: seconds(2),
            increment_ms: seconds(3),
        },
        streaks: matches!(text(&tournament, 4).as_str(), "1" | "true"),
        status: text(&tournament, 5),
    };
    let joined = players
        .iter()
        .map(|row| (text(row, 0), number(row, 1)))
        .collect();
    let games = games
        .iter()
        .map(|row| StoredGame {
            id: text(row, 0),
            white: text(row, 1),
            black: text(row, 2),
            paired_at: number(row, 3),
            finished: text(row, 4) == "finished",
            result: serde_json::from_str(&text(row, 5)).unwrap_or(Value::Null),
            updated_at: number(row, 6),
            plies: u64::try_from(number(row, 7)).unwrap_or(0),
        })
        .collect();
    Ok((arena, joined, games))
}

/// Audits the run: the stored rows of `database_url`, what the players
/// saw (`logs`), the standings each node showed (`standings`, one list
/// of lines per node), given the `outages`. Findings and figures go into
/// `report`; the stored arena is returned.
///
/// # Errors
/// When the rows cannot be read.
pub async fn check(
    database_url: &str,
    logs: &[PlayerLog],
    standings: &[Vec<Value>],
    outages: &[Outage],
    report: &mut Report,
) -> Result<StoredArena, String> {
    let (arena, joined, games) = read(database_url).await?;
    let by_player = games_by_player(&games);
    report.add("players", joined.len() as u64);
    report.add("pairings", games.len() as u64);
    report.add(
        "games_counted",
        games.iter().filter(|game| game.counts(&arena)).count() as u64,
    );
    for outage in outages {
        report.add(
            "games_across_a_kill",
            games
                .iter()
                .filter(|game| game.paired_at < outage.from && game.updated_at > outage.from)
                .count() as u64,
        );
        let after = games
            .iter()
            .filter(|game| game.paired_at > outage.to)
            .count();
        report.add("pairings_after_a_kill", after as u64);
        let closes_at = closes_at(&arena);
        if after == 0 && outage.to + pairing_wait_ms(&arena) < closes_at {
            report.fail(
                "stopped_after_kill",
                format!("no pairing between {} and the closing window", outage.to),
            );
        }
    }
    check_pairings(&arena, &games, &by_player, report);
    let seen = check_seen(&games, logs, report);
    check_standings(&arena, &by_player, &seen, logs, standings, report);
    report.waits = waits(&arena, &joined, &by_player, outages);
    if report.waits.share_within() < WAITS_WITHIN {
        report.fail(
            "waits",
            format!(
                "{:.1}% of {} waits within {} ms",
                report.waits.share_within() * 100.0,
                report.waits.counted.len(),
                report.waits.limit_ms
            ),
        );
    }
    Ok(arena)
}

/// Each player's games, in the order they were paired (as `games` are).
fn games_by_player(games: &[StoredGame]) -> HashMap<&str, Vec<&StoredGame>> {
    let mut by_player: HashMap<&str, Vec<&StoredGame>> = HashMap::new();
    for game in games {
        by_player.entry(&game.white).or_default().push(game);
        by_player.entry(&game.black).or_default().push(game);
    }
    by_player
}

fn closes_at(arena: &StoredArena) -> i64 {
    arena.ends_at - i64::try_from(closing_window(arena.clock)).unwrap_or(i64::MAX)
}

fn pairing_wait_ms(arena: &StoredArena) -> i64 {
    i64::try_from(pairing_wait(arena.clock)).unwrap_or(i64::MAX)
}

/// Each player's games one after the other: never two at once, never the
/// same opponent twice in a row, never four of one colour in a row, and
/// every pairing within the arena's pairing time.
fn check_pairings(
    arena: &StoredArena,
    games: &[StoredGame],
    by_player: &HashMap<&str, Vec<&StoredGame>>,
    report: &mut Report,
) {
    let closes_at = closes_at(arena);
    for game in games {
        if game.paired_at < arena.starts_at || game.paired_at >= closes_at {
            report.fail(
                "closing_window",
                format!(
                    "game {} paired at {}: pairings run from {} to {closes_at}",
                    game.id, game.paired_at, arena.starts_at
                ),
            );
        }
        if !game.finished {
            report.fail(
                "unfinished",
                format!("game {} is still {:?}", game.id, game.result),
            );
        }
    }
    let field = by_player.len();
    for (player, own) in by_player {
        for pair in own.windows(2) {
            let (before, after) = (pair[0], pair[1]);
            if !before.finished || after.paired_at < before.updated_at {
                report.fail(
                    "two_games_at_once",
                    format!(
                        "{player} paired into {} at {} while {} ran (ended {})",
                        after.id, after.paired_at, before.id, before.updated_at
                    ),
                );
            }
            if field > 2 && before.opponent_of(player) == after.opponent_of(player) {
                report.fail(
                    "immediate_rematch",
                    format!(
                        "{player} met {} in {} and {}",
                        after.opponent_of(player),
                        before.id,
                        after.id
                    ),
                );
            }
        }
        for four in own.windows(4) {
            let whites = four.iter().filter(|game| game.white == *player).count();
            if whites == 0 || whites == 4 {
                report.fail(
                    "colour_run",
                    format!(
                        "{player} had one colour in {} games from {}",
                        four.len(),
                        four[0].id
                    ),
                );
            }
        }
    }
}

/// Every pairing was played by both its players, and what they saw at
/// the end is what is stored. The players' view of each game, by game and
/// colour.
fn check_seen<'a>(
    games: &[StoredGame],
    logs: &'a [PlayerLog],
    report: &mut Report,
) -> HashMap<(String, String), &'a SeenGame> {
    let mut seen: HashMap<(String, String), &SeenGame> = HashMap::new();
    for log in logs {
        for game in &log.games {
            seen.insert((game.game_id.clone(), log.player_id.clone()), game);
        }
        for problem in &log.problems {
            report.fail("player", format!("{}: {problem}", log.username));
        }
    }
    for game in games {
        for player in [&game.white, &game.black] {
            let Some(view) = seen.get(&(game.id.clone(), player.clone())) else {
                report.fail(
                    "unplayed",
                    format!("{player} never played their game {}", game.id),
                );
                continue;
            };
            let same_result = view.result["winner"] == game.result["winner"]
                && view.result["reason"] == game.result["reason"];
            if game.finished && (!same_result || view.plies != game.plies) {
                report.fail(
                    "result_changed",
                    format!(
                        "game {}: {player} saw {} after {} plies, stored {} after {}",
                        game.id, view.result, view.plies, game.result, game.plies
                    ),
                );
            }
        }
    }
    seen
}

/// The standings every node showed: each player's sheet is the score sheet
/// of their counted games in the order they ended (the arena crate's
/// `Sheet`, itself checked against a second reading of the rules), and all
/// nodes show the same lines.
fn check_standings(
    arena: &StoredArena,
    by_player: &HashMap<&str, Vec<&StoredGame>>,
    seen: &HashMap<(String, String), &SeenGame>,
    logs: &[PlayerLog],
    standings: &[Vec<Value>],
    report: &mut Report,
) {
    let id_of: HashMap<&str, &str> = logs
        .iter()
        .map(|log| (log.username.as_str(), log.player_id.as_str()))
        .collect();
    for (node, lines) in standings.iter().enumerate() {
        if node > 0 && *lines != standings[0] {
            report.fail(
                "nodes_disagree",
                format!("node {node}'s standings differ from node 0's"),
            );
        }
        if lines.len() != logs.len() {
            report.fail(
                "scored_wrong",
                format!(
                    "node {node} lists {} players of {}",
                    lines.len(),
                    logs.len()
                ),
            );
        }
        for line in lines {
            let username = line["username"].as_str().unwrap_or_default();
            let Some(player) = id_of.get(username) else {
                report.fail(
                    "scored_wrong",
                    format!("node {node} lists a stranger {username}"),
                );
                continue;
            };
            let mut counted: Vec<&&StoredGame> = by_player
                .get(player)
                .map(|games| games.iter().filter(|game| game.counts(arena)).collect())
                .unwrap_or_default();
            counted.sort_by(|a, b| (a.updated_at, &a.id).cmp(&(b.updated_at, &b.id)));
            let finished: Vec<FinishedGame> = counted
                .iter()
                .map(|game| FinishedGame {
                    outcome: game.outcome_for(player),
                    plies: u32::try_from(game.plies).unwrap_or(u32::MAX),
                    berserk: seen
                        .get(&(game.id.clone(), (*player).to_owned()))
                        .is_some_and(|view| view.berserked),
                })
                .collect();
            let sheet = Sheet::of(&finished, arena.streaks);
            let shown: Vec<u64> = line["games"]
                .as_array()
                .map(|games| {
                    games
                        .iter()
                        .filter_map(|game| game["points"].as_u64())
                        .collect()
                })
                .unwrap_or_default();
            let expected: Vec<u64> = sheet
                .games
                .iter()
                .map(|game| u64::from(game.points))
                .collect();
            if line["score"].as_u64() != Some(u64::from(sheet.total)) || shown != expected {
                report.fail(
                    "scored_wrong",
                    format!(
                        "node {node}: {username} shown {} {shown:?}, stored games make {} {expected:?}",
                        line["score"], sheet.total
                    ),
                );
            }
            if node == 0 {
                report.add("points", u64::from(sheet.total));
                report.add(
                    "berserked_games",
                    finished.iter().filter(|game| game.berserk).count() as u64,
                );
                let marked =
                    |mark: Mark| sheet.games.iter().filter(|game| game.mark == mark).count();
                report.add("games_doubled_on_fire", marked(Mark::Double) as u64);
                report.add("draws_scored_zero", marked(Mark::Null) as u64);
            }
        }
    }
}

/// Each wait from a player's becoming free (joining, the start, the end
/// of their game) to their next pairing; a wait still open when pairings
/// closed counts when it was already longer than the limit. Waits that
/// overlap an outage are left out.
fn waits(
    arena: &StoredArena,
    joined: &HashMap<String, i64>,
    by_player: &HashMap<&str, Vec<&StoredGame>>,
    outages: &[Outage],
) -> Waits {
    let limit_ms = pairing_wait_ms(arena) + DIRECTOR_TICK_MS;
    let closes_at = closes_at(arena);
    let mut figures = Waits {
        limit_ms,
        ..Waits::default()
    };
    let count = |from: i64, to: i64, figures: &mut Waits| {
        if outages.iter().any(|outage| outage.overlaps(from, to)) {
            figures.during_outage.push(to - from);
        } else {
            figures.counted.push(to - from);
        }
    };
    for (player, joined_at) in joined {
        let own = by_player.get(player.as_str()).cloned().unwrap_or_default();
        let mut free_since = (*joined_at).max(arena.starts_at);
        for game in &own {
            count(free_since, game.paired_at, &mut figures);
            free_since = game.updated_at;
        }
        let open = closes_at - free_since;
        if open > limit_ms {
            count(free_since, closes_at, &mut figures);
        }
    }
    figures
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1+0 arena from 0 to 120 s: pairings close at 90 s, the limit of a
    /// wait is 16 s.
    fn arena() -> StoredArena {
        StoredArena {
            starts_at: 0,
            ends_at: 120_000,
            clock: ArenaClock {
                base_ms: 60_000,
                increment_ms: 0,
            },
            streaks: true,
            status: "finished".to_owned(),
        }
    }

    fn game(id: &str, white: &str, black: &str, paired_at: i64, ended_at: i64) -> StoredGame {
        StoredGame {
            id: id.to_owned(),
            white: white.to_owned(),
            black: black.to_owned(),
            paired_at,
            finished: true,
            result: serde_json::json!({ "winner": "white", "reason": "resignation" }),
            updated_at: ended_at,
            plies: 30,
        }
    }

    fn pairing_findings(games: &[StoredGame]) -> Vec<&'static str> {
        let mut report = Report::new(String::new());
        check_pairings(&arena(), games, &games_by_player(games), &mut report);
        let mut checks: Vec<&'static str> = report.findings.iter().map(|f| f.check).collect();
        checks.sort_unstable();
        checks.dedup();
        checks
    }

    #[test]
    fn good_pairings_pass() {
        let games = [
            game("1", "a", "b", 1_000, 10_000),
            game("2", "c", "d", 1_000, 12_000),
            game("3", "b", "c", 13_000, 20_000),
            game("4", "d", "a", 13_000, 25_000),
        ];
        assert!(pairing_findings(&games).is_empty());
    }

    #[test]
    fn each_broken_rule_is_found() {
        let rematch = [
            game("1", "a", "b", 1_000, 10_000),
            game("2", "b", "a", 12_000, 20_000),
            game("3", "c", "d", 1_000, 10_000),
        ];
        assert_eq!(pairing_findings(&rematch), ["immediate_rematch"]);
        let overlap = [
            game("1", "a", "b", 1_000, 10_000),
            game("2", "a", "c", 9_000, 20_000),
        ];
        assert_eq!(pairing_findings(&overlap), ["two_games_at_once"]);
        let late = [game("1", "a", "b", 90_000, 100_000)];
        assert_eq!(pairing_findings(&late), ["closing_window"]);
        let early = [game("1", "a", "b", -1, 100)];
        assert_eq!(pairing_findings(&early), ["closing_window"]);
        let whites: Vec<StoredGame> = (0..4)
            .map(|n| {
                let opponent = ["b", "c", "d", "e"][n];
                let at = 1_000 + 20_000 * n as i64;
                game(&n.to_string(), "a", opponent, at, at + 10_000)
            })
            .collect();
        assert_eq!(pairing_findings(&whites), ["colour_run"]);
        let mut running = game("1", "a", "b", 1_000, 2_000);
        running.finished = false;
        assert_eq!(pairing_findings(&[running]), ["unfinished"]);
    }

    #[test]
    fn waits_run_from_becoming_free_to_the_next_pairing() {
        let games = [
            game("1", "a", "b", 2_000, 10_000),
            game("2", "a", "c", 30_000, 40_000),
        ];
        let joined: HashMap<String, i64> = [("a", 0), ("b", 0), ("c", 5_000)]
            .into_iter()
            .map(|(player, at)| (player.to_owned(), at))
            .collect();
        let waits = waits(&arena(), &joined, &games_by_player(&games), &[]);
        assert_eq!(waits.limit_ms, 16_000);
        let mut counted = waits.counted.clone();
        counted.sort_unstable();
        // a: 2 s then 20 s; b: 2 s, then free from 10 s to the close at
        // 90 s (open, over the limit); c: 25 s; a's and c's open waits
        // from 40 s to 90 s.
        assert_eq!(
            counted,
            [2_000, 2_000, 20_000, 25_000, 50_000, 50_000, 80_000]
        );
        assert_eq!(waits.within(), 2);
        // A wait across an outage is left out, not counted.
        let outage = Outage {
            from: 15_000,
            to: 16_000,
        };
        let waits = waits_with(&games, &joined, &[outage]);
        assert_eq!(waits.during_outage.len(), 3);
        assert_eq!(waits.counted.len(), 4);
    }

    #[test]
    fn standings_must_follow_from_the_stored_games_on_every_node() {
        // a beats b, then a beats c: 2 + 2 for a.
        let games = [
            game("1", "a", "b", 1_000, 10_000),
            game("2", "a", "c", 12_000, 20_000),
        ];
        let logs: Vec<PlayerLog> = ["a", "b", "c"]
            .into_iter()
            .map(|player| PlayerLog {
                player_id: player.to_owned(),
                username: player.to_uppercase(),
                games: Vec::new(),
                problems: Vec::new(),
            })
            .collect();
        let line = |username: &str, points: &[u64]| {
            let games: Vec<Value> = points
                .iter()
                .map(|points| serde_json::json!({ "points": points }))
                .collect();
            serde_json::json!({
                "username": username,
                "score": points.iter().sum::<u64>(),
                "games": games,
            })
        };
        let right = vec![line("A", &[2, 2]), line("B", &[0]), line("C", &[0])];
        let findings = |standings: &[Vec<Value>]| {
            let mut report = Report::new(String::new());
            let seen = HashMap::new();
            check_standings(
                &arena(),
                &games_by_player(&games),
                &seen,
                &logs,
                standings,
                &mut report,
            );
            report.findings.iter().map(|f| f.check).collect::<Vec<_>>()
        };
        assert!(findings(&[right.clone(), right.clone()]).is_empty());
        // One result counted twice on the second node.
        let twice = vec![line("A", &[2, 2, 2]), line("B", &[0]), line("C", &[0])];
        assert_eq!(
            findings(&[right.clone(), twice]),
            ["nodes_disagree", "scored_wrong"]
        );
        // A result lost everywhere.
        let lost = vec![line("A", &[2]), line("B", &[0]), line("C", &[0])];
        assert_eq!(findings(&[lost]), ["scored_wrong"]);
    }

    fn waits_with(
        games: &[StoredGame],
        joined: &HashMap<String, i64>,
        outages: &[Outage],
    ) -> Waits {
        waits(&arena(), joined, &games_by_player(games), outages)
    }
}
