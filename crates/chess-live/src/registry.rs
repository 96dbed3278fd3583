//! The registry of this node's live games: one owner task per game, loaded
//! from the store on first use and unloaded when idle. It also runs the
//! node's background work: the group-commit writer, the sweeper that flags
//! games nobody hosts, the heartbeat that tells which nodes are alive, and
//! (on a shared store) the sender of this node's presence notices.
//!
//! Other nodes' notices reach it from above: the server's listener hands
//! them to [`Registry::changed_elsewhere`] and
//! [`Registry::presence_elsewhere`].

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use chess_engine::Level;
use chess_game::{Game, GameSpec};
use chess_rules::{ByColor, Color};
use tokio::sync::{mpsc, oneshot, watch};
use tracing::Instrument;
use uuid::Uuid;

use crate::clock::{Clock, SystemClock, UnixMs};
use crate::command::{Applied, Command, Refusal};
use crate::model::{GameMode, GameStage, PlayerKind};
use crate::nodes::{HEARTBEAT_EVERY, NodeDirectory};
use crate::notice::{
    ChangeNotice, GAMES_CHANNEL, PRESENCE_CHANNEL, PresenceNotice, PresenceOutbox,
};
use crate::owner::{
    Entry, Freshness, GameHandle, Gone, JoinError, Owner, OwnerContext, OwnerReport,
    stored_deadline,
};
use crate::rows::{GameRow, PlayerRow};
use crate::store::{Batch, GameStore, GameWrite, StoreError, StoreResult, WriteOutcome};
use crate::stored;
use crate::telemetry::Telemetry;
use crate::time_control;
use crate::view::{GameSnapshot, StateView};
use crate::writer::{LiveGames, Writer, WriterSettings};

/// How often the sweeper looks for games whose deadline passed.
const SWEEP_EVERY: Duration = Duration::from_millis(500);
/// Most due games loaded per sweep.
const SWEEP_BATCH: i64 = 200;
/// How long presence notices that could not be sent wait before the next try.
const PRESENCE_RETRY: Duration = Duration::from_secs(1);
/// How many times a request retries a game whose owner unloaded meanwhile.
const GONE_RETRIES: usize = 3;

/// The fixed player ids of the computer's two levels.
pub fn computer_id(level: Level) -> Uuid {
    Uuid::from_u128(0xc0c0_0000_0000_4000_8000_0000_0000_0000 | u128::from(level.number()))
}

/// The computer's player row at `level`.
pub fn computer_player(level: Level) -> PlayerRow {
    PlayerRow {
        id: computer_id(level),
        kind: PlayerKind::Computer,
        name: format!("Computer (level {})", level.number()),
        created_at: UnixMs::EPOCH,
        bot: false,
    }
}

/// The row of a game as it begins (`game` just made, at `now`): open while
/// a seat is empty, else playing, at version 0.
fn first_row(new: &NewGame, game: &Game, now: UnixMs) -> GameRow {
    let open = new.white.is_none() || new.black.is_none();
    let status = if open {
        GameStage::Open
    } else {
        GameStage::Playing
    };
    GameRow {
        id: new.id,
        mode: new.mode,
        white_id: new.white.as_ref().map(|p| p.id),
        black_id: new.black.as_ref().map(|p| p.id),
        computer_level: new.computer_level.map(|level| i64::from(level.number())),
        time_control: time_control::to_json(game.time_control()).to_string(),
        status,
        result: None,
        state: stored::state_json(game),
        version: 0,
        rematch_of: None,
        rematch_id: None,
        created_at: now,
        updated_at: now,
        deadline_at: stored_deadline(game, status),
        recent_events: "[]".to_owned(),
        premove_nodes: ByColor::default(),
    }
}

/// Who sits where in a new game.
#[derive(Clone, Debug)]
pub struct NewGame {
    /// The game's id: new, or the id of what it grows out of (an accepted
    /// challenge keeps its id, so a client following the challenge finds
    /// its game).
    pub id: Uuid,
    pub mode: GameMode,
    pub spec: GameSpec,
    /// `None` leaves the seat empty (an open challenge).
    pub white: Option<PlayerRow>,
    pub black: Option<PlayerRow>,
    pub computer_level: Option<Level>,
}

