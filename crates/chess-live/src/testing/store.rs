//! A [`GameStore`] in memory, with the behaviour of `chess-server`'s SQL
//! stores where the live games can tell, and failures on request.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};

use chess_game::GameResult;
use futures_util::future::BoxFuture;
use tokio::sync::watch;
use uuid::Uuid;

use crate::clock::UnixMs;
use crate::model::GameStage;
use crate::rows::{GameRow, MoveRow, PlayerRow};
use crate::store::{
    Batch, BatchOutcome, BatchPath, GameStore, SeatClaim, StoreError, StoreErrorKind, StoreResult,
    WriteOutcome,
};

/// Games, moves, players and nodes in memory, behind the [`GameStore`]
/// seam, as the SQL stores keep them:
///
/// - a batch is one transaction: every item lands or (on any error) none;
/// - a game change is a compare-and-set on its version, and one that lost
///   is answered [`WriteOutcome::Conflict`] alone while the rest lands;
/// - new players with a known id are left as they are; a game, a move
///   ply or a seat pointing at what does not exist is refused (the
///   primary and foreign keys), failing the batch;
/// - a seat is claimed only in an open game whose seat is empty;
/// - on a shared store ([`MemoryStore::shared`]) a batch's notices are
///   made and kept only when it commits, and [`GameStore::notify`] keeps
///   what it is given; a store nobody shares keeps none.
///
/// A test makes it fail the ways the invariants talk about
/// ([`MemoryStore::fail_next_batch`], [`MemoryStore::lose_next_commit_answer`],
/// [`MemoryStore::fail_reads`]), changes a game behind its host's back as
/// another node would ([`MemoryStore::edit_game`]), holds batches to look at
/// the node while a commit is under way ([`MemoryStore::hold_batches`]), and
/// reads what is stored.
#[derive(Debug)]
pub struct MemoryStore {
    shared: bool,
    data: Mutex<Data>,
    faults: Mutex<Faults>,
    /// Counts every change to `data`: what [`MemoryStore::wait_for_game`] watches.
    changes: watch::Sender<u64>,
    /// Whether batches wait before they are written.
    held: watch::Sender<bool>,
    /// How many batches wait at the gate now.
    waiting: watch::Sender<usize>,
}

/// What is stored.
#[derive(Clone, Debug, Default)]
struct Data {
    players: HashMap<Uuid, PlayerRow>,
    games: HashMap<Uuid, GameRow>,
    moves: HashMap<Uuid, BTreeMap<i64, MoveRow>>,
    /// Each node's name and last heartbeat.
    nodes: HashMap<Uuid, (String, UnixMs)>,
    /// Notices sent, by channel, oldest first.
    notices: HashMap<String, Vec<String>>,
    /// The endings whose reward a batch settled, in order.
    settled: Vec<(Uuid, GameResult)>,
    /// Batches committed.
    batches: usize,
    /// The moment the latest look for due games asked about.
    last_due_query: Option<UnixMs>,
}

/// The failures asked for.
#[derive(Debug, Default)]
struct Faults {
    /// What the next batches do instead of committing, one per batch.
    batches: VecDeque<BatchFault>,
    /// Every read fails so while set.
    reads: Option<StoreErrorKind>,
}

#[derive(Clone, Copy, Debug)]
enum BatchFault {
    /// Nothing is stored and the batch fails so.
    Fail(StoreErrorKind),
    /// The batch commits, and its answer is lost: it fails in doubt.
    CommitThenLose,
}

impl Default for MemoryStore {
    fn default() -> MemoryStore {
        MemoryStore::new()
    }
}

impl MemoryStore {
    /// An empty store that one node owns (as an SQLite file):
    /// [`GameStore::is_shared`] is false.
    pub fn new() -> MemoryStore {
        MemoryStore::with_sharing(false)
    }

    /// An empty store that several nodes share (as Postgres): held copies
    /// may go stale and notices are kept for the test to hand on.
    pub fn shared() -> MemoryStore {
        MemoryStore::with_sharing(true)
    }

    fn with_sharing(shared: bool) -> MemoryStore {
        MemoryStore {
            shared,
            data: Mutex::default(),
            faults: Mutex::default(),
            changes: watch::Sender::new(0),
            held: watch::Sender::new(false),
            waiting: watch::Sender::new(0),
        }
    }

    // What a test reads.

    /// The stored row of game `id`.
    pub fn stored_game(&self, id: Uuid) -> Option<GameRow> {
        self.data().games.get(&id).cloned()
    }

    /// The stored moves of game `id`, in ply order.
    pub fn stored_moves(&self, id: Uuid) -> Vec<MoveRow> {
        self.data()
            .moves
            .get(&id)
            .map(|moves| moves.values().cloned().collect())
            .unwrap_or_default()
    }

