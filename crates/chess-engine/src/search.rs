//! The search: iterative deepening, principal variation search with
//! quiescence, a transposition table, check extensions, late move
//! reductions, killer and history move ordering, repetition detection.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chess_rules::{Move, MoveList, Position, Role};

use crate::eval::{SIMPLE_VALUE, evaluate, is_insufficient_material};
use crate::score::{INFINITY, MATE, MATE_BOUND};
use crate::time::TimeSource;
use crate::tt::{Bound, TranspositionTable};

/// The deepest the search ever goes from the root, extensions included.
pub(crate) const MAX_PLY: usize = 128;

/// How often (in nodes) the clock and the stop flag are looked at.
const CHECK_EVERY_NODES: u64 = 1024;

/// Why and when a search must stop.
pub(crate) struct Deadline<'a> {
    pub stop: &'a AtomicBool,
    /// The clock `hard_deadline` is read on.
    pub time: TimeSource,
    pub hard_deadline: Option<Duration>,
    pub node_limit: Option<u64>,
}

/// The state of one search (one call to `Engine::search`).
pub(crate) struct Searcher<'a> {
    tt: &'a mut TranspositionTable,
    deadline: Deadline<'a>,
    pub nodes: u64,
    pub seldepth: usize,
    /// Set once a limit is hit: every node then unwinds with a dummy score.
    pub aborted: bool,
    /// While false (during the first iteration) the search cannot be stopped,
    /// so there is always a move to return.
    pub can_abort: bool,
    /// Keys of the game's earlier positions, then of the search path; the
    /// last one is the current node's.
    keys: Vec<u64>,
    killers: Vec<[Option<Move>; 2]>,
    /// Quiet-move history by side, from-square and to-square.
    history: Vec<[[i32; 64]; 64]>,
    /// Triangular principal-variation table.
    pv: Vec<Vec<Move>>,
    /// Whether the move into the node at each ply was a null move (two
    /// passes in a row prove nothing).
    null_before: Vec<bool>,
}

