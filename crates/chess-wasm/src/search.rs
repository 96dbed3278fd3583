//! The engine's searches as the page's worker asks for them: the computer's
//! move at its level, or an analysis of a position to a depth or for a time.
//!
//! Requests and reports are JSON (`web/js/engine-worker.js` sends and reads
//! them); a position comes as the game's initial FEN and its moves, so the
//! engine knows which moves repeat a position, as the server's does.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use chess_engine::{Engine, Level, Limits, Score, SearchResult, TimeSource};
use chess_rules::{GameRecord, Position};
use serde::{Deserialize, Serialize};

/// A search the worker asks for.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchRequest {
    /// The game's first position; the standard one when absent.
    #[serde(default)]
    pub initial_fen: Option<String>,
    /// The moves played from it, in UCI.
    #[serde(default)]
    pub moves: Vec<String>,
    /// The level whose settings the search uses (1 or 2).
    pub level: u8,
    pub limit: SearchLimit,
}

/// How long a search runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SearchLimit {
    /// The level's own time for a move with this much on the engine's clock
    /// (none: an untimed game), as the server's computer plays.
    Move {
        #[serde(default)]
        remaining_ms: Option<u64>,
        #[serde(default)]
        increment_ms: u64,
    },
    /// Complete this many iterations.
    Depth { depth: u32 },
    /// Search for this long.
    Movetime { ms: u64 },
}

/// A score for the side to move: centipawns, or mate in so many moves
/// (negative: being mated).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ScoreReport {
    Cp(i32),
    Mate(i32),
}

impl From<Score> for ScoreReport {
    fn from(score: Score) -> ScoreReport {
        match score {
            Score::Centipawns(cp) => ScoreReport::Cp(cp),
            Score::Mate(moves) => ScoreReport::Mate(moves),
        }
    }
}

/// What a search (or one of its iterations) found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SearchReport {
    /// The move to play in UCI; `None` when the position has no legal move.
    pub best_move: Option<String>,
    pub score: ScoreReport,
    pub depth: u32,
    pub seldepth: u32,
    pub nodes: u64,
    pub elapsed_ms: u64,
    pub nps: u64,
    /// The expected line, in UCI and in SAN.
    pub pv: Vec<String>,
    pub pv_san: Vec<String>,
}

impl SearchReport {
    fn of(position: &Position, result: &SearchResult) -> SearchReport {
        let mut pv_san = Vec::with_capacity(result.pv.len());
        let mut line = position.clone();
        for mv in &result.pv {
            pv_san.push(line.san(mv));
            match line.play(mv) {
                Ok(next) => line = next,
                Err(_) => break,
            }
        }
        SearchReport {
            best_move: result.best_move.map(|mv| mv.to_uci().to_string()),
            score: result.score.into(),
            depth: result.depth,
            seldepth: result.seldepth,
            nodes: result.nodes,
            elapsed_ms: u64::try_from(result.elapsed.as_millis()).unwrap_or(u64::MAX),
            nps: result.nps(),
            pv: result.pv.iter().map(|mv| mv.to_uci().to_string()).collect(),
            pv_san,
        }
    }
}

/// Why a request could not be searched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchError {
    BadRequest(String),
    BadLevel(u8),
    BadFen(String),
    IllegalMove { ply: usize, uci: String },
}

impl std::fmt::Display for SearchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SearchError::BadRequest(reason) => write!(f, "bad search request: {reason}"),
            SearchError::BadLevel(level) => write!(f, "the level is 1 or 2, not {level}"),
            SearchError::BadFen(reason) => write!(f, "bad FEN: {reason}"),
            SearchError::IllegalMove { ply, uci } => {
                write!(f, "move {} ({uci}) is not legal there", ply + 1)
            }
        }
    }
}

impl std::error::Error for SearchError {}

/// The engine of one page: it keeps its transposition table between
/// searches, as the server's engine does between the moves of a game.
#[derive(Debug)]
pub struct Analyst {
    engine: Engine,
}

impl Analyst {
    /// An engine whose easy level draws its choices from `seed`, keeping
    /// time with `time`.
    pub fn new(seed: u64, time: TimeSource) -> Analyst {
        let mut engine = Engine::new(Level::Hard, seed);
        engine.set_time_source(time);
        Analyst { engine }
    }

    /// Forgets what earlier searches learnt (a new game).
    pub fn new_game(&mut self) {
        self.engine.new_game();
    }

    /// Runs `request` (JSON), calling `on_iteration` with each completed
    /// iteration's report.
    ///
    /// # Errors
    /// A request that does not parse, names no level, or holds a bad FEN or
    /// an illegal move.
    pub fn search(
        &mut self,
        request: &str,
        mut on_iteration: impl FnMut(&SearchReport),
    ) -> Result<SearchReport, SearchError> {
        let request: SearchRequest = serde_json::from_str(request)
            .map_err(|err| SearchError::BadRequest(err.to_string()))?;
        let level =
            Level::from_number(request.level).ok_or(SearchError::BadLevel(request.level))?;
        let (position, history) = replay(request.initial_fen.as_deref(), &request.moves)?;
        if self.engine.level() != level {
            self.engine.set_level(level);
        }
        let limits = match request.limit {
            SearchLimit::Move {
                remaining_ms,
                increment_ms,
            } => level.limits(
                remaining_ms.map(Duration::from_millis),
                Duration::from_millis(increment_ms),
            ),
            SearchLimit::Depth { depth } => Limits::depth(depth),
            SearchLimit::Movetime { ms } => Limits::movetime(Duration::from_millis(ms)),
        };
        // A page's search is never stopped from outside: the page ends one it
        // no longer wants by ending its worker.
        let stop = AtomicBool::new(false);
        let result =
            self.engine
                .search_with_info(&position, &history, limits, &stop, |iteration| {
                    on_iteration(&SearchReport::of(&position, iteration));
                });
        Ok(SearchReport::of(&position, &result))
    }
}

/// The position after `moves` from `initial_fen` (the standard start when
/// `None`), and the keys of every position of the game in order.
///
/// # Errors
/// A bad FEN or a move that is not legal where it is played.
pub fn replay(
    initial_fen: Option<&str>,
    moves: &[String],
) -> Result<(Position, Vec<u64>), SearchError> {
    let initial = match initial_fen {
        Some(fen) => Position::from_fen(fen).map_err(|err| SearchError::BadFen(err.to_string()))?,
        None => Position::startpos(),
    };
    let mut history = vec![initial.zobrist_key()];
    let mut record = GameRecord::new(initial);
    for (ply, uci) in moves.iter().enumerate() {
        record.push_uci(uci).map_err(|_| SearchError::IllegalMove {
            ply,
            uci: uci.clone(),
        })?;
        history.push(record.position().zobrist_key());
    }
    Ok((record.position().clone(), history))
}
