//! One game between two guests: created as a challenge and joined, then played
//! with random moves from the `dests` the server sends, each side on its own
//! socket (on its own node when there are several), measuring every move on
//! the way to its `ack`, to the opponent and to any spectators.

use crate::moves::piece_at;
use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use futures_util::future::join_all;
use futures_util::{SinkExt, StreamExt};
use rand::seq::IndexedRandom;
use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::load::config::{Role, Think, node_of};
use crate::load::report::{Ending, Recorder};

/// Longest wait for any server message before the game counts as failed.
const MESSAGE_TIMEOUT: Duration = Duration::from_secs(15);
/// Pause before resending a move the server refused with `rate_limited`.
const RATE_LIMIT_BACKOFF: Duration = Duration::from_millis(250);
/// Read buffer of each of the tool's sockets (see `Api::socket`).
const READ_BUFFER_BYTES: usize = 8 * 1024;

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Why a game stopped early: an error code, counted in the report.
#[derive(Clone, Debug)]
pub struct Failure(pub String);

impl Failure {
    pub fn new(code: impl Into<String>) -> Failure {
        Failure(code.into())
    }
}

/// A person: their identity cookie (`chess_guest=...`).
#[derive(Clone, Debug)]
pub struct Guest {
    cookie: String,
}

/// The HTTP side of the server under load.
#[derive(Clone, Debug)]
pub struct Api {
    http: reqwest::Client,
    base_url: String,
}

/// How each game is played.
#[derive(Clone, Copy, Debug)]
pub struct Rules {
    /// The side to move resigns once this many plies are on the board.
    pub max_plies: usize,
    pub think: Think,
}

/// Where and how games are set up: the nodes, the spectators per game and
/// the permits that bound how many games are being set up at once.
#[derive(Debug)]
pub struct Table<'a> {
    pub nodes: &'a [Api],
    pub spectators: u32,
    pub setups: &'a Semaphore,
}

impl Guest {
    /// The person whose identity (guest or session) cookie is `cookie`.
    pub fn with_cookie(cookie: String) -> Guest {
        Guest { cookie }
    }
}

impl Api {
    pub fn new(http: reqwest::Client, base_url: String) -> Api {
        Api { http, base_url }
    }

    /// `GET /api/me` without a cookie: a new guest.
    ///
    /// # Errors
    /// A [`Failure`] when the request fails or sets no cookie.
    pub async fn new_guest(&self) -> Result<Guest, Failure> {
        let response = self
            .http
            .get(format!("{}/api/me", self.base_url))
            .send()
            .await
            .map_err(|_| Failure::new("http_unreachable"))?;
        if !response.status().is_success() {
            return Err(Failure(http_code(response).await));
        }
        let cookie = response
            .headers()
            .get("set-cookie")
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split(';').next())
            .ok_or_else(|| Failure::new("no_cookie"))?;
        Ok(Guest {
            cookie: cookie.to_owned(),
        })
    }

    /// `POST path` as `guest` with a JSON body: the JSON answer.
    async fn post(&self, path: &str, guest: &Guest, body: &Value) -> Result<Value, Failure> {
        let response = self
            .http
            .post(format!("{}{path}", self.base_url))
            .header("cookie", &guest.cookie)
            .json(body)
            .send()
            .await
            .map_err(|_| Failure::new("http_unreachable"))?;
        if !response.status().is_success() {
            return Err(Failure(http_code(response).await));
        }
        response
            .json()
            .await
            .map_err(|_| Failure::new("http_bad_json"))
    }

    /// An untimed challenge with `white` in the white seat: its game id.
    async fn create_challenge(&self, white: &Guest) -> Result<String, Failure> {
        let challenge = json!({ "time_control": { "kind": "correspondence" }, "color": "white" });
        let created = self.post("/api/challenges", white, &challenge).await?;
        Ok(created["game_id"]
            .as_str()
            .ok_or_else(|| Failure::new("http_bad_json"))?
            .to_owned())
    }

    /// `black` takes the empty seat of `game_id`.
    async fn join(&self, game_id: &str, black: &Guest) -> Result<(), Failure> {
        self.post(&format!("/api/games/{game_id}/join"), black, &json!({}))
            .await
            .map(drop)
    }

    /// The game socket of `game_id`, with `guest`'s cookie or as an anonymous viewer.
    async fn socket(&self, game_id: &str, guest: Option<&Guest>) -> Result<Ws, Failure> {
        let ws_base = self.base_url.replacen("http://", "ws://", 1);
        let mut request = format!("{ws_base}/api/games/{game_id}/socket")
            .into_client_request()
            .map_err(|_| Failure::new("socket_connect"))?;
        if let Some(guest) = guest {
            let cookie =
                HeaderValue::from_str(&guest.cookie).map_err(|_| Failure::new("socket_connect"))?;
            request.headers_mut().insert("cookie", cookie);
        }
        // tungstenite zeroes the free part of its read buffer (128 KiB by
        // default) before every read: a quarter of the tool's CPU went to
        // that. The server's messages are a few KiB; a larger frame still
        // gets room. No Nagle delay, as in browsers.
        let config = WebSocketConfig::default().read_buffer_size(READ_BUFFER_BYTES);
        let (ws, _) = tokio_tungstenite::connect_async_with_config(request, Some(config), true)
            .await
            .map_err(|_| Failure::new("socket_connect"))?;
        Ok(ws)
    }
}

