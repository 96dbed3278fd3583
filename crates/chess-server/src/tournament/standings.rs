//! An arena's standings, computed from its stored games every time (the
//! store keeps no score): each player's finished games, in the order they
//! ended, go through the arena's score sheet, and the table is ranked by
//! score and performance. Every node reads the same rows and so shows the
//! same table.

use std::collections::HashMap;

use chess_rules::Color;
use chess_store::StoreError;
use chess_store::tournaments::{TournamentGame, TournamentPlayer, TournamentRow};
use chess_tournament::arena::{Entry, FinishedGame, Outcome, Sheet, performance, rank};
use serde::Deserialize;
use uuid::Uuid;

/// One line of the standings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Standing {
    /// 1 for the leader.
    pub rank: u32,
    pub player: Uuid,
    pub username: String,
    /// The rating the player joined with.
    pub rating: i64,
    pub sheet: Sheet,
    /// Their performance once they have played three games.
    pub performance: Option<i32>,
    /// Whether they berserked in each counted game, in the sheet's order.
    pub berserks: Vec<bool>,
    pub withdrawn: bool,
}

/// A game's ending as `games.result` stores it.
#[derive(Debug, Deserialize)]
struct StoredResult {
    winner: Option<Color>,
    reason: String,
}

/// A game that counts, from one player's side.
struct Counted {
    game: FinishedGame,
    opponent: Uuid,
}

/// The games of `games` that count: finished, not aborted, and ended by
/// the tournament's end; in the order they ended.
///
/// # Errors
/// A corrupt result or state.
fn counted_games(
    tournament: &TournamentRow,
    games: &[TournamentGame],
) -> Result<HashMap<Uuid, Vec<Counted>>, StoreError> {
    let mut ended: Vec<&TournamentGame> = games
        .iter()
        .filter(|game| game.finished && game.updated_at <= tournament.ends_at)
        .collect();
    ended.sort_by_key(|game| (game.updated_at, game.game_id));
    let mut sheets: HashMap<Uuid, Vec<Counted>> = HashMap::new();
    for game in ended {
        let Some(result) = &game.result else {
            continue;
        };
        let result: StoredResult = serde_json::from_str(result)
            .map_err(|error| StoreError::Corrupt(format!("game result: {error}")))?;
        if result.reason == chess_game::EndReason::Aborted.code() {
            continue;
        }
        let berserk = chess_live::stored::berserk_of(&game.state)
            .map_err(|error| StoreError::Corrupt(error.to_string()))?;
        let plies = u32::try_from(game.plies).unwrap_or(u32::MAX);
        for (color, player, opponent) in [
            (Color::White, game.white, game.black),
            (Color::Black, game.black, game.white),
        ] {
            let outcome = match result.winner {
                None => Outcome::Draw,
                Some(winner) if winner == color => Outcome::Win,
                Some(_) => Outcome::Loss,
            };
            sheets.entry(player).or_default().push(Counted {
                game: FinishedGame {
                    outcome,
                    plies,
                    berserk: *berserk.get(color),
                },
                opponent,
            });
        }
    }
    Ok(sheets)
}

/// The standings of `tournament` from its `players` and `games`, best
/// first. Performance counts each opponent at the rating they joined with.
///
/// # Errors
/// A corrupt stored result or game state.
pub fn standings(
    tournament: &TournamentRow,
    players: &[TournamentPlayer],
    games: &[TournamentGame],
) -> Result<Vec<Standing>, StoreError> {
    let mut counted = counted_games(tournament, games)?;
    let ratings: HashMap<Uuid, i32> = players
        .iter()
        .map(|player| (player.player_id, clamp_rating(player.rating)))
        .collect();
    let mut lines: HashMap<Uuid, Standing> = HashMap::new();
    let mut entries = Vec::with_capacity(players.len());
    for player in players {
        let own = counted.remove(&player.player_id).unwrap_or_default();
        let finished: Vec<FinishedGame> = own.iter().map(|counted| counted.game).collect();
        let sheet = Sheet::of(&finished, tournament.streaks);
        let against: Vec<(Outcome, i32)> = own
            .iter()
            .map(|counted| {
                let opponent = ratings.get(&counted.opponent).copied().unwrap_or(1500);
                (counted.game.outcome, opponent)
            })
            .collect();
        let performance = performance(&against);
        entries.push(Entry {
            player: player.player_id,
            score: sheet.total,
            performance,
            rating: clamp_rating(player.rating),
        });
        lines.insert(
            player.player_id,
            Standing {
                rank: 0,
                player: player.player_id,
                username: player.username.clone(),
                rating: player.rating,
                berserks: finished.iter().map(|game| game.berserk).collect(),
                sheet,
                performance,
                withdrawn: player.withdrawn,
            },
        );
    }
    Ok(rank(entries)
        .into_iter()
        .zip(1..)
        .filter_map(|(entry, place)| {
            let mut line = lines.remove(&entry.player)?;
            line.rank = place;
            Some(line)
        })
        .collect())
}

