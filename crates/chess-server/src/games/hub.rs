//! The registry of this node's live games: one owner task per game, loaded
//! from the store on first use and unloaded when idle. The hub also runs the
//! node's background work: the group-commit writer, the sweeper that flags
//! games nobody hosts, the heartbeat that tells which nodes are alive, and
//! (on Postgres) the listener for other nodes' changes.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use chess_engine::Level;
use chess_game::{FirstMoveDeadlines, Game, GameSettings, GameSpec};
use chess_rules::ByColor;
use tokio::sync::{oneshot, watch};
use tracing::Instrument;
use uuid::Uuid;

use super::live::Entry;
use super::notify::{ChangeNotice, PRESENCE_CHANNEL, PresenceNotice, PresenceOutbox};
use super::owner::{GameHandle, Gone, JoinError, Owner, stored_deadline};
use super::stored;
use super::writer::{Writer, WriterSettings};
use crate::clock::{UnixMs, now_ms};
use crate::games::model::{GameMode, GameStage, PlayerKind};
use crate::metrics::Metrics;
use crate::store::{GameRow, PlayerRow, Store, StoreError};

/// How often the sweeper looks for games whose deadline passed.
const SWEEP_EVERY: Duration = Duration::from_millis(500);
/// Most due games loaded per sweep.
const SWEEP_BATCH: i64 = 200;
/// How often a node says it is alive.
const HEARTBEAT_EVERY: Duration = Duration::from_secs(2);
/// A node silent for this long counts as gone (its premoves are cleared).
const NODE_TIMEOUT: Duration = Duration::from_secs(7);
/// How long presence notices that could not be sent wait before the next try.
const PRESENCE_RETRY: Duration = Duration::from_secs(1);
/// How many times a request retries a game whose owner unloaded meanwhile.
const GONE_RETRIES: usize = 3;

/// The fixed player ids of the computer's two levels.
pub fn computer_id(level: Level) -> Uuid {
    Uuid::from_u128(0xc0c0_0000_0000_4000_8000_0000_0000_0000 | u128::from(level.number()))
}

/// Who sits where in a new game.
#[derive(Clone, Debug)]
pub struct NewGame {
    pub mode: GameMode,
    pub spec: GameSpec,
    /// `None` leaves the seat empty (an open challenge).
    pub white: Option<PlayerRow>,
    pub black: Option<PlayerRow>,
    pub computer_level: Option<Level>,
}

type Loaded = Result<Option<GameHandle>, Arc<StoreError>>;

/// A game in the registry: being loaded (with the requests waiting for it),
/// or live.
#[derive(Debug)]
enum Slot {
    Loading(Vec<oneshot::Sender<Loaded>>),
    Live(GameHandle),
}

/// The live games of this node.
#[derive(Debug)]
pub struct Hub {
    store: Store,
    writer: Writer,
    node: Uuid,
    node_name: String,
    games: Mutex<HashMap<Uuid, Slot>>,
    /// Nodes seen alive lately (this one always counts).
    alive_nodes: RwLock<HashSet<Uuid>>,
    first_move_deadline_ms: u64,
    shutdown: watch::Receiver<bool>,
    /// Lobby changes other nodes announced, for the lobby to pick up.
    lobby_notices: tokio::sync::broadcast::Sender<String>,
    /// The lichess-compatible API's notices from other nodes.
    api_notices: tokio::sync::broadcast::Sender<String>,
    /// This node's presence notices, sent by one task (Postgres only).
    presence_out: PresenceOutbox,
    /// The sweeper, heartbeat and listener: awaited before the store closes.
    background: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    metrics: Metrics,
}

impl Hub {
    /// A hub over `store` for node `node_name` (its address); its tasks stop
    /// when `shutdown` turns true. Starts the writer (batching as
    /// `writer_settings` say); [`Hub::start`] starts
    /// the rest of the background work.
    pub fn new(
        store: Store,
        node_name: String,
        first_move_deadline_ms: u64,
        shutdown: watch::Receiver<bool>,
        metrics: Metrics,
        writer_settings: WriterSettings,
    ) -> (Arc<Hub>, tokio::task::JoinHandle<()>) {
        let node = Uuid::new_v4();
        let (writer, writer_task) =
            Writer::start(store.clone(), node, metrics.clone(), writer_settings);
        let hub = Arc::new(Hub {
            store,
            writer,
            node,
            node_name,
            games: Mutex::new(HashMap::new()),
            alive_nodes: RwLock::new(HashSet::from([node])),
            first_move_deadline_ms,
            shutdown,
            lobby_notices: tokio::sync::broadcast::channel(256).0,
            api_notices: tokio::sync::broadcast::channel(256).0,
            presence_out: PresenceOutbox::default(),
            background: Mutex::new(Vec::new()),
            metrics,
        });
        (hub, writer_task)
    }

