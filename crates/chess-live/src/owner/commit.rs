//! A change becomes real: it is written through the node's writer as a
//! compare-and-set on the game's version, and only once that committed is
//! it acknowledged and broadcast. A change that could not be stored is
//! undone, so the held game is always the stored one.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use chess_game::{Checkpoint, Event, EventKind, Game};
use chess_rules::{ByColor, Color};

use super::{Entry, Owner, OwnerReport};
use crate::clock::UnixMs;
use crate::command::{Command, Refusal};
use crate::model::GameStage;
use crate::notice::{ChangeNotice, GameChange};
use crate::rows::GameRow;
use crate::store::{GameWrite, WriteOutcome};
use crate::stored;
use crate::view::{EventView, Outgoing, SharedSituation, public_event, status_of};
use crate::writer::WriteError;

/// Longest wait for the store to say whether a commit in doubt went through.
const IN_DOUBT_CHECK: Duration = Duration::from_secs(1);
/// The latest events kept in the row for other nodes to replay.
const RECENT_EVENTS: usize = 8;

/// How a game returns to what is stored when a change applied to it could
/// not be stored (the database refused it or another node changed the game).
pub(super) enum Undo {
    /// Rewind to a checkpoint: cheap, for every change but a take-back.
    Rewind(Checkpoint),
    /// Put back a copy of the whole game: a take-back removes history that a
    /// checkpoint does not keep.
    Restore(Box<Game>),
}

impl Undo {
    /// The way back from `command` about to run on `game`.
    pub(super) fn before(game: &Game, command: &Command) -> Undo {
        match command {
            Command::Takeback => Undo::Restore(Box::new(game.clone())),
            _ => Undo::Rewind(game.checkpoint()),
        }
    }

    /// How many moves the game had before the change.
    fn moves_before(&self) -> usize {
        match self {
            Undo::Rewind(checkpoint) => checkpoint.moves(),
            Undo::Restore(game) => game.moves().len(),
        }
    }
}