    /// The stored player `id`.
    pub fn stored_player(&self, id: Uuid) -> Option<PlayerRow> {
        self.data().players.get(&id).cloned()
    }

    /// The nodes registered now, with their last heartbeat.
    pub fn stored_nodes(&self) -> HashMap<Uuid, (String, UnixMs)> {
        self.data().nodes.clone()
    }

    /// How many batches committed.
    pub fn batches(&self) -> usize {
        self.data().batches
    }

    /// Waits until a look for due games (the sweeper's) has asked about
    /// `moment` or later: a sweep of the time as it is now has been made.
    /// Never ends if none does: bound it with a timeout.
    pub async fn swept(&self, moment: UnixMs) {
        let mut changes = self.changes.subscribe();
        while self.data().last_due_query < Some(moment) {
            if changes.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }

    /// The endings whose reward a committed batch settled, in order.
    pub fn settled(&self) -> Vec<(Uuid, GameResult)> {
        self.data().settled.clone()
    }

    /// The notices sent on `channel` since the last call, oldest first (a
    /// store nobody shares sends none).
    pub fn take_notices(&self, channel: &str) -> Vec<String> {
        self.data().notices.remove(channel).unwrap_or_default()
    }

    /// Waits until the stored row of game `id` satisfies `done`; that row.
    /// Never ends if it does not: bound it with a timeout.
    pub async fn wait_for_game(&self, id: Uuid, done: impl Fn(&GameRow) -> bool) -> GameRow {
        let mut changes = self.changes.subscribe();
        loop {
            if let Some(row) = self.stored_game(id).filter(|row| done(row)) {
                return row;
            }
            if changes.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }

    // What a test changes.

    /// Changes the stored row of game `id` by hand, as another node or an
    /// operator would, behind its host's back; `false` if there is no such game.
    pub fn edit_game(&self, id: Uuid, edit: impl FnOnce(&mut GameRow)) -> bool {
        let edited = self.data().games.get_mut(&id).map(edit).is_some();
        self.changed();
        edited
    }

    /// The next batch fails with `kind`, storing nothing (as a database
    /// that is out of reach, refuses the write or has no room).
    pub fn fail_next_batch(&self, kind: StoreErrorKind) {
        self.faults().batches.push_back(BatchFault::Fail(kind));
    }

    /// The next batch commits and then fails [in doubt](StoreErrorKind::InDoubt):
    /// the connection broke with only the commit's answer lost.
    pub fn lose_next_commit_answer(&self) {
        self.faults().batches.push_back(BatchFault::CommitThenLose);
    }

    /// Every read (games, versions, moves, players, due games) fails with
    /// `kind` while it is `Some`.
    pub fn fail_reads(&self, kind: Option<StoreErrorKind>) {
        self.faults().reads = kind;
    }

    /// Batches wait, unwritten, until [`MemoryStore::release_batches`].
    pub fn hold_batches(&self) {
        self.held.send_replace(true);
    }

    /// Batches held go on, and later ones are written at once.
    pub fn release_batches(&self) {
        self.held.send_replace(false);
    }

    /// Waits until a batch is held, unwritten, at the gate.
    pub async fn batch_held(&self) {
        let mut waiting = self.waiting.subscribe();
        let _ = waiting.wait_for(|waiting| *waiting > 0).await;
    }

    // Inside.

    fn data(&self) -> MutexGuard<'_, Data> {
        self.data.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn faults(&self) -> MutexGuard<'_, Faults> {
        self.faults.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn changed(&self) {
        self.changes.send_modify(|count| *count += 1);
    }

    /// A read: the failure asked for, else `read` of what is stored.
    fn read<T>(&self, read: impl FnOnce(&Data) -> T) -> StoreResult<T> {
        if let Some(kind) = self.faults().reads {
            return Err(StoreError::new(kind, "reads fail (as asked)"));
        }
        Ok(read(&self.data()))
    }

    /// Waits while batches are held.
    async fn gate(&self) {
        let mut held = self.held.subscribe();
        if !*held.borrow_and_update() {
            return;
        }
        self.waiting.send_modify(|waiting| *waiting += 1);
        let _ = held.wait_for(|held| !*held).await;
        self.waiting.send_modify(|waiting| *waiting -= 1);
    }

    /// Writes `batch` as one transaction: on a copy of what is stored,
    /// which replaces it only if every item could be written.
    fn commit(
        &self,
        batch: &Batch,
        announce: &(dyn Fn(&BatchOutcome) -> Vec<String> + Sync),
        channel: &str,
    ) -> StoreResult<BatchOutcome> {
        let mut data = self.data();
        let mut next = data.clone();
        let mut outcome = write(&mut next, batch)?;
        if self.shared {
            let notices = announce(&outcome);
            outcome.notices_sent = notices.len();
            next.notices
                .entry(channel.to_owned())
                .or_default()
                .extend(notices);
        }
        next.batches += 1;
        *data = next;
        drop(data);
        self.changed();
        Ok(outcome)
    }
}

/// Writes `batch` into `data` in the real stores' order (players, new
/// games, seats, changes); what became of each item, or the error that
/// fails the whole batch (`data` is then a copy to throw away).
fn write(data: &mut Data, batch: &Batch) -> StoreResult<BatchOutcome> {
    for player in &batch.players {
        data.players
            .entry(player.id)
            .or_insert_with(|| player.clone());
    }
    for game in &batch.games {
        insert_game(data, game)?;
    }
    let claimed = batch
        .claims
        .iter()
        .map(|claim| claim_seat(data, claim))
        .collect::<StoreResult<Vec<bool>>>()?;
    let mut writes = Vec::with_capacity(batch.writes.len());
    for write in &batch.writes {
        let stored = data.games.get(&write.row.id).map(|row| row.version);
        if stored != Some(write.expected_version) {
            writes.push(WriteOutcome::Conflict);
            continue;
        }
        if let Some(rematch) = &write.rematch {
            insert_game(data, rematch)?;
        }
        seats_exist(data, &write.row)?;
        let moves = data.moves.entry(write.row.id).or_default();
        if let Some(keep) = write.keep_moves {
            moves.split_off(&i64::from(keep));
        }
        for mv in &write.new_moves {
            if moves.insert(mv.ply, mv.clone()).is_some() {
                return Err(refused(format!(
                    "game {} has a move at ply {} already",
                    write.row.id, mv.ply
                )));
            }
        }
        if let Some(row) = data.games.get_mut(&write.row.id) {
            // The columns a change writes; the rest are the game's for good.
            let new = &write.row;
            row.white_id = new.white_id;
            row.black_id = new.black_id;
            row.status = new.status;
            row.result.clone_from(&new.result);
            row.state.clone_from(&new.state);
            row.version = new.version;
            row.rematch_id = new.rematch_id;
            row.updated_at = new.updated_at;
            row.deadline_at = new.deadline_at;
            row.recent_events.clone_from(&new.recent_events);
            row.premove_nodes = new.premove_nodes;
        }
        if let Some(result) = &write.settle {
            data.settled.push((write.row.id, *result));
        }
        writes.push(WriteOutcome::Written);
    }
    // As the real stores: in one go unless a write takes moves back, starts
    // a rematch or lost its compare-and-set (the rated endings that also go
    // statement by statement are the store's business).
    let one_go = batch
        .writes
        .iter()
        .all(|write| write.rematch.is_none() && write.keep_moves.is_none())
        && writes
            .iter()
            .all(|outcome| *outcome == WriteOutcome::Written);
    Ok(BatchOutcome {
        claimed,
        writes,
        notices_sent: 0,
        path: if one_go {
            BatchPath::OneStatement
        } else {
            BatchPath::Statements
        },
    })
}

fn insert_game(data: &mut Data, game: &GameRow) -> StoreResult<()> {
    seats_exist(data, game)?;
    if data.games.contains_key(&game.id) {
        return Err(refused(format!("game {} exists already", game.id)));
    }
    data.games.insert(game.id, game.clone());
    Ok(())
}

/// The foreign keys of a game's seats.
fn seats_exist(data: &Data, game: &GameRow) -> StoreResult<()> {
    for player in [game.white_id, game.black_id].into_iter().flatten() {
        if !data.players.contains_key(&player) {
            return Err(refused(format!("no player {player}")));
        }
    }
    Ok(())
}

/// The seat of `claim`, taken only in an open game whose seat is empty.
fn claim_seat(data: &mut Data, claim: &SeatClaim) -> StoreResult<bool> {
    if !data.players.contains_key(&claim.player) {
        return Err(refused(format!("no player {}", claim.player)));
    }
    let Some(row) = data.games.get_mut(&claim.game) else {
        return Ok(false);
    };
    let seat = if claim.white {
        &mut row.white_id
    } else {
        &mut row.black_id
    };
    if row.status != GameStage::Open || seat.is_some() {
        return Ok(false);
    }
    *seat = Some(claim.player);
    row.state.clone_from(&claim.state);
    row.status = GameStage::Playing;
    row.updated_at = claim.now;
    row.deadline_at = claim.deadline_at;
    Ok(true)
}

fn refused(message: String) -> StoreError {
    StoreError::new(StoreErrorKind::Refused, message)
}

impl GameStore for MemoryStore {
    fn is_shared(&self) -> bool {
        self.shared
    }

    fn game(&self, id: Uuid) -> BoxFuture<'_, StoreResult<Option<GameRow>>> {
        let found = self.read(|data| data.games.get(&id).cloned());
        Box::pin(async move { found })
    }

    fn game_version(&self, id: Uuid) -> BoxFuture<'_, StoreResult<Option<i64>>> {
        let found = self.read(|data| data.games.get(&id).map(|row| row.version));
        Box::pin(async move { found })
    }

