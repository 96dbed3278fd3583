//! A graceful stop under load logs no error: every game finishes the command
//! it is on, the writer commits what they queued, and only then does the
//! database pool close. (Its own test binary: it captures the process's logs.)

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chess_server::{Application, Settings};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;

/// Every log line the server writes, for the assertions.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut lines) = self.0.lock() {
            lines.extend_from_slice(bytes);
        }
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        self.0
            .lock()
            .map(|lines| String::from_utf8_lossy(&lines).into_owned())
            .unwrap_or_default()
    }
}

/// A guest's cookie from `GET /api/me`.
async fn guest(http: &reqwest::Client, base: &str) -> String {
    let response = http
        .get(format!("{base}/api/me"))
        .send()
        .await
        .expect("GET /api/me");
    let set_cookie = response
        .headers()
        .get("set-cookie")
        .and_then(|value| value.to_str().ok())
        .expect("a guest cookie");
    set_cookie.split(';').next().expect("name=value").to_owned()
}

/// Plays knight moves back and forth in a one-screen game until the server
/// goes away; the number of acknowledged moves.
async fn play_until_stopped(port: u16, game_id: String, cookie: String) -> usize {
    let mut request = format!("ws://127.0.0.1:{port}/api/games/{game_id}/socket")
        .into_client_request()
        .expect("request");
    request
        .headers_mut()
        .insert("cookie", HeaderValue::from_str(&cookie).expect("cookie"));
    let Ok((mut ws, _)) = tokio_tungstenite::connect_async(request).await else {
        return 0;
    };
    let cycle = ["g1f3", "g8f6", "f3g1", "f6g8"];
    let mut acknowledged = 0;
    // Two rounds: a third would repeat the position a third time.
    for (ply, uci) in cycle.iter().chain(cycle.iter()).enumerate() {
        let message = json!({ "type": "move", "uci": uci, "ply": ply }).to_string();
        if ws.send(Message::Text(message.into())).await.is_err() {
            return acknowledged;
        }
        loop {
            match ws.next().await {
                Some(Ok(Message::Text(text))) => {
                    let reply: Value = serde_json::from_str(text.as_str()).unwrap_or_default();
                    if reply["type"] == "ack" {
                        acknowledged += 1;
                        break;
                    }
                    if reply["type"] == "error" {
                        return acknowledged;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return acknowledged,
            }
        }
    }
    acknowledged
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_stop_under_load_logs_no_error() {
    let captured = Captured::default();
    let writer = captured.clone();
    tracing_subscriber::fmt()
        .with_env_filter("warn")
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .init();

    let folder = std::env::temp_dir().join(format!("chess-shutdown-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&folder).expect("temp folder");
    let mut settings = Settings::defaults();
    settings.port = 0;
    settings.database_url = format!("sqlite://{}", folder.join("chess.db").display());
    settings.secret = Some("shutdown-test-secret-".repeat(3).parse().expect("long"));
    settings.development = true;
    let app = Application::build(settings)
        .await
        .expect("the server starts");
    let port = app.port();
    let base = format!("http://127.0.0.1:{port}");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(app.run_until_stopped(async {
        let _ = stopped.await;
    }));

    let http = reqwest::Client::new();
    let mut players = Vec::new();
    for _ in 0..12 {
        let cookie = guest(&http, &base).await;
        let created: Value = http
            .post(format!("{base}/api/games/local"))
            .header("cookie", &cookie)
            .json(&json!({ "time_control": { "kind": "correspondence" } }))
            .send()
            .await
            .expect("create a game")
            .json()
            .await
            .expect("json");
        let game_id = created["game_id"].as_str().expect("game id").to_owned();
        players.push(tokio::spawn(play_until_stopped(port, game_id, cookie)));
    }
    // Stop while the games are still playing.
    tokio::time::sleep(Duration::from_millis(150)).await;
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(15), server)
        .await
        .expect("the server stops in time")
        .expect("the server task ends")
        .expect("the server stops without an IO error");
    let mut acknowledged = 0;
    for player in players {
        acknowledged += player.await.unwrap_or(0);
    }
    let _ = std::fs::remove_dir_all(&folder);

    let logs = captured.text();
    assert!(
        acknowledged > 0,
        "the games were playing when the stop came"
    );
    assert!(
        !logs.contains("ERROR"),
        "errors logged during the stop:\n{logs}"
    );
    assert!(
        !logs.contains("closed pool"),
        "the pool closed too early:\n{logs}"
    );
}
