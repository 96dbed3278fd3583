//! The arena's rules checked from the outside: the score sheet against a
//! second, plain reading of the rules, and the pairing's invariants on
//! random pools.

use chess_tournament::arena::pairing::{MAX_COLOR_STREAK, cost};
use chess_tournament::arena::{
    ColorHistory, FinishedGame, Outcome, Pairing, Pass, Sheet, Waiting, pair,
};
use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::StdRng;

/// The score of game `i` of `games`, read straight from the rules by
/// looking back at the games before it (the sheet folds them instead).
fn plain_score(games: &[FinishedGame], i: usize, streaks: bool) -> u32 {
    let is_win = |game: &FinishedGame| game.outcome == Outcome::Win;
    let on_fire = streaks && i >= 2 && is_win(&games[i - 1]) && is_win(&games[i - 2]);
    let game = games[i];
    match game.outcome {
        Outcome::Loss => 0,
        Outcome::Win => {
            let base = if on_fire { 4 } else { 2 };
            base + u32::from(game.berserk && game.plies >= 14)
        }
        Outcome::Draw => {
            if game.plies < 20 {
                return 0;
            }
            let previous_non_loss = games[..i]
                .iter()
                .rev()
                .find(|earlier| earlier.outcome != Outcome::Loss);
            let after_a_draw =
                previous_non_loss.is_some_and(|earlier| earlier.outcome == Outcome::Draw);
            if !on_fire && after_a_draw && game.plies < 60 {
                0
            } else if on_fire {
                2
            } else {
                1
            }
        }
    }
}

