//! Catching up with changes other nodes made to a hosted game: following a
//! change from its notice when it continues the game as held, else
//! rereading the row (and only the moves played since), and replaying the
//! missed events to the connections in order, or a full state when they
//! are not all known.

use std::borrow::Cow;
use std::collections::VecDeque;

use chess_game::Event;

use super::commit::{remember_recent, version_i64};
use super::{Entry, Owner};
use crate::model::GameStage;
use crate::notice::{ChangeNotice, GameChange};
use crate::rows::GameRow;
use crate::store::StoreResult;
use crate::stored;
use crate::view::Outgoing;

impl Owner {
    /// Whether the stored game moved past this copy. Never on a store no other
    /// node shares: every change to a game this node hosts goes through
    /// this owner, so the copy is what is stored (a read per full state and
    /// per refused command, four for every game set up, saved).
    pub(super) async fn is_stale(&self) -> bool {
        if !self.context.store.is_shared() {
            return false;
        }
        match self.store().game_version(self.id()).await {
            Ok(Some(stored)) => stored != self.entry.row.version,
            Ok(None) => false,
            Err(error) => {
                tracing::warn!(%error, "reading a game's stored version failed");
                false
            }
        }
    }

    /// Brings the game up to date with the store after another node changed
    /// it (or a compare-and-set was lost), replaying the missed events to the
    /// connections in order when the row still holds them all, else sending
    /// everyone a full state.
    pub(super) async fn catch_up(&mut self) {
        self.reload(false).await;
    }

    /// [`Owner::catch_up`]; `always` replaces the game even when the stored
    /// version is the one held (the held game cannot be trusted).
    pub(super) async fn reload(&mut self, always: bool) {
        let cached = self.entry.game.version();
        let before_status = self.entry.row.status;
        let Some(row) = reread(self.store().game(self.id()).await) else {
            return;
        };
        let seats_changed =
            row.white_id != self.entry.row.white_id || row.black_id != self.entry.row.black_id;
        if !always
            && !seats_changed
            && row.version == self.entry.row.version
            && row.status == before_status
        {
            return;
        }
        // A joined challenge starts a new game: everyone needs the full state.
        let seats_changed = seats_changed || before_status == GameStage::Open;
        if !always && !seats_changed && self.advance_to(&row).await {
            self.entry.row = row;
        } else {
            let Some(fresh) = reread(Entry::load(self.store(), self.id()).await) else {
                return;
            };
            // The connections are this node's, whatever the store says.
            let connections = std::mem::take(&mut self.entry.connections);
            let premove_owners = self.entry.premove_owners;
            let remote_presence = std::mem::take(&mut self.entry.remote_presence);
            self.entry = fresh;
            self.entry.connections = connections;
            self.entry.premove_owners = premove_owners;
            self.entry.remote_presence = remote_presence;
        }
        let recent = parse_recent(&self.entry.row);
        // New seats make a new game: no replay, everyone gets the full state.
        let missed: Vec<Event> = if seats_changed {
            Vec::new()
        } else {
            recent
                .iter()
                .filter(|event| event.version > cached)
                .cloned()
                .collect()
        };
        self.recent = recent;
        self.replay_or_resync(cached, missed);
    }

    /// Another node committed a change, as `notice` says: follow it from
    /// the notice when it continues the game as held, else reread the game.
    pub(super) async fn changed_elsewhere(&mut self, notice: Option<Box<ChangeNotice<'static>>>) {
        // A seat taken keeps the version and carries no change: reread.
        if let Some(notice) = notice
            && let ChangeNotice {
                version,
                change: Some(change),
                ..
            } = *notice
        {
            if version <= self.entry.row.version {
                // Already held: this node reread the row since.
                return;
            }
            if self.follow(change) {
                return;
            }
        }
        self.context.telemetry.remote_change(false);
        self.catch_up().await;
    }

