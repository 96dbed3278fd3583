//! The registry of live games: loads games from the store on first use (and
//! all unfinished ones on start), creates new ones, runs one timer per game
//! and plays the computer's moves.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use chess_engine::{Engine, Level};
use chess_game::{FirstMoveDeadlines, Game, GameSettings, GameSpec};
use chess_rules::{ByColor, Color};
use tokio::sync::watch;
use tracing::Instrument;
use uuid::Uuid;

use super::live::{Command, Entry, Host, LiveGame, Outgoing};
use super::stored;
use crate::clock::now_ms;
use crate::model::{GameMode, GameStatus, PlayerKind, Seat};
use crate::store::{GameRow, PlayerRow, Store, StoreError};

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

/// The live games of this node.
#[derive(Debug)]
pub struct Hub {
    store: Store,
    games: Mutex<HashMap<Uuid, Arc<LiveGame>>>,
    /// Serialises loading so a game is never cached twice.
    loading: tokio::sync::Mutex<()>,
    first_move_deadline_ms: u64,
    shutdown: watch::Receiver<bool>,
    /// Games whose computer move is being searched (one search at a time).
    thinking: Mutex<HashSet<Uuid>>,
    /// The hub itself, so a rematch created inside a command can be installed.
    me: Weak<Hub>,
}

impl Hub {
    /// A hub over `store`; its tasks stop when `shutdown` turns true.
    pub fn new(
        store: Store,
        first_move_deadline_ms: u64,
        shutdown: watch::Receiver<bool>,
    ) -> Arc<Hub> {
        Arc::new_cyclic(|me| Hub {
            store,
            games: Mutex::new(HashMap::new()),
            loading: tokio::sync::Mutex::new(()),
            first_move_deadline_ms,
            shutdown,
            thinking: Mutex::new(HashSet::new()),
            me: me.clone(),
        })
    }

    /// The store under the hub.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// A receiver that turns true when the server shuts down.
    pub fn shutdown_signal(&self) -> watch::Receiver<bool> {
        self.shutdown.clone()
    }

