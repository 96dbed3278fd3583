//! One game as the tool follows it: what its clients know for sure (moves
//! acknowledged or broadcast, versions, clocks, the result), and the two
//! seats that play it with random legal moves, premoves, draw offers and
//! resignations until the server is killed.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Map, Value, json};

use crate::client::{Closed, Person, Socket};
use crate::crash::report::Recorder;
use crate::moves::random_move;

/// The two colours, as the protocol writes them; a seat is its index.
pub const COLORS: [&str; 2] = ["white", "black"];

/// A game the tool created and follows through every restart.
#[derive(Debug)]
pub struct Tracked {
    pub id: String,
    /// White, then Black.
    pub people: [Person; 2],
    /// The side to move resigns once this many plies are on the board.
    pub max_plies: usize,
    record: Mutex<Record>,
}

/// What the clients of one game know.
#[derive(Clone, Debug, Default)]
pub struct Record {
    /// Moves the server confirmed (an `ack`, an `event` or a `state`), by
    /// ply: write before tell means each of them is stored.
    pub confirmed: Vec<String>,
    /// Moves sent, `(ply, uci)`: a stored move not confirmed must be one.
    pub sent: HashSet<(usize, String)>,
    /// Every premove each seat set (a played premove is a move nobody sent).
    pub premoves: [HashSet<String>; 2],
    /// Each seat's premove as it was last told.
    pub premove_now: [Option<String>; 2],
    /// The highest version each seat was told.
    pub versions: [u64; 2],
    /// The latest clocks and the number of moves on the board then.
    pub clocks: Option<(usize, Value)>,
    /// The result once the game is over.
    pub result: Option<Value>,
    /// A seat's move is waiting for its `ack`.
    pub pending: [bool; 2],
    /// Moves `(ply, uci)` refused because the database was away.
    pub refused: HashSet<(usize, String)>,
}

impl Tracked {
    pub fn new(id: String, people: [Person; 2], max_plies: usize) -> Tracked {
        Tracked {
            id,
            people,
            max_plies,
            record: Mutex::new(Record::default()),
        }
    }

    /// The record, locked (never across an await).
    pub fn record(&self) -> MutexGuard<'_, Record> {
        self.record.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the game is known to be over.
    pub fn is_finished(&self) -> bool {
        self.record().result.is_some()
    }
}

impl Record {
    /// Notes that move `ply` is `uci` on the server; a different move at a
    /// ply already confirmed is a finding.
    fn confirm(&mut self, ply: usize, uci: &str, game: &str, recorder: &Recorder) {
        match self.confirmed.get(ply) {
            Some(known) if known == uci => {}
            Some(known) => recorder.fail(
                "acked_move_lost",
                game,
                format!("ply {ply} was confirmed as {known}, now the server says {uci}"),
            ),
            None if ply == self.confirmed.len() => self.confirmed.push(uci.to_owned()),
            None => recorder.fail(
                "protocol",
                game,
                format!(
                    "move {uci} at ply {ply} with only {} moves known",
                    self.confirmed.len()
                ),
            ),
        }
    }

    /// Keeps `clocks` if they are at least as recent as the kept ones.
    fn note_clocks(&mut self, moves: usize, clocks: &Value) {
        if clocks.is_null() {
            return;
        }
        let newer = match &self.clocks {
            None => true,
            Some((known_moves, known)) => {
                moves > *known_moves
                    || (moves == *known_moves
                        && clocks["as_of"].as_u64() >= known["as_of"].as_u64())
            }
        };
        if newer {
            self.clocks = Some((moves, clocks.clone()));
        }
    }

    /// Keeps the result of a finished game; a result that changes is a finding.
    fn note_result(&mut self, message: &Value, game: &str, recorder: &Recorder) {
        if message["status"] != "finished" {
            return;
        }
        let result = message["result"].clone();
        match &self.result {
            Some(known) if *known != result => recorder.fail(
                "result_changed",
                game,
                format!("the result was {known}, now {result}"),
            ),
            Some(_) => {}
            None => {
                recorder.count("games_finished");
                self.result = Some(result);
            }
        }
    }
}

/// How the players behave.
#[derive(Clone, Copy, Debug)]
pub struct Behaviour {
    /// Longest pause before acting.
    pub think: Duration,
    /// The database is made to fail: a refusal that says the server could
    /// not store (see [`DATABASE_AWAY`]) is expected, and a refused move is
    /// sent again until it is stored.
    pub database_faults: bool,
}

/// Codes a server may answer while its database is away: nothing was
/// stored, try again.
pub const DATABASE_AWAY: &[&str] = &["internal", "busy", "unavailable", "database_unavailable"];

