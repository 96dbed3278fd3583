//! What the director does for a running arena at one moment, decided from
//! its stored rows alone (so a node that takes a tournament over decides
//! as the one before it would have): whom to pause for a first move not
//! made, and whom to pair now.

use std::collections::{HashMap, HashSet};

use chess_store::tournaments::{TournamentGame, TournamentPlayer, TournamentRow};
use chess_tournament::arena::{
    ArenaClock, ColorHistory, Pairing, Pass, Waiting, closing_window, pair, pass_due,
};
use rand::Rng;
use uuid::Uuid;

use super::standings::Standing;

/// What to do now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Players who lost a game by not making their first move, with when
    /// that game ended, and who have not been paused for it yet.
    pub pauses: Vec<(Uuid, i64)>,
    /// Games to start.
    pub pairings: Vec<Pairing<Uuid>>,
}

/// The tournament's clock as its rules read it.
pub fn arena_clock(tournament: &TournamentRow) -> ArenaClock {
    ArenaClock {
        base_ms: u64::try_from(tournament.clock_base_s.max(0)).unwrap_or(0) * 1000,
        increment_ms: u64::try_from(tournament.clock_increment_s.max(0)).unwrap_or(0) * 1000,
    }
}

/// A player's games so far, as the pairing needs them.
#[derive(Default)]
struct History {
    colors: ColorHistory,
    last_opponent: Option<Uuid>,
    playing: bool,
    /// When their latest game ended.
    free_since: Option<i64>,
}

fn histories(games: &[TournamentGame]) -> HashMap<Uuid, History> {
    let mut by_pairing: Vec<&TournamentGame> = games.iter().collect();
    by_pairing.sort_by_key(|game| (game.paired_at, game.game_id));
    let mut histories: HashMap<Uuid, History> = HashMap::new();
    for game in by_pairing {
        for (player, opponent, white) in [
            (game.white, game.black, true),
            (game.black, game.white, false),
        ] {
            let history = histories.entry(player).or_default();
            history.colors = history.colors.after(white);
            history.last_opponent = Some(opponent);
            history.playing = !game.finished;
            history.free_since = game.finished.then_some(game.updated_at);
        }
    }
    histories
}

/// The players who lost by not moving first and whose last pause came
/// before that game ended: each such game pauses its loser once.
fn no_start_pauses(players: &[TournamentPlayer], games: &[TournamentGame]) -> Vec<(Uuid, i64)> {
    let last_pause: HashMap<Uuid, Option<i64>> = players
        .iter()
        .map(|player| (player.player_id, player.pauses.last_at))
        .collect();
    let mut latest: HashMap<Uuid, i64> = HashMap::new();
    for game in games.iter().filter(|game| game.finished) {
        let Some(result) = &game.result else { continue };
        let Ok(result) = serde_json::from_str::<serde_json::Value>(result) else {
            continue;
        };
        if result["reason"] != chess_game::EndReason::NoStart.code() {
            continue;
        }
        let loser = match result["winner"].as_str() {
            Some("white") => game.black,
            Some("black") => game.white,
            _ => continue,
        };
        let ended = latest.entry(loser).or_insert(game.updated_at);
        *ended = (*ended).max(game.updated_at);
    }
    let mut pauses: Vec<(Uuid, i64)> = latest
        .into_iter()
        .filter(|(player, ended)| {
            last_pause
                .get(player)
                .is_some_and(|last| last.is_none_or(|last| last < *ended))
        })
        .collect();
    pauses.sort();
    pauses
}

/// How long a player counts as there after they last showed it: the
/// tournament page asks every 2 s and an API client's event stream marks
/// them every 10 s, so this is several misses, not one slow answer.
pub const PRESENT_FOR_MS: i64 = 30_000;

/// Whether `player` is there at `now`: seen lately (the page open, an API
/// client's stream), or lately joined, or lately done with a game (they
/// are on its page, on their way back).
fn present(player: &TournamentPlayer, history: &History, now: i64) -> bool {
    history.playing
        || [Some(player.joined_at), player.seen_at, history.free_since]
            .into_iter()
            .flatten()
            .any(|at| at >= now - PRESENT_FOR_MS)
}

