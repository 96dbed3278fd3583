//! One pairing pass of an arena: which of the waiting players play each
//! other now, and with which colours.
//!
//! - Right after the start, the pool sorted by rank (rating order then) is
//!   paired 1-2, 3-4, ...
//! - Afterwards, a minimum-cost matching over the pool, pairing as many as
//!   it can: the cost of a pair is `|rank gap| x (300 + 1700 x (maxRank -
//!   min rank) / maxRank) + |rating gap|`, so the leaders are paired close
//!   to their rank and the tail may spread. Pools of more than
//!   [`MATCHING_GROUP`] players are cut by rank into groups of that size,
//!   each matched on its own (the blossom algorithm is cubic in the pool).
//! - Never the same two players twice in a row (either one's last opponent
//!   is the other), and never a fourth game in a row with one colour: two
//!   players who both need the other colour are not paired. With only two
//!   players in the whole arena, these give way.
//! - An odd pool leaves its latest arrival out.
//! - Colours: the player with the lower (streak of one colour, whites minus
//!   blacks) gets White; a tie is decided at random.

use rand::Rng;

/// Games in a row with one colour after which a player must get the other.
pub const MAX_COLOR_STREAK: i32 = 3;
/// The largest pool matched in one go.
pub const MATCHING_GROUP: usize = 100;

/// A player's colours so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ColorHistory {
    /// Games in a row with one colour: positive for White, negative for
    /// Black.
    pub streak: i32,
    /// Games with White minus games with Black.
    pub balance: i32,
}

impl ColorHistory {
    /// The history after one more game, with White if `white`.
    pub fn after(self, white: bool) -> ColorHistory {
        let step = if white { 1 } else { -1 };
        ColorHistory {
            streak: if self.streak.signum() == step {
                self.streak + step
            } else {
                step
            },
            balance: self.balance + step,
        }
    }

    /// Whether the next game must be with Black (`Some(false)`) or White
    /// (`Some(true)`).
    fn must_play_white(self) -> Option<bool> {
        if self.streak >= MAX_COLOR_STREAK {
            Some(false)
        } else if self.streak <= -MAX_COLOR_STREAK {
            Some(true)
        } else {
            None
        }
    }
}

/// A player in the pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting<P> {
    pub player: P,
    /// Place in the standings, 1 for the leader.
    pub rank: u32,
    pub rating: i32,
    /// Whom they played last, if anyone.
    pub last_opponent: Option<P>,
    pub colors: ColorHistory,
    /// When they joined the pool (any unit; only the order counts).
    pub arrived_at: u64,
}

/// One game to start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pairing<P> {
    pub white: P,
    pub black: P,
}

/// How the pass should go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// The tournament has just started: pair by rank, 1-2, 3-4, ...
    Start,
    /// Any later pass.
    Running {
        /// The highest rank in the tournament (its number of players).
        max_rank: u32,
        /// Only two players in the whole arena: any pairing will do.
        only_two_players: bool,
    },
}

/// Pairs `pool` for one pass; every player of the pool is in at most one
/// pairing. `rng` decides colour ties.
pub fn pair<P: Clone + PartialEq>(
    pool: &[Waiting<P>],
    pass: Pass,
    rng: &mut impl Rng,
) -> Vec<Pairing<P>> {
    let mut players: Vec<&Waiting<P>> = pool.iter().collect();
    if players.len() % 2 == 1 {
        // The latest arrival sits this pass out.
        let latest = players
            .iter()
            .enumerate()
            .max_by_key(|(_, waiting)| waiting.arrived_at)
            .map(|(index, _)| index);
        if let Some(latest) = latest {
            players.remove(latest);
        }
    }
    players.sort_by_key(|waiting| waiting.rank);
    let pairs: Vec<(&Waiting<P>, &Waiting<P>)> = match pass {
        Pass::Start => players
            .chunks_exact(2)
            .map(|pair| (pair[0], pair[1]))
            .collect(),
        Pass::Running {
            max_rank,
            only_two_players,
        } => players
            .chunks(MATCHING_GROUP)
            .flat_map(|group| matched(group, max_rank, only_two_players))
            .collect(),
    };
    pairs.into_iter().map(|(a, b)| colored(a, b, rng)).collect()
}

/// Whether `a` and `b` may play each other now.
fn allowed<P: PartialEq>(a: &Waiting<P>, b: &Waiting<P>) -> bool {
    let rematch =
        a.last_opponent.as_ref() == Some(&b.player) || b.last_opponent.as_ref() == Some(&a.player);
    let same_forced_color = a
        .colors
        .must_play_white()
        .is_some_and(|white| b.colors.must_play_white() == Some(white));
    !rematch && !same_forced_color
}

/// The cost of pairing `a` with `b`: small for neighbours in the
/// standings, and more so near the top.
pub fn cost<P>(a: &Waiting<P>, b: &Waiting<P>, max_rank: u32) -> i64 {
    let max_rank = i64::from(max_rank.max(1));
    let top = i64::from(a.rank.min(b.rank));
    let rank_factor = 300 + 1700 * (max_rank - top).max(0) / max_rank;
    let rank_gap = (i64::from(a.rank) - i64::from(b.rank)).abs();
    let rating_gap = (i64::from(a.rating) - i64::from(b.rating)).abs();
    rank_gap * rank_factor + rating_gap
}

/// The minimum-cost matching of `group` with as many pairs as possible.
fn matched<'a, P: PartialEq>(
    group: &[&'a Waiting<P>],
    max_rank: u32,
    any_pair: bool,
) -> Vec<(&'a Waiting<P>, &'a Waiting<P>)> {
    let n = group.len();
    if n < 2 {
        return Vec::new();
    }
    let costs: Vec<Option<i64>> = (0..n * n)
        .map(|cell| {
            let (i, j) = (cell / n, cell % n);
            (i != j && (any_pair || allowed(group[i], group[j])))
                .then(|| cost(group[i], group[j], max_rank))
        })
        .collect();
    let highest = costs.iter().flatten().copied().max().unwrap_or(0);
    // Each edge weighs more than any set of fewer edges could gain by being
    // cheaper: the heaviest matching is the largest, and the cheapest of
    // the largest.
    let bonus = (highest + 1) * (i64::try_from(n).unwrap_or(i64::MAX / 4) / 2 + 1);
    let weights: Vec<i64> = costs
        .iter()
        .map(|cost| cost.map_or(0, |cost| bonus - cost))
        .collect();
    let mates = integer_blossom::max_weight_matching(&weights, n);
    mates
        .iter()
        .enumerate()
        .filter_map(|(i, mate)| mate.filter(|&j| i < j).map(|j| (group[i], group[j])))
        .collect()
}

/// Who of `a` and `b` gets White.
fn colored<P: Clone>(a: &Waiting<P>, b: &Waiting<P>, rng: &mut impl Rng) -> Pairing<P> {
    let key = |waiting: &Waiting<P>| (waiting.colors.streak, waiting.colors.balance);
    let a_white = match key(a).cmp(&key(b)) {
        std::cmp::Ordering::Less => true,
        std::cmp::Ordering::Greater => false,
        std::cmp::Ordering::Equal => rng.random_bool(0.5),
    };
    let (white, black) = if a_white { (a, b) } else { (b, a) };
    Pairing {
        white: white.player.clone(),
        black: black.player.clone(),
    }
}