/// The counter for a refusal code met while the database was away.
fn refusal_counter(code: &str) -> &'static str {
    match code {
        "internal" => "refusal_code_internal",
        "busy" => "refusal_code_busy",
        "unavailable" => "refusal_code_unavailable",
        _ => "refusal_code_database_unavailable",
    }
}

/// Codes the server may rightly answer to the tool's non-move actions: the
/// game moved on between the message that prompted them and their arrival.
const RACY_REFUSALS: &[&str] = &[
    "game_over",
    "premove_on_own_turn",
    "invalid_premove",
    "invalid_promotion",
    "no_premove",
    "draw_offer_too_early",
    "draw_offer_cooldown",
    "draw_already_offered",
    "no_draw_offer",
    "no_own_draw_offer",
    "resign_not_allowed_yet",
    "abort_not_allowed",
];

/// One seat playing on its socket.
#[derive(Debug)]
pub struct Seat {
    game: Arc<Tracked>,
    seat: usize,
    socket: Socket,
    rng: StdRng,
    behaviour: Behaviour,
    recorder: Arc<Recorder>,
    /// Plies on the board as this seat last heard.
    next_ply: usize,
    /// The ply this seat last acted on (a repeated message must not make it act twice).
    acted_at: Option<usize>,
    /// The opponent's ply at which this seat last thought about a premove.
    premoved_at: Option<usize>,
    /// The move waiting for its `ack`.
    pending: Option<Value>,
    /// The latest `state` or `event`: what the seat acts on first in `play`.
    latest: Option<Value>,
    /// The last message sent, to send again if the database was away.
    last_sent: Option<Value>,
}

/// Why a seat stopped playing.
#[derive(Debug, PartialEq, Eq)]
pub enum SeatEnd {
    /// The game is over.
    Finished,
    /// The connection went away (the server was killed).
    Disconnected,
    /// Something went wrong and was recorded.
    Failed,
}

impl Seat {
    pub fn new(
        game: Arc<Tracked>,
        seat: usize,
        socket: Socket,
        seed: u64,
        behaviour: Behaviour,
        recorder: Arc<Recorder>,
    ) -> Seat {
        let next_ply = game.record().confirmed.len();
        Seat {
            game,
            seat,
            socket,
            rng: StdRng::seed_from_u64(seed),
            behaviour,
            recorder,
            next_ply,
            acted_at: None,
            premoved_at: None,
            pending: None,
            latest: None,
            last_sent: None,
        }
    }

    /// Gives the seat a full state to act on when `sync` brought nothing
    /// new (the server had nothing after the version the seat said).
    pub fn prime(&mut self, state: &Value) {
        if self.latest.is_none() {
            let mut state = state.clone();
            state["type"] = json!("state");
            self.absorb(&state);
        }
    }

    /// Says `hello` with the last version this seat saw and takes in what the
    /// server answers, up to the `pong` of a `ping` sent right after (the
    /// socket answers in order). Acts on nothing.
    pub async fn sync(&mut self) -> Result<(), Closed> {
        let version = self.game.record().versions[self.seat];
        let hello = json!({ "type": "hello", "version": version });
        let ping = json!({ "type": "ping", "t": 1 });
        if !self.socket.send(&hello).await || !self.socket.send(&ping).await {
            return Err(Closed::Gone);
        }
        loop {
            let message = self.socket.recv().await?;
            if message["type"] == "pong" {
                return Ok(());
            }
            self.absorb(&message);
        }
    }

    /// Closes the connection without playing.
    pub async fn close(self) {
        self.socket.close().await;
    }

    /// Plays until the game ends or the connection goes. `killed` tells a
    /// connection lost to a kill from one lost while the server was up.
    pub async fn play(mut self, killed: Arc<AtomicBool>) -> SeatEnd {
        // The state or events `sync` took in may already call for an action.
        let mut next = self.latest.take();
        loop {
            if self.game.is_finished() && self.pending.is_none() {
                self.socket.close().await;
                return SeatEnd::Finished;
            }
            let message = match next.take() {
                Some(message) => message,
                None => match self.socket.recv().await {
                    Ok(message) => message,
                    Err(Closed::Gone) if killed.load(Ordering::SeqCst) => {
                        if self.pending.is_some() {
                            self.recorder.count("moves_unacked");
                        }
                        return SeatEnd::Disconnected;
                    }
                    Err(closed) => {
                        self.recorder.fail(
                            "protocol",
                            &self.game.id,
                            format!(
                                "{} socket: {closed:?} while the server was up",
                                COLORS[self.seat]
                            ),
                        );
                        return SeatEnd::Failed;
                    }
                },
            };
            if let Err(()) = self.handle(&message).await {
                self.socket.close().await;
                return SeatEnd::Failed;
            }
        }
    }