/// The error code of a failed HTTP answer: `http_<status>_<code>` with the
/// server's `error.code` (`http_429_busy`, told apart from the socket's
/// `busy`), else `http_<status>`.
async fn http_code(response: reqwest::Response) -> String {
    let status = response.status().as_u16();
    let body: Option<Value> = response.json().await.ok();
    body.as_ref()
        .and_then(|body| body["error"]["code"].as_str())
        .map_or_else(
            || format!("http_{status}"),
            |code| format!("http_{status}_{code}"),
        )
}

/// Plays game number `number` between two new guests to its end or the ply
/// limit, records how it went and returns its ending.
pub async fn play_game(
    table: &Table<'_>,
    number: u64,
    people: Option<&[Guest; 2]>,
    rules: Rules,
    recorder: &Recorder,
) -> Ending {
    recorder.game_started();
    let ending = match play(table, number, people, rules, recorder).await {
        Ok(ending) => ending,
        Err(Failure(code)) => {
            recorder.error(&code);
            Ending::Failed
        }
    };
    recorder.game_ended(ending.clone());
    ending
}

async fn play(
    table: &Table<'_>,
    number: u64,
    people: Option<&[Guest; 2]>,
    rules: Rules,
    recorder: &Recorder,
) -> Result<Ending, Failure> {
    let node = |role| &table.nodes[node_of(number, role, table.nodes.len())];
    let (white_node, black_node) = (node(Role::White), node(Role::Black));
    let setup = table
        .setups
        .acquire()
        .await
        .map_err(|_| Failure::new("setup_closed"))?;
    // Two given accounts (white first), or new guests for every game, as on
    // a real server: the same two guests would soon meet the server's limit
    // on games created per player and minute.
    let (white, black) = match people {
        Some([white, black]) => (white.clone(), black.clone()),
        None => (white_node.new_guest().await?, black_node.new_guest().await?),
    };
    let game_id = white_node.create_challenge(&white).await?;
    black_node.join(&game_id, &black).await?;
    let sent_at = SentAt::default();
    let white = Seat::new(
        white_node.socket(&game_id, Some(&white)).await?,
        "white",
        rules,
    );
    let mut black = Seat::new(
        black_node.socket(&game_id, Some(&black)).await?,
        "black",
        rules,
    );
    // Black and the spectators are in sync before White may move, so White's
    // first move reaches them as a timed `event` rather than inside a `state`.
    black.greet().await?;
    let mut spectators = Vec::new();
    for n in 0..table.spectators {
        let ws = node(Role::Spectator(n)).socket(&game_id, None).await?;
        let mut spectator = Spectator { ws };
        spectator.greet().await?;
        spectators.push(spectator);
    }
    drop(setup);
    let _seated = recorder.game_seated();
    // The first failure ends the game for both seats: the other one would
    // only wait for a move that never comes.
    let seats = async {
        tokio::try_join!(
            white.play(&sent_at, recorder),
            black.play(&sent_at, recorder)
        )
    };
    let watching = join_all(
        spectators
            .into_iter()
            .map(|spectator| spectator.watch(&sent_at, recorder)),
    );
    let (seats, _) = tokio::join!(seats, watching);
    Ok(seats?.0)
}

/// An anonymous viewer's socket: it only listens.
struct Spectator {
    ws: Ws,
}

impl Spectator {
    async fn greet(&mut self) -> Result<(), Failure> {
        send(&mut self.ws, HELLO).await?;
        loop {
            if Incoming::parse(&recv(&mut self.ws).await?)?.kind == "state" {
                return Ok(());
            }
        }
    }

