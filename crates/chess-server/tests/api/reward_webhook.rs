//! Reward requests delivered to the host platform (`docs/rewards.md`,
//! "Delivery to the host platform"): a loopback receiver in the test records
//! every request, checks its signature on its own (the `hmac` crate, not the
//! server's code) and answers what the test scripts (2xx, 408, 429, 5xx, 400,
//! or no answer at all). Wins are recorded through the store, as the ledger
//! tests do; the retry schedule is shrunk to milliseconds.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use chess_game::{EndReason, GameResult};
use chess_rules::Color;
use chess_server::Settings;
use chess_store::{DeliveryState, RewardRequest, Store};
use hmac::{Hmac, KeyInit as _, Mac as _};
use serde_json::Value;
use sha2::Sha256;
use uuid::Uuid;

use crate::helpers::{Backend, TestApp, fresh_database, sample, start, test_settings};

/// The webhook secret the servers and the receiver share.
const SECRET: &str = "reward-webhook-secret-for-tests-only";

const WHITE_MATES: GameResult = GameResult {
    winner: Some(Color::White),
    reason: EndReason::Checkmate,
};

/// Long enough for anything the machine might delay; conditions are polled,
/// so a passing test never waits this long.
const PATIENCE: Duration = Duration::from_secs(60);

/// What the receiver answers a request.
#[derive(Clone, Copy, Debug)]
enum Reply {
    Status(u16),
    /// Never answers (the server's timeout must give up).
    Hang,
    /// Answers 200 after a while (to catch two senders at once).
    SlowOk(Duration),
}

#[derive(Debug)]
struct Received {
    key: String,
    timestamp: String,
    body: Vec<u8>,
    signature: String,
    /// Unix ms it arrived.
    at_ms: i64,
}

impl Received {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

#[derive(Debug)]
struct ReceiverState {
    script: VecDeque<Reply>,
    default: Reply,
    received: Vec<Received>,
    /// Keys answered 2xx, in order.
    accepted: Vec<String>,
    in_flight: HashSet<String>,
    /// Requests that arrived while one with the same key was in flight.
    concurrent_duplicates: usize,
}

/// A loopback webhook.
#[derive(Clone, Debug)]
struct Receiver {
    state: Arc<Mutex<ReceiverState>>,
    url: String,
    port: u16,
}

impl Receiver {
    async fn start(default: Reply) -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("address").port();
        Receiver::serve_on(listener, default, port)
    }

