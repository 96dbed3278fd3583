//! A world of nodes over one store in memory, on one clock moved by hand,
//! and the few actions the tests take in it.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chess_game::{EventKind, GameSpec};
use chess_live::notice::{self, GAMES_CHANNEL, PRESENCE_CHANNEL, PresenceNotice};
use chess_live::testing::{ManualClock, MemoryStore};
use chess_live::{
    Command, GameMode, GameStore, Outgoing, PlayerKind, PlayerRow, Registry, RegistrySettings,
    Seen, Telemetry, UnixMs, Viewer, WriterSettings,
};
use tokio::sync::watch;
use uuid::Uuid;

/// The longest real time a test waits for anything: the work is all in
/// memory, so only a bug takes this long.
const PATIENCE: Duration = Duration::from_secs(5);

/// `future`, or a failure naming `what` when it does not finish in time.
pub async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(PATIENCE, future)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

/// Waits (in real time, a millisecond at a time) until `done` holds.
pub async fn until(what: &str, done: impl Fn() -> bool) {
    within(what, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await;
}

/// One store, one clock, and the nodes the test starts on them.
pub struct World {
    pub store: Arc<MemoryStore>,
    pub clock: Arc<ManualClock>,
}

impl World {
    /// A store one node owns (as an SQLite file).
    pub fn new() -> World {
        World::over(MemoryStore::new())
    }

    /// A store several nodes share (as Postgres).
    pub fn shared() -> World {
        World::over(MemoryStore::shared())
    }

    fn over(store: MemoryStore) -> World {
        World {
            store: Arc::new(store),
            clock: Arc::new(ManualClock::new()),
        }
    }

    /// The time now.
    pub fn now(&self) -> UnixMs {
        chess_live::Clock::now(self.clock.as_ref())
    }

    /// A node named `name`, started (its sweeper and heartbeat run).
    pub async fn node(&self, name: &str) -> Node {
        let (stop, shutdown) = watch::channel(false);
        let settings = RegistrySettings {
            node_name: name.to_owned(),
            first_move_deadline_ms: 30_000,
            writer: WriterSettings {
                queue: 256,
                linger: Duration::ZERO,
            },
        };
        let telemetry = Arc::new(Recorded::default());
        let store: Arc<dyn GameStore> = self.store.clone();
        let (registry, _writer) = Registry::with_clock(
            store,
            settings,
            telemetry.clone(),
            shutdown,
            self.clock.clone(),
        );
        within("the node to start", registry.start())
            .await
            .expect("the node registers");
        Node {
            registry,
            telemetry,
            stop,
        }
    }

    /// A new guest, stored.
    pub async fn player(&self, node: &Node, name: &str) -> PlayerRow {
        let player = PlayerRow {
            id: Uuid::new_v4(),
            kind: PlayerKind::Guest,
            name: name.to_owned(),
            created_at: self.now(),
            bot: false,
        };
        node.registry
            .insert_player(player.clone())
            .await
            .expect("the player is stored");
        player
    }

    /// A game between two new players, hosted by `node`: its id, white, black.
    pub async fn game(
        &self,
        node: &Node,
        mode: GameMode,
        time_control: &str,
    ) -> (Uuid, PlayerRow, PlayerRow) {
        let white = self.player(node, "alice").await;
        let black = self.player(node, "bob").await;
        let id = node
            .create(mode, time_control, Some(white.clone()), Some(black.clone()))
            .await;
        (id, white, black)
    }

    /// Hands every notice the nodes sent to every node but its sender, as
    /// the server's listener does (it skips a node's own).
    pub fn deliver_notices(&self, nodes: &[&Node]) {
        for payload in self.store.take_notices(GAMES_CHANNEL) {
            let notice = notice::parse_game_notice(&payload).expect("a game notice");
            for node in nodes {
                if node.registry.node_id() != notice.node {
                    for change in notice.games.iter().cloned() {
                        node.registry.changed_elsewhere(change);
                    }
                }
            }
        }
        for payload in self.store.take_notices(PRESENCE_CHANNEL) {
            let notice = PresenceNotice::parse(&payload).expect("a presence notice");
            for node in nodes {
                if node.registry.node_id() != notice.node {
                    node.registry.presence_elsewhere(notice);
                }
            }
        }
    }
}

/// A running node.
pub struct Node {
    pub registry: Arc<Registry>,
    pub telemetry: Arc<Recorded>,
    stop: watch::Sender<bool>,
}

impl Node {
    /// A new game with these seats (`None`: an open challenge).
    pub async fn create(
        &self,
        mode: GameMode,
        time_control: &str,
        white: Option<PlayerRow>,
        black: Option<PlayerRow>,
    ) -> Uuid {
        let spec = GameSpec::standard(time_control.parse().expect("a time control"));
        let game = self
            .registry
            .create(chess_live::NewGame {
                id: Uuid::new_v4(),
                mode,
                spec,
                white,
                black,
                computer_level: None,
            })
            .await
            .expect("the game is stored");
        game.id()
    }

    /// A connection of `player` (`None`: a spectator) to game `id` on this node.
    pub async fn viewer(&self, id: Uuid, player: Option<&PlayerRow>) -> Viewer {
        within(
            "a viewer to open",
            Viewer::open(&self.registry, id, player.map(|p| p.id)),
        )
        .await
        .expect("loaded")
        .expect("the game exists")
    }

    /// Stops the node as a server does on its shutdown.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        within(
            "the node to stop",
            self.registry.stop(Duration::from_secs(2)),
        )
        .await;
    }
}

