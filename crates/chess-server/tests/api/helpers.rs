//! `spawn_app` and the `TestApp` with one method per endpoint or socket action.

use std::time::Duration;

use chess_server::{Application, Settings};
pub use chess_store::testing::{Backend, TestDatabase, WriteLock, fresh_database, fresh_store};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// Runs an async test body once per backend: `sqlite` and `postgres` tests.
#[macro_export]
macro_rules! on_both_backends {
    ($name:ident, $body:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                if let Some(app) =
                    $crate::helpers::spawn_app($crate::helpers::Backend::Sqlite).await
                {
                    ($body)(app).await;
                }
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                if let Some(app) =
                    $crate::helpers::spawn_app($crate::helpers::Backend::Postgres).await
                {
                    ($body)(app).await;
                }
            }
        }
    };
}

/// Settings for a test server on `database_url`.
pub fn test_settings(database_url: &str) -> Settings {
    let mut settings = Settings::defaults();
    settings.port = 0;
    settings.database_url = database_url.to_owned();
    settings.secret = Some("test-secret-".repeat(4).parse().expect("long enough"));
    // The fixed test secret above is deliberately weak; only development mode takes it.
    settings.development = true;
    settings.first_move_deadline_ms = 30_000;
    settings.allowed_origins = Vec::new();
    // A test reads one socket at a time, and a socket it does not read does
    // not answer the server's pings: only the silence tests want it short.
    settings.ws_silence_timeout_ms = 120_000;
    // A test machine runs many servers at once on two cores: their runtimes
    // run late for reasons that are no server's own. Only the pressure
    // tests turn refusing new games for lateness back on.
    settings.busy_lag_ms = 0;
    settings
}

/// A running server and what a test needs to talk to it.
#[derive(Debug)]
pub struct TestApp {
    pub address: String,
    pub port: u16,
    /// Where `/metrics` is served, when the settings ask for it.
    pub metrics_address: Option<std::net::SocketAddr>,
    pub backend: Backend,
    pub settings: Settings,
    pub db: Option<TestDatabase>,
    /// The server's own store (its pool), for tests that must reach its connections.
    pub store: chess_store::Store,
    /// The server's router, for tests that must hold a response unread
    /// (over TCP the kernel's buffers would read it for them).
    pub router: axum::Router,
    stop: Option<oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<()>>,
    http: reqwest::Client,
}

/// A person with a browser: their identity cookie.
#[derive(Clone, Debug)]
pub struct Guest {
    pub id: String,
    pub name: String,
    pub cookie: String,
}

/// Starts the real server on port 0 with a fresh database.
pub async fn spawn_app(backend: Backend) -> Option<TestApp> {
    // `TEST_LOG=chess_server=debug cargo test ...` shows the servers' logs.
    if let Ok(filter) = std::env::var("TEST_LOG") {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_test_writer()
            .try_init();
    }
    spawn_app_with(backend, |_| {}).await
}

/// [`spawn_app`] with the test settings changed by `configure` first.
pub async fn spawn_app_with(
    backend: Backend,
    configure: impl FnOnce(&mut Settings),
) -> Option<TestApp> {
    let db = fresh_database(backend).await?;
    let mut settings = test_settings(&db.url);
    configure(&mut settings);
    let mut app = start(settings, backend).await;
    app.db = Some(db);
    Some(app)
}

/// Starts a server with `settings`.
pub async fn start(settings: Settings, backend: Backend) -> TestApp {
    let app = Application::build(settings.clone())
        .await
        .expect("the server starts");
    let port = app.port();
    let metrics_address = app.metrics_address();
    let store = app.store().clone();
    let router = app.router();
    let (stop, stopped) = oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        app.run_until_stopped(async {
            let _ = stopped.await;
        })
        .await
        .expect("the server runs");
    });
    TestApp {
        address: format!("http://127.0.0.1:{port}"),
        port,
        metrics_address,
        backend,
        settings,
        db: None,
        store,
        router,
        stop: Some(stop),
        server: Some(server),
        http: reqwest::Client::builder().build().expect("http client"),
    }
}

/// The value of `name` in `response`, or "" when it is missing.
pub fn header(response: &reqwest::Response, name: &str) -> String {
    response
        .headers()
        .get(name)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// A standard clock time control in JSON.
pub fn clock(initial_ms: u64, increment_ms: u64) -> Value {
    json!({ "kind": "clock", "initial_ms": initial_ms, "increment_ms": increment_ms })
}

pub fn correspondence() -> Value {
    json!({ "kind": "correspondence" })
}

/// The value of the sample named exactly `name` (labels included, as in
/// `chess_remote_changes_total{how="followed"}`) in a `/metrics` text.
pub fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|value| value.parse().ok())
}