/// What to do for started `tournament` at `now`, given its `players`,
/// `games` and `standings` (from the same rows).
pub fn plan(
    tournament: &TournamentRow,
    players: &[TournamentPlayer],
    games: &[TournamentGame],
    standings: &[Standing],
    now: i64,
    rng: &mut impl Rng,
) -> Plan {
    let pauses = no_start_pauses(players, games);
    let pausing: HashSet<Uuid> = pauses.iter().map(|(player, _)| *player).collect();
    let clock = arena_clock(tournament);
    let closes_at = tournament.ends_at - i64::try_from(closing_window(clock)).unwrap_or(i64::MAX);
    let mut plan = Plan {
        pauses,
        pairings: Vec::new(),
    };
    if now >= closes_at {
        return plan;
    }
    let histories = histories(games);
    let ranks: HashMap<Uuid, u32> = standings
        .iter()
        .map(|line| (line.player, line.rank))
        .collect();
    let no_history = History::default();
    let active: Vec<&TournamentPlayer> = players
        .iter()
        .filter(|player| {
            let history = histories.get(&player.player_id).unwrap_or(&no_history);
            !player.withdrawn
                && !pausing.contains(&player.player_id)
                && player.pauses.until.is_none_or(|until| until <= now)
                && present(player, history, now)
        })
        .collect();
    let pool: Vec<Waiting<Uuid>> = active
        .iter()
        .filter_map(|player| {
            let history = histories.get(&player.player_id).unwrap_or(&no_history);
            if history.playing {
                return None;
            }
            let since = [
                Some(player.joined_at),
                Some(tournament.starts_at),
                history.free_since,
                player.pauses.until,
            ]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or(now);
            Some(Waiting {
                player: player.player_id,
                rank: ranks.get(&player.player_id).copied().unwrap_or(u32::MAX),
                rating: i32::try_from(player.rating).unwrap_or(1500),
                last_opponent: history.last_opponent,
                colors: history.colors,
                arrived_at: u64::try_from(since).unwrap_or(0),
            })
        })
        .collect();
    let waited: Vec<u64> = pool
        .iter()
        .map(|waiting| {
            u64::try_from(now)
                .unwrap_or(0)
                .saturating_sub(waiting.arrived_at)
        })
        .collect();
    let paired_before = !games.is_empty();
    if !pass_due(&waited, active.len(), clock, paired_before) {
        return plan;
    }
    let pass = if paired_before {
        Pass::Running {
            max_rank: u32::try_from(players.len()).unwrap_or(u32::MAX),
            only_two_players: active.len() == 2,
        }
    } else {
        Pass::Start
    };
    plan.pairings = pair(&pool, pass, rng);
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tournament::fixtures::{arena, player, state_with_berserk};
    use crate::tournament::standings::standings;
    use chess_store::tournaments::PauseRecord;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    const START: i64 = 1_000_000;

    fn tournament() -> TournamentRow {
        arena(START, START + 600_000)
    }

    fn game(
        white: u128,
        black: u128,
        paired_at: i64,
        ended: Option<(i64, &str)>,
    ) -> TournamentGame {
        TournamentGame {
            game_id: Uuid::from_u128(u128::try_from(paired_at).expect("positive") * 1000 + white),
            white: Uuid::from_u128(white),
            black: Uuid::from_u128(black),
            paired_at,
            finished: ended.is_some(),
            result: ended.map(|(_, result)| result.to_owned()),
            plies: 30,
            updated_at: ended.map_or(paired_at, |(at, _)| at),
            state: state_with_berserk((false, false)),
        }
    }

    fn plan_at(players: &[TournamentPlayer], games: &[TournamentGame], now: i64) -> Plan {
        let t = tournament();
        let table = standings(&t, players, games).expect("standings");
        plan(
            &t,
            players,
            games,
            &table,
            now,
            &mut StdRng::seed_from_u64(7),
        )
    }

    fn pairs(plan: &Plan) -> Vec<(u128, u128)> {
        let mut pairs: Vec<(u128, u128)> = plan
            .pairings
            .iter()
            .map(|pairing| {
                let (a, b) = (pairing.white.as_u128(), pairing.black.as_u128());
                (a.min(b), a.max(b))
            })
            .collect();
        pairs.sort_unstable();
        pairs
    }

    const WHITE_WINS: &str = r#"{"winner":"white","reason":"resignation"}"#;

    #[test]
    fn the_first_pass_pairs_by_rating_at_once() {
        let players = [
            player(1, 1500),
            player(2, 1900),
            player(3, 1700),
            player(4, 1300),
        ];
        assert_eq!(pairs(&plan_at(&players, &[], START)), [(1, 4), (2, 3)]);
    }

    #[test]
    fn players_in_a_game_wait_and_nobody_plays_the_same_opponent_twice_in_a_row() {
        let players = [
            player(1, 1500),
            player(2, 1500),
            player(3, 1500),
            player(4, 1500),
        ];
        let games = [
            game(1, 2, START, Some((START + 30_000, WHITE_WINS))),
            game(3, 4, START, Some((START + 31_000, WHITE_WINS))),
        ];
        // Two thirds of the field wait at once: paired without the wait.
        let plan = plan_at(&players, &games, START + 31_000);
        let pairs = pairs(&plan);
        assert_eq!(pairs.len(), 2);
        assert!(
            !pairs.contains(&(1, 2)) && !pairs.contains(&(3, 4)),
            "{pairs:?}"
        );

        let running = [
            game(1, 2, START, Some((START + 30_000, WHITE_WINS))),
            game(3, 4, START, None),
        ];
        let plan = plan_at(&players, &running, START + 31_000);
        assert!(
            plan.pairings.is_empty(),
            "two of four free: they wait for the others"
        );
    }

    #[test]
    fn no_pairing_in_the_closing_window() {
        let players = [player(1, 1500), player(2, 1500)];
        // 1+0 closes 30 s before the end.
        let t = tournament();
        assert!(
            plan_at(&players, &[], t.ends_at - 30_000)
                .pairings
                .is_empty()
        );
        assert_eq!(plan_at(&players, &[], t.ends_at - 30_001).pairings.len(), 1);
    }

    #[test]
    fn withdrawn_and_paused_players_are_not_paired() {
        let mut withdrawn = player(3, 1500);
        withdrawn.withdrawn = true;
        let mut paused = player(4, 1500);
        paused.pauses.until = Some(START + 10_000);
        let players = [player(1, 1500), player(2, 1500), withdrawn, paused];
        assert_eq!(pairs(&plan_at(&players, &[], START)), [(1, 2)]);
    }

    #[test]
    fn only_players_seen_lately_are_in_the_pool() {
        let mut gone = player(3, 1500);
        gone.seen_at = Some(START);
        let mut also_gone = player(4, 1500);
        also_gone.seen_at = Some(START);
        let players = [player(1, 1500), player(2, 1500), gone, also_gone];
        let now = START + PRESENT_FOR_MS + 1;
        assert_eq!(
            pairs(&plan_at(&players, &[], now)),
            [(1, 2)],
            "they left the page over 30 s ago"
        );
        assert_eq!(
            pairs(&plan_at(&players, &[], START + PRESENT_FOR_MS)).len(),
            2,
            "seen 30 s ago still counts"
        );
        let mut never_seen = player(5, 1500);
        never_seen.seen_at = None;
        let mut also_never = player(6, 1500);
        also_never.seen_at = None;
        assert!(
            plan_at(&[never_seen, also_never], &[], now)
                .pairings
                .is_empty(),
            "joined long ago and never seen since"
        );
        // A game that just ended counts as being there: the player is on
        // its page, on the way back.
        let mut player_3 = player(3, 1500);
        player_3.seen_at = None;
        let mut player_4 = player(4, 1500);
        player_4.seen_at = None;
        let games = [game(3, 4, START, Some((now - 1_000, WHITE_WINS)))];
        let fresh = plan_at(
            &[player(1, 1500), player(2, 1500), player_3, player_4],
            &games,
            now,
        );
        assert_eq!(pairs(&fresh).len(), 2, "{fresh:?}");
    }

    #[test]
    fn a_no_start_pauses_its_loser_once() {
        let players = [player(1, 1500), player(2, 1500), player(3, 1500)];
        let no_start = r#"{"winner":"black","reason":"no_start"}"#;
        let games = [game(1, 2, START, Some((START + 20_000, no_start)))];
        let plan = plan_at(&players, &games, START + 20_000);
        assert_eq!(plan.pauses, [(Uuid::from_u128(1), START + 20_000)]);
        assert!(
            plan.pairings
                .iter()
                .all(|pairing| pairing.white != Uuid::from_u128(1)
                    && pairing.black != Uuid::from_u128(1)),
            "the loser is not paired while being paused"
        );
        let mut paused = players.clone();
        paused[0].pauses = PauseRecord {
            count: 1,
            last_at: Some(START + 20_000),
            until: Some(START + 30_000),
        };
        assert!(
            plan_at(&paused, &games, START + 21_000).pauses.is_empty(),
            "once"
        );
    }
}
