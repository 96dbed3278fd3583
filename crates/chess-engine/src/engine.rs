//! The engine's public face: levels, limits, and the search result.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use chess_rules::{Move, Position};

use crate::Level;
use crate::rng::Rng;
use crate::score::{INFINITY, MATE, MATE_BOUND, Score};
use crate::search::{Deadline, Searcher};
use crate::time::{TimeSource, system_time};
use crate::tt::TranspositionTable;

/// The deepest iteration the engine starts, whatever the limits say.
pub const MAX_DEPTH: u32 = 64;

/// Time left on a player's clock.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Clock {
    /// Time left for the rest of the game.
    pub remaining: Duration,
    /// Time added after each move.
    pub increment: Duration,
}

/// When to stop searching: the first limit reached ends the search (the
/// stop flag passed to [`Engine::search`] always does too). With no limit
/// at all the search runs until the stop flag is set or it finds a mate.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Spend at most this long.
    pub movetime: Option<Duration>,
    /// The engine's clock: it spends what its level thinks right
    /// ([`Level::think_time`]).
    pub clock: Option<Clock>,
    /// Search at most this many plies deep (iterations).
    pub depth: Option<u32>,
    /// Visit at most about this many nodes.
    pub nodes: Option<u64>,
}

impl Limits {
    /// No limit: search until stopped (UCI `go infinite`).
    pub fn infinite() -> Limits {
        Limits::default()
    }

    /// Spend at most `movetime`.
    pub fn movetime(movetime: Duration) -> Limits {
        Limits {
            movetime: Some(movetime),
            ..Limits::default()
        }
    }

    /// Search `depth` plies deep.
    pub fn depth(depth: u32) -> Limits {
        Limits {
            depth: Some(depth),
            ..Limits::default()
        }
    }

    /// Visit about `nodes` nodes (deterministic, unlike time).
    pub fn nodes(nodes: u64) -> Limits {
        Limits {
            nodes: Some(nodes),
            ..Limits::default()
        }
    }

    /// Play on a clock with `remaining` time and `increment` per move.
    pub fn clock(remaining: Duration, increment: Duration) -> Limits {
        Limits {
            clock: Some(Clock {
                remaining,
                increment,
            }),
            ..Limits::default()
        }
    }

    /// The time this search may take at `level`, if limited.
    fn time_budget(&self, level: Level) -> Option<Duration> {
        let from_clock = self
            .clock
            .map(|c| level.think_time(Some(c.remaining), c.increment));
        match (self.movetime, from_clock) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// What a search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchResult {
    /// The move to play; `None` only when the position has no legal move
    /// (the game is over by checkmate or stalemate).
    pub best_move: Option<Move>,
    /// The position's value for the side to move.
    pub score: Score,
    /// The depth of the last completed iteration, in plies.
    pub depth: u32,
    /// The deepest ply reached, quiescence and extensions included.
    pub seldepth: u32,
    /// Positions visited.
    pub nodes: u64,
    /// Time spent.
    pub elapsed: Duration,
    /// The principal variation: the best move and the expected reply line.
    pub pv: Vec<Move>,
}

impl SearchResult {
    /// Nodes per second.
    pub fn nps(&self) -> u64 {
        let micros = self.elapsed.as_micros().max(1);
        u64::try_from(u128::from(self.nodes) * 1_000_000 / micros).unwrap_or(u64::MAX)
    }
}

/// A chess engine playing at one [`Level`]. It keeps its transposition table
/// between searches (call [`Engine::new_game`] between games) and its random
/// generator, so a game played from the same seed is the same game.
#[derive(Debug)]
pub struct Engine {
    level: Level,
    rng: Rng,
    tt: TranspositionTable,
    time: TimeSource,
}

impl Engine {
    /// An engine at `level`; `seed` drives the easy level's choices.
    pub fn new(level: Level, seed: u64) -> Engine {
        Engine {
            level,
            rng: Rng::new(seed),
            tt: TranspositionTable::new(level.settings().hash_megabytes),
            time: system_time,
        }
    }

    /// Makes the engine keep time with `time` instead of the system's
    /// clock (a browser's, or a test's).
    pub fn set_time_source(&mut self, time: TimeSource) {
        self.time = time;
    }

    /// The level it plays at.
    pub fn level(&self) -> Level {
        self.level
    }

    /// Changes the level (this clears the transposition table).
    pub fn set_level(&mut self, level: Level) {
        self.level = level;
        self.tt = TranspositionTable::new(level.settings().hash_megabytes);
    }

