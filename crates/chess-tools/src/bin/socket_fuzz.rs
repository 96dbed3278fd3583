//! The black-box socket fuzzer: random and mutated frames at a running
//! `chess-server` process (started here on a fresh database), on the game
//! sockets of both players and a spectator and on the lobby socket. After
//! every frame it checks that a refused frame (an `error` reply) did not move
//! the game's version, that the socket still answers (a `ping` sent after each
//! frame gets its `pong`), and, every thousand frames, that the process is
//! alive and healthy; at the end, that its log reports no panic.
//!
//! ```sh
//! cargo build --release -p chess-server -p chess-tools
//! target/release/socket_fuzz --frames 100000 --seed 1
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use uuid::Uuid;

use chess_tools::server::{self, Backend, Database, ServerProcess};

/// Longest wait for the `pong` that follows a frame's answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);
/// Frames played on a game after it ended (rematch messages), before the
/// next game starts.
const FRAMES_AFTER_THE_END: u32 = 10;

#[derive(Debug, Parser)]
#[command(
    name = "socket_fuzz",
    about = "Sends random and mutated frames at a chess-server process."
)]
struct Args {
    /// Frames to send.
    #[arg(long, default_value_t = 20_000)]
    frames: u64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The `chess-server` binary (default: next to this tool in the target folder).
    #[arg(long)]
    server: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Backend::Sqlite)]
    backend: Backend,
}

/// Message types the game socket does not know, beside the ones it does
/// (`protocol::CLIENT_TYPES`).
const UNKNOWN_TYPES: &[&str] = &["teleport", ""];

/// One socket: what it sends, and what it received.
struct Connection {
    sink: futures_util::stream::SplitSink<
        tokio_tungstenite::WebSocketStream<
            tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
        >,
        Message,
    >,
    inbox: mpsc::UnboundedReceiver<Value>,
}

/// A game and its three sockets (White, Black, a spectator).
struct Table {
    game_id: String,
    cookies: [String; 3],
    sockets: Vec<Connection>,
    frames_after_end: u32,
}