impl TestApp {
    /// A connection of the test's own holding the server database's write
    /// lock: the server's writes wait until it is released.
    pub async fn write_lock(&self) -> WriteLock {
        let url = &self.db.as_ref().expect("a test database").url;
        WriteLock::take_on(url, self.backend).await
    }

    /// `GET /metrics` on the metrics listener (the settings must ask for
    /// one): content type and body.
    pub async fn scrape_metrics(&self) -> (String, String) {
        let address = self.metrics_address.expect("a metrics listener");
        let response = reqwest::get(format!("http://{address}/metrics"))
            .await
            .expect("GET /metrics");
        assert_eq!(response.status(), 200);
        let content_type = header(&response, "content-type");
        (content_type, response.text().await.expect("a text body"))
    }

    /// Stops the server gracefully (sockets closed, requests finished).
    pub async fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(server) = self.server.take() {
            tokio::time::timeout(Duration::from_secs(10), server)
                .await
                .expect("the server stops within 10 s")
                .expect("the server task ends cleanly");
        }
    }

    /// Stops this server and starts a new one on the same database.
    pub async fn restart(mut self) -> TestApp {
        self.stop().await;
        let mut next = start(self.settings.clone(), self.backend).await;
        next.db = self.db.take();
        next
    }

    /// Stops this server and starts one with other `settings` (same database).
    pub async fn restart_with(mut self, settings: Settings) -> TestApp {
        self.stop().await;
        let mut next = start(settings, self.backend).await;
        next.db = self.db.take();
        next
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.address)
    }

    /// `GET /api/me` without a cookie: a new guest.
    pub async fn guest(&self) -> Guest {
        let response = self
            .http
            .get(self.url("/api/me"))
            .send()
            .await
            .expect("GET /api/me");
        assert_eq!(response.status(), 200);
        let set_cookie = response
            .headers()
            .get("set-cookie")
            .expect("a new guest gets a cookie")
            .to_str()
            .expect("ascii cookie")
            .to_owned();
        assert!(
            set_cookie.contains("HttpOnly") && set_cookie.contains("SameSite=Lax"),
            "{set_cookie}"
        );
        let cookie = set_cookie.split(';').next().expect("name=value").to_owned();
        let body: Value = response.json().await.expect("json");
        Guest {
            id: body["id"].as_str().expect("id").to_owned(),
            name: body["name"].as_str().expect("name").to_owned(),
            cookie,
        }
    }

    /// `GET path` with an optional cookie: (status, json body).
    pub async fn get(&self, path: &str, cookie: Option<&str>) -> (u16, Value) {
        let mut request = self.http.get(self.url(path));
        if let Some(cookie) = cookie {
            request = request.header("cookie", cookie);
        }
        let response = request.send().await.expect("GET");
        let status = response.status().as_u16();
        let text = response.text().await.expect("body");
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    /// `GET path` as text.
    pub async fn get_text(&self, path: &str) -> (u16, String) {
        let response = self.http.get(self.url(path)).send().await.expect("GET");
        (
            response.status().as_u16(),
            response.text().await.expect("body"),
        )
    }

    /// A request with a raw body: (status, json body).
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        cookie: Option<&str>,
        body: Option<String>,
    ) -> (u16, Value) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut request = self.http.request(method, self.url(path));
        if let Some(cookie) = cookie {
            request = request.header("cookie", cookie);
        }
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body);
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        let text = response.text().await.expect("body");
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    /// A request with extra `headers` and an optional JSON body: the whole
    /// response, for tests that look at status and headers.
    pub async fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> reqwest::Response {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut request = self.http.request(method, self.url(path));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        request.send().await.expect("request")
    }

    pub async fn post(&self, path: &str, guest: &Guest, body: Value) -> (u16, Value) {
        self.send("POST", path, Some(&guest.cookie), Some(body.to_string()))
            .await
    }

    pub async fn create_local(&self, guest: &Guest, time_control: Value) -> String {
        let (status, body) = self
            .post(
                "/api/games/local",
                guest,
                json!({ "time_control": time_control }),
            )
            .await;
        assert_eq!(status, 201, "{body}");
        body["game_id"].as_str().expect("game id").to_owned()
    }

    pub async fn create_challenge(
        &self,
        guest: &Guest,
        time_control: Value,
        color: &str,
        fen: Option<&str>,
    ) -> String {
        let mut body = json!({ "time_control": time_control, "color": color });
        if let Some(fen) = fen {
            body["fen"] = json!(fen);
        }
        let (status, body) = self.post("/api/challenges", guest, body).await;
        assert_eq!(status, 201, "{body}");
        body["game_id"].as_str().expect("game id").to_owned()
    }

    pub async fn join_game(&self, guest: &Guest, game_id: &str) -> (u16, Value) {
        self.post(&format!("/api/games/{game_id}/join"), guest, json!({}))
            .await
    }

    /// A game between `white` and `black` (a challenge taken at once).
    pub async fn online_game(&self, white: &Guest, black: &Guest, time_control: Value) -> String {
        self.online_game_from(white, black, time_control, None)
            .await
    }

    pub async fn online_game_from(
        &self,
        white: &Guest,
        black: &Guest,
        time_control: Value,
        fen: Option<&str>,
    ) -> String {
        let game_id = self
            .create_challenge(white, time_control, "white", fen)
            .await;
        let (status, body) = self.join_game(black, &game_id).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["color"], "black");
        game_id
    }

    /// Both players' game sockets, each past its `hello`.
    pub async fn seat_both(&self, game_id: &str, white: &Guest, black: &Guest) -> (Socket, Socket) {
        let mut white_socket = self.socket(game_id, Some(white)).await;
        let mut black_socket = self.socket(game_id, Some(black)).await;
        white_socket.hello().await;
        black_socket.hello().await;
        (white_socket, black_socket)
    }

    pub async fn state(&self, game_id: &str, guest: Option<&Guest>) -> Value {
        let (status, body) = self
            .get(
                &format!("/api/games/{game_id}"),
                guest.map(|g| g.cookie.as_str()),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        body
    }

    /// Opens the game socket with the guest's cookie (or none: a spectator).
    pub async fn socket(&self, game_id: &str, guest: Option<&Guest>) -> Socket {
        self.try_socket(&format!("/api/games/{game_id}/socket"), guest, None)
            .await
            .expect("the socket opens")
    }

    /// Opens the game socket through `relay` instead of directly.
    pub async fn socket_through(&self, relay: &Relay, game_id: &str, guest: &Guest) -> Socket {
        connect_socket(
            relay.port,
            &format!("/api/games/{game_id}/socket"),
            Some(guest),
            None,
        )
        .await
        .expect("the socket opens through the relay")
    }

    /// Opens a socket at `path`, optionally with an `Origin`.
    pub async fn try_socket(
        &self,
        path: &str,
        guest: Option<&Guest>,
        origin: Option<&str>,
    ) -> Result<Socket, tokio_tungstenite::tungstenite::Error> {
        connect_socket(self.port, path, guest, origin).await
    }
}

