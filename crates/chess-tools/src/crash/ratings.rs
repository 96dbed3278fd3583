//! The ratings read back with plain SQL (read-only) and checked against the
//! games the tool played: a rated game that ended changed both players'
//! ratings exactly once, whatever the kills; any other game changed none.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::crash::audit::read_only;
use crate::crash::report::Recorder;

/// Checks `rating_history` and `ratings` against `games` (each game's state
/// as a spectator sees it): two history rows, one per seat, for each rated
/// game that ended other than by an abort, none for any other game, and each
/// account's `ratings.games` equal to its history rows of that speed.
pub async fn check(database_url: &str, games: &[Value], recorder: &Recorder) {
    let history_sql = "select cast(game_id as text), cast(player_id as text), \
                       cast(perf as text) from rating_history";
    let ratings_sql = "select cast(player_id as text), cast(perf as text), \
                       cast(games as text) from ratings";
    let tables = match read_only(database_url, &[history_sql, ratings_sql]).await {
        Ok(tables) => tables,
        Err(error) => {
            return recorder.fail("ratings", "-", format!("cannot read the ratings: {error}"));
        }
    };
    let (history, ratings) = (&tables[0], &tables[1]);
    recorder.add("rating_changes", history.len() as u64);

    let mut per_game: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut per_perf: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    for row in history {
        per_game.entry(&row[0]).or_default().push(&row[1]);
        *per_perf.entry((&row[1], &row[2])).or_default() += 1;
    }
    for row in ratings {
        let counted = per_perf.remove(&(row[0].as_str(), row[1].as_str()));
        if row[2].parse::<u64>().ok() != Some(counted.unwrap_or(0)) {
            recorder.fail(
                "ratings",
                "-",
                format!(
                    "account {} counts {} {} games, its history {counted:?}",
                    row[0], row[2], row[1]
                ),
            );
        }
    }
    for ((player, perf), count) in per_perf {
        recorder.fail(
            "ratings",
            "-",
            format!("account {player} has {count} {perf} changes and no rating"),
        );
    }

    for state in games {
        let game_id = state["game_id"].as_str().unwrap_or_default();
        let mut changed: Vec<&str> = per_game.remove(game_id).unwrap_or_default();
        changed.sort_unstable();
        let mut expected: Vec<&str> = if changes_ratings(state) {
            ["white", "black"]
                .iter()
                .filter_map(|color| state["players"][color]["id"].as_str())
                .collect()
        } else {
            Vec::new()
        };
        expected.sort_unstable();
        if changed != expected {
            recorder.fail(
                "ratings",
                game_id,
                format!(
                    "{} game ({}, result {}) changed the ratings of {changed:?}, expected {expected:?}",
                    if state["rated"] == true { "a rated" } else { "a casual" },
                    state["status"],
                    state["result"]
                ),
            );
        }
    }
    for game_id in per_game.keys() {
        recorder.fail(
            "ratings",
            game_id,
            "a game the run did not play changed ratings",
        );
    }
}

/// Whether `state` is a rated game that ended with a result (not an abort).
fn changes_ratings(state: &Value) -> bool {
    state["rated"] == true
        && state["status"] == "finished"
        && state["result"]["reason"] != "aborted"
}