    /// Forgets what earlier searches learned, for a new game.
    pub fn new_game(&mut self) {
        self.tt.clear();
    }

    /// Chooses a move in `position`.
    ///
    /// `history` holds the Zobrist keys ([`Position::zobrist_key`]) of the
    /// positions played earlier in the game, oldest first, so the engine
    /// knows which moves repeat a position (it avoids repeating when ahead and
    /// seeks it when behind). `position`'s own key may end the list or not.
    /// Pass `&[]` for a position without history.
    ///
    /// The search ends at the first of `limits` reached, or soon after `stop`
    /// becomes true; it always completes a one-ply search first, so there is
    /// a move to play whenever the position has one.
    pub fn search(
        &mut self,
        position: &Position,
        history: &[u64],
        limits: Limits,
        stop: &AtomicBool,
    ) -> SearchResult {
        self.search_with_info(position, history, limits, stop, |_| {})
    }

    /// Like [`Engine::search`], calling `on_iteration` with the result of
    /// every completed iteration (for UCI `info` lines).
    pub fn search_with_info(
        &mut self,
        position: &Position,
        history: &[u64],
        limits: Limits,
        stop: &AtomicBool,
        mut on_iteration: impl FnMut(&SearchResult),
    ) -> SearchResult {
        let time = self.time;
        let start = time();
        let elapsed = || time().saturating_sub(start);
        let settings = self.level.settings();
        let budget = limits.time_budget(self.level);
        let max_depth = [Some(MAX_DEPTH), limits.depth, settings.max_depth]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(MAX_DEPTH)
            .max(1);

        let legal = position.legal_moves();
        let Some(&first_legal) = legal.first() else {
            let score = if position.is_check() {
                Score::Mate(0)
            } else {
                Score::Centipawns(0)
            };
            return SearchResult {
                best_move: None,
                score,
                depth: 0,
                seldepth: 0,
                nodes: 0,
                elapsed: elapsed(),
                pv: Vec::new(),
            };
        };

        let key = position.zobrist_key();
        let game_keys = match history.split_last() {
            Some((&last, earlier)) if last == key => earlier,
            _ => history,
        };
        let deadline = Deadline {
            stop,
            time,
            hard_deadline: budget.map(|b| start + b),
            node_limit: limits.nodes,
        };
        let mut searcher = Searcher::new(&mut self.tt, deadline, game_keys);
        let mut result = SearchResult {
            best_move: Some(first_legal),
            score: Score::Centipawns(0),
            depth: 0,
            seldepth: 0,
            nodes: 0,
            elapsed: Duration::ZERO,
            pv: vec![first_legal],
        };

        if settings.noise > 0 {
            // Easy level: score every root move, then choose with noise.
            let mut scored = Vec::new();
            for depth in 1..=max_depth {
                searcher.can_abort = depth > 1;
                let this_depth = searcher.score_root_moves(position, depth as i32);
                if searcher.aborted {
                    break;
                }
                scored = this_depth;
                result.depth = depth;
            }
            let noise = if self.rng.one_in(settings.blunder_one_in) {
                settings.blunder_noise
            } else {
                settings.noise
            };
            let mut best: Option<(Move, i32, i32)> = None;
            for &(m, score) in &scored {
                let jitter = self.rng.symmetric(noise);
                // Mates are never blurred: a beginner-level engine that walks
                // into mate in one, or misses it, looks broken, not weak.
                let noisy = if score.abs() >= MATE_BOUND {
                    score
                } else {
                    score + jitter
                };
                if best.is_none_or(|(_, _, b)| noisy > b) {
                    best = Some((m, score, noisy));
                }
            }
            if let Some((m, score, _)) = best {
                result.best_move = Some(m);
                result.score = Score::from_internal(score);
                result.pv = vec![m];
            }
            result.nodes = searcher.nodes;
            result.seldepth = searcher.seldepth as u32;
            result.elapsed = elapsed();
            on_iteration(&result);
            return result;
        }

        let mut previous_score = 0;
        for depth in 1..=max_depth {
            searcher.can_abort = depth > 1;
            let score = aspiration_search(&mut searcher, position, depth, previous_score);
            previous_score = score;
            if searcher.aborted {
                // A root move that finished searching and beat the previous
                // best is trustworthy even though the iteration is not.
                if let Some(&m) = searcher.root_pv().first() {
                    result.best_move = Some(m);
                    result.pv = searcher.root_pv().to_vec();
                }
                break;
            }
            result.best_move = searcher.root_pv().first().copied().or(result.best_move);
            result.pv = searcher.root_pv().to_vec();
            if result.pv.is_empty() {
                result.pv = result.best_move.into_iter().collect();
            }
            result.score = Score::from_internal(score);
            result.depth = depth;
            result.seldepth = searcher.seldepth as u32;
            result.nodes = searcher.nodes;
            result.elapsed = elapsed();
            on_iteration(&result);

            // A mate within the searched depth is exact: deeper adds nothing.
            if score.abs() >= MATE_BOUND && (MATE - score.abs()) as u32 <= depth {
                break;
            }
            if let Some(budget) = budget {
                // The next iteration takes a few times longer than this one:
                // past half the budget it would almost surely be cut off.
                if elapsed() >= budget / 2 || legal.len() == 1 {
                    break;
                }
            }
        }
        result.nodes = searcher.nodes;
        result.seldepth = result.seldepth.max(searcher.seldepth as u32);
        result.elapsed = elapsed();
        result
    }
}

/// Searches the root to `depth` in a narrow window around the previous
/// iteration's score, which is usually close and makes for quicker cutoffs,
/// widening it whenever the true score falls outside.
fn aspiration_search(searcher: &mut Searcher, root: &Position, depth: u32, previous: i32) -> i32 {
    let mut margin = 35;
    let (mut alpha, mut beta) = if depth >= 4 && previous.abs() < MATE_BOUND {
        (previous - margin, previous + margin)
    } else {
        (-INFINITY, INFINITY)
    };
    loop {
        let score = searcher.search_root(root, depth as i32, alpha, beta);
        if searcher.aborted {
            return score;
        }
        if score <= alpha && alpha > -INFINITY {
            alpha = (score - margin).max(-INFINITY);
        } else if score >= beta && beta < INFINITY {
            beta = (score + margin).min(INFINITY);
        } else {
            return score;
        }
        margin *= 3;
        if margin > 1000 {
            alpha = -INFINITY;
            beta = INFINITY;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_engine_can_move_to_a_blocking_thread() {
        fn assert_send<T: Send + 'static>() {}
        assert_send::<Engine>();
        assert_send::<SearchResult>();
    }

    /// A clock that moves 5 ms every time it is read.
    fn hurried_time() -> Duration {
        use std::sync::atomic::{AtomicU64, Ordering};
        static READINGS: AtomicU64 = AtomicU64::new(0);
        Duration::from_millis(5 * READINGS.fetch_add(1, Ordering::Relaxed))
    }

    /// A clock that never moves.
    fn frozen_time() -> Duration {
        Duration::from_secs(1)
    }

    #[test]
    fn the_engine_keeps_time_only_with_its_time_source() {
        let position = chess_rules::Position::startpos();
        let stop = AtomicBool::new(false);

        // Time runs out after about 40 readings of this clock: the search
        // stops long before the depth it could reach in no time.
        let mut hurried = Engine::new(Level::Hard, 1);
        hurried.set_time_source(hurried_time);
        let limits = Limits {
            depth: Some(30),
            ..Limits::movetime(Duration::from_millis(200))
        };
        let result = hurried.search(&position, &[], limits, &stop);
        assert!(result.best_move.is_some());
        assert!(result.depth < 30, "stopped at depth {}", result.depth);
        assert!(
            result.elapsed >= Duration::from_millis(100),
            "{:?}",
            result.elapsed
        );
        // Measured on that clock too: whole steps of 5 ms.
        assert_eq!(
            result.elapsed.as_nanos() % 5_000_000,
            0,
            "{:?}",
            result.elapsed
        );

        // A clock that never moves never ends a search: the depth does.
        let mut unhurried = Engine::new(Level::Hard, 1);
        unhurried.set_time_source(frozen_time);
        let limits = Limits {
            depth: Some(4),
            ..Limits::movetime(Duration::from_millis(1))
        };
        let result = unhurried.search(&position, &[], limits, &stop);
        assert_eq!(result.depth, 4);
        assert_eq!(result.elapsed, Duration::ZERO);
    }

    #[test]
    fn a_clock_and_a_movetime_give_the_smaller_budget() {
        let ms = Duration::from_millis;
        let both = Limits {
            movetime: Some(ms(200)),
            ..Limits::clock(ms(60_000), ms(0))
        };
        assert_eq!(both.time_budget(Level::Hard), Some(ms(200)));
        let clock_only = Limits::clock(ms(5_050), ms(0));
        assert_eq!(clock_only.time_budget(Level::Hard), Some(ms(200)));
        assert_eq!(Limits::depth(5).time_budget(Level::Hard), None);
        assert_eq!(Limits::infinite().time_budget(Level::Easy), None);
    }
}
