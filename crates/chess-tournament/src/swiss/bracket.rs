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
use super::entrant::{Entrant, Float};
use super::weight::{I64_BITS, I128_BITS, I256_BITS, I512, I512_BITS, Wide};
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
        /// False once no best candidate needs an exchange: the exchange
        /// tiers are then constant and left out.
        exchanges: bool,
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

/// How the tiers of one phase are packed into one integer weight.
struct Packing {
    radices: Vec<u64>,
    kept: Vec<bool>,
    bits: f64,
}

impl Packing {
    fn pack(&self, tiers: &Tiers) -> I512 {
        self.pack_wide(tiers)
    }

    fn pack_wide<const LIMBS: usize>(&self, tiers: &Tiers) -> Wide<LIMBS> {
        let mut w = Wide::<LIMBS>::ZERO;
        for (t, &value) in tiers.iter().enumerate() {
            if self.kept[t] {
                w = w.mul_small(self.radices[t]) + Wide::from_i64(value);
            }
        }
        w
    }

    fn pack128(&self, tiers: &Tiers) -> i128 {
        let mut w: i128 = 0;
        for (t, &value) in tiers.iter().enumerate() {
            if self.kept[t] {
                w = w * i128::from(self.radices[t]) + i128::from(value);
            }
        }
        w
    }
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
                exchanges,
            } => {
                let n = i64::try_from(*count).unwrap_or(0) + 1;
                let s1 = i64::try_from(*s1).unwrap_or(0);
                let ranks = if members { rank[u].zip(rank[v]) } else { None };
                match ranks {
                    Some((ru, _)) if *exchanges => {
                        let r = i64::try_from(ru + 1).unwrap_or(0);
                        out.extend([
                            -i64::from(r > s1),
                            -r,
                            if r <= s1 { -r * r } else { 0 },
                            if r > s1 { (n - r) * (n - r) } else { 0 },
                        ]);
                    }
                    _ => out.extend([0, 0, 0, 0]),
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
        let packing = self.packing(layout, order, active, cut);
        self.matching_packed(layout, order, active, cut, &packing)
    }

    /// The radices of the tiers over the graph on `active`: each tier's
    /// largest total over a matching, so that a tier outweighs all lower
    /// ones. Valid for any subgraph too.
    fn packing(
        &self,
        layout: &Layout,
        order: &Order,
        active: &[usize],
        cut: &dyn Fn(usize, usize) -> bool,
    ) -> Packing {
        let m = active.len();
        let mut buffer = Tiers::new();
        // Per tier: the largest positive and negative edge values, and the
        // vertices with a non-zero edge (a matching holds at most half of
        // them in that tier).
        let mut max_pos: Vec<i64> = Vec::new();
        let mut max_neg: Vec<i64> = Vec::new();
        let mut touched: Vec<Vec<bool>> = Vec::new();
        for i in 0..m {
            for j in (i + 1)..m {
                if self.tiers(layout, order, cut, active[i], active[j], &mut buffer) {
                    if max_pos.len() < buffer.len() {
                        max_pos.resize(buffer.len(), 0);
                        max_neg.resize(buffer.len(), 0);
                        touched.resize(buffer.len(), vec![false; m]);
                    }
                    for (t, &value) in buffer.iter().enumerate() {
                        if value != 0 {
                            max_pos[t] = max_pos[t].max(value);
                            max_neg[t] = max_neg[t].max(-value);
                            touched[t][i] = true;
                            touched[t][j] = true;
                        }
                    }
                }
            }
        }
        let window_len = match order {
            Order::None => 0,
            Order::Mdp { window, .. } | Order::Homogeneous { window, .. } => window.len(),
        };
        let tiers = max_pos.len();
        let radices: Vec<u64> = (0..tiers)
            .map(|t| {
                // A window tier: one edge; another: half its vertices.
                let bound = if t + window_len >= tiers {
                    1
                } else {
                    u64::try_from(touched[t].iter().filter(|x| **x).count() / 2).unwrap_or(0)
                };
                bound * (max_pos[t].unsigned_abs() + max_neg[t].unsigned_abs()) + 1
            })
            .collect();
        let max_abs: Vec<i64> = (0..tiers).map(|t| max_pos[t].max(max_neg[t])).collect();
        let kept: Vec<bool> = max_abs.iter().map(|&max| max != 0).collect();
        let bits: f64 = radices
            .iter()
            .zip(&kept)
            .filter(|(_, keep)| **keep)
            .map(|(&r, _)| (r as f64).log2())
            .sum::<f64>()
            + 2.0;
        assert!(
            bits <= f64::from(I512_BITS),
            "a bracket's criteria need {bits} bits"
        );
        Packing {
            radices,
            kept,
            bits,
        }
    }

    fn matching_packed(
        &self,
        layout: &Layout,
        order: &Order,
        active: &[usize],
        cut: &dyn Fn(usize, usize) -> bool,
        packing: &Packing,
    ) -> Vec<Option<usize>> {
        self.matching_typed(layout, order, active, cut, packing)
    }

    fn matching_typed(
        &self,
        layout: &Layout,
        order: &Order,
        active: &[usize],
        cut: &dyn Fn(usize, usize) -> bool,
        packing: &Packing,
    ) -> Vec<Option<usize>> {
        if packing.bits <= f64::from(I64_BITS) {
            self.solve_with(layout, order, active, cut, |b| {
                i64::try_from(packing.pack128(b)).expect("fits in 64 bits")
            })
        } else if packing.bits <= f64::from(I128_BITS) {
            self.solve_with(layout, order, active, cut, |b| packing.pack128(b))
        } else if packing.bits <= f64::from(I256_BITS) {
            self.solve_with(layout, order, active, cut, |b| packing.pack_wide::<4>(b))
        } else {
            self.solve_with(layout, order, active, cut, |b| packing.pack(b))
        }
    }

    /// The total weight of `pairs` (vertex pairs), `None` if one is no edge.
    fn value(
        &self,
        layout: &Layout,
        order: &Order,
        cut: &dyn Fn(usize, usize) -> bool,
        pairs: &[(usize, usize)],
        packing: &Packing,
    ) -> Option<I512> {
        let mut buffer = Tiers::new();
        let mut total = I512::ZERO;
        for &(u, v) in pairs {
            let (u, v) = if u < v { (u, v) } else { (v, u) };
            if !self.tiers(layout, order, cut, u, v, &mut buffer) {
                return None;
            }
            total += packing.pack(&buffer);
        }
        Some(total)
    }

    /// The weight of the heaviest matching on `active`, and the matching.
    fn best(
        &self,
        layout: &Layout,
        order: &Order,
        active: &[usize],
        cut: &dyn Fn(usize, usize) -> bool,
        packing: &Packing,
    ) -> (Vec<Option<usize>>, I512) {
        let mates = self.matching_packed(layout, order, active, cut, packing);
        let pairs: Vec<(usize, usize)> = active
            .iter()
            .zip(&mates)
            .filter_map(|(&u, m)| m.filter(|&v| u < v).map(|v| (u, v)))
            .collect();
        let total = self
            .value(layout, order, cut, &pairs, packing)
            .expect("a matching uses edges");
        (mates, total)
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

    /// How many S1 positions one matching settles: as many as fit in the
    /// integer type that settles the `remaining` positions fastest. `base`
    /// is the bits of the criteria and exchange tiers, `ranks` the number of
    /// possible opponents (a window tier's radix).
    fn window_size(base: f64, ranks: usize, remaining: usize) -> usize {
        let per_position = (2.0 * ranks as f64 + 3.0).log2();
        // Relative cost of one matching in each type (measured: the wide
        // types' tables are larger than the caches).
        let types = [(I128_BITS, 1.0), (I256_BITS, 10.0), (I512_BITS, 40.0)];
        let mut best: Option<(f64, usize)> = None;
        for (limit, cost) in types {
            let fits = ((f64::from(limit) - base) / per_position).floor();
            if fits < 1.0 {
                continue;
            }
            let window = (fits as usize).min(remaining.max(1));
            let total = remaining.div_ceil(window) as f64 * cost;
            if best.is_none_or(|(t, _)| total < t) {
                best = Some((total, window));
            }
        }
        best.map_or(1, |(_, window)| window)
    }

    /// The first candidate of B.3: the first `mdps` MDPs against the
    /// first residents, then the remainder's S1 against its S2 in order;
    /// `None` when one of its pairs is not allowed.
    fn natural_candidate(&self, mdps: usize, pairs: usize) -> Option<Vec<(usize, usize)>> {
        let residents: Vec<usize> = (self.mdp_count..self.members.len()).collect();
        if mdps > self.mdp_count || pairs < mdps || residents.len() < 2 * pairs - mdps {
            return None;
        }
        let mut out: Vec<(usize, usize)> = (0..mdps).map(|i| (i, residents[i])).collect();
        let remainder = &residents[mdps..];
        let k = pairs - mdps;
        out.extend((0..k).map(|i| (remainder[i], remainder[k + i])));
        out.iter()
            .all(|&(u, v)| self.edge_allowed(u, v))
            .then_some(out)
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
        let packing_a = self.packing(&layout, &Order::None, &active, &no_cut);
        let (mates, best_value) = self.best(&layout, &Order::None, &active, &no_cut, &packing_a);
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
        if 2 * total_pairs == n_members {
            // Every member is paired in every best candidate: the next
            // bracket (C.7) and the lower players (C.4) cannot tell the
            // candidates apart any more, so the search leaves them out.
            active.retain(|&v| v < n_members);
        }

        // The very first candidate (S1 against S2 in order, B.3) wins
        // whenever it is as good as the best: then no search is needed.
        let natural = self.natural_candidate(mdp_paired, total_pairs);
        let natural_is_best = natural.as_ref().is_some_and(|pairs| {
            let used: Vec<usize> = pairs.iter().flat_map(|&(u, v)| [u, v]).collect();
            let rest: Vec<usize> = (0..count).filter(|v| !used.contains(v)).collect();
            // Who is left meets only the next bracket, the lower players or
            // the bye.
            let rest_cut = |u: usize, v: usize| u < n_members && v < n_members;
            let (_, rest_value) = self.best(&layout, &Order::None, &rest, &rest_cut, &packing_a);
            self.value(&layout, &Order::None, &no_cut, pairs, &packing_a)
                .is_some_and(|value| value + rest_value == best_value)
        });
        if natural_is_best {
            fixed = natural.unwrap_or_default();
            active.retain(|v| !fixed.iter().any(|&(a, b)| a == *v || b == *v));
        }

        // Phase M: the MDP-pairing.
        if mdp_paired > 0 && !natural_is_best {
            let mut current = mates;
            let mut settled = 0;
            while settled < mdp_paired {
                let paired_mdps: Vec<usize> = member_pairs(&current, &active)
                    .into_iter()
                    .filter(|&(u, _)| self.is_mdp(u))
                    .map(|(u, _)| u)
                    .collect();
                let base = self
                    .packing(
                        &layout,
                        &Order::Mdp {
                            s1: mdp_paired,
                            window: Vec::new(),
                        },
                        &active,
                        &no_cut,
                    )
                    .bits;
                let window = Self::window_size(base, n_members, mdp_paired - settled);
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
        if remainder_pairs > 0 && !natural_is_best {
            let mut rank = vec![None; count];
            for (i, &v) in residents.iter().enumerate() {
                rank[v] = Some(i);
            }
            // Limbo MDPs may still meet the next bracket (C.7) or the lower
            // players (C.4), but no resident of this bracket.
            // Once a best candidate needs no exchange, none does: then no
            // two S2 players can meet, and the exchange tiers are constant.
            let exchanges = std::cell::Cell::new(true);
            let limbo_cut = |u: usize, v: usize| {
                let s2 = |x: usize| rank[x].is_some_and(|r| r >= remainder_pairs);
                (limbo.contains(&u) && v < n_members)
                    || (limbo.contains(&v) && u < n_members)
                    || (!exchanges.get() && s2(u) && s2(v))
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
                let base = self
                    .packing(
                        &layout,
                        &Order::Homogeneous {
                            rank: rank.clone(),
                            count: residents.len(),
                            s1: remainder_pairs,
                            window: Vec::new(),
                            exchanges: exchanges.get(),
                        },
                        &active,
                        &limbo_cut,
                    )
                    .bits;
                let window = Self::window_size(base, residents.len(), remainder_pairs - settled);
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
                        exchanges: exchanges.get(),
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
                if pairs
                    .iter()
                    .all(|&(u, _)| rank[u].is_some_and(|r| r < remainder_pairs))
                {
                    exchanges.set(false);
                }
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