/// How a node's registry runs.
#[derive(Clone, Debug)]
pub struct RegistrySettings {
    /// The node's name (its address): a restarted node's earlier runs
    /// under the same name are gone.
    pub node_name: String,
    /// Milliseconds each side has for its first move in online games on a
    /// clock.
    pub first_move_deadline_ms: u64,
    /// How the node's writer batches.
    pub writer: WriterSettings,
}

type Loaded = Result<Option<GameHandle>, StoreError>;

/// A game in the registry: being loaded (with the requests waiting for it),
/// or live.
#[derive(Debug)]
enum Slot {
    Loading(Vec<oneshot::Sender<Loaded>>),
    Live(GameHandle),
}

/// The live games of this node.
#[derive(Debug)]
pub struct Registry {
    /// What every owner gets; the registry's own store, writer and nodes.
    context: Arc<OwnerContext>,
    games: Mutex<HashMap<Uuid, Slot>>,
    live_games: LiveGames,
    /// The sweeper, heartbeat and presence sender: awaited before the store
    /// closes.
    background: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl Registry {
    /// A registry over `store`, reporting to `telemetry`; its tasks stop
    /// when `shutdown` turns true. Starts the writer; [`Registry::start`]
    /// starts the rest of the background work. The writer's task is
    /// returned so that the node can wait for its last commit. Its time is
    /// the system's ([`SystemClock`]).
    pub fn new(
        store: Arc<dyn GameStore>,
        settings: RegistrySettings,
        telemetry: Arc<dyn Telemetry>,
        shutdown: watch::Receiver<bool>,
    ) -> (Arc<Registry>, tokio::task::JoinHandle<()>) {
        Registry::with_clock(store, settings, telemetry, shutdown, Arc::new(SystemClock))
    }

    /// [`Registry::new`] keeping time by `clock`: every moment the node's
    /// games read (clocks, deadlines, idle unloads) and every wait of its
    /// sweeper and heartbeat. Tests pass a clock they move by hand.
    pub fn with_clock(
        store: Arc<dyn GameStore>,
        settings: RegistrySettings,
        telemetry: Arc<dyn Telemetry>,
        shutdown: watch::Receiver<bool>,
        clock: Arc<dyn Clock>,
    ) -> (Arc<Registry>, tokio::task::JoinHandle<()>) {
        let nodes = Arc::new(NodeDirectory::new(
            Arc::clone(&store),
            settings.node_name,
            Arc::clone(&clock),
        ));
        let live_games = LiveGames::default();
        let (writer, writer_task) = Writer::start(
            Arc::clone(&store),
            nodes.this_node(),
            Arc::clone(&telemetry),
            live_games.clone(),
            settings.writer,
        );
        let (reports, report_inbox) = mpsc::unbounded_channel();
        let context = Arc::new(OwnerContext {
            store,
            writer,
            nodes,
            presence: Arc::new(PresenceOutbox::default()),
            first_move_deadline_ms: settings.first_move_deadline_ms,
            telemetry,
            reports,
            shutdown,
            clock,
        });
        let registry = Arc::new(Registry {
            context,
            games: Mutex::new(HashMap::new()),
            live_games,
            background: Mutex::new(Vec::new()),
        });
        tokio::spawn(take_reports(Arc::downgrade(&registry), report_inbox));
        (registry, writer_task)
    }

    /// Registers this node and starts the sweeper, the heartbeat and, on a
    /// shared store, the sender of presence notices.
    ///
    /// # Errors
    /// The store's failure to register the node.
    pub async fn start(self: &Arc<Self>) -> StoreResult<()> {
        self.context.nodes.register().await?;
        let span = tracing::info_span!("node", node = %self.node_id());
        let mut tasks = vec![
            tokio::spawn(Arc::clone(self).sweep().instrument(span.clone())),
            tokio::spawn(Arc::clone(self).heartbeat().instrument(span.clone())),
        ];
        if self.context.store.is_shared() {
            tasks.push(tokio::spawn(
                Arc::clone(self).send_presence().instrument(span),
            ));
        }
        self.lock_background().extend(tasks);
        Ok(())
    }

    /// This node's id (new at every start).
    pub fn node_id(&self) -> Uuid {
        self.context.node()
    }

    /// A receiver that turns true when the node shuts down.
    pub fn shutdown_signal(&self) -> watch::Receiver<bool> {
        self.context.shutdown.clone()
    }

    /// How many games this node hosts now.
    pub fn live_games(&self) -> usize {
        self.lock_games().len()
    }

    /// How full the node's writer queue is (0 to 1; see [`Writer::backlog`]).
    pub fn writer_backlog(&self) -> f64 {
        self.context.writer.backlog()
    }

    /// Stores a new player (an existing id is left unchanged) with the
    /// node's next group commit.
    ///
    /// # Errors
    /// The store's failure, or an unavailable writer.
    pub async fn insert_player(&self, player: PlayerRow) -> StoreResult<()> {
        self.context.writer.insert_player(player).await
    }

    /// Stores the computer's players so games can point at them.
    ///
    /// # Errors
    /// The store's failure.
    pub async fn ensure_computer_players(&self) -> StoreResult<()> {
        for level in Level::ALL {
            self.context
                .writer
                .insert_player(computer_player(level))
                .await?;
        }
        Ok(())
    }

    /// The live game `id`, loading it from the store when this node does not
    /// host it yet. Concurrent requests for one game share one load; loads of
    /// different games do not wait for each other.
    ///
    /// # Errors
    /// A storage failure or a corrupt game.
    pub async fn get(self: &Arc<Self>, id: Uuid) -> StoreResult<Option<GameHandle>> {
        let waiting = {
            let mut games = self.lock_games();
            match games.get_mut(&id) {
                Some(Slot::Live(handle)) if !handle.is_closed() => {
                    return Ok(Some(handle.clone()));
                }
                Some(Slot::Loading(waiters)) => {
                    let (sender, receiver) = oneshot::channel();
                    waiters.push(sender);
                    Some(receiver)
                }
                // Not hosted, or its owner unloaded and has not said so yet.
                Some(Slot::Live(_)) | None => {
                    games.insert(id, Slot::Loading(Vec::new()));
                    None
                }
            }
        };
        match waiting {
            Some(receiver) => receiver
                .await
                .unwrap_or_else(|_| Err(StoreError::corrupt("the game's load was dropped"))),
            // A task of its own, so a caller that gives up (a timed-out
            // request) cannot leave the slot loading forever.
            None => {
                let registry = Arc::clone(self);
                tokio::spawn(async move { registry.load_and_install(id).await })
                    .await
                    .unwrap_or_else(|error| {
                        Err(StoreError::corrupt(format!(
                            "loading a game failed: {error}"
                        )))
                    })
            }
        }
    }

    async fn load_and_install(self: Arc<Self>, id: Uuid) -> Loaded {
        let loaded = Entry::load(self.context.store.as_ref(), id).await;
        let mut games = self.lock_games();
        let waiters = match games.remove(&id) {
            Some(Slot::Loading(waiters)) => waiters,
            Some(live @ Slot::Live(_)) => {
                games.insert(id, live);
                Vec::new()
            }
            None => Vec::new(),
        };
        let result = match loaded {
            Ok(Some(entry)) => Ok(Some(self.host(&mut games, entry))),
            Ok(None) => Ok(None),
            Err(error) => Err(error),
        };
        drop(games);
        for waiter in waiters {
            let _ = waiter.send(result.clone());
        }
        result
    }

    /// Starts the owner of `entry` and registers it.
    fn host(&self, games: &mut HashMap<Uuid, Slot>, entry: Entry) -> GameHandle {
        let id = entry.row.id;
        let handle = Owner::spawn(Arc::clone(&self.context), entry);
        games.insert(id, Slot::Live(handle.clone()));
        self.count_games(games);
        handle
    }

    /// Publishes how many games this node hosts (after a registry change).
    fn count_games(&self, games: &HashMap<Uuid, Slot>) {
        self.live_games.set(games.len());
        self.context.telemetry.live_games(games.len());
    }

    fn lock_games(&self) -> std::sync::MutexGuard<'_, HashMap<Uuid, Slot>> {
        // A panic while holding the registry lock cannot leave it half
        // changed (every change is one insert or remove): keep serving.
        self.games
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn lock_background(&self) -> std::sync::MutexGuard<'_, Vec<tokio::task::JoinHandle<()>>> {
        self.background
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// What an owner reported.
    fn on_report(&self, report: OwnerReport) {
        let mut games = self.lock_games();
        match report {
            OwnerReport::Stopped(handle) => {
                let ours = matches!(games.get(&handle.id()), Some(Slot::Live(live)) if live.same_owner(&handle));
                if ours {
                    games.remove(&handle.id());
                    self.count_games(&games);
                }
            }
            // A rematch is hosted where its game was played, unless a
            // request loaded it first.
            OwnerReport::Rematch(entry) => {
                let hosted = matches!(games.get(&entry.row.id), Some(Slot::Live(live)) if !live.is_closed())
                    || matches!(games.get(&entry.row.id), Some(Slot::Loading(_)));
                if !hosted {
                    self.host(&mut games, *entry);
                }
            }
        }
    }

    /// Creates and stores a new game and hosts it.
    ///
    /// # Errors
    /// The store's failure.
    pub async fn create(self: &Arc<Self>, new: NewGame) -> StoreResult<GameHandle> {
        let (row, game) = self.new_row(&new);
        self.context.writer.insert_game(row.clone()).await?;
        let players = ByColor {
            white: new.white,
            black: new.black,
        };
        let mut games = self.lock_games();
        Ok(self.host(&mut games, Entry::new(row, game, players)))
    }

    /// The row of `new` as [`Registry::create`] would store it, starting
    /// now, for a caller that stores it with more of its own (a
    /// tournament's pairings): once stored, the game loads where it is
    /// opened, like any game another node created.
    pub fn new_row(&self, new: &NewGame) -> (GameRow, Game) {
        let now = self.context.now();
        let game = Game::new(
            new.spec.clone(),
            self.context.settings_for(new.mode),
            now.millis(),
        );
        (first_row(new, &game, now), game)
    }

    /// Stores a finished game played elsewhere (in a browser: one screen or
    /// the computer) as it ended, seated as `new` says: its row and every
    /// move in one transaction, so it is in the players' archives whole or
    /// not at all. Nothing is hosted and no reward is settled (such games
    /// have one person in them). The caller has checked the game
    /// ([`Game::verify_result`]).
    ///
    /// Returns `false`, storing nothing, when a game with this id exists
    /// already (the same upload sent twice).
    ///
    /// # Errors
    /// The store's, when nothing was stored.
    pub async fn store_finished(&self, new: &NewGame, game: &Game) -> StoreResult<bool> {
        let store = self.context.store.as_ref();
        if store.game(new.id).await?.is_some() {
            return Ok(false);
        }
        let created_at = UnixMs::from_millis(game.created_at_ms());
        let ended_at = UnixMs::from_millis(game.saved().state.last_event_at_ms);
        // The game as it began, then the write that brings it to its end:
        // the one path every game's moves take into the store.
        let begun = Game::new(game.spec().clone(), *game.settings(), game.created_at_ms());
        let first = first_row(new, &begun, created_at);
        let last = GameRow {
            status: GameStage::Finished,
            result: stored::result_json(game),
            state: stored::state_json(game),
            version: i64::try_from(game.version()).unwrap_or(i64::MAX),
            updated_at: ended_at,
            deadline_at: None,
            ..first.clone()
        };
        let new_moves = (0..game.moves().len())
            .filter_map(|ply| stored::move_row(game, ply))
            .collect();
        let batch = Batch {
            games: vec![first],
            writes: vec![GameWrite {
                row: last,
                expected_version: 0,
                keep_moves: None,
                new_moves,
                settle: None,
                rematch: None,
                notice: None,
            }],
            ..Batch::default()
        };
        match store
            .write_batch(&batch, GAMES_CHANNEL, &|_| Vec::new())
            .await
        {
            Ok(outcome) => Ok(outcome.writes.first() == Some(&WriteOutcome::Written)),
            // Stored meanwhile by the same upload sent twice at once.
            Err(_) if store.game(new.id).await?.is_some() => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// Calls `call` with the handle of game `id` (loading it if needed),
    /// again with a fresh handle when the owner unloaded meanwhile; `None` if
    /// there is no such game. The one place a request goes back to the
    /// registry after an unload.
    pub(crate) async fn with_game<T, Call, Reply>(
        self: &Arc<Self>,
        id: Uuid,
        mut call: Call,
    ) -> StoreResult<Option<T>>
    where
        Call: FnMut(GameHandle) -> Reply,
        Reply: Future<Output = Result<T, Gone>>,
    {
        for _ in 0..GONE_RETRIES {
            let Some(handle) = self.get(id).await? else {
                return Ok(None);
            };
            if let Ok(value) = call(handle).await {
                return Ok(Some(value));
            }
        }
        Err(StoreError::corrupt("the game kept unloading"))
    }

    /// Game `id` copied out; `None` if there is no such game.
    ///
    /// # Errors
    /// A storage failure.
    pub async fn snapshot(
        self: &Arc<Self>,
        id: Uuid,
        freshness: Freshness,
    ) -> StoreResult<Option<GameSnapshot>> {
        self.with_game(id, |handle| async move { handle.snapshot(freshness).await })
            .await
    }

    /// The full state of game `id` for `viewer`; `None` if there is no such
    /// game.
    ///
    /// # Errors
    /// A storage failure.
    pub async fn state(
        self: &Arc<Self>,
        id: Uuid,
        viewer: Option<Uuid>,
        freshness: Freshness,
    ) -> StoreResult<Option<StateView>> {
        self.with_game(
            id,
            |handle| async move { handle.state(viewer, freshness).await },
        )
        .await
    }

    /// Runs `command` for `player` in game `id`, received at `now`: one
    /// request to the game's owner. `None` if there is no such game.
    ///
    /// # Errors
    /// A storage failure while loading the game.
    pub async fn command(
        self: &Arc<Self>,
        id: Uuid,
        player: Option<Uuid>,
        command: Command,
        now: UnixMs,
    ) -> StoreResult<Option<Result<Applied, Refusal>>> {
        self.with_game(id, |handle| {
            let command = command.clone();
            async move { handle.command(player, command, now).await }
        })
        .await
    }

    /// Seats `player` in open challenge `id`; `Ok(None)` if there is no such
    /// game.
    ///
    /// # Errors
    /// [`JoinError::Taken`] when the seat was taken first; a storage failure.
    pub async fn join(
        self: &Arc<Self>,
        id: Uuid,
        player: PlayerRow,
    ) -> Result<Option<Color>, JoinError> {
        let joined = self
            .with_game(id, |handle| {
                let player = player.clone();
                async move { handle.join(player).await }
            })
            .await?;
        joined.transpose()
    }

    /// The live handle of game `id`, if this node hosts it now.
    fn hosted(&self, id: Uuid) -> Option<GameHandle> {
        match self.lock_games().get(&id) {
            Some(Slot::Live(handle)) => Some(handle.clone()),
            _ => None,
        }
    }

    /// Every game this node hosts now.
    fn all_hosted(&self) -> Vec<GameHandle> {
        self.lock_games()
            .values()
            .filter_map(|slot| match slot {
                Slot::Live(handle) => Some(handle.clone()),
                Slot::Loading(_) => None,
            })
            .collect()
    }

    /// Another node committed a change to a game: the local owner, if any,
    /// catches up.
    pub fn changed_elsewhere(&self, notice: ChangeNotice<'static>) {
        if let Some(handle) = self.hosted(notice.id) {
            handle.changed_elsewhere(Some(Box::new(notice)));
        }
    }

    /// Every hosted game rereads its row (after notices may have been lost).
    pub fn catch_up_all(&self) {
        for handle in self.all_hosted() {
            handle.changed_elsewhere(None);
        }
    }

    /// Another node's presence in a game: its owner here, if any, takes note.
    pub fn presence_elsewhere(&self, notice: PresenceNotice) {
        if let Some(handle) = self.hosted(notice.game) {
            handle.presence_elsewhere(notice.node, notice.present, notice.asks);
        }
    }

    /// Every hosted game forgets what it knew of other nodes' presence and
    /// asks again (after notices may have been lost).
    pub fn resync_presence_all(&self) {
        for handle in self.all_hosted() {
            handle.resync_presence();
        }
    }

    /// Sends this node's presence notices, each game's latest, in one
    /// statement whenever some wait.
    async fn send_presence(self: Arc<Self>) {
        let mut shutdown = self.shutdown_signal();
        let outbox = Arc::clone(&self.context.presence);
        loop {
            let notices = tokio::select! {
                notices = outbox.take() => notices,
                _ = shutdown.changed() => return,
            };
            let payloads: Vec<String> = notices.iter().map(PresenceNotice::payload).collect();
            if let Err(error) = self.context.store.notify(PRESENCE_CHANNEL, &payloads).await {
                tracing::warn!(%error, notices = notices.len(), "telling other nodes who is connected failed; trying again");
                outbox.put_back(notices);
                tokio::select! {
                    () = tokio::time::sleep(PRESENCE_RETRY) => {}
                    _ = shutdown.changed() => return,
                }
            }
        }
    }

    /// Finds games whose stored deadline passed (on any node, hosted or not)
    /// and has their owner settle them. Several nodes may find the same
    /// game: the version compare-and-set lets exactly one ending be stored.
    async fn sweep(self: Arc<Self>) {
        let mut shutdown = self.shutdown_signal();
        loop {
            // The next sweep is due a period after this one began: a clock
            // that moved on meanwhile (a long sweep, a test moving it by
            // hand) brings it at once.
            let now = self.context.now();
            self.sweep_once(now).await;
            tokio::select! {
                () = self.context.clock.sleep_until(now.plus(SWEEP_EVERY)) => {}
                _ = shutdown.changed() => return,
            }
        }
    }

    /// One sweep: the games due at `now`, loaded and told to look at their clock.
    async fn sweep_once(self: &Arc<Self>, now: UnixMs) {
        let due = match self.context.store.due_games(now, SWEEP_BATCH).await {
            Ok(due) => due,
            Err(error) => {
                self.context.telemetry.store_error(&error);
                tracing::warn!(%error, "looking for due games failed");
                return;
            }
        };
        for id in due {
            match self.get(id).await {
                // A freshly loaded owner settles its clock at once; a
                // hosted one is told to look.
                Ok(Some(handle)) => handle.check_time(),
                Ok(None) => {}
                Err(error) => {
                    tracing::warn!(%error, game_id = %id, "loading a due game failed")
                }
            }
        }
    }

    /// Says this node is alive and learns which others are; whoever was
    /// connected through a node that died is gone.
    async fn heartbeat(self: Arc<Self>) {
        let mut shutdown = self.shutdown_signal();
        loop {
            let now = self.context.now();
            for node in self.context.nodes.refresh().await {
                for handle in self.all_hosted() {
                    handle.node_gone(node);
                }
            }
            tokio::select! {
                () = self.context.clock.sleep_until(now.plus(HEARTBEAT_EVERY)) => {}
                _ = shutdown.changed() => return,
            }
        }
    }

    /// After the shutdown signal: waits for the background tasks, stops the
    /// writer once the owners are gone (their commands in flight committed
    /// and answered) and tells the other nodes this one left (its premoves
    /// are void at once). Nothing uses the store after this.
    pub async fn stop(&self, grace: Duration) {
        let tasks = std::mem::take(&mut *self.lock_background());
        for task in tasks {
            let _ = tokio::time::timeout(grace, task).await;
        }
        let waited = tokio::time::timeout(grace, async {
            while self.live_games() > 0 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        if waited.is_err() {
            tracing::warn!(games = self.live_games(), "some games did not stop in time");
        }
        self.context.writer.stop();
        self.context.nodes.unregister().await;
    }
}

/// Applies what owners report to the registry, for as long as it exists.
async fn take_reports(registry: Weak<Registry>, mut reports: mpsc::UnboundedReceiver<OwnerReport>) {
    while let Some(report) = reports.recv().await {
        let Some(registry) = registry.upgrade() else {
            return;
        };
        registry.on_report(report);
    }
}

#[cfg(test)]
mod tests {
    use chess_game::GameSpec;

    use super::*;
    use crate::telemetry::NoTelemetry;
    use crate::testing::{ManualClock, MemoryStore};

    /// A registry over `store` (its writer commits at once).
    fn registry(store: &Arc<MemoryStore>) -> (Arc<Registry>, watch::Sender<bool>) {
        let (stop, shutdown) = watch::channel(false);
        let settings = RegistrySettings {
            node_name: "node-1".to_owned(),
            first_move_deadline_ms: 30_000,
            writer: WriterSettings {
                queue: 64,
                linger: Duration::ZERO,
            },
        };
        let store: Arc<dyn GameStore> = Arc::clone(store) as Arc<dyn GameStore>;
        let (registry, _writer) = Registry::with_clock(
            store,
            settings,
            Arc::new(NoTelemetry),
            shutdown,
            Arc::new(ManualClock::new()),
        );
        (registry, stop)
    }

    /// A stored game of one person at both seats, made by a registry of its own.
    async fn stored_game(store: &Arc<MemoryStore>) -> Uuid {
        let (maker, _stop) = registry(store);
        let alice = PlayerRow {
            id: Uuid::new_v4(),
            kind: PlayerKind::Guest,
            name: "alice".to_owned(),
            created_at: UnixMs::EPOCH,
            bot: false,
        };
        maker.insert_player(alice.clone()).await.expect("stored");
        let spec = GameSpec::standard("correspondence".parse().expect("a time control"));
        let game = maker
            .create(NewGame {
                id: Uuid::new_v4(),
                mode: GameMode::Local,
                spec,
                white: Some(alice.clone()),
                black: Some(alice),
                computer_level: None,
            })
            .await
            .expect("created");
        game.id()
    }

    /// Between an owner's unload and its report the registry still holds
    /// its closed handle: the next request loads the game afresh rather
    /// than talk to an owner that is gone.
    #[tokio::test]
    async fn a_closed_handle_is_replaced_by_a_fresh_load() {
        let store = Arc::new(MemoryStore::new());
        let id = stored_game(&store).await;
        let (registry, _stop) = registry(&store);
        registry
            .lock_games()
            .insert(id, Slot::Live(GameHandle::closed(id)));

        let snapshot = registry
            .snapshot(id, Freshness::Held)
            .await
            .expect("loaded")
            .expect("the game");

        assert_eq!(snapshot.id, id);
        let hosted = registry.hosted(id).expect("hosted again");
        assert!(!hosted.is_closed(), "the registry kept the closed handle");
        assert_eq!(registry.live_games(), 1);
    }

    /// `with_game` is the one retry loop: a request that met a closing
    /// owner is made again with a fresh handle, a bounded number of times.
    #[tokio::test]
    async fn a_request_gone_under_it_is_tried_again_then_given_up() {
        let store = Arc::new(MemoryStore::new());
        let id = stored_game(&store).await;
        let (registry, _stop) = registry(&store);

        let mut calls = 0;
        let answered = registry
            .with_game(id, |handle| {
                calls += 1;
                let first = calls == 1;
                async move {
                    if first {
                        Err(Gone)
                    } else {
                        handle.snapshot(Freshness::Held).await
                    }
                }
            })
            .await;
        assert_eq!(answered.expect("answered").map(|game| game.id), Some(id));
        assert_eq!(calls, 2, "tried once more after the owner was gone");

        let mut calls = 0;
        let given_up = registry
            .with_game(id, |_handle| {
                calls += 1;
                async { Err::<(), _>(Gone) }
            })
            .await;
        assert!(given_up.is_err(), "a game that keeps unloading is an error");
        assert_eq!(calls, GONE_RETRIES);
    }
}