    /// Registers this node and starts the sweeper, the heartbeat and, on
    /// Postgres, the listener for other nodes' changes.
    ///
    /// # Errors
    /// The database error of the registration.
    pub async fn start(self: &Arc<Self>) -> Result<(), StoreError> {
        self.store
            .register_node(self.node, &self.node_name, now_ms())
            .await?;
        self.refresh_alive_nodes().await;
        let span = tracing::info_span!("node", node = %self.node);
        let mut tasks = vec![
            tokio::spawn(Arc::clone(self).sweep().instrument(span.clone())),
            tokio::spawn(Arc::clone(self).heartbeat().instrument(span.clone())),
        ];
        if let Some(pool) = self.store.postgres_pool() {
            tasks.push(tokio::spawn(
                super::notify::listen(pool, Arc::clone(self), self.shutdown.clone())
                    .instrument(span.clone()),
            ));
            tasks.push(tokio::spawn(
                Arc::clone(self).send_presence().instrument(span),
            ));
        }
        if let Ok(mut background) = self.background.lock() {
            background.extend(tasks);
        }
        Ok(())
    }

    /// The store under the hub.
    pub fn store(&self) -> &Store {
        &self.store
    }

    pub(super) fn writer(&self) -> &Writer {
        &self.writer
    }

    /// The node's metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// This node's id (new at every start).
    pub fn node_id(&self) -> Uuid {
        self.node
    }

    /// Whether node `node` is alive: known from the last heartbeat, or else
    /// asked of the store (a node that started since).
    pub async fn is_node_alive(&self, node: Uuid) -> bool {
        let known = |hub: &Hub| {
            node == hub.node
                || hub
                    .alive_nodes
                    .read()
                    .is_ok_and(|alive| alive.contains(&node))
        };
        if known(self) {
            return true;
        }
        self.refresh_alive_nodes().await;
        known(self)
    }

    /// A receiver that turns true when the server shuts down.
    pub fn shutdown_signal(&self) -> watch::Receiver<bool> {
        self.shutdown.clone()
    }

    /// How many games this node hosts now.
    pub fn live_games(&self) -> usize {
        self.games.lock().map_or(0, |games| games.len())
    }

    /// Stores a new player (an existing id is left unchanged) with the
    /// node's next group commit.
    ///
    /// # Errors
    /// The database error, or [`StoreError::WriterUnavailable`].
    pub async fn insert_player(&self, player: PlayerRow) -> Result<(), StoreError> {
        self.writer.insert_player(player).await
    }

    /// Stores the computer's players so games can point at them.
    ///
    /// # Errors
    /// The database error.
    pub async fn ensure_computer_players(&self) -> Result<(), StoreError> {
        for level in Level::ALL {
            self.writer.insert_player(computer_player(level)).await?;
        }
        Ok(())
    }

    /// Game rules for a game of `mode`: first-move deadlines only between two
    /// people on a clock.
    pub fn settings_for(&self, mode: GameMode) -> GameSettings {
        let deadline = (mode == GameMode::Online).then_some(self.first_move_deadline_ms);
        GameSettings {
            first_move_deadline_ms: FirstMoveDeadlines {
                ultra_bullet: deadline,
                bullet: deadline,
                blitz: deadline,
                rapid: deadline,
                classical: deadline,
                correspondence: None,
            },
            ..GameSettings::default()
        }
    }