    /// Times every move until the game ends; a failure is counted with a
    /// `spectator_` prefix and does not stop the game.
    async fn watch(mut self, sent_at: &SentAt, recorder: &Recorder) {
        loop {
            let text = recv(&mut self.ws).await;
            let received = Instant::now();
            let message = match &text {
                Ok(text) => Incoming::parse(text),
                Err(failure) => Err(failure.clone()),
            };
            let event = match message {
                Ok(Incoming {
                    event: Some(event), ..
                }) => event,
                Ok(_) => continue,
                Err(Failure(code)) => {
                    recorder.error(&format!("spectator_{code}"));
                    return;
                }
            };
            if event.kind == "move"
                && let Some(sent) = event.ply.and_then(|ply| sent_at.get(ply))
            {
                recorder.spectator_saw(received - sent);
            }
            if event.kind == "ended" {
                let _ = self.ws.close(None).await;
                return;
            }
        }
    }
}

/// When each ply's `move` was sent, so the opponent can time its `event`.
#[derive(Debug, Default)]
pub(crate) struct SentAt(Mutex<Vec<Option<Instant>>>);

impl SentAt {
    pub(crate) fn set(&self, ply: usize, at: Instant) {
        let mut plies = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if plies.len() <= ply {
            plies.resize(ply + 1, None);
        }
        plies[ply] = Some(at);
    }

    pub(crate) fn get(&self, ply: usize) -> Option<Instant> {
        let plies = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        plies.get(ply).copied().flatten()
    }
}

/// One side of the board on its own socket.
struct Seat {
    ws: Ws,
    color: &'static str,
    rules: Rules,
    /// Plies on the board as this seat last heard.
    next_ply: usize,
    /// The ply this seat last acted on, so a repeated `state` does not make it move twice.
    acted_at_ply: Option<usize>,
    /// The move waiting for its `ack`: ply, message, when it was sent.
    pending: Option<(usize, String, Instant)>,
    /// The seat resigned (or aborted) at the ply limit.
    stopped_at_limit: bool,
    /// The `ended` event's reason once the game is over.
    result: Option<String>,
    /// `hello` was sent and its `state` handled.
    greeted: bool,
    /// Messages read while thinking, with when they arrived: handled next.
    backlog: VecDeque<(Utf8Bytes, Instant)>,
}

impl Seat {
    fn new(ws: Ws, color: &'static str, rules: Rules) -> Seat {
        Seat {
            ws,
            color,
            rules,
            next_ply: 0,
            acted_at_ply: None,
            pending: None,
            stopped_at_limit: false,
            result: None,
            greeted: false,
            backlog: VecDeque::new(),
        }
    }

    /// Sends `hello` and takes in the `state` it answers with.
    async fn greet(&mut self) -> Result<(), Failure> {
        self.send(HELLO).await?;
        loop {
            let text = self.recv().await?;
            let message = Incoming::parse(&text)?;
            if message.kind == "state" {
                self.next_ply = message.moves.unwrap_or(0);
                self.note_result(&message);
                self.greeted = true;
                return Ok(());
            }
        }
    }

    /// Plays until the game is over and this seat's last move is acknowledged.
    async fn play(mut self, sent_at: &SentAt, recorder: &Recorder) -> Result<Ending, Failure> {
        if !self.greeted {
            self.send(HELLO).await?;
        }
        loop {
            if let Some(reason) = &self.result
                && self.pending.is_none()
            {
                let _ = self.ws.close(None).await;
                let limit = self.stopped_at_limit
                    || (matches!(reason.as_str(), "resignation" | "aborted")
                        && self.next_ply >= self.rules.max_plies);
                return Ok(if limit {
                    Ending::PlyLimit
                } else {
                    Ending::Rule(reason.clone())
                });
            }
            let (text, received) = self.recv_timed().await?;
            let message = Incoming::parse(&text)?;
            match message.kind.as_ref() {
                "state" => {
                    self.next_ply = message.moves.unwrap_or(0);
                    self.note_result(&message);
                    self.act(&message, sent_at, recorder).await?;
                }
                "event" => {
                    if let Some(event) = &message.event {
                        if event.kind == "move"
                            && let Some(ply) = event.ply
                        {
                            if event.color.as_deref() != Some(self.color)
                                && let Some(sent) = sent_at.get(ply)
                            {
                                recorder.broadcast_seen(received - sent);
                            }
                            self.next_ply = ply + 1;
                        }
                        if event.kind == "ended" {
                            self.note_result(&message);
                        }
                    }
                    self.act(&message, sent_at, recorder).await?;
                }
                "ack" => {
                    if let Some((ply, _, sent)) = self.pending
                        && message.ply == Some(ply)
                    {
                        recorder.acknowledged(received - sent);
                        self.pending = None;
                    }
                }
                "error" => {
                    let code = message.code.as_deref().unwrap_or("error_without_code");
                    match (&self.pending, code) {
                        (Some((_, resend, _)), "rate_limited") => {
                            recorder.error(code);
                            // The move was ignored: send it again a little later
                            // and time it from the resend.
                            let resend = resend.clone();
                            tokio::time::sleep(RATE_LIMIT_BACKOFF).await;
                            let now = Instant::now();
                            if let Some(pending) = &mut self.pending {
                                pending.2 = now;
                                sent_at.set(pending.0, now);
                            }
                            self.send(&resend).await?;
                        }
                        // Any other refusal means the tool and the server
                        // disagree about the game: stop it and count the code.
                        _ => return Err(Failure::new(code)),
                    }
                }
                _ => {}
            }
        }
    }