    fn serve_on(listener: tokio::net::TcpListener, default: Reply, port: u16) -> Receiver {
        let receiver = Receiver {
            state: Arc::new(Mutex::new(ReceiverState {
                script: VecDeque::new(),
                default,
                received: Vec::new(),
                accepted: Vec::new(),
                in_flight: HashSet::new(),
                concurrent_duplicates: 0,
            })),
            url: format!("http://127.0.0.1:{port}/rewards"),
            port,
        };
        let state = Arc::clone(&receiver.state);
        let app = axum::Router::new().route(
            "/rewards",
            axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                let state = Arc::clone(&state);
                async move { receive(&state, &headers, body).await }
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        receiver
    }

    fn script(&self, replies: &[Reply]) {
        self.state.lock().expect("lock").script.extend(replies);
    }

    fn set_default(&self, reply: Reply) {
        self.state.lock().expect("lock").default = reply;
    }

    fn received(&self) -> usize {
        self.state.lock().expect("lock").received.len()
    }

    fn accepted(&self) -> Vec<String> {
        self.state.lock().expect("lock").accepted.clone()
    }

    fn concurrent_duplicates(&self) -> usize {
        self.state.lock().expect("lock").concurrent_duplicates
    }

    /// Every request received so far: key, timestamp, body, signature.
    fn each<T>(&self, f: impl Fn(&Received) -> T) -> Vec<T> {
        self.state
            .lock()
            .expect("lock")
            .received
            .iter()
            .map(f)
            .collect()
    }
}

async fn receive(state: &Mutex<ReceiverState>, headers: &HeaderMap, body: Bytes) -> StatusCode {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    let key = header("idempotency-key");
    let reply = {
        let mut state = state.lock().expect("lock");
        if !state.in_flight.insert(key.clone()) {
            state.concurrent_duplicates += 1;
        }
        state.received.push(Received {
            key: key.clone(),
            timestamp: header("x-chess-timestamp"),
            body: body.to_vec(),
            signature: header("x-chess-signature"),
            at_ms: now_ms(),
        });
        let default = state.default;
        state.script.pop_front().unwrap_or(default)
    };
    let status = match reply {
        Reply::Status(status) => status,
        Reply::Hang => std::future::pending().await,
        Reply::SlowOk(delay) => {
            tokio::time::sleep(delay).await;
            200
        }
    };
    let mut state = state.lock().expect("lock");
    state.in_flight.remove(&key);
    if (200..300).contains(&status) {
        state.accepted.push(key);
    }
    StatusCode::from_u16(status).expect("a status")
}

/// The receiver's own check: `sha256=<hex HMAC-SHA256 of the raw body>`.
fn signed(body: &[u8], signature: &str) -> bool {
    let Some(hex) = signature.strip_prefix("sha256=") else {
        return false;
    };
    let Ok(bytes) = (0..hex.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(hex.get(at..at + 2).unwrap_or("zz"), 16))
        .collect::<Result<Vec<u8>, _>>()
    else {
        return false;
    };
    let mut mac = Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).expect("a key");
    mac.update(body);
    mac.verify_slice(&bytes).is_ok()
}

fn webhook_settings(database_url: &str, receiver: &Receiver) -> Settings {
    let mut settings = test_settings(database_url);
    settings.reward_webhook_url = Some(receiver.url.parse().expect("a URL"));
    settings.reward_webhook_secret = Some(SECRET.parse().expect("long enough"));
    settings.reward_retry_first_ms = 10;
    settings.reward_retry_max_ms = 100;
    settings.reward_webhook_timeout_ms = 1_000;
    settings.reward_poll_ms = 20;
    settings.metrics_listen = Some("127.0.0.1:0".parse().expect("an address"));
    settings
}

/// A server with a webhook pointing at `receiver`, on a fresh database.
async fn spawn_with_webhook(backend: Backend, receiver: &Receiver) -> Option<TestApp> {
    let db = fresh_database(backend).await?;
    let mut app = start(webhook_settings(&db.url, receiver), backend).await;
    app.db = Some(db);
    Some(app)
}

/// Runs a webhook test once per backend.
macro_rules! on_both_webhooks {
    ($name:ident, $default:expr, $body:expr) => {
        mod $name {
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let receiver = Receiver::start($default).await;
                if let Some(app) = spawn_with_webhook(Backend::Sqlite, &receiver).await {
                    ($body)(app, receiver).await;
                }
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let receiver = Receiver::start($default).await;
                if let Some(app) = spawn_with_webhook(Backend::Postgres, &receiver).await {
                    ($body)(app, receiver).await;
                }
            }
        }
    };
}

/// Records `n` wins of `account`, each in its own transaction, one after
/// the other, starting at `at_ms`.
async fn wins(store: &Store, account: Uuid, n: usize, at_ms: i64) -> Vec<Uuid> {
    let mut games = Vec::new();
    for i in 0..n {
        let game = Uuid::new_v4();
        let mut tx = store.begin().await.expect("begin");
        tx.record_win(game, account, &WHITE_MATES, at_ms + i as i64)
            .await
            .expect("record a win");
        tx.commit().await.expect("commit");
        games.push(game);
    }
    games
}

fn now_ms() -> i64 {
    i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_millis(),
    )
    .expect("fits")
}

/// Waits until `done` holds, polling; panics saying `what` after [`PATIENCE`].
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Every request in the outbox, in entry order.
async fn outbox(store: &Store) -> Vec<RewardRequest> {
    store
        .reward_requests_after(0, 1000)
        .await
        .expect("list the outbox")
}