impl Owner {
    /// Stores the game's change (reached by `events`, already applied to the
    /// game; `undo` returns to the stored game) through the node's writer as
    /// a compare-and-set on the stored version, then broadcasts the events.
    /// When the change cannot be stored the game is returned to what is
    /// stored.
    pub(super) async fn commit(
        &mut self,
        events: Vec<Event>,
        undo: Undo,
        now: UnixMs,
    ) -> Result<(), Refusal> {
        if events.is_empty() {
            return Ok(());
        }
        let shared = self.context.store.is_shared();
        let next = &self.entry.game;
        let took_back = events
            .iter()
            .any(|event| matches!(event.kind, EventKind::TakeBack { .. }));
        let first_new = if took_back {
            next.moves().len()
        } else {
            undo.moves_before()
        };
        let new_moves: Vec<_> = (first_new..next.moves().len())
            .filter_map(|ply| stored::move_row(next, ply))
            .collect();
        // Only other nodes read the recent events: a store no other node
        // shares need not carry (and rewrite) them.
        let mut recent = VecDeque::new();
        if shared {
            recent = self.recent.clone();
            remember_recent(&mut recent, events.iter().cloned());
        }

        let mut row = self.entry.row.clone();
        row.status = status_of(next, row.status);
        row.result = stored::result_json(next);
        row.state = stored::state_json(next);
        row.version = version_i64(next.version());
        row.updated_at = now;
        row.deadline_at = stored_deadline(next, row.status);
        // Which node's connection set each premove: the one that must play
        // it, and whose end voids it (`Owner::void_orphan_premoves`).
        row.premove_nodes = ByColor::new_with(|color| {
            if next.premove(color).is_none() {
                None
            } else if self.entry.owns_premove(color) {
                Some(self.context.node())
            } else {
                *self.entry.row.premove_nodes.get(color)
            }
        });
        row.recent_events = if recent.is_empty() {
            "[]".to_owned()
        } else {
            serde_json::to_string(&recent).unwrap_or_else(|_| "[]".to_owned())
        };

        let rematch = events
            .iter()
            .any(|event| matches!(event.kind, EventKind::RematchAccepted { .. }))
            .then(|| next.rematch_spec())
            .flatten()
            .map(|spec| self.rematch_of(spec, now));
        if let Some((new_row, _)) = &rematch {
            row.rematch_id = Some(new_row.id);
        }
        // The change that ends the game settles its reward in the same
        // transaction: exactly once, within the daily cap.
        let settle = (self.entry.row.status != GameStage::Finished
            && row.status == GameStage::Finished)
            .then(|| next.result())
            .flatten();
        // Other nodes follow the change from its notice, unless it takes
        // moves back or starts a rematch (they reread those).
        let notice = (shared && !took_back && rematch.is_none()).then(|| {
            ChangeNotice {
                id: row.id,
                version: row.version,
                change: Some(GameChange {
                    from_version: self.entry.row.version,
                    white_id: row.white_id,
                    black_id: row.black_id,
                    status: row.status,
                    result: row.result.as_deref().map(Cow::Borrowed),
                    state: Cow::Borrowed(&row.state),
                    updated_at: row.updated_at,
                    deadline_at: row.deadline_at,
                    premove_nodes: row.premove_nodes,
                    moves: Cow::Borrowed(&new_moves),
                    events: Cow::Borrowed(&events),
                }),
            }
            .to_json()
        });
        let write = GameWrite {
            row: row.clone(),
            expected_version: self.entry.row.version,
            keep_moves: took_back.then(|| u32::try_from(next.moves().len()).unwrap_or(u32::MAX)),
            new_moves,
            settle,
            rematch: rematch.as_ref().map(|(new_row, _)| new_row.clone()),
            notice,
        };
        let written = match self.context.writer.write(write).await {
            Err(WriteError::InDoubt(error)) => self.outcome_of_failed_write(&row, error).await,
            written => written,
        };
        match written {
            Ok(WriteOutcome::Written) => {}
            Ok(WriteOutcome::Conflict) => {
                self.undo(undo).await;
                self.catch_up().await;
                return Err(Refusal::Conflict);
            }
            Err(error) => {
                self.undo(undo).await;
                return Err(match error {
                    WriteError::Busy => Refusal::Busy,
                    WriteError::Unavailable(_) | WriteError::InDoubt(_) | WriteError::Stopped => {
                        Refusal::Unavailable
                    }
                });
            }
        }

        tracing::debug!(
            version = row.version,
            events = ?events.iter().map(|event| event.kind.code()).collect::<Vec<_>>(),
            "committed"
        );
        self.entry.row = row;
        self.recent = recent;
        self.broadcast(events, now);
        if let Some((new_row, new_game)) = rematch {
            let players = ByColor {
                white: self.entry.players.black.clone(),
                black: self.entry.players.white.clone(),
            };
            let _ = self
                .context
                .reports
                .send(OwnerReport::Rematch(Box::new(Entry::new(
                    new_row, new_game, players,
                ))));
        }
        Ok(())
    }

    /// A write whose commit failed may be stored all the same: the `COMMIT`
    /// went through and only its answer was lost with the connection. Asks
    /// the store (on another connection) which it was, so that a move is not
    /// refused although it was played: the row as written means stored.
    /// Anything else stays a refusal; if the write was stored after all and
    /// the store could not say so now, the next write's compare-and-set
    /// fails and the owner rereads the game.
    async fn outcome_of_failed_write(
        &self,
        attempted: &GameRow,
        error: String,
    ) -> Result<WriteOutcome, WriteError> {
        // Bounded: a database that stays away must not hold up the refusal.
        let stored = tokio::time::timeout(IN_DOUBT_CHECK, self.store().game(attempted.id)).await;
        match stored {
            Ok(Ok(Some(stored))) if was_stored(&stored, attempted) => {
                tracing::warn!(
                    %error,
                    "a write reported as failed was stored all the same; going on with it"
                );
                Ok(WriteOutcome::Written)
            }
            _ => Err(WriteError::Unavailable(error)),
        }
    }

    /// Returns the game to what is stored after a change that was not.
    pub(super) async fn undo(&mut self, undo: Undo) {
        let undone = match undo {
            Undo::Rewind(checkpoint) => self.entry.game.rewind(checkpoint).is_ok(),
            Undo::Restore(game) => {
                self.entry.game = *game;
                true
            }
        };
        if !undone {
            tracing::error!("a change that was not stored could not be undone; rereading the game");
            self.reload(true).await;
        }
    }