    /// Takes in one message, then acts on it.
    async fn handle(&mut self, message: &Value) -> Result<(), ()> {
        self.absorb(message);
        match message["type"].as_str() {
            Some("error") => self.on_error(message).await,
            Some("state" | "event") => {
                self.act(message).await;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Updates what the tool knows from one server message.
    fn absorb(&mut self, message: &Value) {
        if matches!(message["type"].as_str(), Some("state" | "event")) {
            self.latest = Some(message.clone());
        }
        let game = self.game.id.as_str();
        let recorder = self.recorder.as_ref();
        let mut record = self.game.record();
        if let Some(version) = message["version"].as_u64() {
            let seen = &mut record.versions[self.seat];
            if message["type"] == "state" && version < *seen {
                recorder.fail(
                    "version_went_back",
                    game,
                    format!(
                        "{} had seen version {seen}, a state says {version}",
                        COLORS[self.seat]
                    ),
                );
            }
            *seen = (*seen).max(version);
        }
        match message["type"].as_str() {
            Some("state") => {
                let moves = message["moves"].as_array().cloned().unwrap_or_default();
                for (ply, mv) in moves.iter().enumerate() {
                    record.confirm(ply, mv["uci"].as_str().unwrap_or_default(), game, recorder);
                }
                self.next_ply = moves.len();
                record.note_clocks(moves.len(), &message["clocks"]);
                record.premove_now[self.seat] =
                    message["premove"]["uci"].as_str().map(str::to_owned);
                record.note_result(message, game, recorder);
            }
            Some("event") => {
                let event = &message["event"];
                if event["kind"] == "move"
                    && let Some(ply) = event["ply"].as_u64().and_then(|p| usize::try_from(p).ok())
                {
                    record.confirm(
                        ply,
                        event["uci"].as_str().unwrap_or_default(),
                        game,
                        recorder,
                    );
                    self.next_ply = self.next_ply.max(ply + 1);
                }
                record.note_clocks(self.next_ply, &message["clocks"]);
                record.note_result(message, game, recorder);
            }
            Some("ack") => {
                if let Some(ply) = message["ply"]
                    .as_u64()
                    .and_then(|p| usize::try_from(p).ok())
                {
                    record.confirm(
                        ply,
                        message["uci"].as_str().unwrap_or_default(),
                        game,
                        recorder,
                    );
                    if self
                        .pending
                        .as_ref()
                        .is_some_and(|sent| sent["ply"] == message["ply"])
                    {
                        self.pending = None;
                        record.pending[self.seat] = false;
                        recorder.count("moves_acked");
                    }
                }
            }
            Some("premove") => {
                if message["reason"] == "played" {
                    recorder.count("premoves_played");
                }
                record.premove_now[self.seat] =
                    message["premove"]["uci"].as_str().map(str::to_owned);
            }
            _ => {}
        }
    }

    async fn on_error(&mut self, message: &Value) -> Result<(), ()> {
        let code = message["code"].as_str().unwrap_or("error_without_code");
        let reply_to = message["in_reply_to"].as_str().unwrap_or_default();
        if code == "rate_limited" {
            // Ignored by the server: a move is sent again a little later.
            self.recorder.count("rate_limited");
            if let Some(resend) = self.pending.clone() {
                tokio::time::sleep(Duration::from_millis(250)).await;
                if !self.socket.send(&resend).await {
                    return Err(());
                }
            }
            return Ok(());
        }
        if self.behaviour.database_faults && DATABASE_AWAY.contains(&code) {
            self.recorder.count(refusal_counter(code));
            if reply_to == "move" {
                self.recorder.count("moves_refused_database_away");
                if let Some(sent) = &self.pending
                    && let (Some(ply), Some(uci)) = (sent["ply"].as_u64(), sent["uci"].as_str())
                {
                    let ply = usize::try_from(ply).unwrap_or(usize::MAX);
                    self.game.record().refused.insert((ply, uci.to_owned()));
                }
            }
            // Nothing was stored: the same message again, a little later
            // (a resignation or an accepted draw the game waits for, too).
            let resend = match reply_to {
                "move" => self.pending.clone(),
                _ => self
                    .last_sent
                    .clone()
                    .filter(|sent| sent["type"] == reply_to),
            };
            if let Some(resend) = resend {
                tokio::time::sleep(Duration::from_millis(300)).await;
                self.send(&resend).await;
            }
            return Ok(());
        }
        if reply_to == "move" {
            self.pending = None;
            self.game.record().pending[self.seat] = false;
            if code == "game_over" {
                return Ok(());
            }
        } else if RACY_REFUSALS.contains(&code) {
            self.recorder.count("racy_refusals");
            return Ok(());
        }
        self.recorder.fail(
            "protocol",
            &self.game.id,
            format!(
                "{} was refused {reply_to:?}: {code} ({})",
                COLORS[self.seat],
                message["message"].as_str().unwrap_or_default()
            ),
        );
        Err(())
    }

    /// Acts on a `state` or `event`: moves (or offers, accepts a draw,
    /// resigns) on its turn, sets or cancels a premove on the opponent's.
    async fn act(&mut self, message: &Value) {
        if message["status"] != "playing" || self.pending.is_some() {
            return;
        }
        let ply = self.next_ply;
        // The situation an event carries is the one after the whole command
        // that made it: the first of two events (a move, then the premove it
        // set off) already shows the position after both. Act only once every
        // move of that position is known.
        if ply_of(message["fen"].as_str().unwrap_or_default()) != Some(ply) {
            return;
        }
        let dests = message["dests"].as_object().filter(|d| !d.is_empty());
        let premove_dests = message["premove_dests"]
            .as_object()
            .filter(|d| !d.is_empty());
        if let Some(dests) = dests {
            if self.acted_at == Some(ply) {
                return;
            }
            self.acted_at = Some(ply);
            self.think().await;
            self.take_turn(message, dests, ply).await;
        } else if let Some(premove_dests) = premove_dests {
            if self.premoved_at == Some(ply) {
                return;
            }
            self.premoved_at = Some(ply);
            self.think().await;
            let has_premove = self.game.record().premove_now[self.seat].is_some();
            if has_premove && self.rng.random_bool(0.2) {
                self.send(&json!({ "type": "cancel_premove" })).await;
            } else if self.rng.random_bool(0.35) {
                let fen = message["fen"].as_str().unwrap_or_default();
                if let Some(uci) = random_move(premove_dests, fen, &mut self.rng) {
                    self.game.record().premoves[self.seat].insert(uci.clone());
                    self.recorder.count("premoves_set");
                    self.send(&json!({ "type": "premove", "uci": uci })).await;
                }
            }
        }
    }

    async fn take_turn(&mut self, message: &Value, dests: &Map<String, Value>, ply: usize) {
        let opponent = COLORS[1 - self.seat];
        if message["offers"]["draw"] == opponent && self.rng.random_bool(0.3) {
            self.recorder.count("draws_accepted");
            self.send(&json!({ "type": "draw_accept" })).await;
            return;
        }
        if ply >= self.game.max_plies || (ply >= 2 && self.rng.random_bool(0.01)) {
            // Resigning needs two plies on the board; before that it is an abort.
            let kind = if ply >= 2 { "resign" } else { "abort" };
            self.recorder.count("resignations");
            self.send(&json!({ "type": kind })).await;
            return;
        }
        if ply >= 2 && message["offers"]["draw"].is_null() && self.rng.random_bool(0.04) {
            self.recorder.count("draw_offers");
            self.send(&json!({ "type": "draw_offer" })).await;
        }
        let fen = message["fen"].as_str().unwrap_or_default();
        let Some(uci) = random_move(dests, fen, &mut self.rng) else {
            return;
        };
        let request = json!({ "type": "move", "uci": uci, "ply": ply });
        {
            let mut record = self.game.record();
            record.sent.insert((ply, uci));
            record.pending[self.seat] = true;
        }
        self.pending = Some(request.clone());
        self.send(&request).await;
    }

    async fn think(&mut self) {
        let most = u64::try_from(self.behaviour.think.as_millis()).unwrap_or(0);
        if most > 0 {
            let pause = self.rng.random_range(0..=most);
            tokio::time::sleep(Duration::from_millis(pause)).await;
        }
    }

    /// Sends a message; a failure shows as the connection closing on the next read.
    async fn send(&mut self, message: &Value) {
        if message["type"] != "move" {
            self.last_sent = Some(message.clone());
        }
        let _ = self.socket.send(message).await;
    }
}

/// The number of plies played to reach `fen` from the standard starting
/// position (every game of the tool starts there): from the move number and
/// the side to move.
fn ply_of(fen: &str) -> Option<usize> {
    let mut fields = fen.split(' ');
    let black_to_move = fields.nth(1)? == "b";
    let fullmove: usize = fields.nth(3)?.parse().ok()?;
    Some((fullmove.checked_sub(1)?) * 2 + usize::from(black_to_move))
}
