//! One pairing bracket (C.04.3 A.3, A.10, B): its players, the criteria as
//! tiers of an edge weight, and the search for the first best candidate.
//!
//! The rules describe a generate-and-test search: candidates come in a
//! fixed order (transpositions of S2, then exchanges between S1 and S2, and
//! in a heterogeneous bracket the MDP-pairing before the remainder) and the
//! first one that is best by the quality criteria wins. Here the same
//! answer is found with a few maximum-weight matchings instead:
//!
//! 1. Every criterion C.4-C.19 is a tier of the edge weight, the higher
//!    criterion always outweighing every lower one summed over a whole
//!    matching, so a heaviest matching is a best candidate. What a rule
//!    counts about unpaired players (a downfloater's score difference in
//!    the PSD, a repeated downfloat) is moved onto the edges as a credit for
//!    pairing them, because sum-over-unpaired = sum-over-all minus
//!    sum-over-paired.
//! 2. Below the criteria come tiers for the order in which the rules
//!    generate candidates. For a matching, the exchange that generates it
//!    first puts the higher-ranked player of each pair in S1, so the
//!    exchange's rank (D.2/D.3: fewest exchanged players, smallest
//!    difference of BSN sums, then the highest and lowest BSNs moved) is a
//!    sum over pairs too. The transposition order (the lexicographic order of
//!    the S1 players' opponents) is not a sum, so it is fixed a window of S1
//!    players at a time: one tier per S1 position in the window.
//! 3. A heterogeneous bracket is settled MDP-pairing first (which MDPs play,
//!    then against whom), then the remainder as a homogeneous bracket.

use super::colour::{self, Colour, Strength};
use super::dutch::{Entrant, Float};
use super::weight::{I64_BITS, I128_BITS, I512, I512_BITS};
use integer_blossom::Weight;

/// How the bracket stands in the round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A bracket with scoregroups below it: C.7 looks at the next one.
    Normal,
    /// The penultimate pairing bracket (A.9): its downfloaters must allow
    /// the round to be completed (C.4); `extra` are all the lower players.
    Completion,
    /// The last bracket, collapsed or not: everyone is paired but the one
    /// who gets the pairing-allocated bye.
    Last,
}

/// A bracket ready to be paired.
pub(crate) struct Bracket<'a> {
    pub ents: &'a [Entrant],
    /// Entrant indices in bracket order: the MDPs first, each part by score
    /// then pairing number.
    pub members: Vec<usize>,
    pub mdp_count: usize,
    /// Normal: the next scoregroup (for C.7). Completion: all lower players.
    pub extra: Vec<usize>,
    pub mode: Mode,
    pub initial: Colour,
    /// The lowest score of the round (the bye's score difference, A.8).
    pub round_lowest: u32,
}

/// What pairing a bracket produced.
#[derive(Debug, Default)]
pub(crate) struct BracketPairing {
    /// Entrant indices, the higher-ranked first.
    pub pairs: Vec<(usize, usize)>,
    /// Members not paired in the bracket, in bracket order.
    pub floaters: Vec<usize>,
    /// The member who gets the pairing-allocated bye (last bracket only).
    pub bye: Option<usize>,
}

/// Vertex kinds of a bracket's matching graph.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Member,
    Extra,
    Bye,
}

/// The tier values of one edge, highest tier first.
type Tiers = Vec<i64>;

/// The candidate-order tiers of one matching phase.
enum Order {
    None,
    /// MDP-pairing: which MDPs play (D.3), then the window's opponents.
    Mdp {
        s1: usize,
        window: Vec<usize>,
    },
    /// A homogeneous remainder: the residents (vertices, bracket order),
    /// S1's size, and the window of S1 players whose opponents are fixed.
    Homogeneous {
        rank: Vec<Option<usize>>,
        count: usize,
        s1: usize,
        window: Vec<usize>,
    },
}

struct Layout {
    completion: bool,
    c6_levels: Vec<u32>,
    c7: bool,
    c7_levels: Vec<u32>,
    next_low: u32,
    bracket_low: u32,
    max_sd: i64,
}