    /// Sends `events` (already part of the game) to every connection, in order.
    pub(super) fn broadcast(&mut self, events: Vec<Event>, now: UnixMs) {
        let entry = &mut self.entry;
        let situation = SharedSituation::of(&entry.game, entry.row.mode, entry.row.status, now);
        let mut rematch = None;
        for event in events {
            let public = match &event.kind {
                EventKind::RematchAccepted { .. } => {
                    rematch = entry.row.rematch_id;
                    rematch.map(|game_id| EventView::RematchStarted { game_id })
                }
                kind => public_event(kind),
            };
            let outgoing = Arc::new(Outgoing::Event {
                version: event.version,
                kind: event.kind,
                public,
                situation: Box::new(situation.clone()),
            });
            entry.remember(&outgoing);
            let _ = self.outbox.send(outgoing);
        }
        if let Some(game_id) = rematch {
            let _ = self.outbox.send(Arc::new(Outgoing::Redirect { game_id }));
        }
    }
}

/// The version of the event in which `color` played ply `ply`, if it did.
pub(super) fn move_version(events: &[Event], ply: u32, color: Color) -> Option<u64> {
    events.iter().find_map(|event| match &event.kind {
        EventKind::Move {
            ply: played_ply,
            color: mover,
            ..
        } if *played_ply == ply && *mover == color => Some(event.version),
        _ => None,
    })
}

/// The deadline stored with a game in `status`: when a timer must look at it.
pub(crate) fn stored_deadline(game: &Game, status: GameStage) -> Option<UnixMs> {
    if status != GameStage::Playing || game.is_over() {
        return None;
    }
    game.next_deadline().map(UnixMs::from_millis)
}

/// A game's version as the row stores it.
pub(super) fn version_i64(version: u64) -> i64 {
    i64::try_from(version).unwrap_or(i64::MAX)
}

/// Adds `events` to the recent events kept for other nodes, dropping the
/// oldest beyond [`RECENT_EVENTS`].
pub(super) fn remember_recent(
    recent: &mut VecDeque<Event>,
    events: impl IntoIterator<Item = Event>,
) {
    recent.extend(events);
    while recent.len() > RECENT_EVENTS {
        recent.pop_front();
    }
}

/// Whether `stored` is the row `attempted` wrote: the same version, state
/// and time (another node's change from the same version would differ in
/// its state or its time).
fn was_stored(stored: &GameRow, attempted: &GameRow) -> bool {
    stored.version == attempted.version
        && stored.updated_at == attempted.updated_at
        && stored.state == attempted.state
}

#[cfg(test)]
mod failed_writes {
    use uuid::Uuid;

    use super::*;
    use crate::model::GameMode;

    fn row(version: i64, state: &str, updated_at: i64) -> GameRow {
        GameRow {
            id: Uuid::nil(),
            mode: GameMode::Online,
            white_id: None,
            black_id: None,
            computer_level: None,
            time_control: "{}".to_owned(),
            status: GameStage::Playing,
            result: None,
            state: state.to_owned(),
            version,
            rematch_of: None,
            rematch_id: None,
            created_at: UnixMs::from_stored(0),
            updated_at: UnixMs::from_stored(updated_at),
            deadline_at: None,
            recent_events: "[]".to_owned(),
            premove_nodes: ByColor::default(),
        }
    }

    #[test]
    fn the_row_as_written_means_the_write_was_stored() {
        let attempted = row(8, r#"{"moves":["e2e4"]}"#, 1_000);
        assert!(was_stored(&attempted.clone(), &attempted));
    }

    #[test]
    fn the_version_before_or_another_change_means_it_was_not() {
        let attempted = row(8, r#"{"moves":["e2e4"]}"#, 1_000);
        let before = row(7, "{}", 900);
        assert!(!was_stored(&before, &attempted));
        let other_node = row(8, r#"{"moves":["d2d4"]}"#, 1_000);
        assert!(!was_stored(&other_node, &attempted));
        let same_move_later = row(8, r#"{"moves":["e2e4"]}"#, 1_001);
        assert!(!was_stored(&same_move_later, &attempted));
    }
}