#[derive(Default)]
struct Tally {
    frames: u64,
    by_kind: BTreeMap<&'static str, u64>,
    answers: BTreeMap<String, u64>,
    findings: Vec<String>,
    games: u64,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    match fuzz(&args).await {
        Ok(tally) => {
            println!("frames:   {} on {} games", tally.frames, tally.games);
            println!("kinds:    {:?}", tally.by_kind);
            println!("answers:  {:?}", tally.answers);
            if tally.findings.is_empty() {
                println!("findings: none");
                ExitCode::SUCCESS
            } else {
                println!("findings: {}", tally.findings.len());
                for finding in tally.findings.iter().take(20) {
                    println!("  {finding}");
                }
                ExitCode::FAILURE
            }
        }
        Err(error) => {
            eprintln!("socket_fuzz: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn fuzz(args: &Args) -> Result<Tally, String> {
    let folder = std::env::temp_dir().join(format!("chess-socket-fuzz-{}", Uuid::new_v4()));
    std::fs::create_dir_all(&folder).map_err(|e| e.to_string())?;
    let database = Database::create(args.backend, &folder, None)
        .await
        .map_err(|e| e.to_string())?;
    let binary = args.server.clone().unwrap_or_else(server::default_binary);
    let mut server = ServerProcess::new(binary, folder.clone(), database.url.clone())
        .map_err(|e| e.to_string())?;
    // The rate limit is not under test: every frame must be looked at.
    server.set_env("WS_RATE_PER_SECOND", "1000000");
    server.set_env("WS_RATE_BURST", "1000000");
    // Every game is three new guests from this one address: the default of
    // 60 an hour would end the run after 20 games.
    server.set_env("NEW_GUESTS_PER_ADDRESS_PER_HOUR", "100000000");
    server.spawn().map_err(|e| e.to_string())?;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(15))
        .build()
        .map_err(|e| e.to_string())?;
    server
        .wait_healthy(&http)
        .await
        .map_err(|e| e.to_string())?;
    let base = server.base_url();
    let mut rng = StdRng::seed_from_u64(args.seed);
    let mut tally = Tally::default();
    let mut lobby = connect(&base, "/api/lobby/socket", None).await?;
    let mut table = new_table(&http, &base, &mut tally).await?;
    while tally.frames < args.frames {
        tally.frames += 1;
        let before = state(&http, &base, &table, None).await?;
        let on_lobby = rng.random_bool(0.1);
        let seat = rng.random_range(0..3);
        let (kind, frame) = frame(&mut rng, &http, &base, &table, &before, seat).await;
        *tally.by_kind.entry(kind).or_default() += 1;
        let connection = if on_lobby {
            &mut lobby
        } else {
            &mut table.sockets[seat]
        };
        let answers = exchange(connection, frame.clone(), tally.frames).await;
        let Some(answers) = answers else {
            tally.findings.push(format!(
                "frame {} ({kind}) on {}: no pong within {ANSWER_TIMEOUT:?} (connection closed or stuck): {}",
                tally.frames,
                if on_lobby { "the lobby" } else { ["white", "black", "spectator"][seat] },
                describe(&frame)
            ));
            // Start over with fresh sockets.
            lobby = connect(&base, "/api/lobby/socket", None).await?;
            table = new_table(&http, &base, &mut tally).await?;
            continue;
        };
        let refused = answers.iter().find(|a| a["type"] == "error");
        for answer in &answers {
            let label = match answer["type"].as_str() {
                Some("error") => format!("error:{}", answer["code"].as_str().unwrap_or("?")),
                Some(other) => other.to_owned(),
                None => "?".to_owned(),
            };
            *tally.answers.entry(label).or_default() += 1;
        }
        if !on_lobby {
            let after = state(&http, &base, &table, None).await?;
            if let Some(error) = refused
                && after["version"] != before["version"]
            {
                tally.findings.push(format!(
                    "frame {}: refused ({}) but the version moved {} -> {}: {}",
                    tally.frames,
                    error["code"],
                    before["version"],
                    after["version"],
                    describe(&frame)
                ));
            }
            if after["status"] == "finished" {
                table.frames_after_end += 1;
                if table.frames_after_end > FRAMES_AFTER_THE_END {
                    table = new_table(&http, &base, &mut tally).await?;
                }
            }
        }
        for connection in &mut table.sockets {
            while connection.inbox.try_recv().is_ok() {}
        }
        while lobby.inbox.try_recv().is_ok() {}
        if tally.frames % 1000 == 0 {
            let healthy = http
                .get(format!("{base}/healthz"))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success());
            if !healthy || !server.is_running() {
                tally.findings.push(format!(
                    "after frame {}: the server is not healthy",
                    tally.frames
                ));
                break;
            }
            eprintln!(
                "socket_fuzz: {} frames, {} findings",
                tally.frames,
                tally.findings.len()
            );
        }
    }
    server.kill();
    for line in server.panics_logged() {
        tally
            .findings
            .push(format!("the server's log reports a panic: {line}"));
    }
    if tally.findings.is_empty() {
        database.remove().await;
        let _ = std::fs::remove_dir_all(&folder);
    } else {
        eprintln!("socket_fuzz: kept the data and log in {}", folder.display());
    }
    Ok(tally)
}

/// A short printable form of a frame for the findings.
fn describe(frame: &Message) -> String {
    match frame {
        Message::Text(text) => format!("{:?}", text.as_str().chars().take(120).collect::<String>()),
        Message::Binary(bytes) => format!("binary frame of {} bytes", bytes.len()),
        other => format!("{other:?}"),
    }
}

/// Sends `frame` then a `ping`; the answers up to the `pong` (`None` when it
/// never comes).
async fn exchange(connection: &mut Connection, frame: Message, id: u64) -> Option<Vec<Value>> {
    while connection.inbox.try_recv().is_ok() {}
    connection.sink.send(frame).await.ok()?;
    let ping = json!({ "type": "ping", "t": id }).to_string();
    connection
        .sink
        .send(Message::Text(ping.into()))
        .await
        .ok()?;
    let mut answers = Vec::new();
    loop {
        let answer = tokio::time::timeout(ANSWER_TIMEOUT, connection.inbox.recv())
            .await
            .ok()??;
        if answer["type"] == "pong" && answer["t"] == id {
            return Some(answers);
        }
        answers.push(answer);
    }
}

/// A frame: a message of a real type with random or right fields, a legal
/// move, a mutation of a valid message, random JSON, random text, a binary
/// frame or one over the size limit.
async fn frame(
    rng: &mut StdRng,
    http: &reqwest::Client,
    base: &str,
    table: &Table,
    before: &Value,
    seat: usize,
) -> (&'static str, Message) {
    let plies = before["moves"].as_array().map_or(0, Vec::len);
    let text = |value: Value| Message::Text(value.to_string().into());
    match rng.random_range(0..100) {
        0..30 => {
            // A legal move of the seat's own side, so games go on.
            let mine = state(http, base, table, Some(seat))
                .await
                .unwrap_or_default();
            let dests: Vec<(String, String)> = mine["dests"]
                .as_object()
                .map(|dests| {
                    dests
                        .iter()
                        .flat_map(|(from, tos)| {
                            tos.as_array()
                                .into_iter()
                                .flatten()
                                .filter_map(Value::as_str)
                                .map(move |to| (from.clone(), to.to_owned()))
                        })
                        .collect()
                })
                .unwrap_or_default();
            let uci = dests
                .choose(rng)
                .map_or_else(|| "e2e4".to_owned(), |(from, to)| format!("{from}{to}"));
            (
                "legal_move",
                text(json!({ "type": "move", "uci": uci, "ply": plies })),
            )
        }
        30..55 => {
            // Mostly known types, now and then an unknown one.
            let types = if rng.random_bool(0.9) {
                chess_server::ws::protocol::CLIENT_TYPES
            } else {
                UNKNOWN_TYPES
            };
            let kind = *types.choose(rng).unwrap_or(&"move");
            let mut message = json!({ "type": kind });
            if rng.random_bool(0.7) {
                message["uci"] = json!(random_uci(rng));
            }
            if rng.random_bool(0.7) {
                let ply: i64 = match rng.random_range(0..4) {
                    0 => i64::try_from(plies).unwrap_or(0),
                    1 => rng.random_range(-2..200),
                    2 => i64::MAX,
                    _ => rng.random(),
                };
                message["ply"] = json!(ply);
            }
            if rng.random_bool(0.3) {
                message["version"] = json!(rng.random_range(-1i64..1000));
            }
            if rng.random_bool(0.1) {
                message["extra"] = json!(rng.random::<u32>());
            }
            ("shaped", text(message))
        }
        55..75 => {
            let valid = json!({ "type": "move", "uci": random_uci(rng), "ply": plies }).to_string();
            let mut chars: Vec<char> = valid.chars().collect();
            for _ in 0..rng.random_range(1..6) {
                let at = rng.random_range(0..chars.len().max(1));
                match rng.random_range(0..3) {
                    0 => chars.insert(at, random_char(rng)),
                    1 if !chars.is_empty() => {
                        chars.remove(at);
                    }
                    _ if !chars.is_empty() => chars[at] = random_char(rng),
                    _ => {}
                }
            }
            (
                "mutated",
                Message::Text(chars.into_iter().collect::<String>().into()),
            )
        }
        75..85 => ("random_json", text(random_json(rng, 3))),
        85..92 => {
            let len = rng.random_range(0..200);
            let junk: String = (0..len).map(|_| random_char(rng)).collect();
            ("random_text", Message::Text(junk.into()))
        }
        92..96 => {
            let len = rng.random_range(0..300);
            let bytes: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            ("binary", Message::Binary(bytes.into()))
        }
        _ => {
            let len = rng.random_range(4_097..20_000);
            let padding = "x".repeat(len);
            (
                "oversized",
                text(json!({ "type": "premove", "uci": padding })),
            )
        }
    }
}

fn random_uci(rng: &mut StdRng) -> String {
    let square = |rng: &mut StdRng| {
        format!(
            "{}{}",
            char::from(b'a' + rng.random_range(0..9)),
            char::from(b'1' + rng.random_range(0..9))
        )
    };
    let promotion = ["", "", "", "q", "n", "k", "x"]
        .choose(rng)
        .copied()
        .unwrap_or("");
    format!("{}{}{promotion}", square(rng), square(rng))
}

fn random_char(rng: &mut StdRng) -> char {
    if rng.random_bool(0.7) {
        char::from(rng.random_range(0x20u8..0x7f))
    } else {
        rng.random::<char>()
    }
}

fn random_json(rng: &mut StdRng, depth: u32) -> Value {
    match rng.random_range(0..if depth == 0 { 5 } else { 7 }) {
        0 => Value::Null,
        1 => json!(rng.random::<bool>()),
        2 => json!(rng.random::<i64>()),
        3 => json!(rng.random::<f64>()),
        4 => json!(random_uci(rng)),
        5 => Value::Array(
            (0..rng.random_range(0..4))
                .map(|_| random_json(rng, depth - 1))
                .collect(),
        ),
        _ => {
            let mut object = serde_json::Map::new();
            for _ in 0..rng.random_range(0..4) {
                let key = ["type", "uci", "ply", "version", "t", "x"]
                    .choose(rng)
                    .copied()
                    .unwrap_or("x");
                object.insert(key.to_owned(), random_json(rng, depth - 1));
            }
            Value::Object(object)
        }
    }
}

/// The game's state as `seat` (0 White, 1 Black, 2 the spectator) or as
/// nobody sees it.
async fn state(
    http: &reqwest::Client,
    base: &str,
    table: &Table,
    seat: Option<usize>,
) -> Result<Value, String> {
    let mut request = http.get(format!("{base}/api/games/{}", table.game_id));
    if let Some(seat) = seat {
        request = request.header("cookie", &table.cookies[seat]);
    }
    let response = request.send().await.map_err(|e| format!("state: {e}"))?;
    response.json().await.map_err(|e| format!("state: {e}"))
}

/// A new game between two new guests, watched by a third, all connected.
async fn new_table(http: &reqwest::Client, base: &str, tally: &mut Tally) -> Result<Table, String> {
    tally.games += 1;
    let mut cookies = Vec::new();
    for _ in 0..3 {
        let me = http
            .get(format!("{base}/api/me"))
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let cookie = me
            .headers()
            .get("set-cookie")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .ok_or("no guest cookie")?
            .to_owned();
        cookies.push(cookie);
    }
    let time_control = if tally.games.is_multiple_of(2) {
        json!({ "kind": "correspondence" })
    } else {
        json!({ "kind": "clock", "initial_ms": 600_000, "increment_ms": 0 })
    };
    let created: Value = http
        .post(format!("{base}/api/challenges"))
        .header("cookie", &cookies[0])
        .json(&json!({ "time_control": time_control, "color": "white" }))
        .send()
        .await
        .map_err(|e| e.to_string())?
        .json()
        .await
        .map_err(|e| e.to_string())?;
    let game_id = created["game_id"].as_str().ok_or("no game id")?.to_owned();
    http.post(format!("{base}/api/games/{game_id}/join"))
        .header("cookie", &cookies[1])
        .json(&json!({}))
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let path = format!("/api/games/{game_id}/socket");
    let mut sockets = Vec::new();
    for cookie in &cookies {
        let mut connection = connect(base, &path, Some(cookie)).await?;
        exchange(
            &mut connection,
            Message::Text(r#"{"type":"hello","version":null}"#.into()),
            0,
        )
        .await
        .ok_or("no answer to hello")?;
        sockets.push(connection);
    }
    let cookies = [cookies[0].clone(), cookies[1].clone(), cookies[2].clone()];
    Ok(Table {
        game_id,
        cookies,
        sockets,
        frames_after_end: 0,
    })
}

/// A socket at `path` whose messages a reader task forwards to an inbox.
async fn connect(base: &str, path: &str, cookie: Option<&str>) -> Result<Connection, String> {
    let url = format!("{}{path}", base.replacen("http://", "ws://", 1));
    let mut request = url.into_client_request().map_err(|e| e.to_string())?;
    if let Some(cookie) = cookie {
        let value = HeaderValue::from_str(cookie).map_err(|e| e.to_string())?;
        request.headers_mut().insert("cookie", value);
    }
    let (ws, _) = tokio_tungstenite::connect_async(request)
        .await
        .map_err(|e| format!("connect {path}: {e}"))?;
    let (sink, mut stream) = ws.split();
    let (sender, inbox) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(Ok(message)) = stream.next().await {
            if let Message::Text(text) = message {
                let value = serde_json::from_str(text.as_str())
                    .unwrap_or_else(|_| json!({ "type": "not_json", "text": text.as_str() }));
                if sender.send(value).is_err() {
                    return;
                }
            }
        }
    });
    Ok(Connection { sink, inbox })
}