    /// The live game `id`, loading it from the store when this node does not
    /// host it yet. Concurrent requests for one game share one load; loads of
    /// different games do not wait for each other.
    ///
    /// # Errors
    /// A storage failure or a corrupt game.
    pub async fn get(self: &Arc<Self>, id: Uuid) -> Result<Option<GameHandle>, StoreError> {
        let waiting = {
            let mut games = self.lock_games();
            match games.get_mut(&id) {
                Some(Slot::Live(handle)) => return Ok(Some(handle.clone())),
                Some(Slot::Loading(waiters)) => {
                    let (sender, receiver) = oneshot::channel();
                    waiters.push(sender);
                    Some(receiver)
                }
                None => {
                    games.insert(id, Slot::Loading(Vec::new()));
                    None
                }
            }
        };
        let loaded = match waiting {
            Some(receiver) => receiver.await.unwrap_or_else(|_| {
                Err(Arc::new(StoreError::Corrupt(
                    "the game's load was dropped".to_owned(),
                )))
            }),
            // A task of its own, so a caller that gives up (a timed-out
            // request) cannot leave the slot loading forever.
            None => {
                let hub = Arc::clone(self);
                tokio::spawn(async move { hub.load_and_install(id).await })
                    .await
                    .unwrap_or_else(|error| {
                        Err(Arc::new(StoreError::Corrupt(format!(
                            "loading a game failed: {error}"
                        ))))
                    })
            }
        };
        loaded.map_err(StoreError::Shared)
    }