/// Waits until no request is pending.
async fn settled(store: &Store) -> Vec<RewardRequest> {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let requests = outbox(store).await;
        if requests
            .iter()
            .all(|request| request.state != DeliveryState::Pending)
        {
            return requests;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "requests still pending: {requests:#?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

on_both_webhooks!(
    each_credited_win_is_posted_signed_with_its_entry_as_key,
    Reply::Status(200),
    async |mut app: TestApp, receiver: Receiver| {
        let account = Uuid::new_v4();
        let games = wins(&app.store, account, 3, now_ms()).await;

        let requests = settled(&app.store).await;
        assert_eq!(requests.len(), 3);
        assert!(requests.iter().all(|r| r.state == DeliveryState::Delivered));
        eventually("three requests accepted", || receiver.accepted().len() == 3).await;
        assert_eq!(receiver.received(), 3, "each sent once");

        let mut keys = receiver.accepted();
        keys.sort();
        let mut expected: Vec<String> = requests.iter().map(|r| r.entry_id.to_string()).collect();
        expected.sort();
        assert_eq!(keys, expected, "the key is the entry id");
        for (key, timestamp, body, signature) in receiver.each(|r| {
            (
                r.key.clone(),
                r.timestamp.clone(),
                r.json(),
                (
                    signed(&r.body, &r.signature),
                    r.body.clone(),
                    r.signature.clone(),
                ),
            )
        }) {
            let (valid, raw, signature) = signature;
            assert!(valid, "the signature verifies: {body}");
            // One byte changed, and it no longer does.
            let tampered = String::from_utf8(raw)
                .expect("utf-8")
                .replace("\"amount_cents\":100", "\"amount_cents\":900");
            assert!(!signed(tampered.as_bytes(), &signature));
            assert_eq!(body["entry_id"].to_string(), key);
            assert_eq!(
                body["timestamp"].to_string(),
                timestamp,
                "timestamp inside the signed body"
            );
            assert_eq!(body["amount_cents"], 100);
            assert_eq!(body["currency"], "USD");
            assert_eq!(body["account_id"], account.to_string());
            assert_eq!(body["result"]["winner"], "white");
            assert_eq!(body["result"]["reason"], "checkmate");
            assert!(games.iter().any(|g| body["game_id"] == g.to_string()));
        }

        // /metrics counts them.
        let mut scraped = String::new();
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while sample(&scraped, "chess_reward_requests{state=\"delivered\"}") != Some(3.0) {
            assert!(tokio::time::Instant::now() < deadline, "{scraped}");
            tokio::time::sleep(Duration::from_millis(50)).await;
            scraped = app.scrape_metrics().await.1;
        }
        assert_eq!(
            sample(&scraped, "chess_reward_requests{state=\"pending\"}"),
            Some(0.0)
        );
        assert_eq!(
            sample(&scraped, "chess_reward_requests{state=\"refused\"}"),
            Some(0.0)
        );
        assert_eq!(
            sample(&scraped, "chess_reward_requests_oldest_pending_seconds"),
            Some(0.0)
        );
        assert_eq!(
            sample(
                &scraped,
                "chess_reward_deliveries_total{outcome=\"delivered\"}"
            ),
            Some(3.0)
        );
        app.stop().await;
    }
);

on_both_webhooks!(
    failures_are_retried_with_the_same_key_until_a_2xx,
    Reply::Status(200),
    async |mut app: TestApp, receiver: Receiver| {
        receiver.script(&[
            Reply::Status(500),
            Reply::Status(408),
            Reply::Status(429),
            Reply::Status(503),
            Reply::Hang,
        ]);
        wins(&app.store, Uuid::new_v4(), 1, now_ms()).await;

        let requests = settled(&app.store).await;
        assert_eq!(requests[0].state, DeliveryState::Delivered);
        assert_eq!(requests[0].attempts, 6, "five failures, then the 2xx");
        let keys = receiver.each(|r| r.key.clone());
        assert_eq!(keys.len(), 6);
        assert!(
            keys.iter().all(|k| *k == requests[0].entry_id.to_string()),
            "{keys:?}"
        );
        assert!(
            receiver
                .each(|r| signed(&r.body, &r.signature))
                .into_iter()
                .all(|v| v)
        );
        app.stop().await;
    }
);

on_both_webhooks!(
    a_400_is_a_permanent_refusal_kept_with_its_reason,
    Reply::Status(400),
    async |mut app: TestApp, receiver: Receiver| {
        wins(&app.store, Uuid::new_v4(), 1, now_ms()).await;

        let requests = settled(&app.store).await;
        assert_eq!(requests[0].state, DeliveryState::Refused);
        assert_eq!(requests[0].last_status, Some(400));
        assert!(
            requests[0]
                .last_error
                .as_deref()
                .unwrap_or("")
                .contains("400"),
            "{:?}",
            requests[0].last_error
        );
        // Later polls leave it alone.
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(receiver.received(), 1);
        app.stop().await;
    }
);

on_both_webhooks!(
    fifty_simultaneous_wins_send_exactly_five_requests_of_a_dollar,
    Reply::Status(200),
    async |mut app: TestApp, receiver: Receiver| {
        let account = Uuid::new_v4();
        let at = now_ms();
        let tasks: Vec<_> = (0..50)
            .map(|i| {
                let store = app.store.clone();
                tokio::spawn(async move {
                    let mut tx = store.begin().await.expect("begin");
                    tx.record_win(Uuid::new_v4(), account, &WHITE_MATES, at + i)
                        .await
                        .expect("record");
                    tx.commit().await.expect("commit");
                })
            })
            .collect();
        for task in tasks {
            task.await.expect("a win");
        }

        let requests = settled(&app.store).await;
        assert_eq!(requests.len(), 5, "over-cap wins owe nothing");
        eventually("five accepted", || receiver.accepted().len() == 5).await;
        // Give a wrongly sent over-cap win time to show up.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let keys = receiver.each(|r| r.key.clone());
        let distinct: HashSet<&String> = keys.iter().collect();
        assert_eq!((keys.len(), distinct.len()), (5, 5), "{keys:?}");
        assert!(
            receiver
                .each(|r| r.json()["amount_cents"] == 100)
                .into_iter()
                .all(|v| v)
        );
        app.stop().await;
    }
);

/// A receiver that is down (its port closed) for a while, then back:
/// everything arrives, once each. (The real schedule's version of this:
/// docs/rewards.md, "Retries".)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_down_for_a_while_then_back_gets_everything() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        // Reserve a port, then close it: connections are refused.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("address").port();
        drop(listener);
        let closed = Receiver {
            state: Arc::new(Mutex::new(ReceiverState {
                script: VecDeque::new(),
                default: Reply::Status(200),
                received: Vec::new(),
                accepted: Vec::new(),
                in_flight: HashSet::new(),
                concurrent_duplicates: 0,
            })),
            url: format!("http://127.0.0.1:{port}/rewards"),
            port,
        };
        let Some(mut app) = spawn_with_webhook(backend, &closed).await else {
            continue;
        };
        let account = Uuid::new_v4();
        wins(&app.store, account, 5, now_ms()).await;
        wins(&app.store, Uuid::new_v4(), 5, now_ms()).await;
        // Down: attempts fail and are retried.
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while outbox(&app.store).await.iter().any(|r| r.attempts < 3) {
            assert!(tokio::time::Instant::now() < deadline);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            outbox(&app.store)
                .await
                .iter()
                .all(|r| r.state == DeliveryState::Pending && r.last_status.is_none())
        );

        // Back on the same port.
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", closed.port))
            .await
            .expect("the port again");
        let receiver = Receiver::serve_on(listener, Reply::Status(200), closed.port);
        let requests = settled(&app.store).await;
        assert!(requests.iter().all(|r| r.state == DeliveryState::Delivered));
        eventually("ten accepted", || receiver.accepted().len() == 10).await;
        let keys: HashSet<String> = receiver.accepted().into_iter().collect();
        assert_eq!(keys.len(), 10);
        app.stop().await;
    }
}