    fn moves_from(&self, id: Uuid, from_ply: usize) -> BoxFuture<'_, StoreResult<Vec<MoveRow>>> {
        let from = i64::try_from(from_ply).unwrap_or(i64::MAX);
        let found = self.read(|data| {
            data.moves
                .get(&id)
                .map(|moves| moves.range(from..).map(|(_, mv)| mv.clone()).collect())
                .unwrap_or_default()
        });
        Box::pin(async move { found })
    }

    fn player(&self, id: Uuid) -> BoxFuture<'_, StoreResult<Option<PlayerRow>>> {
        let found = self.read(|data| data.players.get(&id).cloned());
        Box::pin(async move { found })
    }

    fn set_deadline(
        &self,
        id: Uuid,
        version: i64,
        deadline_at: Option<UnixMs>,
    ) -> BoxFuture<'_, StoreResult<bool>> {
        let set = match self.data().games.get_mut(&id) {
            Some(row) if row.version == version => {
                row.deadline_at = deadline_at;
                true
            }
            _ => false,
        };
        self.changed();
        Box::pin(async move { Ok(set) })
    }

    fn due_games(&self, now: UnixMs, limit: i64) -> BoxFuture<'_, StoreResult<Vec<Uuid>>> {
        self.data().last_due_query = Some(now);
        self.changed();
        let found = self.read(|data| {
            let mut due: Vec<(UnixMs, Uuid)> = data
                .games
                .values()
                .filter(|row| row.status == GameStage::Playing)
                .filter_map(|row| Some((row.deadline_at?, row.id)))
                .filter(|(deadline, _)| *deadline <= now)
                .collect();
            due.sort_unstable();
            due.truncate(usize::try_from(limit).unwrap_or(0));
            due.into_iter().map(|(_, id)| id).collect()
        });
        Box::pin(async move { found })
    }

    fn register_node<'a>(
        &'a self,
        id: Uuid,
        name: &'a str,
        now: UnixMs,
    ) -> BoxFuture<'a, StoreResult<()>> {
        let mut data = self.data();
        data.nodes
            .retain(|node, (known, _)| *node != id && known != name);
        data.nodes.insert(id, (name.to_owned(), now));
        drop(data);
        Box::pin(async move { Ok(()) })
    }

    fn heartbeat<'a>(
        &'a self,
        id: Uuid,
        name: &'a str,
        now: UnixMs,
        alive_since: UnixMs,
    ) -> BoxFuture<'a, StoreResult<Vec<Uuid>>> {
        let mut data = self.data();
        data.nodes
            .entry(id)
            .and_modify(|(_, heartbeat)| *heartbeat = now)
            .or_insert_with(|| (name.to_owned(), now));
        let alive = data
            .nodes
            .iter()
            .filter(|(_, (_, heartbeat))| *heartbeat >= alive_since)
            .map(|(node, _)| *node)
            .collect();
        drop(data);
        Box::pin(async move { Ok(alive) })
    }

    fn remove_node(&self, id: Uuid) -> BoxFuture<'_, StoreResult<()>> {
        self.data().nodes.remove(&id);
        Box::pin(async move { Ok(()) })
    }

    fn write_batch<'a>(
        &'a self,
        batch: &'a Batch,
        channel: &'a str,
        announce: &'a (dyn Fn(&BatchOutcome) -> Vec<String> + Sync),
    ) -> BoxFuture<'a, StoreResult<BatchOutcome>> {
        Box::pin(async move {
            self.gate().await;
            let fault = self.faults().batches.pop_front();
            match fault {
                None => self.commit(batch, announce, channel),
                Some(BatchFault::Fail(kind)) => {
                    Err(StoreError::new(kind, "the batch failed (as asked)"))
                }
                Some(BatchFault::CommitThenLose) => {
                    self.commit(batch, announce, channel)?;
                    Err(StoreError::new(
                        StoreErrorKind::InDoubt,
                        "the connection broke during the commit (as asked)",
                    ))
                }
            }
        })
    }

    fn notify<'a>(
        &'a self,
        channel: &'a str,
        payloads: &'a [String],
    ) -> BoxFuture<'a, StoreResult<()>> {
        if self.shared {
            self.data()
                .notices
                .entry(channel.to_owned())
                .or_default()
                .extend(payloads.iter().cloned());
        }
        Box::pin(async move { Ok(()) })
    }
}