impl<'a> Searcher<'a> {
    pub fn new(
        tt: &'a mut TranspositionTable,
        deadline: Deadline<'a>,
        game_keys: &[u64],
    ) -> Searcher<'a> {
        let mut keys = Vec::with_capacity(game_keys.len() + MAX_PLY + 1);
        keys.extend_from_slice(game_keys);
        Searcher {
            tt,
            deadline,
            nodes: 0,
            seldepth: 0,
            aborted: false,
            can_abort: false,
            keys,
            killers: vec![[None; 2]; MAX_PLY + 1],
            history: vec![[[0; 64]; 64]; 2],
            pv: vec![Vec::new(); MAX_PLY + 1],
            null_before: vec![false; MAX_PLY + 2],
        }
    }

    /// The principal variation found by the last completed root search.
    pub fn root_pv(&self) -> &[Move] {
        &self.pv[0]
    }

    fn count_node(&mut self) {
        self.nodes += 1;
        if !self.can_abort {
            return;
        }
        if let Some(limit) = self.deadline.node_limit
            && self.nodes >= limit
        {
            self.aborted = true;
        }
        // A relaxed load is nearly free; reading the clock is not.
        if self.deadline.stop.load(Ordering::Relaxed) {
            self.aborted = true;
        }
        if self.nodes.is_multiple_of(CHECK_EVERY_NODES)
            && let Some(deadline) = self.deadline.hard_deadline
            && (self.deadline.time)() >= deadline
        {
            self.aborted = true;
        }
    }

    /// Whether the current node's position occurred before, since the last
    /// capture or pawn move, in the game or on the search path.
    fn is_repetition(&self, position: &Position) -> bool {
        let Some((&key, earlier)) = self.keys.split_last() else {
            return false;
        };
        // Only positions since the last capture or pawn move can repeat, and
        // only those with the same side to move, an even number of plies back.
        let reversible = position.halfmove_clock() as usize;
        (2..=reversible.min(earlier.len()))
            .step_by(2)
            .any(|back| earlier[earlier.len() - back] == key)
    }

    /// Searches the root position to `depth` within `alpha..beta`.
    pub fn search_root(&mut self, root: &Position, depth: i32, alpha: i32, beta: i32) -> i32 {
        self.keys.push(root.zobrist_key());
        let score = self.negamax(root, depth, alpha, beta, 0, true);
        self.keys.pop();
        score
    }

    /// The score of each move at the root, each searched with a full window
    /// to `depth` (used by the easy level, which needs to compare them).
    pub fn score_root_moves(&mut self, root: &Position, depth: i32) -> Vec<(Move, i32)> {
        self.keys.push(root.zobrist_key());
        let mut scored = Vec::new();
        for m in root.legal_moves().iter() {
            let mut child = root.clone();
            child.play_unchecked(m);
            self.keys.push(child.zobrist_key());
            let score = -self.negamax(&child, depth - 1, -INFINITY, INFINITY, 1, true);
            self.keys.pop();
            if self.aborted {
                break;
            }
            scored.push((*m, score));
        }
        self.keys.pop();
        scored
    }

    fn negamax(
        &mut self,
        position: &Position,
        mut depth: i32,
        mut alpha: i32,
        mut beta: i32,
        ply: usize,
        is_pv: bool,
    ) -> i32 {
        self.pv[ply].clear();
        // Re-searches after an abort must not visit (or count) anything.
        if self.aborted {
            return 0;
        }
        if ply > 0 {
            if position.halfmove_clock() >= 100
                || is_insufficient_material(position)
                || self.is_repetition(position)
            {
                return 0;
            }
            // No line can do better than mating now or worse than being mated now.
            alpha = alpha.max(-MATE + ply as i32);
            beta = beta.min(MATE - ply as i32 - 1);
            if alpha >= beta {
                return alpha;
            }
        }
        if ply >= MAX_PLY {
            return evaluate(position);
        }

        let in_check = position.is_check();
        // Check extension: a forcing line is not cut short while in check.
        if in_check {
            depth += 1;
        }
        if depth <= 0 {
            return self.quiescence(position, alpha, beta, ply);
        }

        self.count_node();
        if self.aborted {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);

        let key = position.zobrist_key();
        let entry = self.tt.probe(key);
        let tt_move = entry.and_then(|e| e.best_move);
        if let Some(entry) = entry
            && !is_pv
            && entry.depth >= depth
        {
            let score = entry.score(ply);
            let usable = match entry.bound {
                Bound::Exact => true,
                Bound::Lower => score >= beta,
                Bound::Upper => score <= alpha,
            };
            if usable {
                return score;
            }
        }

        let moves = position.legal_moves();
        if moves.is_empty() {
            return if in_check { -MATE + ply as i32 } else { 0 };
        }

        // The pruning below is only for null-window nodes out of check,
        // where a static estimate is trusted.
        let static_eval = if is_pv || in_check {
            None
        } else {
            Some(evaluate(position))
        };

        // Reverse futility pruning: far above beta near the leaves, a quiet
        // position is not going to fall below it in a move or two.
        if let Some(eval) = static_eval
            && depth <= 3
            && beta.abs() < MATE_BOUND
            && eval - 120 * depth >= beta
        {
            return eval;
        }

        // Null move pruning: if passing the move still leaves us at or above
        // beta after a reduced search, a real move would do at least as
        // well. Not when the side to move has only pawns, where passing
        // could be better than any move (zugzwang).
        if let Some(eval) = static_eval
            && eval >= beta
            && depth >= 3
            && beta.abs() < MATE_BOUND
            && !self.null_before[ply]
            && has_pieces(position)
            && let Some(passed) = position.null_move()
        {
            let reduction = 2 + depth / 4;
            self.keys.push(passed.zobrist_key());
            self.null_before[ply + 1] = true;
            let score = -self.negamax(
                &passed,
                depth - 1 - reduction,
                -beta,
                -beta + 1,
                ply + 1,
                false,
            );
            self.null_before[ply + 1] = false;
            self.keys.pop();
            if self.aborted {
                return 0;
            }
            if score >= beta {
                return if score >= MATE_BOUND { beta } else { score };
            }
        }

        let mut order = self.order_moves(position, &moves, tt_move, ply);
        let original_alpha = alpha;
        let mut best_score = -INFINITY;
        let mut best_move = None;
        let us = position.turn().index();

        for index in 0..order.len() {
            let m = pick_next(&mut order, index);
            let is_quiet = !m.is_capture() && m.promotion().is_none();
            let mut child = position.clone();
            child.play_unchecked(&m);
            self.keys.push(child.zobrist_key());

            let score = if index == 0 {
                -self.negamax(&child, depth - 1, -beta, -alpha, ply + 1, is_pv)
            } else {
                // Late move reductions: quiet moves ordered late are rarely
                // best, so look at them less deeply unless they surprise.
                let reduction =
                    if depth >= 3 && index >= 3 && is_quiet && !in_check && !child.is_check() {
                        if index >= 10 && depth >= 6 { 2 } else { 1 }
                    } else {
                        0
                    };
                let mut score = -self.negamax(
                    &child,
                    depth - 1 - reduction,
                    -alpha - 1,
                    -alpha,
                    ply + 1,
                    false,
                );
                if score > alpha && reduction > 0 {
                    score = -self.negamax(&child, depth - 1, -alpha - 1, -alpha, ply + 1, false);
                }
                if score > alpha && score < beta {
                    score = -self.negamax(&child, depth - 1, -beta, -alpha, ply + 1, true);
                }
                score
            };
            self.keys.pop();
            if self.aborted {
                return 0;
            }

            if score > best_score {
                best_score = score;
                best_move = Some(m);
                if score > alpha {
                    alpha = score;
                    let (head, tail) = self.pv.split_at_mut(ply + 1);
                    head[ply].clear();
                    head[ply].push(m);
                    head[ply].extend_from_slice(&tail[0]);
                    if alpha >= beta {
                        if is_quiet {
                            self.reward_quiet(m, us, ply, depth);
                        }
                        break;
                    }
                }
            }
        }

        let bound = if best_score >= beta {
            Bound::Lower
        } else if best_score > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt.store(key, best_move, best_score, depth, bound, ply);
        best_score
    }

    /// Searches captures (and every evasion when in check) until the position
    /// is quiet, so the evaluation is never taken in the middle of an exchange.
    fn quiescence(&mut self, position: &Position, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        self.pv[ply].clear();
        if self.aborted {
            return 0;
        }
        self.count_node();
        if self.aborted {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        if ply >= MAX_PLY {
            return evaluate(position);
        }

        if is_insufficient_material(position) {
            return 0;
        }
        let in_check = position.is_check();
        let mut best_score = -INFINITY;
        let stand_pat = if in_check {
            None
        } else {
            // The side to move can usually do at least as well as doing
            // nothing, so the static evaluation is a lower bound.
            let eval = evaluate(position);
            if eval >= beta {
                return eval;
            }
            alpha = alpha.max(eval);
            best_score = eval;
            Some(eval)
        };
        let mut moves = position.legal_moves();
        if in_check && moves.is_empty() {
            return -MATE + ply as i32;
        }
        if !in_check {
            moves.retain(|m| m.is_capture() || m.promotion() == Some(Role::Queen));
        }

        let them = position.turn().other();
        let mut order = self.order_moves(position, &moves, None, ply);
        for index in 0..order.len() {
            let m = pick_next(&mut order, index);
            if let Some(stand_pat) = stand_pat {
                let gain = m.capture().map_or(0, |r| SIMPLE_VALUE[r.index()])
                    + m.promotion()
                        .map_or(0, |r| SIMPLE_VALUE[r.index()] - SIMPLE_VALUE[0]);
                // Delta pruning: even winning this piece for free cannot
                // bring the score up to alpha.
                if stand_pat + gain + 200 <= alpha {
                    continue;
                }
                // A cheap stand-in for static exchange evaluation: taking a
                // defended piece with a more valuable one usually loses.
                if m.promotion().is_none()
                    && SIMPLE_VALUE[m.role().index()] > gain
                    && position.attackers_to(m.to(), them).any()
                {
                    continue;
                }
            }
            let mut child = position.clone();
            child.play_unchecked(&m);
            let score = -self.quiescence(&child, -beta, -alpha, ply + 1);
            if self.aborted {
                return 0;
            }
            if score > best_score {
                best_score = score;
                if score > alpha {
                    alpha = score;
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        best_score
    }

    /// Scores every move for ordering: the hash move first, then captures
    /// by most valuable victim and least valuable attacker, queen
    /// promotions, the killer moves of this ply, then quiet moves by history.
    fn order_moves(
        &self,
        position: &Position,
        moves: &MoveList,
        tt_move: Option<Move>,
        ply: usize,
    ) -> Vec<(Move, i32)> {
        let us = position.turn().index();
        let killers = self.killers[ply.min(MAX_PLY)];
        moves
            .iter()
            .map(|&m| {
                let score = if Some(m) == tt_move {
                    2_000_000
                } else if let Some(victim) = m.capture() {
                    1_000_000 + 10 * SIMPLE_VALUE[victim.index()]
                        - SIMPLE_VALUE[m.role().index()] / 10
                        + m.promotion().map_or(0, |r| SIMPLE_VALUE[r.index()])
                } else if let Some(promotion) = m.promotion() {
                    if promotion == Role::Queen {
                        1_000_000
                    } else {
                        -100_000
                    }
                } else if Some(m) == killers[0] {
                    900_000
                } else if Some(m) == killers[1] {
                    800_000
                } else {
                    self.history[us][m.from().index() as usize][m.to().index() as usize]
                };
                (m, score)
            })
            .collect()
    }

    /// A quiet move caused a cutoff: remember it as a killer at this ply and
    /// raise its history score, more for deeper (costlier) cutoffs.
    fn reward_quiet(&mut self, m: Move, us: usize, ply: usize, depth: i32) {
        let killers = &mut self.killers[ply];
        if killers[0] != Some(m) {
            killers[1] = killers[0];
            killers[0] = Some(m);
        }
        let entry = &mut self.history[us][m.from().index() as usize][m.to().index() as usize];
        *entry += depth * depth;
        // Keep history below the killer and capture scores.
        if *entry > 500_000 {
            for side in &mut self.history {
                for row in side.iter_mut() {
                    for value in row.iter_mut() {
                        *value /= 2;
                    }
                }
            }
        }
    }
}

/// Whether the side to move has a piece other than pawns and its king.
fn has_pieces(position: &Position) -> bool {
    let board = position.board();
    let ours = board.by_color(position.turn());
    let pawns_and_king = board.by_role(Role::Pawn) | board.by_role(Role::King);
    (ours & !pawns_and_king).any()
}

/// Selection sort step: moves the best-scored remaining move to `index` and
/// returns it. Cheaper than sorting, since most nodes cut off early.
fn pick_next(order: &mut [(Move, i32)], index: usize) -> Move {
    let mut best = index;
    for i in index + 1..order.len() {
        if order[i].1 > order[best].1 {
            best = i;
        }
    }
    order.swap(index, best);
    order[index].0
}