on_both_webhooks!(
    a_restart_mid_delivery_sends_it_again_with_the_same_key,
    Reply::Hang,
    async |app: TestApp, receiver: Receiver| {
        wins(&app.store, Uuid::new_v4(), 1, now_ms()).await;
        eventually("the request is being sent", || receiver.received() == 1).await;
        // Stopped while the receiver holds the request unanswered.
        receiver.set_default(Reply::Status(200));
        let app = app.restart().await;

        let requests = settled(&app.store).await;
        assert_eq!(requests[0].state, DeliveryState::Delivered);
        let keys = receiver.each(|r| r.key.clone());
        assert!(keys.len() >= 2, "{keys:?}");
        assert!(
            keys.iter().all(|k| *k == requests[0].entry_id.to_string()),
            "{keys:?}"
        );
        let mut app = app;
        app.stop().await;
    }
);

/// A node killed mid-delivery (kill -9: its claim never given back) holds
/// the request only until its lease runs out; then it is sent, same key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_left_by_a_killed_node_is_sent_once_its_lease_runs_out() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some((store, db)) = crate::helpers::fresh_store(backend).await else {
            continue;
        };
        let receiver = Receiver::start(Reply::Status(200)).await;
        wins(&store, Uuid::new_v4(), 1, now_ms()).await;
        let now = now_ms();
        let dead = store
            .claim_reward_requests(now, now + 1_500, "a-killed-node", 16)
            .await
            .expect("claim");
        assert_eq!(dead.len(), 1);
        store.close().await;

        let mut app = start(webhook_settings(&db.url, &receiver), backend).await;
        let requests = settled(&app.store).await;
        let arrivals = receiver.each(|r| r.at_ms);
        assert!(
            arrivals.iter().all(|at| *at >= now + 1_500),
            "sent while the killed node's lease held it: {arrivals:?} (lease until {})",
            now + 1_500
        );
        assert_eq!(requests[0].state, DeliveryState::Delivered);
        assert_eq!(
            requests[0].attempts, 2,
            "the killed node's attempt and this one"
        );
        assert!(requests[0].finished_at_ms.expect("finished") >= now + 1_500);
        assert_eq!(receiver.accepted(), [dead[0].entry_id.to_string()]);
        app.stop().await;
        drop(db);
    }
}