    /// Keeps the game's result reason once it is over.
    fn note_result(&mut self, message: &Incoming<'_>) {
        if message.status.as_deref() == Some("finished") {
            let reason = message
                .result
                .as_ref()
                .and_then(|result| result.reason.as_deref())
                .unwrap_or("unknown");
            self.result = Some(reason.to_owned());
        }
    }

    /// Moves (or resigns at the ply limit) when `message` gives this seat legal
    /// destinations, i.e. it is this seat's turn.
    async fn act(
        &mut self,
        message: &Incoming<'_>,
        sent_at: &SentAt,
        recorder: &Recorder,
    ) -> Result<(), Failure> {
        let ply = self.next_ply;
        if message.dests.0.is_empty()
            || self.result.is_some()
            || self.pending.is_some()
            || self.acted_at_ply == Some(ply)
        {
            return Ok(());
        }
        self.acted_at_ply = Some(ply);
        if ply >= self.rules.max_plies {
            // Resigning needs two plies on the board; before that it is an abort.
            let kind = if ply >= 2 { "resign" } else { "abort" };
            self.stopped_at_limit = true;
            return self.send(&format!(r#"{{"type":"{kind}"}}"#)).await;
        }
        // Drawn before the await: the thread's generator is not `Send`.
        let think = self.rules.think.draw(&mut rand::rng());
        if !think.is_zero() {
            self.think(think).await?;
        }
        let fen = message.fen.as_deref().unwrap_or_default();
        let uci =
            random_move(&message.dests, fen).ok_or_else(|| Failure::new("no_legal_move_sent"))?;
        let request = format!(r#"{{"type":"move","uci":"{uci}","ply":{ply}}}"#);
        let now = Instant::now();
        sent_at.set(ply, now);
        recorder.move_sent();
        self.send(&request).await?;
        self.pending = Some((ply, request, now));
        Ok(())
    }

    async fn send(&mut self, message: &str) -> Result<(), Failure> {
        send(&mut self.ws, message).await
    }

    async fn recv(&mut self) -> Result<Utf8Bytes, Failure> {
        Ok(self.recv_timed().await?.0)
    }

    /// The next message and when it arrived (earlier than now if it was
    /// read while thinking).
    async fn recv_timed(&mut self) -> Result<(Utf8Bytes, Instant), Failure> {
        if let Some(read) = self.backlog.pop_front() {
            return Ok(read);
        }
        let text = recv(&mut self.ws).await?;
        Ok((text, Instant::now()))
    }

    /// Waits `think` while reading on, as a browser does: tungstenite
    /// answers the server's pings only while the socket is read, and the
    /// server closes a socket silent for its timeout (`socket_closed_4002`
    /// after a few long thoughts on a busy load process).
    async fn think(&mut self, think: Duration) -> Result<(), Failure> {
        let until = tokio::time::Instant::now() + think;
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(until) => return Ok(()),
                text = recv(&mut self.ws) => self.backlog.push_back((text?, Instant::now())),
            }
        }
    }
}

/// The first message on every socket: no events seen yet.
const HELLO: &str = r#"{"type":"hello","version":null}"#;

async fn send(ws: &mut Ws, message: &str) -> Result<(), Failure> {
    ws.send(Message::text(message))
        .await
        .map_err(|_| Failure::new("socket_lost"))
}

/// The next text message (tungstenite answers Ping frames on the way).
async fn recv(ws: &mut Ws) -> Result<Utf8Bytes, Failure> {
    loop {
        let next = tokio::time::timeout(MESSAGE_TIMEOUT, ws.next())
            .await
            .map_err(|_| Failure::new("timeout"))?;
        match next {
            Some(Ok(Message::Text(text))) => return Ok(text),
            // Who ended it: the server with a close frame (its code says
            // why), or the connection itself (reset, or ended without one:
            // what a server dropping a silent client looks like).
            Some(Ok(Message::Close(frame))) => {
                let code = frame.map_or(1005, |frame| u16::from(frame.code));
                return Err(Failure::new(format!("socket_closed_{code}")));
            }
            Some(Err(_)) | None => return Err(Failure::new("socket_lost")),
            Some(Ok(_)) => {}
        }
    }
}

/// The parts of a server message the tool reads, borrowed from its text;
/// everything else (clocks, premove destinations, the move list) is skipped
/// without being built. Parsing every message into a `serde_json::Value`
/// cost the tool more CPU than the server spent on the move.
#[derive(Debug, Deserialize)]
struct Incoming<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    /// `event`: what happened.
    #[serde(default, borrow)]
    event: Option<EventHead<'a>>,
    /// `ack`: the acknowledged ply.
    #[serde(default)]
    ply: Option<usize>,
    /// `error`: the refusal's code.
    #[serde(default, borrow)]
    code: Option<Cow<'a, str>>,
    /// `state`: the number of moves on the board.
    #[serde(default, deserialize_with = "count")]
    moves: Option<usize>,
    #[serde(default, borrow)]
    fen: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    status: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    result: Option<ResultHead<'a>>,
    /// This seat's legal moves; empty when it is not its turn.
    #[serde(default, borrow)]
    dests: Dests<'a>,
}