impl Bracket<'_> {
    fn vertex_count(&self) -> usize {
        self.members.len() + self.extra.len() + usize::from(self.has_bye())
    }

    fn has_bye(&self) -> bool {
        match self.mode {
            Mode::Normal => false,
            Mode::Completion => (self.members.len() + self.extra.len()) % 2 == 1,
            Mode::Last => self.members.len() % 2 == 1,
        }
    }

    fn kind(&self, v: usize) -> Kind {
        if v < self.members.len() {
            Kind::Member
        } else if v < self.members.len() + self.extra.len() {
            Kind::Extra
        } else {
            Kind::Bye
        }
    }

    fn ent(&self, v: usize) -> &Entrant {
        match self.kind(v) {
            Kind::Member => &self.ents[self.members[v]],
            Kind::Extra => &self.ents[self.extra[v - self.members.len()]],
            Kind::Bye => unreachable!("the bye is no player"),
        }
    }

    fn is_mdp(&self, v: usize) -> bool {
        v < self.mdp_count
    }

    fn layout(&self) -> Layout {
        let mut scores: Vec<u32> = self.members.iter().map(|&e| self.ents[e].score).collect();
        scores.sort_unstable();
        scores.dedup();
        let bracket_low = if self.mode == Mode::Last {
            self.round_lowest
        } else {
            scores.first().copied().unwrap_or(0)
        };
        let levels = |scores: &[u32], low: u32| {
            let mut levels: Vec<u32> = Vec::new();
            for &a in scores {
                levels.push(a + 2 - low);
                for &b in scores {
                    levels.push(a.abs_diff(b));
                }
            }
            levels.sort_unstable_by(|a, b| b.cmp(a));
            levels.dedup();
            levels
        };
        let c6_levels = levels(&scores, bracket_low);
        let c7 = self.mode == Mode::Normal && !self.extra.is_empty();
        let (c7_levels, next_low) = if c7 {
            let next_low = self
                .extra
                .iter()
                .map(|&e| self.ents[e].score)
                .min()
                .unwrap_or(0);
            let mut all = scores.clone();
            all.extend(self.extra.iter().map(|&e| self.ents[e].score));
            all.sort_unstable();
            all.dedup();
            (levels(&all, next_low), next_low)
        } else {
            (Vec::new(), 0)
        };
        let max_sd = c6_levels.first().copied().unwrap_or(0).into();
        Layout {
            completion: self.mode != Mode::Normal,
            c6_levels,
            c7,
            c7_levels,
            next_low,
            bracket_low,
            max_sd,
        }
    }

    /// Whether `u` and `v` may be paired at all in this graph.
    fn edge_allowed(&self, u: usize, v: usize) -> bool {
        match (self.kind(u), self.kind(v)) {
            (Kind::Bye, Kind::Bye) => false,
            (Kind::Bye, _) => self.mode != Mode::Normal && self.ent(v).bye_ok,
            (_, Kind::Bye) => self.mode != Mode::Normal && self.ent(u).bye_ok,
            (Kind::Member, Kind::Member) => {
                !(self.is_mdp(u) && self.is_mdp(v)) && self.ent(u).compatible(self.ent(v))
            }
            _ => self.ent(u).compatible(self.ent(v)),
        }
    }

    /// The criteria tiers of edge `u`-`v` (`u < v`), appended to `out`.
    fn criteria(&self, layout: &Layout, u: usize, v: usize, out: &mut Tiers) {
        let (ku, kv) = (self.kind(u), self.kind(v));
        if layout.completion {
            out.push(1);
        }
        let both_members = ku == Kind::Member && kv == Kind::Member;
        // C.5: pairs in the bracket.
        out.push(i64::from(both_members));
        // C.6: the PSD, one tier per score-difference level.
        let (a, b) = if ku == Kind::Bye || kv == Kind::Bye {
            (None, None)
        } else {
            (Some(self.ent(u)), Some(self.ent(v)))
        };
        for &level in &layout.c6_levels {
            let value = match (a, b) {
                (Some(a), Some(b)) if both_members => {
                    let fl = |e: &Entrant| i64::from(e.score + 2 - layout.bracket_low == level);
                    fl(a) + fl(b) - i64::from(a.score.abs_diff(b.score) == level)
                }
                _ => 0,
            };
            out.push(value);
        }
        // C.7: pairs and PSD of the next bracket.
        if layout.c7 {
            let (a, b) = (a.expect("no bye in a normal bracket"), b.expect("no bye"));
            out.push(i64::from(!both_members));
            for &level in &layout.c7_levels {
                let fl = |e: &Entrant| i64::from(e.score + 2 - layout.next_low == level);
                let mut value = fl(a) + fl(b);
                if !both_members {
                    value -= i64::from(a.score.abs_diff(b.score) == level);
                }
                out.push(value);
            }
        }
        if !both_members {
            out.extend(std::iter::repeat_n(0, 12));
            return;
        }
        let (a, b) = (a.expect("member"), b.expect("member"));
        // The higher-ranked player comes first in bracket order.
        let (high, low) = (a, b);
        let white_high = colour::allocate(high.side(), low.side(), self.initial);
        let topscorers = high.topscorer || low.topscorer;
        let mut c8 = 0;
        let mut c9 = 0;
        let mut c10 = 0;
        let mut c11 = 0;
        for (player, colour) in [(high, white_high), (low, white_high.opposite())] {
            if topscorers {
                c8 += i64::from(player.history.difference_after(colour).abs() > 2);
                c9 += i64::from(player.history.third_in_a_row(colour));
            }
            if let Some(preference) = player.preference
                && preference.colour != colour
            {
                c10 += 1;
                if preference.strength >= Strength::Strong {
                    c11 += 1;
                }
            }
        }
        out.extend([-c8, -c9, -c10, -c11]);
        // C.12-C.19: repeated floats. The higher score of a pair downfloats,
        // the lower upfloats; whoever is not paired here downfloats.
        let sd = i64::from(a.score.abs_diff(b.score));
        let float_sd = |e: &Entrant| i64::from(e.score + 2 - layout.bracket_low);
        let down_credit = |e: &Entrant, other: &Entrant, previous: Float| -> i64 {
            // Credit for not being a downfloater: 1 if the player had this
            // downfloat and is not the higher score of the pair.
            i64::from(previous == Float::Down && e.score <= other.score)
        };
        let up_cost = |e: &Entrant, other: &Entrant, previous: Float| -> i64 {
            i64::from(previous == Float::Up && e.score < other.score)
        };
        let down_sd = |e: &Entrant, other: &Entrant, previous: Float| -> i64 {
            if previous != Float::Down {
                return 0;
            }
            float_sd(e) - if e.score > other.score { sd } else { 0 }
        };
        let up_sd = |e: &Entrant, other: &Entrant, previous: Float| -> i64 {
            if previous == Float::Up && e.score < other.score {
                sd
            } else {
                0
            }
        };
        out.push(down_credit(a, b, a.float1) + down_credit(b, a, b.float1));
        out.push(-(up_cost(a, b, a.float1) + up_cost(b, a, b.float1)));
        out.push(down_credit(a, b, a.float2) + down_credit(b, a, b.float2));
        out.push(-(up_cost(a, b, a.float2) + up_cost(b, a, b.float2)));
        out.push(down_sd(a, b, a.float1) + down_sd(b, a, b.float1));
        out.push(-(up_sd(a, b, a.float1) + up_sd(b, a, b.float1)));
        out.push(down_sd(a, b, a.float2) + down_sd(b, a, b.float2));
        out.push(-(up_sd(a, b, a.float2) + up_sd(b, a, b.float2)));
        let _ = layout.max_sd;
    }

    /// The candidate-order tiers of edge `u`-`v` (`u < v`).
    fn order_tiers(&self, order: &Order, u: usize, v: usize, out: &mut Tiers) {
        let members = self.kind(u) == Kind::Member && self.kind(v) == Kind::Member;
        match order {
            Order::None => {}
            Order::Mdp { s1, window } => {
                let n = i64::try_from(self.mdp_count).unwrap_or(i64::MAX) + 1;
                let mdp_rank =
                    (members && self.is_mdp(u)).then(|| i64::try_from(u + 1).unwrap_or(0));
                let s1 = i64::try_from(*s1).unwrap_or(0);
                match mdp_rank {
                    Some(r) => out.extend([
                        -i64::from(r > s1),
                        -r,
                        if r <= s1 { -r * r } else { 0 },
                        if r > s1 { (n - r) * (n - r) } else { 0 },
                    ]),
                    None => out.extend([0, 0, 0, 0]),
                }
                let nb = i64::try_from(self.members.len()).unwrap_or(0) + 1;
                for &w in window {
                    out.push(if members && u == w {
                        nb - i64::try_from(v + 1).unwrap_or(0)
                    } else {
                        0
                    });
                }
            }
            Order::Homogeneous {
                rank,
                count,
                s1,
                window,
            } => {
                let n = i64::try_from(*count).unwrap_or(0) + 1;
                let s1 = i64::try_from(*s1).unwrap_or(0);
                let ranks = if members { rank[u].zip(rank[v]) } else { None };
                match ranks {
                    Some((ru, _)) => {
                        let r = i64::try_from(ru + 1).unwrap_or(0);
                        out.extend([
                            -i64::from(r > s1),
                            -r,
                            if r <= s1 { -r * r } else { 0 },
                            if r > s1 { (n - r) * (n - r) } else { 0 },
                        ]);
                    }
                    None => out.extend([0, 0, 0, 0]),
                }
                for &w in window {
                    out.push(match ranks {
                        Some((_, rv)) if u == w => n - i64::try_from(rv + 1).unwrap_or(0),
                        _ => 0,
                    });
                }
            }
        }
    }

    /// All tiers of the edge, or `None` when there is no edge.
    fn tiers(
        &self,
        layout: &Layout,
        order: &Order,
        cut: &dyn Fn(usize, usize) -> bool,
        u: usize,
        v: usize,
        out: &mut Tiers,
    ) -> bool {
        out.clear();
        if !self.edge_allowed(u, v) || cut(u, v) {
            return false;
        }
        self.criteria(layout, u, v, out);
        self.order_tiers(order, u, v, out);
        true
    }

    /// One maximum-weight matching over the vertices `active`, with the
    /// criteria and the order tiers; returns each active vertex's mate.
    fn matching(
        &self,
        layout: &Layout,
        order: &Order,
        active: &[usize],
        cut: &dyn Fn(usize, usize) -> bool,
    ) -> Vec<Option<usize>> {
        let m = active.len();
        let mut buffer = Tiers::new();
        // Pass 1: the largest value of each tier, for the radices.
        let mut max_abs: Vec<i64> = Vec::new();
        for i in 0..m {
            for j in (i + 1)..m {
                if self.tiers(layout, order, cut, active[i], active[j], &mut buffer) {
                    if max_abs.len() < buffer.len() {
                        max_abs.resize(buffer.len(), 0);
                    }
                    for (slot, value) in max_abs.iter_mut().zip(&buffer) {
                        *slot = (*slot).max(value.abs());
                    }
                }
            }
        }
        let window_len = match order {
            Order::None => 0,
            Order::Mdp { window, .. } | Order::Homogeneous { window, .. } => window.len(),
        };
        let tiers = max_abs.len();
        // Edges a matching can hold: m/2; a window tier: one.
        let pairs = u64::try_from(m / 2 + 1).unwrap_or(u64::MAX);
        let radices: Vec<u64> = max_abs
            .iter()
            .enumerate()
            .map(|(t, &max)| {
                let bound = if t + window_len >= tiers { 1 } else { pairs };
                2 * bound * max.unsigned_abs() + 1
            })
            .collect();
        let kept: Vec<bool> = max_abs.iter().map(|&max| max != 0).collect();
        let bits: f64 = radices
            .iter()
            .zip(&kept)
            .filter(|(_, keep)| **keep)
            .map(|(&r, _)| (r as f64).log2())
            .sum::<f64>()
            + 2.0;
        let pack = |buffer: &Tiers| -> I512 {
            let mut w = I512::ZERO;
            for (t, &value) in buffer.iter().enumerate() {
                if kept[t] {
                    w = w.mul_small(radices[t]) + I512::from_i64(value);
                }
            }
            w
        };
        let pack128 = |buffer: &Tiers| -> i128 {
            let mut w: i128 = 0;
            for (t, &value) in buffer.iter().enumerate() {
                if kept[t] {
                    w = w * i128::from(radices[t]) + i128::from(value);
                }
            }
            w
        };
        if bits <= f64::from(I64_BITS) {
            self.solve_with(layout, order, active, cut, |b| {
                i64::try_from(pack128(b)).expect("fits in 64 bits")
            })
        } else if bits <= f64::from(I128_BITS) {
            self.solve_with(layout, order, active, cut, pack128)
        } else {
            assert!(
                bits <= f64::from(I512_BITS),
                "a bracket's criteria need {bits} bits"
            );
            self.solve_with(layout, order, active, cut, pack)
        }
    }

    fn solve_with<W: Weight>(
        &self,
        layout: &Layout,
        order: &Order,
        active: &[usize],
        cut: &dyn Fn(usize, usize) -> bool,
        pack: impl Fn(&Tiers) -> W,
    ) -> Vec<Option<usize>> {
        let m = active.len();
        let mut weights = vec![W::ZERO; m * m];
        let mut buffer = Tiers::new();
        for i in 0..m {
            for j in (i + 1)..m {
                if self.tiers(layout, order, cut, active[i], active[j], &mut buffer) {
                    weights[i * m + j] = pack(&buffer);
                }
            }
        }
        integer_blossom::max_weight_matching(&weights, m)
            .into_iter()
            .map(|mate| mate.map(|j| active[j]))
            .collect()
    }

    /// The bits the criteria tiers need, to size the order windows.
    fn criteria_bits(&self, layout: &Layout) -> f64 {
        let m = self.vertex_count() as f64;
        let per = (m + 3.0).log2() + 1.5;
        let tiers = 2 + layout.c6_levels.len() + 1 + layout.c7_levels.len() + 12;
        let sd_extra = 4.0 * ((layout.max_sd.max(1) as f64).log2() + 1.0);
        per * tiers as f64 + sd_extra + per * 4.0 + 2.0 * (m + 1.0).log2() * 2.0
    }

    /// How many S1 positions one matching can settle.
    fn window_size(&self, layout: &Layout) -> usize {
        let m = self.vertex_count() as f64;
        let base = self.criteria_bits(layout);
        let per_position = (2.0 * m + 3.0).log2();
        let in_128 = ((f64::from(I128_BITS) - base) / per_position).floor();
        let in_512 = ((f64::from(I512_BITS) - base) / per_position).floor();
        if in_128 >= 12.0 {
            in_128 as usize
        } else {
            (in_512 as usize).max(1)
        }
    }

    /// Pairs the bracket, or `None` when the mode needs everyone paired
    /// (completion) and that is impossible.
    pub fn solve(&self) -> Option<BracketPairing> {
        let layout = self.layout();
        let n_members = self.members.len();
        let count = self.vertex_count();
        let mut active: Vec<usize> = (0..count).collect();
        let mut fixed: Vec<(usize, usize)> = Vec::new();

        // Phase A: the best candidates' value, their number of pairs and of
        // paired MDPs.
        let no_cut = |_: usize, _: usize| false;
        let mates = self.matching(&layout, &Order::None, &active, &no_cut);
        if layout.completion {
            // Everyone must be matched (the bye vertex included).
            if mates.iter().any(Option::is_none) {
                return None;
            }
        }
        let member_pairs = |mates: &[Option<usize>], active: &[usize]| -> Vec<(usize, usize)> {
            active
                .iter()
                .zip(mates)
                .filter_map(|(&u, mate)| mate.map(|v| (u, v)))
                .filter(|&(u, v)| u < v && v < n_members)
                .collect()
        };
        let pairs_a = member_pairs(&mates, &active);
        let mdp_paired = pairs_a.iter().filter(|&&(u, _)| self.is_mdp(u)).count();
        let total_pairs = pairs_a.len();
        let window = self.window_size(&layout);

        // Phase M: the MDP-pairing.
        if mdp_paired > 0 {
            let mut current = mates;
            let mut settled = 0;
            while settled < mdp_paired {
                let paired_mdps: Vec<usize> = member_pairs(&current, &active)
                    .into_iter()
                    .filter(|&(u, _)| self.is_mdp(u))
                    .map(|(u, _)| u)
                    .collect();
                let mut guess: Vec<usize> = paired_mdps.iter().copied().take(window).collect();
                let mut tries = 0;
                let pairs = loop {
                    let order = Order::Mdp {
                        s1: mdp_paired,
                        window: guess.clone(),
                    };
                    current = self.matching(&layout, &order, &active, &no_cut);
                    let pairs = member_pairs(&current, &active);
                    let actual: Vec<usize> = pairs
                        .iter()
                        .filter(|&&(u, _)| self.is_mdp(u))
                        .map(|&(u, _)| u)
                        .take(window)
                        .collect();
                    tries += 1;
                    if actual == guess || tries >= 4 {
                        break pairs;
                    }
                    guess = actual;
                };
                let take: Vec<(usize, usize)> = pairs
                    .iter()
                    .copied()
                    .filter(|&(u, _)| self.is_mdp(u))
                    .take(window)
                    .collect();
                if take.is_empty() {
                    break;
                }
                settled += take.len();
                for &(u, v) in &take {
                    fixed.push((u, v));
                }
                let remove: Vec<usize> = take.iter().flat_map(|&(u, v)| [u, v]).collect();
                let keep: Vec<(usize, Option<usize>)> = active
                    .iter()
                    .copied()
                    .zip(current.iter().copied())
                    .filter(|(a, _)| !remove.contains(a))
                    .collect();
                active = keep.iter().map(|(a, _)| *a).collect();
                current = keep.iter().map(|(_, m)| *m).collect();
            }
        }

        // The MDPs still unpaired are in Limbo: they may not pair now.
        let limbo: Vec<usize> = (0..self.mdp_count).filter(|v| active.contains(v)).collect();

        // Phase H: the remainder, a homogeneous bracket.
        let residents: Vec<usize> = active
            .iter()
            .copied()
            .filter(|&v| v < n_members && !self.is_mdp(v))
            .collect();
        let remainder_pairs = total_pairs - fixed.len();
        if remainder_pairs > 0 {
            let mut rank = vec![None; count];
            for (i, &v) in residents.iter().enumerate() {
                rank[v] = Some(i);
            }
            // Limbo MDPs may still meet the next bracket (C.7) or the lower
            // players (C.4), but no resident of this bracket.
            let limbo_cut = |u: usize, v: usize| {
                (limbo.contains(&u) && v < n_members) || (limbo.contains(&v) && u < n_members)
            };
            let mut current: Option<Vec<Option<usize>>> = None;
            let mut settled = 0;
            while settled < remainder_pairs {
                let lower_members: Vec<usize> = match &current {
                    None => residents.iter().copied().take(remainder_pairs).collect(),
                    Some(mates) => {
                        let mut lows: Vec<usize> = member_pairs(mates, &active)
                            .into_iter()
                            .filter(|&(u, _)| rank[u].is_some())
                            .map(|(u, _)| u)
                            .collect();
                        lows.sort_by_key(|&u| rank[u]);
                        lows
                    }
                };
                // The window names the first S1 players; if the matching
                // puts others first in S1, solve again with those.
                let mut guess: Vec<usize> = lower_members.iter().copied().take(window).collect();
                let mut tries = 0;
                let (mates, pairs) = loop {
                    let order = Order::Homogeneous {
                        rank: rank.clone(),
                        count: residents.len(),
                        s1: remainder_pairs,
                        window: guess.clone(),
                    };
                    let mates = self.matching(&layout, &order, &active, &limbo_cut);
                    let mut pairs: Vec<(usize, usize)> = member_pairs(&mates, &active)
                        .into_iter()
                        .filter(|&(u, v)| rank[u].is_some() && rank[v].is_some())
                        .collect();
                    pairs.sort_by_key(|&(u, _)| rank[u]);
                    let actual: Vec<usize> = pairs.iter().map(|&(u, _)| u).take(window).collect();
                    tries += 1;
                    if actual == guess || tries >= 4 {
                        break (mates, pairs);
                    }
                    guess = actual;
                };
                let take: Vec<(usize, usize)> = pairs.into_iter().take(window).collect();
                if take.is_empty() {
                    break;
                }
                settled += take.len();
                fixed.extend(take.iter().copied());
                let remove: Vec<usize> = take.iter().flat_map(|&(u, v)| [u, v]).collect();
                let keep: Vec<(usize, Option<usize>)> = active
                    .iter()
                    .copied()
                    .zip(mates.iter().copied())
                    .filter(|(a, _)| !remove.contains(a))
                    .collect();
                active = keep.iter().map(|(a, _)| *a).collect();
                current = Some(keep.iter().map(|(_, m)| *m).collect());
            }
        }

        // The bye, when the bracket is the last: who is left goes to it,
        // among the eligible (one more matching over what is left).
        let mut bye = None;
        if self.has_bye() && self.mode == Mode::Last {
            let left: Vec<usize> = active.iter().copied().filter(|&v| v < n_members).collect();
            let eligible: Vec<usize> = left
                .iter()
                .copied()
                .filter(|&v| self.ent(v).bye_ok)
                .collect();
            if left.len() == 1 && eligible.len() == 1 {
                bye = Some(self.members[left[0]]);
            } else {
                return None;
            }
        }

        let mut pairs: Vec<(usize, usize)> = fixed
            .iter()
            .map(|&(u, v)| {
                let (u, v) = if u < v { (u, v) } else { (v, u) };
                (self.members[u], self.members[v])
            })
            .collect();
        pairs.sort_unstable();
        let paired: Vec<usize> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
        let floaters = self
            .members
            .iter()
            .copied()
            .filter(|e| !paired.contains(e) && Some(*e) != bye)
            .collect();
        if self.mode == Mode::Last && fixed.len() * 2 + usize::from(bye.is_some()) != n_members {
            return None;
        }
        Some(BracketPairing {
            pairs,
            floaters,
            bye,
        })
    }
}