    /// Applies another node's `change` without reading the store, when it
    /// was made over the version held, with the seats held, and its moves
    /// continue the held ones; `false` (nothing changed) otherwise.
    fn follow(&mut self, change: GameChange<'static>) -> bool {
        let row = &self.entry.row;
        if row.version != change.from_version
            || row.status == GameStage::Open
            || row.white_id != change.white_id
            || row.black_id != change.black_id
        {
            return false;
        }
        let cached = self.entry.game.version();
        let held_moves = self.entry.game.moves().len();
        if change
            .moves
            .first()
            .is_some_and(|first| usize::try_from(first.ply).ok() != Some(held_moves))
        {
            return false;
        }
        if let Err(error) = stored::advance(&mut self.entry.game, &change.state, &change.moves) {
            tracing::warn!(%error, "a notice's change does not continue the held game");
            return false;
        }
        let row = &mut self.entry.row;
        row.status = change.status;
        row.result = change.result.map(Cow::into_owned);
        row.state = change.state.into_owned();
        row.version = version_i64(self.entry.game.version());
        row.updated_at = change.updated_at;
        row.deadline_at = change.deadline_at;
        row.premove_nodes = change.premove_nodes;
        let events = change.events.into_owned();
        remember_recent(&mut self.recent, events.iter().cloned());
        // Counted before the connections hear of it (a test reads the count
        // once they have).
        self.context.telemetry.remote_change(true);
        self.replay_or_resync(cached, events);
        true
    }

    /// Sends the connections the events that brought the game from version
    /// `cached` to the one held, when `missed` is exactly those; else a full
    /// state.
    fn replay_or_resync(&mut self, cached: u64, missed: Vec<Event>) {
        let replayable = missed
            .first()
            .is_some_and(|event| event.version == cached + 1)
            && missed
                .last()
                .is_some_and(|event| event.version == self.entry.game.version());
        tracing::debug!(
            from = cached,
            to = self.entry.game.version(),
            replayable,
            "caught up with another node's change"
        );
        if replayable {
            self.broadcast(missed, self.context.now());
        } else {
            self.entry.history.clear();
            let _ = self.outbox.send(std::sync::Arc::new(Outgoing::Resync));
        }
    }

    /// Brings the held game up to the stored `row` reading only the moves
    /// played since; `false` (the game unchanged) when the stored moves do
    /// not continue the held ones (moves were taken back) or cannot be read.
    async fn advance_to(&mut self, row: &GameRow) -> bool {
        let held = self.entry.game.moves().len();
        // From the last held move: it must still be stored as it is held.
        let from = held.saturating_sub(1);
        let rows = match self.store().moves_from(self.id(), from).await {
            Ok(rows) => rows,
            Err(error) => {
                tracing::warn!(%error, "reading a game's new moves failed");
                return false;
            }
        };
        let new = match self.entry.game.moves().last() {
            None => &rows[..],
            Some(last) => match rows.split_first() {
                Some((first, new)) if stored::is_move(first, last) => new,
                _ => return false,
            },
        };
        match stored::advance(&mut self.entry.game, &row.state, new) {
            Ok(()) => true,
            Err(error) => {
                tracing::warn!(%error, "the stored game does not continue the held one");
                false
            }
        }
    }
}

/// The recent events a row keeps for other nodes, oldest first.
pub(super) fn parse_recent(row: &GameRow) -> VecDeque<Event> {
    serde_json::from_str(&row.recent_events).unwrap_or_else(|error| {
        tracing::warn!(%error, game_id = %row.id, "unreadable recent events; other nodes will resync");
        VecDeque::new()
    })
}

/// What a hosted game's reread found, if it found it: a row that vanished
/// or a store that failed leaves the game as held (and is logged).
fn reread<T>(found: StoreResult<Option<T>>) -> Option<T> {
    match found {
        Ok(Some(found)) => Some(found),
        Ok(None) => {
            tracing::error!("a hosted game's row vanished");
            None
        }
        Err(error) => {
            tracing::error!(%error, "rereading a game failed");
            None
        }
    }
}