fn clamp_rating(rating: i64) -> i32 {
    i32::try_from(rating.clamp(0, 4000)).unwrap_or(1500)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tournament::fixtures::{arena, player, state_with_berserk};
    use chess_tournament::arena::Mark;

    fn tournament(ends_at: i64) -> TournamentRow {
        arena(0, ends_at)
    }

    /// A game between players `white` and `black` (ids) that ended at
    /// `ended` with `winner` after `plies`; `berserk` as stored.
    fn game(
        white: u128,
        black: u128,
        winner: Option<&str>,
        plies: i64,
        ended: i64,
        berserk: (bool, bool),
    ) -> TournamentGame {
        let winner = winner.map_or("null".to_owned(), |color| format!("\"{color}\""));
        TournamentGame {
            game_id: Uuid::from_u128(u128::try_from(ended).expect("positive")),
            white: Uuid::from_u128(white),
            black: Uuid::from_u128(black),
            paired_at: ended - 60_000,
            finished: true,
            result: Some(format!(r#"{{"winner":{winner},"reason":"resignation"}}"#)),
            plies,
            updated_at: ended,
            state: state_with_berserk(berserk),
        }
    }

    #[test]
    fn scores_come_from_the_games_in_the_order_they_ended() {
        let t = tournament(1_000_000);
        let players = [player(1, 1500), player(2, 1600)];
        // Ann wins three in a row (the third on fire, berserked after 30
        // plies: 4 + 1), listed out of order.
        let games = [
            game(1, 2, Some("white"), 30, 300_000, (true, false)),
            game(2, 1, Some("black"), 40, 100_000, (false, false)),
            game(1, 2, Some("white"), 40, 200_000, (false, false)),
        ];
        let table = standings(&t, &players, &games).expect("standings");
        assert_eq!(table[0].username, "p1");
        assert_eq!(table[0].rank, 1);
        assert_eq!(table[0].sheet.total, 2 + 2 + 5);
        assert_eq!(table[0].sheet.games[2].mark, Mark::Double);
        assert!(table[0].sheet.games[2].berserk_bonus);
        assert_eq!(table[0].berserks, [false, false, true]);
        assert_eq!(table[0].performance, Some(1600 + 500));
        assert_eq!(
            (table[1].username.as_str(), table[1].sheet.total),
            ("p2", 0)
        );
        assert_eq!(table[1].performance, Some(1500 - 500));
    }

    #[test]
    fn games_running_or_ended_after_the_end_and_aborts_do_not_count() {
        let t = tournament(500_000);
        let players = [player(1, 1500), player(2, 1500)];
        let mut running = game(1, 2, None, 10, 100_000, (false, false));
        running.finished = false;
        running.result = None;
        let mut aborted = game(1, 2, None, 1, 200_000, (false, false));
        aborted.result = Some(r#"{"winner":null,"reason":"aborted"}"#.to_owned());
        let late = game(2, 1, Some("white"), 50, 500_001, (false, false));
        let table = standings(&t, &players, &[running, aborted, late]).expect("standings");
        assert!(table.iter().all(|line| line.sheet.games.is_empty()));
    }

    #[test]
    fn before_any_game_the_rating_orders_the_table() {
        let t = tournament(500_000);
        let players = [player(1, 1500), player(2, 1700), player(3, 1600)];
        let table = standings(&t, &players, &[]).expect("standings");
        let names: Vec<&str> = table.iter().map(|line| line.username.as_str()).collect();
        assert_eq!(names, ["p2", "p3", "p1"]);
        assert_eq!(
            table.iter().map(|line| line.rank).collect::<Vec<_>>(),
            [1, 2, 3]
        );
    }

    #[test]
    fn a_corrupt_result_is_an_error_not_a_zero() {
        let t = tournament(500_000);
        let players = [player(1, 1500), player(2, 1500)];
        let mut broken = game(1, 2, Some("white"), 30, 100_000, (false, false));
        broken.result = Some("{not json".to_owned());
        assert!(standings(&t, &players, &[broken]).is_err());
    }
}