/// A TCP relay in front of a server that can go silent both ways while
/// keeping its connections open (a phone that lost its signal), or only
/// from the client to the server (a client whose uplink failed).
#[derive(Debug)]
pub struct Relay {
    pub port: u16,
    /// Whether bytes are swallowed: client to server, server to client.
    cut: [std::sync::Arc<std::sync::atomic::AtomicBool>; 2],
    task: tokio::task::JoinHandle<()>,
}

impl Relay {
    /// Relays connections on a free port to `target_port`.
    pub async fn start(target_port: u16) -> Relay {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("relay listens");
        let port = listener.local_addr().expect("address").port();
        let cut = [
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        ];
        let flags = cut.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(("127.0.0.1", target_port)).await else {
                    continue;
                };
                type Reader = Box<dyn tokio::io::AsyncRead + Send + Unpin>;
                type Writer = Box<dyn tokio::io::AsyncWrite + Send + Unpin>;
                let (client_in, client_out) = client.into_split();
                let (server_in, server_out) = server.into_split();
                let directions: [(Reader, Writer, Arc<AtomicBool>); 2] = [
                    (
                        Box::new(client_in),
                        Box::new(server_out),
                        Arc::clone(&flags[0]),
                    ),
                    (
                        Box::new(server_in),
                        Box::new(client_out),
                        Arc::clone(&flags[1]),
                    ),
                ];
                for (mut from, mut to, flag) in directions {
                    tokio::spawn(async move {
                        let mut buffer = vec![0u8; 16 * 1024];
                        loop {
                            let read = match from.read(&mut buffer).await {
                                Ok(0) | Err(_) => return,
                                Ok(read) => read,
                            };
                            // Cut: bytes are swallowed, the sockets stay open.
                            if !flag.load(Ordering::SeqCst)
                                && to.write_all(&buffer[..read]).await.is_err()
                            {
                                return;
                            }
                        }
                    });
                }
            }
        });
        Relay { port, cut, task }
    }

    /// From now on nothing passes either way; no connection is closed.
    pub fn go_silent(&self) {
        for cut in &self.cut {
            cut.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// From now on nothing from the client reaches the server, while the
    /// server's frames still reach the client; no connection is closed.
    pub fn cut_uplink(&self) {
        self.cut[0].store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn connect_socket(
    port: u16,
    path: &str,
    guest: Option<&Guest>,
    origin: Option<&str>,
) -> Result<Socket, tokio_tungstenite::tungstenite::Error> {
    let mut request = format!("ws://127.0.0.1:{port}{path}")
        .into_client_request()
        .expect("request");
    if let Some(guest) = guest {
        request.headers_mut().insert(
            "cookie",
            HeaderValue::from_str(&guest.cookie).expect("cookie"),
        );
    }
    if let Some(origin) = origin {
        request
            .headers_mut()
            .insert("origin", HeaderValue::from_str(origin).expect("origin"));
    }
    let (ws, _) = tokio_tungstenite::connect_async(request).await?;
    Ok(Socket { ws })
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A WebSocket client.
#[derive(Debug)]
pub struct Socket {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

/// How long a test waits for a message before failing.
const WAIT: Duration = Duration::from_secs(10);

impl Socket {
    pub async fn send(&mut self, message: Value) {
        self.ws
            .send(Message::Text(message.to_string().into()))
            .await
            .expect("send");
    }

    pub async fn send_raw(&mut self, text: &str) {
        self.ws
            .send(Message::Text(text.to_owned().into()))
            .await
            .expect("send");
    }

    /// The next JSON message (Ping frames are answered on the way).
    pub async fn recv(&mut self) -> Value {
        self.try_recv(WAIT)
            .await
            .expect("a message within the wait")
    }

    /// The next JSON message within `wait`, or `None`.
    pub async fn try_recv(&mut self, wait: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let next = tokio::time::timeout_at(deadline, self.ws.next())
                .await
                .ok()??;
            match next.ok()? {
                Message::Text(text) => {
                    return Some(serde_json::from_str(text.as_str()).expect("json"));
                }
                Message::Close(_) => return None,
                _ => {}
            }
        }
    }

    /// Whether the server closes the socket within `wait` (messages before
    /// the close are skipped).
    pub async fn closed_within(&mut self, wait: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            match tokio::time::timeout_at(deadline, self.ws.next()).await {
                Err(_) => return false,
                Ok(None | Some(Err(_)) | Some(Ok(Message::Close(_)))) => return true,
                Ok(Some(Ok(_))) => {}
            }
        }
    }

    /// The code of the close frame the server sends within `wait` (messages
    /// before it are skipped); `None` when the connection ends without one
    /// or stays open.
    pub async fn close_code_within(&mut self, wait: Duration) -> Option<u16> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            match tokio::time::timeout_at(deadline, self.ws.next()).await {
                Ok(Some(Ok(Message::Close(frame)))) => return frame.map(|f| u16::from(f.code)),
                Err(_) | Ok(None | Some(Err(_))) => return None,
                Ok(Some(Ok(_))) => {}
            }
        }
    }

    /// The next message of type `kind`, skipping others.
    pub async fn recv_type(&mut self, kind: &str) -> Value {
        loop {
            let message = self.recv().await;
            if message["type"] == kind {
                return message;
            }
        }
    }

    /// The next `event` message whose event kind is `kind`.
    pub async fn recv_event(&mut self, kind: &str) -> Value {
        loop {
            let message = self.recv_type("event").await;
            if message["event"]["kind"] == kind {
                return message;
            }
        }
    }

    /// `hello` with no version: the full state.
    pub async fn hello(&mut self) -> Value {
        self.send(json!({ "type": "hello", "version": null })).await;
        self.recv_type("state").await
    }

    /// Plays a move and returns its `ack` (failing on an `error`).
    pub async fn play(&mut self, uci: &str, ply: u32) -> Value {
        self.send(json!({ "type": "move", "uci": uci, "ply": ply }))
            .await;
        loop {
            let message = self.recv().await;
            match message["type"].as_str() {
                Some("ack") => return message,
                Some("error") => panic!("move {uci} at ply {ply} refused: {message}"),
                _ => {}
            }
        }
    }

    /// Sends `message` and returns the `error` it gets.
    pub async fn expect_error(&mut self, message: Value) -> Value {
        self.send(message).await;
        self.recv_type("error").await
    }

    /// Closes the socket.
    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }
}

/// Plays `moves` alternately on the sockets of White and Black, from ply 0.
pub async fn play_moves(white: &mut Socket, black: &mut Socket, moves: &[&str]) {
    for (ply, uci) in moves.iter().enumerate() {
        let ply = u32::try_from(ply).expect("few moves");
        let mover = if ply % 2 == 0 {
            &mut *white
        } else {
            &mut *black
        };
        mover.play(uci, ply).await;
    }
}