#[derive(Debug, Deserialize)]
struct EventHead<'a> {
    #[serde(borrow)]
    kind: Cow<'a, str>,
    #[serde(default)]
    ply: Option<usize>,
    #[serde(default, borrow)]
    color: Option<Cow<'a, str>>,
}

#[derive(Debug, Deserialize)]
struct ResultHead<'a> {
    #[serde(default, borrow)]
    reason: Option<Cow<'a, str>>,
}

impl Incoming<'_> {
    fn parse(text: &str) -> Result<Incoming<'_>, Failure> {
        serde_json::from_str(text).map_err(|_| Failure::new("server_sent_bad_json"))
    }
}

/// The length of a JSON array, its elements skipped.
fn count<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<usize>, D::Error> {
    let elements: Option<Vec<IgnoredAny>> = Option::deserialize(deserializer)?;
    Ok(elements.map(|elements| elements.len()))
}

/// `dests` (`{"e2": ["e3", "e4"], ...}`) as (from, to) pairs.
#[derive(Debug, Default)]
struct Dests<'a>(Vec<(&'a str, &'a str)>);

impl<'de: 'a, 'a> Deserialize<'de> for Dests<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Dests<'a>, D::Error> {
        struct Pairs;
        impl<'de> Visitor<'de> for Pairs {
            type Value = Dests<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map from squares to lists of squares")
            }

            fn visit_unit<E: serde::de::Error>(self) -> Result<Dests<'de>, E> {
                Ok(Dests::default())
            }

            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Dests<'de>, M::Error> {
                let mut pairs = Vec::new();
                while let Some(from) = map.next_key::<&'de str>()? {
                    for to in map.next_value::<Vec<&'de str>>()? {
                        pairs.push((from, to));
                    }
                }
                Ok(Dests(pairs))
            }
        }
        deserializer.deserialize_any(Pairs)
    }
}