    /// Stores the computer's players so games can point at them.
    ///
    /// # Errors
    /// The database error.
    pub async fn ensure_computer_players(&self) -> Result<(), StoreError> {
        for level in Level::ALL {
            self.store.insert_player(&computer_player(level)).await?;
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

    fn cached(&self, id: Uuid) -> Option<Arc<LiveGame>> {
        self.games.lock().ok()?.get(&id).cloned()
    }

    /// The live game `id`, loading it from the store when it is not cached.
    ///
    /// # Errors
    /// A storage failure or a corrupt game.
    pub async fn get(self: &Arc<Self>, id: Uuid) -> Result<Option<Arc<LiveGame>>, StoreError> {
        if let Some(live) = self.cached(id) {
            return Ok(Some(live));
        }
        let _loading = self.loading.lock().await;
        if let Some(live) = self.cached(id) {
            return Ok(Some(live));
        }
        let Some(row) = self.store.game(id).await? else {
            return Ok(None);
        };
        let moves = self.store.moves(id).await?;
        let game = stored::restore(&row.state, &moves)?;
        let players = ByColor {
            white: self.player(row.white_id).await?,
            black: self.player(row.black_id).await?,
        };
        let live = self.install(row, game, players);
        // Time that passed while the game was not hosted (a restart) counts.
        if let Err(refusal) = live.check_time(self.as_ref(), now_ms()).await {
            tracing::warn!(game_id = %id, code = refusal.code, "settling a loaded game's clock failed");
        }
        self.maybe_computer_move(&live).await;
        Ok(Some(live))
    }

    async fn player(&self, id: Option<Uuid>) -> Result<Option<PlayerRow>, StoreError> {
        match id {
            Some(id) => self.store.player(id).await,
            None => Ok(None),
        }
    }

    /// Loads every unfinished game (after a restart): finishes the ones whose
    /// time ran out and arms the timers of the rest.
    ///
    /// # Errors
    /// The first storage failure.
    pub async fn recover(self: &Arc<Self>) -> Result<usize, StoreError> {
        let rows = self.store.unfinished_games().await?;
        let count = rows.len();
        for row in rows {
            self.get(row.id).await?;
        }
        Ok(count)
    }

    /// Creates and stores a new game.
    ///
    /// # Errors
    /// The database error.
    pub async fn create(self: &Arc<Self>, new: NewGame) -> Result<Arc<LiveGame>, StoreError> {
        let now = now_ms();
        let game = Game::new(new.spec, self.settings_for(new.mode), now);
        let open = new.white.is_none() || new.black.is_none();
        let row = GameRow {
            id: Uuid::new_v4(),
            mode: new.mode,
            white_id: new.white.as_ref().map(|p| p.id),
            black_id: new.black.as_ref().map(|p| p.id),
            computer_level: new.computer_level.map(|level| i64::from(level.number())),
            time_control: crate::time_control::to_json(game.time_control()).to_string(),
            status: if open {
                GameStatus::Open
            } else {
                GameStatus::Playing
            },
            result: None,
            state: stored::state_json(&game),
            version: 0,
            rematch_of: None,
            rematch_id: None,
            created_at: i64::try_from(now).unwrap_or(i64::MAX),
            updated_at: i64::try_from(now).unwrap_or(i64::MAX),
        };
        self.store.insert_game(&row).await?;
        let live = self.install(
            row,
            game,
            ByColor {
                white: new.white,
                black: new.black,
            },
        );
        self.maybe_computer_move(&live).await;
        Ok(live)
    }

    /// Seats `player` in the empty seat of open challenge `live`. The game
    /// starts now (first-move deadlines count from here).
    ///
    /// # Errors
    /// `Ok(None)` when there is no empty seat (taken meanwhile); the colour
    /// taken otherwise.
    pub async fn join(
        self: &Arc<Self>,
        live: &Arc<LiveGame>,
        player: PlayerRow,
    ) -> Result<Option<Color>, StoreError> {
        let mut entry = live.lock().await;
        if entry.row.status != GameStatus::Open {
            return Ok(None);
        }
        let color = if entry.players.white.is_none() {
            Color::White
        } else {
            Color::Black
        };
        let now = now_ms();
        let game = Game::new(entry.game.spec().clone(), *entry.game.settings(), now);
        let state = stored::state_json(&game);
        let claimed = self
            .store
            .claim_seat(
                live.id,
                color == Color::White,
                player.id,
                &state,
                i64::try_from(now).unwrap_or(i64::MAX),
            )
            .await?;
        if !claimed {
            return Ok(None);
        }
        match color {
            Color::White => entry.row.white_id = Some(player.id),
            Color::Black => entry.row.black_id = Some(player.id),
        }
        *entry.players.get_mut(color) = Some(player);
        entry.row.status = GameStatus::Playing;
        entry.row.state = state;
        entry.game = game;
        drop(entry);
        live.announce(Outgoing::Resync);
        live.rearm.notify_one();
        Ok(Some(color))
    }

    /// Caches a game and starts its timer.
    fn install(
        self: &Arc<Self>,
        row: GameRow,
        game: Game,
        players: ByColor<Option<PlayerRow>>,
    ) -> Arc<LiveGame> {
        let live = Arc::new(LiveGame::new(row, game, players));
        if let Ok(mut games) = self.games.lock() {
            games.insert(live.id, Arc::clone(&live));
        }
        let span = tracing::info_span!("game", game_id = %live.id);
        tokio::spawn(run_timer(Arc::clone(self), Arc::clone(&live)).instrument(span));
        live
    }

    /// Starts the engine if the computer is to move in `live` and no search
    /// runs for it yet. One task per game searches and plays until it is a
    /// person's turn (a search made stale by a take-back is refused and the
    /// next position searched).
    async fn maybe_computer_move(self: &Arc<Self>, live: &Arc<LiveGame>) {
        if search_input(&*live.lock().await).is_none() || !self.claim_engine(live.id) {
            return;
        }
        let hub = Arc::clone(self);
        let live = Arc::clone(live);
        let span = tracing::info_span!("engine", game_id = %live.id);
        tokio::spawn(
            async move {
                loop {
                    let input = search_input(&*live.lock().await);
                    let Some(input) = input else {
                        hub.release_engine(live.id);
                        // A person's move may have arrived between the check
                        // and the release: look once more.
                        if search_input(&*live.lock().await).is_some() && hub.claim_engine(live.id)
                        {
                            continue;
                        }
                        return;
                    };
                    let (turn, ply) = (input.turn, input.ply);
                    let search = tokio::task::spawn_blocking(move || input.search()).await;
                    let Ok(Some(uci)) = search else {
                        tracing::warn!(ply, "the engine found no move");
                        hub.release_engine(live.id);
                        return;
                    };
                    let command = Command::Move { uci, ply };
                    if let Err(refusal) = live
                        .apply(hub.as_ref(), Seat::of(turn), command, now_ms())
                        .await
                    {
                        tracing::info!(
                            ply,
                            code = refusal.code,
                            "the engine's move was not played"
                        );
                        if refusal.code == "internal" {
                            // The store fails: stop rather than search in a loop.
                            hub.release_engine(live.id);
                            return;
                        }
                    }
                }
            }
            .instrument(span),
        );
    }

    fn claim_engine(&self, id: Uuid) -> bool {
        self.thinking
            .lock()
            .is_ok_and(|mut thinking| thinking.insert(id))
    }

    fn release_engine(&self, id: Uuid) {
        if let Ok(mut thinking) = self.thinking.lock() {
            thinking.remove(&id);
        }
    }

    /// Drops `live` from the cache if it is over and unwatched (it is loaded
    /// again from the store when asked for).
    pub async fn evict_if_idle(&self, live: &LiveGame) {
        if live.is_idle().await
            && let Ok(mut games) = self.games.lock()
        {
            games.remove(&live.id);
        }
    }

    /// Called after a person's command: lets the computer answer.
    pub async fn after_command(self: &Arc<Self>, live: &Arc<LiveGame>) {
        self.maybe_computer_move(live).await;
    }
}

impl Host for Hub {
    fn store(&self) -> &Store {
        &self.store
    }

    fn rematch_of(&self, entry: &Entry, spec: GameSpec, now: u64) -> (GameRow, Game) {
        let game = Game::new(spec, self.settings_for(entry.row.mode), now);
        let now = i64::try_from(now).unwrap_or(i64::MAX);
        let row = GameRow {
            id: Uuid::new_v4(),
            mode: entry.row.mode,
            white_id: entry.row.black_id,
            black_id: entry.row.white_id,
            computer_level: entry.row.computer_level,
            time_control: entry.row.time_control.clone(),
            status: GameStatus::Playing,
            result: None,
            state: stored::state_json(&game),
            version: 0,
            rematch_of: Some(entry.row.id),
            rematch_id: None,
            created_at: now,
            updated_at: now,
        };
        (row, game)
    }

    fn adopt(&self, row: GameRow, game: Game, players: ByColor<Option<PlayerRow>>) {
        let Some(hub) = self.me.upgrade() else {
            return;
        };
        let live = hub.install(row, game, players);
        // The computer may play White in the rematch.
        tokio::spawn(async move { hub.maybe_computer_move(&live).await });
    }
}

/// What the engine needs to choose a move, taken under the game's lock.
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
    /// The engine's move in UCI (blocking: run it off the async workers).
    fn search(self) -> Option<String> {
        let mut engine = Engine::new(self.level, self.seed);
        let stop = AtomicBool::new(false);
        let limits = self.level.limits(self.remaining, self.increment);
        engine
            .search(&self.position, &self.history, limits, &stop)
            .best_move
            .map(|mv| mv.to_uci().to_string())
    }
}

/// The search to run if the computer is to move in `entry`'s game.
fn search_input(entry: &Entry) -> Option<SearchInput> {
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
            .remaining_ms(now_ms())
            .map(|clocks| Duration::from_millis(*clocks.get(turn))),
        increment: Duration::from_millis(entry.game.time_control().increment_ms().unwrap_or(0)),
        // Different games and moves play differently; the game id keeps it reproducible.
        seed: u64::from(ply)
            ^ u64::try_from(entry.row.id.as_u128() & u128::from(u64::MAX)).unwrap_or(0),
        turn,
        ply,
    })
}

