//! The computer's side of a game against it: when the computer is to move,
//! the owner starts a search off the async workers and plays its move when
//! it arrives, unless the game moved on meanwhile.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use chess_engine::{Engine, Level};
use chess_rules::{Color, Move};
use tokio::task::JoinHandle;

use super::{Entry, Owner};
use crate::clock::UnixMs;
use crate::command::{Command, Refusal};
use crate::model::{GameMode, PlayerKind, Seat};

/// A computer move being searched: the ply it is for and the search.
pub(super) struct Thinking {
    ply: u32,
    color: Color,
    pub(super) search: JoinHandle<Option<Move>>,
}

impl Owner {
    /// Starts the engine if the computer is to move and no search runs.
    pub(super) fn think(&mut self) {
        if self.thinking.is_some() {
            return;
        }
        let Some(input) = search_input(&self.entry, self.context.now()) else {
            return;
        };
        let (ply, color) = (input.ply, input.turn);
        let search = tokio::task::spawn_blocking(move || input.search());
        self.thinking = Some(Thinking { ply, color, search });
    }

    /// Plays the engine's move, unless the game moved on meanwhile (a
    /// take-back): then the next search starts from the new position.
    pub(super) async fn on_searched(&mut self, best: Option<Move>) {
        let Some(thinking) = self.thinking.take() else {
            return;
        };
        let Some(best) = best else {
            tracing::warn!(ply = thinking.ply, "the engine found no move");
            return;
        };
        if self.entry.game.ply() != thinking.ply || !self.entry.is_playing() {
            return;
        }
        let command = Command::Move {
            uci: best.to_uci(),
            ply: thinking.ply,
        };
        if let Err(refusal) = self
            .apply(Seat::of(thinking.color), command, self.context.now())
            .await
        {
            tracing::info!(
                ply = thinking.ply,
                code = refusal.code(),
                "the engine's move was not played"
            );
            if matches!(refusal, Refusal::Unavailable | Refusal::Busy) {
                // Do not search in a loop against a failing or saturated store.
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

/// What the engine needs to choose a move, copied out of the game.
struct SearchInput {
    level: Level,
    position: chess_rules::Position,
    history: Vec<u64>,
    remaining: Option<Duration>,
    increment: Duration,
    seed: u64,
    turn: Color,
    ply: u32,
}

impl SearchInput {
    /// The engine's move (blocking: run it off the async workers).
    fn search(self) -> Option<Move> {
        let mut engine = Engine::new(self.level, self.seed);
        let stop = AtomicBool::new(false);
        let limits = self.level.limits(self.remaining, self.increment);
        engine
            .search(&self.position, &self.history, limits, &stop)
            .best_move
    }
}

/// The search to run if the computer is to move in `entry`'s game at `now`.
fn search_input(entry: &Entry, now: UnixMs) -> Option<SearchInput> {
    if entry.row.mode != GameMode::Computer || !entry.is_playing() {
        return None;
    }
    let turn = entry.game.turn();
    let computer_moves = entry
        .players
        .get(turn)
        .as_ref()
        .is_some_and(|player| player.kind == PlayerKind::Computer);
    if !computer_moves {
        return None;
    }
    let level = entry
        .row
        .computer_level
        .and_then(|level| u8::try_from(level).ok())
        .and_then(Level::from_number)?;
    let ply = entry.game.ply();
    Some(SearchInput {
        level,
        position: entry.game.position().clone(),
        history: (0..ply)
            .filter_map(|i| entry.game.position_at(i).map(|p| p.zobrist_key()))
            .collect(),
        remaining: entry
            .game
            .remaining_ms(now.millis())
            .map(|clocks| Duration::from_millis(*clocks.get(turn))),
        increment: Duration::from_millis(entry.game.time_control().increment_ms().unwrap_or(0)),
        // Different games and moves play differently; the game id keeps it reproducible.
        seed: u64::from(ply)
            ^ u64::try_from(entry.row.id.as_u128() & u128::from(u64::MAX)).unwrap_or(0),
        turn,
        ply,
    })
}