/// A uniformly random move from `dests` in UCI; a pawn reaching the last rank
/// promotes to a queen.
fn random_move(dests: &Dests<'_>, fen: &str) -> Option<String> {
    // The generator is dropped before the next await: `ThreadRng` is not `Send`.
    let &(from, to) = dests.0.choose(&mut rand::rng())?;
    let promotes = matches!(piece_at(fen.split(' ').next()?, from), Some('P' | 'p'))
        && to.ends_with(['1', '8']);
    Some(if promotes {
        format!("{from}{to}q")
    } else {
        format!("{from}{to}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    #[test]
    fn piece_at_reads_the_board_field() {
        assert_eq!(piece_at(START, "e2"), Some('P'));
        assert_eq!(piece_at(START, "e8"), Some('k'));
        assert_eq!(piece_at(START, "a1"), Some('R'));
        assert_eq!(piece_at(START, "h7"), Some('p'));
        assert_eq!(piece_at(START, "e4"), None);
        assert_eq!(piece_at("8/8/8/8/4P3/8/8/8 w - - 0 1", "e4"), Some('P'));
        assert_eq!(piece_at("8/8/8/8/4P3/8/8/8 w - - 0 1", "d4"), None);
        assert_eq!(piece_at(START, "z9"), None);
    }

    fn dests(json: &str) -> Dests<'_> {
        serde_json::from_str(json).expect("destinations")
    }

    #[test]
    fn a_pawn_reaching_the_last_rank_promotes_to_a_queen() {
        let fen = "8/4P3/8/8/8/8/8/k6K w - - 0 1";
        let uci = random_move(&dests(r#"{"e7": ["e8"]}"#), fen);
        assert_eq!(uci.as_deref(), Some("e7e8q"));
        let black = "k6K/8/8/8/8/8/3p4/8 b - - 0 1";
        let uci = random_move(&dests(r#"{"d2": ["d1"]}"#), black);
        assert_eq!(uci.as_deref(), Some("d2d1q"));
    }

    #[test]
    fn other_pieces_reaching_the_last_rank_do_not_promote() {
        let fen = "8/4R3/8/8/8/8/8/k6K w - - 0 1";
        let uci = random_move(&dests(r#"{"e7": ["e8"]}"#), fen);
        assert_eq!(uci.as_deref(), Some("e7e8"));
    }

    #[test]
    fn random_moves_come_from_the_destinations() {
        let choices = dests(r#"{"e2": ["e3", "e4"], "g1": ["f3"]}"#);
        for _ in 0..50 {
            let uci = random_move(&choices, START).expect("a move");
            assert!(["e2e3", "e2e4", "g1f3"].contains(&uci.as_str()), "{uci}");
        }
        assert_eq!(random_move(&dests("{}"), START), None);
    }

    #[test]
    fn an_event_is_read_without_the_parts_the_tool_skips() {
        let text = r#"{"type":"event","version":8,
            "event":{"kind":"move","ply":3,"uci":"g8f6","san":"Nf6","color":"black"},
            "fen":"rnbqkb1r/pppp1ppp/5n2/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
            "turn":"white","check":null,"status":"playing",
            "clocks":{"white_ms":179000,"black_ms":178800,"running":"white","as_of":1},
            "first_move_deadline":null,"dests":{"b1":["a3","c3"],"d2":["d3","d4"]},
            "premove_dests":{},"offers":{"draw":null,"rematch":null},"result":null}"#;
        let message = Incoming::parse(text).expect("parses");
        assert_eq!(message.kind, "event");
        let event = message.event.as_ref().expect("an event");
        assert_eq!((event.kind.as_ref(), event.ply), ("move", Some(3)));
        assert_eq!(event.color.as_deref(), Some("black"));
        assert_eq!(message.status.as_deref(), Some("playing"));
        assert_eq!(
            message.dests.0,
            [("b1", "a3"), ("b1", "c3"), ("d2", "d3"), ("d2", "d4")]
        );
        assert!(message.result.is_none());
    }

    #[test]
    fn a_state_an_ack_and_an_error_are_read() {
        let state = Incoming::parse(
            r#"{"type":"state","moves":[{"uci":"e2e4"},{"uci":"e7e5"}],"dests":{},
                "status":"finished","result":{"winner":"white","reason":"checkmate"}}"#,
        )
        .expect("parses");
        assert_eq!(state.moves, Some(2));
        assert!(state.dests.0.is_empty());
        let reason = state.result.as_ref().and_then(|r| r.reason.as_deref());
        assert_eq!(reason, Some("checkmate"));

        let ack = Incoming::parse(r#"{"type":"ack","ply":7}"#).expect("parses");
        assert_eq!((ack.kind.as_ref(), ack.ply), ("ack", Some(7)));
        // An escaped string is still read (owned rather than borrowed).
        let error =
            Incoming::parse(r#"{"type":"error","code":"rate\u005flimited"}"#).expect("parses");
        assert_eq!(error.code.as_deref(), Some("rate_limited"));
        assert!(Incoming::parse("not json").is_err());
    }
}