    async fn load_and_install(self: Arc<Self>, id: Uuid) -> Loaded {
        let loaded = self.load_entry(id).await.map_err(Arc::new);
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
            Ok(Some(entry)) => {
                let handle = self.spawn_owner(entry);
                games.insert(id, Slot::Live(handle.clone()));
                self.count_games(&games);
                Ok(Some(handle))
            }
            Ok(None) => Ok(None),
            Err(error) => Err(error),
        };
        drop(games);
        for waiter in waiters {
            let _ = waiter.send(result.clone());
        }
        result
    }

    /// Reads game `id` with its moves and players from the store.
    pub(super) async fn load_entry(&self, id: Uuid) -> Result<Option<Entry>, StoreError> {
        let Some(row) = self.store.game(id).await? else {
            return Ok(None);
        };
        let moves = self.store.moves(id).await?;
        let game = stored::restore(&row.state, &moves)?;
        let players = ByColor {
            white: self.player(row.white_id).await?,
            black: self.player(row.black_id).await?,
        };
        Ok(Some(Entry::new(row, game, players)))
    }

    async fn player(&self, id: Option<Uuid>) -> Result<Option<PlayerRow>, StoreError> {
        match id {
            Some(id) => self.store.player(id).await,
            None => Ok(None),
        }
    }

    /// Publishes how many games this node hosts (after a registry change).
    fn count_games(&self, games: &HashMap<Uuid, Slot>) {
        self.metrics.live_games_set(games.len());
    }

    fn lock_games(&self) -> std::sync::MutexGuard<'_, HashMap<Uuid, Slot>> {
        // A panic while holding the registry lock cannot leave it half
        // changed (every change is one insert or remove): keep serving.
        self.games
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn spawn_owner(self: &Arc<Self>, entry: Entry) -> GameHandle {
        let span = tracing::info_span!("game", game_id = %entry.row.id);
        let (owner, handle) = Owner::new(Arc::clone(self), entry);
        tokio::spawn(owner.run().instrument(span));
        handle
    }

    /// Hosts a game created by another game's owner (a rematch).
    pub(super) fn adopt(self: &Arc<Self>, entry: Entry) {
        let id = entry.row.id;
        let mut games = self.lock_games();
        if games.contains_key(&id) {
            return;
        }
        let handle = self.spawn_owner(entry);
        games.insert(id, Slot::Live(handle));
        self.count_games(&games);
    }

    /// Unregisters the owner behind `handle` if `idle` still holds under the
    /// registry lock (so no new request can find it in between).
    pub(super) fn unload(&self, handle: &GameHandle, idle: impl FnOnce() -> bool) -> bool {
        let mut games = self.lock_games();
        let ours =
            matches!(games.get(&handle.id), Some(Slot::Live(live)) if live.same_owner(handle));
        if ours && idle() {
            games.remove(&handle.id);
            self.count_games(&games);
            true
        } else {
            false
        }
    }

    /// Removes the registration of a stopped owner, if it is still there.
    pub(super) fn forget(&self, handle: &GameHandle) {
        let mut games = self.lock_games();
        if matches!(games.get(&handle.id), Some(Slot::Live(live)) if live.same_owner(handle)) {
            games.remove(&handle.id);
            self.count_games(&games);
        }
    }

    /// Creates and stores a new game and hosts it.
    ///
    /// # Errors
    /// The database error.
    pub async fn create(self: &Arc<Self>, new: NewGame) -> Result<GameHandle, StoreError> {
        let now = now_ms();
        let game = Game::new(new.spec, self.settings_for(new.mode), now.millis());
        let open = new.white.is_none() || new.black.is_none();
        let status = if open {
            GameStage::Open
        } else {
            GameStage::Playing
        };
        let row = GameRow {
            id: Uuid::new_v4(),
            mode: new.mode,
            white_id: new.white.as_ref().map(|p| p.id),
            black_id: new.black.as_ref().map(|p| p.id),
            computer_level: new.computer_level.map(|level| i64::from(level.number())),
            time_control: crate::http::time_control::to_json(game.time_control()).to_string(),
            status,
            result: None,
            state: stored::state_json(&game),
            version: 0,
            rematch_of: None,
            rematch_id: None,
            created_at: now,
            updated_at: now,
            deadline_at: stored_deadline(&game, status),
            recent_events: "[]".to_owned(),
            premove_nodes: ByColor::default(),
        };
        self.writer.insert_game(row.clone()).await?;
        let players = ByColor {
            white: new.white,
            black: new.black,
        };
        let handle = self.spawn_owner(Entry::new(row, game, players));
        let mut games = self.lock_games();
        games.insert(handle.id, Slot::Live(handle.clone()));
        self.count_games(&games);
        drop(games);
        Ok(handle)
    }

    /// Calls `call` with the handle of game `id` (loading it if needed),
    /// again with a fresh handle when the owner unloaded meanwhile; `None` if
    /// there is no such game.
    async fn with_game<T, Call, Reply>(
        self: &Arc<Self>,
        id: Uuid,
        mut call: Call,
    ) -> Result<Option<T>, StoreError>
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
        Err(StoreError::Corrupt("the game kept unloading".to_owned()))
    }

    /// Reads game `id` with `look`, loading it if needed; `None` if there is
    /// no such game. `fresh`: see [`GameHandle::inspect_fresh`].
    ///
    /// # Errors
    /// A storage failure.
    pub async fn inspect<T: Send + 'static>(
        self: &Arc<Self>,
        id: Uuid,
        fresh: bool,
        look: impl FnOnce(&Entry) -> T + Send + Clone + 'static,
    ) -> Result<Option<T>, StoreError> {
        self.with_game(id, |handle| {
            let look = look.clone();
            async move {
                if fresh {
                    handle.inspect_fresh(look).await
                } else {
                    handle.inspect(look).await
                }
            }
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
    ) -> Result<Option<chess_rules::Color>, JoinError> {
        let joined = self
            .with_game(id, |handle| {
                let player = player.clone();
                async move { handle.join(player).await }
            })
            .await?;
        joined.transpose()
    }

    /// Another node committed a change to a game: the local owner, if any,
    /// catches up.
    pub(super) fn changed_elsewhere(&self, notice: ChangeNotice<'static>) {
        if let Some(Slot::Live(handle)) = self.lock_games().get(&notice.id) {
            handle.changed_elsewhere(Some(Box::new(notice)));
        }
    }

    /// Every hosted game rereads its row (after notices may have been lost).
    pub(super) fn catch_up_all(&self) {
        for slot in self.lock_games().values() {
            if let Slot::Live(handle) = slot {
                handle.changed_elsewhere(None);
            }
        }
    }

    /// A lobby notice from another node.
    pub(super) fn lobby_changed_elsewhere(&self, payload: &str) {
        let _ = self.lobby_notices.send(payload.to_owned());
    }

    /// A notice of the lichess-compatible API from another node.
    pub(super) fn api_changed_elsewhere(&self, payload: &str) {
        let _ = self.api_notices.send(payload.to_owned());
    }

    /// Tells the other nodes (Postgres only) which colours of a game have a
    /// connection on this node. Never waits: one task sends what waits, each
    /// game's latest, in one statement.
    pub(super) fn announce_presence(&self, notice: PresenceNotice) {
        if self.store.is_postgres() {
            self.presence_out.push(notice);
        }
    }

    async fn send_presence(self: Arc<Self>) {
        let mut shutdown = self.shutdown.clone();
        loop {
            let notices = tokio::select! {
                notices = self.presence_out.take() => notices,
                _ = shutdown.changed() => return,
            };
            let payloads: Vec<String> = notices.iter().map(PresenceNotice::payload).collect();
            if let Err(error) = self.store.notify_all(PRESENCE_CHANNEL, &payloads).await {
                tracing::warn!(%error, notices = notices.len(), "telling other nodes who is connected failed; trying again");
                self.presence_out.put_back(notices);
                tokio::select! {
                    () = tokio::time::sleep(PRESENCE_RETRY) => {}
                    _ = shutdown.changed() => return,
                }
            }
        }
    }

    /// Another node's presence in a game: its owner here, if any, takes note.
    pub(super) fn presence_elsewhere(&self, notice: PresenceNotice) {
        if let Some(Slot::Live(handle)) = self.lock_games().get(&notice.game) {
            handle.presence_elsewhere(notice.node, notice.present, notice.asks);
        }
    }

    /// Every hosted game forgets what it knew of other nodes' presence and
    /// asks again (after notices may have been lost).
    pub(super) fn resync_presence_all(&self) {
        for slot in self.lock_games().values() {
            if let Slot::Live(handle) = slot {
                handle.resync_presence();
            }
        }
    }

    /// The lichess-compatible API's notices from other nodes, from now on.
    pub fn api_notices(&self) -> tokio::sync::broadcast::Receiver<String> {
        self.api_notices.subscribe()
    }

    /// Lobby notices from other nodes, from now on.
    pub fn lobby_notices(&self) -> tokio::sync::broadcast::Receiver<String> {
        self.lobby_notices.subscribe()
    }

    /// Finds games whose stored deadline passed (on any node, hosted or not)
    /// and has their owner settle them. Several nodes may find the same
    /// game: the version compare-and-set lets exactly one ending be stored.
    async fn sweep(self: Arc<Self>) {
        let mut shutdown = self.shutdown.clone();
        let mut tick = tokio::time::interval(SWEEP_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = shutdown.changed() => return,
            }
            let due = match self.store.due_games(now_ms(), SWEEP_BATCH).await {
                Ok(due) => due,
                Err(error) => {
                    self.metrics.store_error(&error);
                    tracing::warn!(%error, "looking for due games failed");
                    continue;
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
    }

    /// Says this node is alive and learns which others are.
    async fn heartbeat(self: Arc<Self>) {
        let mut shutdown = self.shutdown.clone();
        let mut tick = tokio::time::interval(HEARTBEAT_EVERY);
        loop {
            tokio::select! {
                _ = tick.tick() => self.refresh_alive_nodes().await,
                _ = shutdown.changed() => return,
            }
        }
    }

    async fn refresh_alive_nodes(&self) {
        let now = now_ms();
        match self
            .store
            .heartbeat(self.node, &self.node_name, now, now.minus(NODE_TIMEOUT))
            .await
        {
            Ok(nodes) => {
                let mut now_alive: HashSet<Uuid> = nodes.into_iter().collect();
                now_alive.insert(self.node);
                let gone: Vec<Uuid> = match self.alive_nodes.write() {
                    Ok(mut alive) => {
                        let gone = alive.difference(&now_alive).copied().collect();
                        *alive = now_alive;
                        gone
                    }
                    Err(_) => Vec::new(),
                };
                // Whoever was connected through a node that died is gone.
                for node in gone {
                    for slot in self.lock_games().values() {
                        if let Slot::Live(handle) = slot {
                            handle.presence_elsewhere(node, ByColor::default(), false);
                        }
                    }
                }
            }
            Err(error) => tracing::warn!(%error, "the node heartbeat failed"),
        }
    }

    /// After the shutdown signal: waits for the background tasks, stops the
    /// writer once the owners are gone (see [`Writer::stop`]) and tells the
    /// other nodes this one left (its premoves are void at once). Nothing
    /// uses the store after this.
    pub async fn stop(&self, grace: Duration) {
        let tasks = self
            .background
            .lock()
            .map(|mut tasks| std::mem::take(&mut *tasks))
            .unwrap_or_default();
        for task in tasks {
            let _ = tokio::time::timeout(grace, task).await;
        }
        self.wait_for_owners(grace).await;
        self.writer.stop();
        if let Err(error) = self.store.remove_node(self.node).await {
            tracing::warn!(%error, "unregistering the node failed");
        }
    }

    /// Waits until every owner has stopped (after the shutdown signal), at
    /// most `limit`: their commands in flight are committed and answered.
    async fn wait_for_owners(&self, limit: Duration) {
        let waited = tokio::time::timeout(limit, async {
            while self.live_games() > 0 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        if waited.is_err() {
            tracing::warn!(games = self.live_games(), "some games did not stop in time");
        }
    }
}

/// The computer's player row at `level`.
pub fn computer_player(level: Level) -> PlayerRow {
    PlayerRow {
        id: computer_id(level),
        kind: PlayerKind::Computer,
        name: format!("Computer (level {})", level.number()),
        created_at: UnixMs::EPOCH,
    }
}