/// The move `uci` as the move with index `ply`.
pub fn mv(uci: &str, ply: u32) -> Command {
    Command::Move {
        uci: uci.parse().expect("uci"),
        ply,
    }
}

/// A premove of `uci` (the viewer that sends it fills in its connection).
pub fn premove(uci: &str) -> Command {
    Command::Premove {
        uci: uci.parse().expect("uci"),
        charge_ms: 0,
        connection: None,
    }
}

/// The next change the viewer is shown, as (version, what happened);
/// presence news is passed over.
pub async fn next_event(viewer: &mut Viewer) -> (u64, EventKind) {
    loop {
        match within("an event", viewer.next()).await {
            Seen::Event(outgoing) => match outgoing.as_ref() {
                Outgoing::Event { version, kind, .. } => return (*version, kind.clone()),
                other => panic!("an event that is not one: {other:?}"),
            },
            Seen::Presence { .. } => {}
            other => panic!("expected an event, got {other:?}"),
        }
    }
}

/// The next thing the viewer is shown other than presence news.
pub async fn next_seen(viewer: &mut Viewer) -> Seen {
    loop {
        match within("something to show", viewer.next()).await {
            Seen::Presence { .. } => {}
            seen => return seen,
        }
    }
}

/// The versions of the changes waiting for the viewer now (presence news
/// passed over), without waiting for more.
pub async fn waiting_events(viewer: &mut Viewer) -> Vec<u64> {
    let mut versions = Vec::new();
    while let Some(received) = viewer.try_recv() {
        match viewer.see(received).await {
            Some(Seen::Event(outgoing)) => {
                if let Outgoing::Event { version, .. } = outgoing.as_ref() {
                    versions.push(*version);
                }
            }
            Some(Seen::Presence { .. }) | None => {}
            Some(other) => panic!("expected only events, got {other:?}"),
        }
    }
    versions
}

/// The moves stored for game `id`, as UCI.
pub fn stored_moves(world: &World, id: Uuid) -> Vec<String> {
    world
        .store
        .stored_moves(id)
        .into_iter()
        .map(|mv| mv.uci)
        .collect()
}

/// What a node reported through its telemetry.
#[derive(Debug, Default)]
pub struct Recorded {
    /// Each other node's change: followed from its notice (`true`) or reread.
    pub remote_changes: Mutex<Vec<bool>>,
}

impl Telemetry for Recorded {
    fn remote_change(&self, followed: bool) {
        self.remote_changes
            .lock()
            .expect("not poisoned")
            .push(followed);
    }
}