/// Two nodes on one Postgres database deliver side by side: every request
/// arrives, none is sent by both at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_racing_send_each_request_once_at_a_time() {
    let receiver = Receiver::start(Reply::SlowOk(Duration::from_millis(30))).await;
    let Some(mut first) = spawn_with_webhook(Backend::Postgres, &receiver).await else {
        return;
    };
    let mut second = start(first.settings.clone(), Backend::Postgres).await;
    let tasks: Vec<_> = (0..40)
        .map(|i| {
            let store = if i % 2 == 0 {
                first.store.clone()
            } else {
                second.store.clone()
            };
            tokio::spawn(async move { wins(&store, Uuid::new_v4(), 1, now_ms()).await })
        })
        .collect();
    for task in tasks {
        task.await.expect("a win");
    }

    let requests = settled(&first.store).await;
    assert_eq!(requests.len(), 40);
    assert!(requests.iter().all(|r| r.state == DeliveryState::Delivered));
    eventually("forty accepted", || receiver.accepted().len() >= 40).await;
    assert_eq!(receiver.concurrent_duplicates(), 0);
    let keys: HashSet<String> = receiver.accepted().into_iter().collect();
    assert_eq!(keys.len(), 40);
    assert_eq!(receiver.received(), 40, "none sent twice");
    second.stop().await;
    first.stop().await;
}

