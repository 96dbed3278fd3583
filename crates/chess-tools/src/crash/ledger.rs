//! The reward ledger read back with plain SQL (read-only), checked against the
//! rules of docs/rewards.md and against the games the tool played.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::crash::audit::{TextRow, read_only};
use crate::crash::report::Recorder;

/// The most an account is paid in one UTC day, in cents.
const DAILY_CAP_CENTS: i64 = 500;
/// What one qualifying win pays, in cents.
const WIN_CENTS: i64 = 100;
/// Results that pay the winner (when both seats are different accounts).
const DECISIVE: &[&str] = &["checkmate", "resignation", "timeout"];

/// One `reward_entries` row.
#[derive(Debug)]
struct Entry {
    game_id: String,
    account_id: String,
    amount_cents: i64,
    day: String,
    status: String,
}

/// Reads the ledger tables: the entries, and each `(account, day, total)`.
///
/// # Errors
/// The database error, or a total that is not a number.
async fn read(database_url: &str) -> Result<(Vec<Entry>, Vec<(String, String, i64)>), String> {
    let entries_sql = "select cast(game_id as text), cast(account_id as text), \
                       cast(amount_cents as text), cast(day as text), \
                       cast(status as text) from reward_entries order by id";
    let days_sql = "select cast(account_id as text), cast(day as text), \
                    cast(total_cents as text) from reward_days";
    let tables = read_only(database_url, &[entries_sql, days_sql])
        .await
        .map_err(|error| error.to_string())?;
    let cents = |text: &str| {
        text.parse::<i64>()
            .map_err(|_| format!("{text:?} is not an amount of cents"))
    };
    let entries = tables[0]
        .iter()
        .map(|row: &TextRow| {
            Ok(Entry {
                game_id: row[0].clone(),
                account_id: row[1].clone(),
                amount_cents: cents(&row[2])?,
                day: row[3].clone(),
                status: row[4].clone(),
            })
        })
        .collect::<Result<_, String>>()?;
    let days = tables[1]
        .iter()
        .map(|row| Ok((row[0].clone(), row[1].clone(), cents(&row[2])?)))
        .collect::<Result<_, String>>()?;
    Ok((entries, days))
}

/// Checks the ledger: every rule of docs/rewards.md, and for each game in
/// `games` (its state as a spectator sees it) exactly one entry, to its
/// winner, when it was a decisive game between two different accounts, and
/// none otherwise.
pub async fn check(database_url: &str, games: &[Value], recorder: &Recorder) {
    let (entries, days) = match read(database_url).await {
        Ok(tables) => tables,
        Err(error) => {
            return recorder.fail("ledger", "-", format!("cannot read the ledger: {error}"));
        }
    };
    recorder.add("ledger_entries", entries.len() as u64);
    let mut per_game: HashMap<&str, Vec<&Entry>> = HashMap::new();
    let mut per_day: BTreeMap<(&str, &str), (i64, u64)> = BTreeMap::new();
    for entry in &entries {
        per_game
            .entry(entry.game_id.as_str())
            .or_default()
            .push(entry);
        let (cents, credited) = per_day
            .entry((entry.account_id.as_str(), entry.day.as_str()))
            .or_default();
        *cents += entry.amount_cents;
        let valid = match entry.status.as_str() {
            "credited" => {
                *credited += 1;
                entry.amount_cents == WIN_CENTS
            }
            "over_cap" => {
                recorder.count("ledger_over_cap");
                entry.amount_cents == 0
            }
            _ => false,
        };
        if !valid {
            recorder.fail(
                "ledger",
                &entry.game_id,
                format!(
                    "entry {} cents with status {}",
                    entry.amount_cents, entry.status
                ),
            );
        }
    }
    for ((account, day), (cents, credited)) in &per_day {
        if *cents > DAILY_CAP_CENTS || *credited > 5 {
            recorder.fail(
                "ledger",
                "-",
                format!("account {account} was paid {cents} cents ({credited} wins) on {day}"),
            );
        }
        let total = days
            .iter()
            .find(|(a, d, _)| a == account && d == day)
            .map(|(_, _, total)| *total);
        if total != Some(*cents) {
            recorder.fail(
                "ledger",
                "-",
                format!(
                    "account {account} on {day}: entries say {cents} cents, reward_days {total:?}"
                ),
            );
        }
    }
    for (game_id, paid) in &per_game {
        if paid.len() > 1 {
            recorder.fail("ledger", game_id, format!("paid {} times", paid.len()));
        }
    }
    for state in games {
        let game_id = state["game_id"].as_str().unwrap_or_default();
        let paid = per_game.get(game_id).map_or(&[][..], Vec::as_slice);
        match winner_to_pay(state) {
            Some(winner) if paid.len() != 1 || paid[0].account_id != winner => recorder.fail(
                "ledger",
                game_id,
                format!(
                    "a decisive win of account {winner} between two accounts has entries {:?}",
                    paid.iter().map(|e| &e.account_id).collect::<Vec<_>>()
                ),
            ),
            None if !paid.is_empty() => recorder.fail(
                "ledger",
                game_id,
                format!(
                    "a game that does not pay ({}) has a ledger entry",
                    state["result"]
                ),
            ),
            _ => {}
        }
    }
}

/// The winner's player id when `state` is a finished decisive game between
/// two different accounts.
fn winner_to_pay(state: &Value) -> Option<String> {
    if state["status"] != "finished" {
        return None;
    }
    let reason = state["result"]["reason"].as_str()?;
    let winner = state["result"]["winner"].as_str()?;
    let players = &state["players"];
    let accounts = ["white", "black"]
        .iter()
        .all(|color| players[color]["kind"] == "account");
    let different = players["white"]["id"] != players["black"]["id"];
    (DECISIVE.contains(&reason) && accounts && different)
        .then(|| players[winner]["id"].as_str().map(str::to_owned))
        .flatten()
}
