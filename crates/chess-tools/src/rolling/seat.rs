//! One player of one game: random moves and premoves on its game socket; when
//! the connection is lost (its node stopped), it reconnects as the web client
//! does (docs/protocol.md) and checks what the new connection is told.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use chess_rules::Position;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use crate::client::{Api, Closed, Person, Socket};
use crate::moves::random_move;
use crate::rolling::report::Shared;

pub const COLORS: [&str; 2] = ["white", "black"];

/// The web client's retry delays after a lost connection (web/js/socket.js):
/// each drawn between half and one and a half times these.
const RETRY_DELAYS_MS: [u64; 5] = [250, 500, 1000, 2000, 4000];
/// The web client's first delay after a node said it is stopping (1012).
const RESTART_RETRY_DELAY_MS: u64 = 100;
/// Chance that the waiting player prepares a premove on a new turn.
const PREMOVE_CHANCE: f64 = 0.8;

/// A premove as its player set it: through which of their connections.
#[derive(Clone, Debug)]
struct PremoveSet {
    uci: String,
    connection: u32,
}

/// What the two players of a game know together.
#[derive(Debug, Default)]
struct Log {
    /// Every move acknowledged or broadcast, by ply.
    moves: BTreeMap<usize, String>,
    /// When each ply's move was first sent by the player on move.
    first_sent: HashMap<usize, Instant>,
    /// Every premove each colour set.
    premoves: [Vec<PremoveSet>; 2],
    /// When each colour saw each of its connections lost.
    lost: [HashMap<u32, Instant>; 2],
    /// Plies whose premove was checked already (both players see it).
    premoves_checked: HashSet<usize>,
    /// The newest clocks seen, with the number of moves played when they
    /// were sent: clocks change only with moves (and the end), while
    /// versions also count private events (a premove set) that carry none.
    clocks: Option<(usize, Value)>,
}

/// One game of the run, shared by its players and the controller.
#[derive(Debug)]
pub struct Game {
    pub id: String,
    log: Mutex<Log>,
    /// Each colour's player: connected and with no move waiting for its
    /// acknowledgement.
    settled: [AtomicBool; 2],
    /// What each colour's player is doing, for the report of one that is
    /// not back.
    phase: [Mutex<String>; 2],
}

impl Game {
    pub fn new(id: String) -> Game {
        Game {
            id,
            log: Mutex::default(),
            settled: [AtomicBool::new(false), AtomicBool::new(false)],
            phase: [Mutex::default(), Mutex::default()],
        }
    }

    fn log(&self) -> MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Both players are connected and have nothing in flight.
    pub fn is_settled(&self) -> bool {
        self.settled.iter().all(|seat| seat.load(Ordering::SeqCst))
    }