/// Signs a reconciliation request as the platform does.
fn platform_get(
    app: &TestApp,
    path: &str,
    timestamp: i64,
    secret: &str,
) -> reqwest::RequestBuilder {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("a key");
    mac.update(format!("{timestamp}\nGET\n{path}").as_bytes());
    let hex: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    reqwest::Client::new()
        .get(format!("{}{path}", app.address))
        .header("x-chess-timestamp", timestamp.to_string())
        .header("x-chess-signature", format!("sha256={hex}"))
}

on_both_webhooks!(
    the_platform_reconciles_through_a_signed_paged_listing,
    Reply::Status(200),
    async |mut app: TestApp, _receiver: Receiver| {
        let account = Uuid::new_v4();
        wins(&app.store, account, 5, now_ms()).await;
        let requests = settled(&app.store).await;
        let now = now_ms() / 1000;

        // Refusals, each with its reason.
        let unsigned = reqwest::get(format!("{}/api/rewards/requests", app.address))
            .await
            .expect("GET");
        assert_eq!(unsigned.status(), 401);
        let body: Value = unsigned.json().await.expect("json");
        assert_eq!(body["error"]["code"], "signature_missing");
        for (path, timestamp, secret, code) in [
            (
                "/api/rewards/requests",
                now,
                "another-secret-of-thirty-two-bytes!!",
                "signature_invalid",
            ),
            (
                "/api/rewards/requests",
                now - 3600,
                SECRET,
                "timestamp_stale",
            ),
        ] {
            let reply = platform_get(&app, path, timestamp, secret)
                .send()
                .await
                .expect("GET");
            assert_eq!(reply.status(), 401, "{code}");
            let body: Value = reply.json().await.expect("json");
            assert_eq!(body["error"]["code"], code);
        }
        // A signature for one page does not open another.
        let other = platform_get(&app, "/api/rewards/requests?after=0", now, SECRET)
            .header("x-chess-timestamp", now.to_string());
        let reply = reqwest::Client::new()
            .get(format!("{}/api/rewards/requests?after=2", app.address))
            .headers(other.build().expect("a request").headers().clone())
            .send()
            .await
            .expect("GET");
        assert_eq!(reply.status(), 401);
        let reply = platform_get(&app, "/api/rewards/requests?after=x", now, SECRET)
            .send()
            .await
            .expect("GET");
        assert_eq!(reply.status(), 400);

        // Pages of two, in entry order, each reply signed.
        let mut after = 0;
        let mut listed = Vec::new();
        loop {
            let path = format!("/api/rewards/requests?after={after}&limit=2");
            let reply = platform_get(&app, &path, now_ms() / 1000, SECRET)
                .send()
                .await
                .expect("GET");
            assert_eq!(reply.status(), 200);
            let signature = crate::helpers::header(&reply, "x-chess-signature");
            let raw = reply.bytes().await.expect("body");
            assert!(signed(&raw, &signature), "the reply is signed");
            let page: Value = serde_json::from_slice(&raw).expect("json");
            for request in page["requests"].as_array().expect("a list") {
                assert_eq!(request["delivery"]["state"], "delivered");
                listed.push(request["entry_id"].as_i64().expect("an id"));
            }
            after = page["next"].as_i64().expect("a cursor");
            if page["more"] == false {
                break;
            }
        }
        let expected: Vec<i64> = requests.iter().map(|r| r.entry_id).collect();
        assert_eq!(listed, expected);
        app.stop().await;
    }
);