fn finished_game() -> impl Strategy<Value = FinishedGame> {
    (
        prop_oneof![Just(Outcome::Win), Just(Outcome::Draw), Just(Outcome::Loss)],
        // Around every threshold: 14, 20 and 60 plies.
        prop_oneof![0..30_u32, 55..65_u32, 0..200_u32],
        any::<bool>(),
    )
        .prop_map(|(outcome, plies, berserk)| FinishedGame {
            outcome,
            plies,
            berserk,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn the_sheet_agrees_with_a_plain_reading_of_the_rules(
        games in prop::collection::vec(finished_game(), 0..40),
        streaks in any::<bool>(),
    ) {
        let sheet = Sheet::of(&games, streaks);
        let plain: Vec<u32> = (0..games.len()).map(|i| plain_score(&games, i, streaks)).collect();
        let scored: Vec<u32> = sheet.games.iter().map(|score| score.points).collect();
        prop_assert_eq!(&scored, &plain);
        prop_assert_eq!(sheet.total, plain.iter().sum::<u32>());
        let n = games.len();
        let fire = streaks && n >= 2 && games[n - 1].outcome == Outcome::Win
            && games[n - 2].outcome == Outcome::Win;
        prop_assert_eq!(sheet.on_fire, fire);
    }
}

fn waiting(
    player: u32,
    rank: u32,
    rating: i32,
    last_opponent: Option<u32>,
    streak: i32,
) -> Waiting<u32> {
    Waiting {
        player,
        rank,
        rating,
        last_opponent,
        colors: ColorHistory {
            streak,
            balance: streak,
        },
        arrived_at: u64::from(player),
    }
}

fn pool() -> impl Strategy<Value = Vec<Waiting<u32>>> {
    (2..60_usize).prop_flat_map(|size| {
        prop::collection::vec(
            (800..2800_i32, prop::option::of(0..80_u32), -3..=3_i32),
            size,
        )
        .prop_map(|players| {
            players
                .into_iter()
                .enumerate()
                .map(|(index, (rating, last, streak))| {
                    let id = u32::try_from(index).expect("small");
                    waiting(id, id + 1, rating, last.filter(|&last| last != id), streak)
                })
                .collect()
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn a_pass_keeps_the_arena_rules(pool in pool(), seed in any::<u64>()) {
        let mut rng = StdRng::seed_from_u64(seed);
        let max_rank = u32::try_from(pool.len()).expect("small");
        let pass = Pass::Running { max_rank, only_two_players: false };
        let pairings = pair(&pool, pass, &mut rng);
        let of = |id: u32| pool.iter().find(|waiting| waiting.player == id).expect("from the pool");
        let mut seen = std::collections::HashSet::new();
        for pairing in &pairings {
            prop_assert!(seen.insert(pairing.white), "paired once");
            prop_assert!(seen.insert(pairing.black), "paired once");
            let (white, black) = (of(pairing.white), of(pairing.black));
            prop_assert_ne!(white.last_opponent, Some(black.player), "no immediate rematch");
            prop_assert_ne!(black.last_opponent, Some(white.player), "no immediate rematch");
            prop_assert!(white.colors.after(true).streak <= MAX_COLOR_STREAK, "no fourth White");
            prop_assert!(black.colors.after(false).streak >= -MAX_COLOR_STREAK, "no fourth Black");
        }
        if pool.len() % 2 == 1 {
            let latest = pool.iter().map(|waiting| waiting.player).max().expect("players");
            prop_assert!(!seen.contains(&latest), "the latest arrival sits out");
        }
        // Nobody left waiting could have been paired with another one left
        // waiting: the matching is maximal (it is even maximum).
        let left: Vec<&Waiting<u32>> = pool.iter()
            .filter(|waiting| !seen.contains(&waiting.player))
            .filter(|waiting| pool.len() % 2 == 0 || waiting.player != max_rank - 1)
            .collect();
        for (i, a) in left.iter().enumerate() {
            for b in &left[i + 1..] {
                let rematch = a.last_opponent == Some(b.player) || b.last_opponent == Some(a.player);
                let same_forced = (a.colors.streak.abs() >= MAX_COLOR_STREAK)
                    && a.colors.streak == b.colors.streak;
                prop_assert!(rematch || same_forced, "{} and {} could have played", a.player, b.player);
            }
        }
    }
}

/// The pairs of `pairings`, each as its two players in order, in order:
/// who plays whom, whatever the colours.
fn sorted_pairs(pairings: &[Pairing<u32>]) -> Vec<[u32; 2]> {
    let mut pairs: Vec<[u32; 2]> = pairings
        .iter()
        .map(|pairing| {
            let mut pair = [pairing.white, pairing.black];
            pair.sort_unstable();
            pair
        })
        .collect();
    pairs.sort_unstable();
    pairs
}

#[test]
fn the_first_pass_pairs_by_rank() {
    let pool: Vec<Waiting<u32>> = (0..6)
        .map(|id| waiting(id, 6 - id, 1500, None, 0))
        .collect();
    let pairings = pair(&pool, Pass::Start, &mut StdRng::seed_from_u64(1));
    let pairs = sorted_pairs(&pairings);
    // Ranks 1-2 are players 5 and 4, 3-4 are 3 and 2, 5-6 are 1 and 0.
    assert_eq!(pairs, [[0, 1], [2, 3], [4, 5]]);
}

#[test]
fn the_cheapest_pairing_keeps_neighbours_together() {
    // Four players in rank order with ratings close by rank: 1-2 and 3-4
    // costs far less than 1-3 and 2-4 or 1-4 and 2-3.
    let pool: Vec<Waiting<u32>> = (0..4)
        .map(|id| {
            waiting(
                id,
                id + 1,
                2000 - 100 * i32::try_from(id).expect("small"),
                None,
                0,
            )
        })
        .collect();
    let pass = Pass::Running {
        max_rank: 4,
        only_two_players: false,
    };
    let pairings = pair(&pool, pass, &mut StdRng::seed_from_u64(7));
    let pairs = sorted_pairs(&pairings);
    assert_eq!(pairs, [[0, 1], [2, 3]]);
    assert!(cost(&pool[0], &pool[1], 4) < cost(&pool[0], &pool[2], 4));
}

#[test]
fn colours_go_to_who_had_them_less() {
    let pool = vec![waiting(0, 1, 1500, None, 2), waiting(1, 2, 1500, None, -1)];
    let pass = Pass::Running {
        max_rank: 2,
        only_two_players: false,
    };
    let pairings = pair(&pool, pass, &mut StdRng::seed_from_u64(3));
    assert_eq!(pairings.len(), 1);
    assert_eq!((pairings[0].white, pairings[0].black), (1, 0));
}

#[test]
fn two_players_alone_play_again() {
    let pool = vec![
        waiting(0, 1, 1500, Some(1), 0),
        waiting(1, 2, 1500, Some(0), 0),
    ];
    let running = |only_two_players| Pass::Running {
        max_rank: 2,
        only_two_players,
    };
    assert!(pair(&pool, running(false), &mut StdRng::seed_from_u64(3)).is_empty());
    assert_eq!(
        pair(&pool, running(true), &mut StdRng::seed_from_u64(3)).len(),
        1
    );
}