/// The computer's player row at `level`.
pub fn computer_player(level: Level) -> PlayerRow {
    PlayerRow {
        id: computer_id(level),
        kind: PlayerKind::Computer,
        name: format!("Computer (level {})", level.number()),
        created_at: 0,
    }
}

/// One game's timer: sleeps until the game's next deadline (a flag or a
/// first-move abort) and settles the clock then, whether or not anyone is
/// connected. Re-armed after every change; ends with the game or the server.
async fn run_timer(hub: Arc<Hub>, live: Arc<LiveGame>) {
    let mut shutdown = hub.shutdown_signal();
    loop {
        if *shutdown.borrow() {
            return;
        }
        let deadline = {
            let entry = live.lock().await;
            if entry.row.status == GameStatus::Finished || entry.game.is_over() {
                drop(entry);
                hub.evict_if_idle(&live).await;
                return;
            }
            if entry.row.status == GameStatus::Open {
                None
            } else {
                entry.game.next_deadline()
            }
        };
        let sleep = async {
            match deadline {
                Some(at) => {
                    let wait = at.saturating_sub(now_ms());
                    tokio::time::sleep(Duration::from_millis(wait)).await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            () = sleep => {
                if let Err(refusal) = live.check_time(hub.as_ref(), now_ms()).await {
                    tracing::warn!(code = refusal.code, "the timer could not settle the clock");
                    // Back off a little before retrying a failing store.
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
            () = live.rearm.notified() => {}
            _ = shutdown.changed() => return,
        }
    }
}