    /// What each unsettled player is doing.
    pub fn unsettled(&self) -> String {
        (0..2)
            .filter(|&color| !self.settled[color].load(Ordering::SeqCst))
            .map(|color| {
                let phase = self.phase[color]
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                format!("{}: {phase}", COLORS[color])
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn set_phase(&self, color: usize, phase: String) {
        *self.phase[color]
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = phase;
    }

    /// The moves every player was told of, by ply.
    pub fn known_moves(&self) -> BTreeMap<usize, String> {
        self.log().moves.clone()
    }

    /// The newest clocks a player saw and the moves played then.
    pub fn known_clocks(&self) -> Option<(usize, Value)> {
        self.log().clocks.clone()
    }

    /// Records the move of `ply`; a different move for a known ply is a
    /// finding.
    fn record_move(&self, shared: &Shared, ply: usize, uci: &str) {
        let mut log = self.log();
        match log.moves.get(&ply) {
            Some(known) if known != uci => shared.fail(
                "move_lost",
                &self.id,
                format!("ply {ply} was {known}, now {uci}"),
            ),
            Some(_) => {}
            None => {
                log.moves.insert(ply, uci.to_owned());
            }
        }
    }

    fn record_clocks(&self, plies: usize, clocks: &Value) {
        let mut log = self.log();
        if log.clocks.as_ref().is_none_or(|(known, _)| *known <= plies) {
            log.clocks = Some((plies, clocks.clone()));
        }
    }

    /// A premove of `color` was played at `ply`: it must be one that colour
    /// set, through a connection that was not yet lost when the opponent sent
    /// the move that set it off (a node that plays a premove must hold its
    /// connection, and a lost connection takes its premove with it).
    fn check_premove_played(&self, shared: &Shared, color: usize, ply: usize, uci: &str) {
        let mut log = self.log();
        if !log.premoves_checked.insert(ply) {
            return;
        }
        shared.count("premoves_played");
        let candidates: Vec<&PremoveSet> = log.premoves[color]
            .iter()
            .filter(|premove| premove.uci == uci)
            .collect();
        if candidates.is_empty() {
            shared.fail(
                "premove_unexplained",
                &self.id,
                format!(
                    "{} premove {uci} played at ply {ply} was never set",
                    COLORS[color]
                ),
            );
            return;
        }
        // The opponent's move that set it off; a premove set off by a premove
        // was never sent, and proves nothing about connections.
        let Some(sent) = ply
            .checked_sub(1)
            .and_then(|p| log.first_sent.get(&p))
            .copied()
        else {
            return;
        };
        let lost_before_sent = |premove: &&PremoveSet| {
            log.lost[color]
                .get(&premove.connection)
                .is_some_and(|lost| *lost < sent)
        };
        if candidates.iter().all(lost_before_sent) {
            shared.fail(
                "premove_after_its_connection",
                &self.id,
                format!(
                    "{} premove {uci} played at ply {ply}, but the connection that set it was lost before the opponent's move was sent",
                    COLORS[color]
                ),
            );
        }
    }
}

/// What the player knows of the game, from its socket.
#[derive(Debug, Default)]
struct View {
    version: Option<u64>,
    plies: usize,
    fen: String,
    turn: String,
    status: String,
    premove_dests: Map<String, Value>,
}

/// What a player does when its timer fires.
#[derive(Clone, Copy, Debug)]
enum Action {
    Move,
    Premove,
    Resign,
    /// Nothing yet: look at the situation again.
    Look,
}

/// How a connection ended.
enum Ended {
    /// Lost (closed or broken), with the server's close code if it sent one.
    Lost(Option<u16>),
    /// The game is over and the run is finishing.
    Done,
}

/// One player.
#[derive(Debug)]
pub struct Seat {
    game: Arc<Game>,
    color: usize,
    person: Person,
    /// Where to connect, tried in order: the proxy, or node A then node B.
    entrances: Arc<Vec<Api>>,
    shared: Arc<Shared>,
    rng: StdRng,
    think_ms: (u64, u64),
    view: View,
    /// The move sent and not yet acknowledged: ply and UCI.
    pending: Option<(usize, String)>,
    /// Connections made so far; the current one's number.
    connection: u32,
    /// The premove set through the current connection and not yet gone.
    premove: Option<String>,
    resigned: bool,
}

impl Seat {
    pub fn new(
        game: Arc<Game>,
        color: usize,
        person: Person,
        entrances: Arc<Vec<Api>>,
        shared: Arc<Shared>,
        seed: u64,
        think_ms: (u64, u64),
    ) -> Seat {
        Seat {
            game,
            color,
            person,
            entrances,
            shared,
            rng: StdRng::seed_from_u64(seed),
            think_ms,
            view: View::default(),
            pending: None,
            connection: 0,
            premove: None,
            resigned: false,
        }
    }

    /// Plays until the run finishes and the game is over.
    pub async fn play(mut self) {
        let mut attempt = 0usize;
        let mut lost_at: Option<Instant> = None;
        loop {
            self.game
                .set_phase(self.color, format!("connecting, attempt {}", attempt + 1));
            let Some(socket) = self.connect().await else {
                let base = RETRY_DELAYS_MS[attempt.min(RETRY_DELAYS_MS.len() - 1)];
                attempt += 1;
                tokio::time::sleep(self.jittered(base)).await;
                continue;
            };
            attempt = 0;
            match self.session(socket, lost_at).await {
                Ended::Done => return,
                Ended::Lost(code) => {
                    self.game.settled[self.color].store(false, Ordering::SeqCst);
                    self.shared.count("connections_lost");
                    let now = Instant::now();
                    lost_at = Some(now);
                    self.game.log().lost[self.color].insert(self.connection, now);
                    if self.premove.take().is_some() {
                        self.shared.count("premoves_cut");
                    }
                    // A node that stops says so (1012): come back at once;
                    // anything else waits the first delay.
                    let base = if code == Some(1012) {
                        RESTART_RETRY_DELAY_MS
                    } else {
                        RETRY_DELAYS_MS[0]
                    };
                    tokio::time::sleep(self.jittered(base)).await;
                }
            }
        }
    }

    /// Between half and one and a half times `base_ms`.
    fn jittered(&mut self, base_ms: u64) -> Duration {
        Duration::from_millis(self.rng.random_range(base_ms / 2..=base_ms + base_ms / 2))
    }

    async fn connect(&mut self) -> Option<Socket> {
        for api in self.entrances.iter() {
            if let Ok(socket) = api.socket(&self.game.id, &self.person).await {
                return Some(socket);
            }
        }
        None
    }

    /// One connection: `hello`, then messages and moves until it is lost.
    async fn session(&mut self, mut socket: Socket, lost_at: Option<Instant>) -> Ended {
        self.connection += 1;
        self.premove = None;
        self.resigned = false;
        // `hello` from the last version seen (missed events follow, or
        // nothing when none were missed), then a `ping`: its `pong` comes
        // after the server has taken the `hello` in.
        let hello = json!({ "type": "hello", "version": self.view.version });
        if !socket.send(&hello).await || !socket.send(&json!({ "type": "ping", "t": 0 })).await {
            return Ended::Lost(None);
        }
        self.game.set_phase(
            self.color,
            format!("connection {} waits for its pong", self.connection),
        );
        loop {
            match socket.recv().await {
                Ok(message) if message["type"] == "pong" => break,
                Ok(message) => self.handle(&message),
                Err(_) => return Ended::Lost(socket.close_code()),
            }
        }
        // Back: on a reconnection, the player's state as the HTTP API shows
        // it must hold no premove either.
        if let Some(lost_at) = lost_at {
            self.shared.back_after(lost_at.elapsed());
            self.check_no_premove_over_http().await;
        }
        if let Some((ply, uci)) = self.pending.clone() {
            // Sent through the lost connection and never acknowledged: sent
            // again (moves are idempotent by ply).
            self.shared.count("moves_resent");
            let message = json!({ "type": "move", "uci": uci, "ply": ply });
            if !socket.send(&message).await {
                return Ended::Lost(None);
            }
        }
        loop {
            self.game.settled[self.color].store(self.pending.is_none(), Ordering::SeqCst);
            self.game.set_phase(
                self.color,
                format!(
                    "connection {} at version {:?}, {} plies, {} to move, move in flight {:?}",
                    self.connection,
                    self.view.version,
                    self.view.plies,
                    self.view.turn,
                    self.pending
                ),
            );
            if self.shared.finishing() && self.view.status != "playing" {
                socket.close().await;
                return Ended::Done;
            }
            let (wait, action) = self.next_action();
            let message = tokio::select! {
                received = socket.recv() => received,
                () = tokio::time::sleep(wait) => {
                    if !self.act(&mut socket, action).await {
                        return Ended::Lost(None);
                    }
                    continue;
                }
            };
            match message {
                Ok(message) => self.handle(&message),
                // Quiet games (held, or over) hear only pings: wait on.
                Err(Closed::Silent) => {}
                Err(Closed::Gone | Closed::BadJson(_)) => {
                    return Ended::Lost(socket.close_code());
                }
            }
        }
    }

    /// What the player does next, and after how long.
    fn next_action(&mut self) -> (Duration, Action) {
        // Nothing to do now: look again soon (the hold may end meanwhile).
        let look = (Duration::from_millis(50), Action::Look);
        if self.view.status != "playing" {
            return look;
        }
        if self.shared.finishing() {
            // White resigns once; Black waits for the end.
            return if self.color == 0 && !self.resigned {
                (Duration::ZERO, Action::Resign)
            } else {
                look
            };
        }
        if self.shared.holding() || self.pending.is_some() {
            return look;
        }
        if self.view.turn == COLORS[self.color] {
            let (low, high) = self.think_ms;
            return (
                Duration::from_millis(self.rng.random_range(low..=high)),
                Action::Move,
            );
        }
        if self.premove.is_none() && !self.view.premove_dests.is_empty() {
            return (
                Duration::from_millis(self.rng.random_range(0..60)),
                Action::Premove,
            );
        }
        look
    }

    /// Does `action`; `false` when the socket is gone.
    async fn act(&mut self, socket: &mut Socket, action: Action) -> bool {
        match action {
            Action::Look => true,
            Action::Resign => {
                self.resigned = true;
                socket.send(&json!({ "type": "resign" })).await
            }
            Action::Move => {
                let Some(uci) = self.random_move() else {
                    return true;
                };
                let ply = self.view.plies;
                self.game.log().first_sent.entry(ply).or_insert_with(|| {
                    self.shared.move_sent();
                    Instant::now()
                });
                self.pending = Some((ply, uci.clone()));
                self.game.settled[self.color].store(false, Ordering::SeqCst);
                socket
                    .send(&json!({ "type": "move", "uci": uci, "ply": ply }))
                    .await
            }
            Action::Premove => {
                // Decided once per turn: the next event brings new premove
                // destinations.
                let dests = std::mem::take(&mut self.view.premove_dests);
                if !self.rng.random_bool(PREMOVE_CHANCE) {
                    return true;
                }
                let Some(uci) = random_move(&dests, &self.view.fen, &mut self.rng) else {
                    return true;
                };
                self.premove = Some(uci.clone());
                self.game.log().premoves[self.color].push(PremoveSet {
                    uci: uci.clone(),
                    connection: self.connection,
                });
                self.shared.count("premoves_set");
                socket.send(&json!({ "type": "premove", "uci": uci })).await
            }
        }
    }

    fn random_move(&mut self) -> Option<String> {
        let position = Position::from_fen(&self.view.fen).ok()?;
        let moves: Vec<String> = position
            .legal_moves()
            .iter()
            .map(|m| m.to_uci().to_string())
            .collect();
        moves.choose(&mut self.rng).cloned()
    }

    /// `GET /api/games/{id}` as this player right after a reconnection: no
    /// premove may be shown (it was set through a connection now gone).
    async fn check_no_premove_over_http(&self) {
        for api in self.entrances.iter() {
            if let Ok(state) = api.state(&self.game.id, Some(&self.person)).await {
                if !state["premove"].is_null() {
                    self.shared.fail(
                        "premove_shown_to_new_connection",
                        &self.game.id,
                        format!(
                            "{} reconnected, GET /api/games/{{id}} shows premove {}",
                            COLORS[self.color], state["premove"]
                        ),
                    );
                }
                return;
            }
        }
    }

    /// Takes in one message of the socket.
    fn handle(&mut self, message: &Value) {
        let version = message["version"].as_u64();
        match message["type"].as_str() {
            Some("state") => self.take_state(message),
            Some("event") => {
                if version.is_some_and(|v| self.view.version.is_some_and(|seen| v <= seen)) {
                    return; // seen already
                }
                self.take_event(message);
            }
            Some("ack") => {
                let (Some(ply), Some(uci)) = (ply_of(message), message["uci"].as_str()) else {
                    return;
                };
                self.game.record_move(&self.shared, ply, uci);
                if self.pending.as_ref().is_some_and(|(p, _)| *p == ply) {
                    self.pending = None;
                    self.shared.count("moves_acked");
                }
            }
            Some("premove") => {
                match message["premove"]["uci"].as_str() {
                    None => self.premove = None,
                    Some(uci) if self.premove.as_deref() != Some(uci) => self.shared.fail(
                        "premove_shown_to_new_connection",
                        &self.game.id,
                        format!(
                            "{} was sent premove {uci} (version {version:?}) on a connection that did not set it",
                            COLORS[self.color]
                        ),
                    ),
                    Some(_) => {}
                }
                self.advance(version);
            }
            Some("error") => {
                // A move or premove refused in a race (the turn changed while
                // it travelled): the player looks again.
                self.pending = None;
                self.premove = None;
            }
            _ => {}
        }
    }

    fn take_state(&mut self, state: &Value) {
        let version = state["version"].as_u64();
        if let (Some(new), Some(seen)) = (version, self.view.version)
            && new < seen
        {
            self.shared.fail(
                "version_went_back",
                &self.game.id,
                format!("state version {new} after {seen}"),
            );
        }
        if !state["premove"].is_null() && self.premove.is_none() {
            self.shared.fail(
                "premove_shown_to_new_connection",
                &self.game.id,
                format!(
                    "{} connection {} got a state with premove {}",
                    COLORS[self.color], self.connection, state["premove"]
                ),
            );
        }
        let moves = state["moves"].as_array().cloned().unwrap_or_default();
        for (ply, entry) in moves.iter().enumerate() {
            if let Some(uci) = entry["uci"].as_str() {
                self.game.record_move(&self.shared, ply, uci);
            }
        }
        self.view.plies = moves.len();
        self.settle_pending();
        self.take_situation(state);
        self.view.version = version.or(self.view.version);
        self.game.record_clocks(self.view.plies, &state["clocks"]);
    }

    fn take_event(&mut self, message: &Value) {
        let event = &message["event"];
        if event["kind"] == "move"
            && let (Some(ply), Some(uci)) = (ply_of(event), event["uci"].as_str())
        {
            self.game.record_move(&self.shared, ply, uci);
            self.view.plies = self.view.plies.max(ply + 1);
            let color = usize::from(event["color"] == "black");
            if event["premove"] == true {
                self.game
                    .check_premove_played(&self.shared, color, ply, uci);
                if color == self.color {
                    self.premove = None;
                }
            }
            self.settle_pending();
        }
        self.take_situation(message);
        self.game.record_clocks(self.view.plies, &message["clocks"]);
        self.advance(message["version"].as_u64());
    }

    /// A pending move whose ply is now played is settled, by its ack or not.
    fn settle_pending(&mut self) {
        if self
            .pending
            .as_ref()
            .is_some_and(|(ply, _)| *ply < self.view.plies)
        {
            self.pending = None;
            self.shared.count("moves_acked");
        }
    }

    fn take_situation(&mut self, message: &Value) {
        let text = |key: &str| message[key].as_str().unwrap_or_default().to_owned();
        self.view.fen = text("fen");
        self.view.turn = text("turn");
        self.view.status = text("status");
        self.view.premove_dests = message["premove_dests"]
            .as_object()
            .cloned()
            .unwrap_or_default();
    }

    fn advance(&mut self, version: Option<u64>) {
        if let Some(version) = version {
            self.view.version = Some(self.view.version.map_or(version, |seen| seen.max(version)));
        }
    }
}

fn ply_of(message: &Value) -> Option<usize> {
    message["ply"]
        .as_u64()
        .and_then(|ply| usize::try_from(ply).ok())
}