/// Without a webhook, the ledger records as before and the requests are
/// kept (for reconciliation, or a webhook configured later); nothing is
/// sent. A URL without a secret does not start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_webhook_requests_are_kept_and_a_url_needs_a_secret() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(db) = fresh_database(backend).await else {
            continue;
        };
        let mut settings = test_settings(&db.url);
        settings.reward_webhook_url = Some("http://127.0.0.1:9/rewards".parse().expect("a URL"));
        let refused = chess_server::Application::build(settings.clone())
            .await
            .expect_err("a URL without a secret is refused");
        assert!(
            refused.to_string().contains("REWARD_WEBHOOK_SECRET"),
            "{refused}"
        );

        settings.reward_webhook_url = None;
        let mut app = start(settings, backend).await;
        wins(&app.store, Uuid::new_v4(), 6, now_ms()).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let requests = outbox(&app.store).await;
        assert_eq!(requests.len(), 5);
        assert!(
            requests
                .iter()
                .all(|r| r.state == DeliveryState::Pending && r.attempts == 0)
        );
        let off = reqwest::get(format!("{}/api/rewards/requests", app.address))
            .await
            .expect("GET");
        assert_eq!(off.status(), 404);
        app.stop().await;
        drop(db);
    }
}

on_both_webhooks!(
    the_account_page_shows_each_rewards_delivery_and_the_username_travels,
    Reply::Status(200),
    async |mut app: TestApp, receiver: Receiver| {
        let guest = app.guest().await;
        let player = app.sign_up(&guest, "payee").await;
        let account: Uuid = player.id.parse().expect("a uuid");
        // Five paid, then one over the cap.
        wins(&app.store, account, 6, now_ms()).await;
        settled(&app.store).await;
        receiver.set_default(Reply::Status(400));
        eventually("five accepted", || receiver.accepted().len() == 5).await;
        assert!(
            receiver
                .each(|r| r.json()["username"] == "payee")
                .into_iter()
                .all(|v| v)
        );

        let rewards = app.rewards(&player).await;
        let entries = rewards["entries"].as_array().expect("entries");
        assert_eq!(entries.len(), 6);
        let states: Vec<&Value> = entries.iter().map(|e| &e["delivery"]).collect();
        assert_eq!(
            states.iter().filter(|d| d["state"] == "delivered").count(),
            5,
            "{states:?}"
        );
        let over = entries
            .iter()
            .find(|e| e["status"] == "over_cap")
            .expect("the over-cap entry");
        assert_eq!(over["delivery"], Value::Null, "nothing owed, nothing sent");
        app.stop().await;
    }
);

/// The real executable killed with SIGKILL while the receiver holds its
/// request unanswered: the next start sends it again, with the same key,
/// once the dead process's lease has run out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_delivery_delivers_after_it_restarts() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some((store, db)) = crate::helpers::fresh_store(backend).await else {
            continue;
        };
        wins(&store, Uuid::new_v4(), 1, now_ms()).await;
        store.close().await;
        let receiver = Receiver::start(Reply::Hang).await;
        let env = [
            ("DATABASE_URL", db.url.as_str()),
            ("REWARD_WEBHOOK_URL", receiver.url.as_str()),
            ("REWARD_WEBHOOK_SECRET", SECRET),
            ("REWARD_RETRY_FIRST_MS", "10"),
            ("REWARD_RETRY_MAX_MS", "100"),
            ("REWARD_WEBHOOK_TIMEOUT_MS", "1000"),
            ("REWARD_POLL_MS", "20"),
        ];
        let mut server = crate::binary::Server::start(&env);
        eventually("the request is being sent", || receiver.received() == 1).await;
        server.kill9();
        drop(server);

        receiver.set_default(Reply::Status(200));
        let server = crate::binary::Server::start(&env);
        // Read beside the running server until it has recorded the delivery.
        let store = chess_store::connect(&db.url).await.expect("reopen");
        let requests = settled(&store).await;
        drop(server);
        assert_eq!(requests[0].state, DeliveryState::Delivered);
        assert!(requests[0].attempts >= 2, "{requests:?}");
        assert_eq!(receiver.accepted(), [requests[0].entry_id.to_string()]);
        let keys = receiver.each(|r| r.key.clone());
        assert!(keys.len() >= 2, "{keys:?}");
        assert!(
            keys.iter().all(|k| *k == requests[0].entry_id.to_string()),
            "{keys:?}"
        );
        store.close().await;
        drop(db);
    }
}
