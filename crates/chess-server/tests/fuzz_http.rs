//! Fuzzing the HTTP JSON bodies against a running server (started in this
//! process on a fresh SQLite file): random JSON, mutations of valid bodies,
//! garbage text and oversized bodies, with and without the JSON content type,
//! at every endpoint that reads a body. The server never fails (no 5xx), every
//! refusal is an API error with a code, and a refused body changes nothing
//! (the caller's games and the open seeks stay as they were).
//!
//! CI runs proptest's default number of cases; the long run sets
//! `PROPTEST_CASES` (see docs/reliability.md).

use std::path::PathBuf;

use chess_server::{Application, Settings};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use serde_json::{Value, json};
use uuid::Uuid;

/// Endpoints with a JSON body and a valid body for each, to mutate.
const ENDPOINTS: &[(&str, &str)] = &[
    (
        "/api/lobby/seeks",
        r#"{"time_control":{"kind":"clock","initial_ms":180000,"increment_ms":2000},"color":"random"}"#,
    ),
    (
        "/api/challenges",
        r#"{"time_control":{"kind":"correspondence"},"color":"white","fen":"4k3/8/8/8/8/8/8/4K2R w K - 0 1"}"#,
    ),
    (
        "/api/games/local",
        r#"{"time_control":{"kind":"clock","initial_ms":300000,"increment_ms":0}}"#,
    ),
    (
        "/api/games/computer",
        r#"{"level":1,"color":"black","time_control":{"kind":"correspondence"}}"#,
    ),
    (
        "/api/account/sign-up",
        r#"{"username":"fuzzy","password":"correct horse"}"#,
    ),
    (
        "/api/account/sign-in",
        r#"{"username":"fuzzer","password":"correct horse battery"}"#,
    ),
    (
        "/api/account/password",
        r#"{"current_password":"correct horse battery","new_password":"staple staple"}"#,
    ),
];

/// The server and the people calling it, shared by every case.
struct Fixture {
    runtime: tokio::runtime::Runtime,
    http: reqwest::Client,
    base_url: String,
    /// A guest's cookie and a signed-in account's cookie.
    cookies: [String; 2],
    folder: PathBuf,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Fixture {
    fn start() -> Fixture {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let folder = std::env::temp_dir().join(format!("chess-fuzz-http-{}", Uuid::new_v4()));
        std::fs::create_dir_all(&folder).expect("a temporary folder");
        let mut settings = Settings::defaults();
        settings.port = 0;
        settings.database_url = format!("sqlite://{}", folder.join("chess.db").display());
        settings.data_dir = folder.clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let base_url = runtime.block_on(async {
            let app = Application::build(settings)
                .await
                .expect("the server starts");
            let base_url = format!("http://127.0.0.1:{}", app.port());
            tokio::spawn(app.run_until_stopped(async {
                let _ = stopped.await;
            }));
            base_url
        });
        let http = reqwest::Client::new();
        let cookies = runtime.block_on(async {
            let me = http
                .get(format!("{base_url}/api/me"))
                .send()
                .await
                .expect("/api/me");
            let guest = cookie(&me, "chess_guest");
            let signed_up = http
                .post(format!("{base_url}/api/account/sign-up"))
                .json(&json!({ "username": "fuzzer", "password": "correct horse battery" }))
                .send()
                .await
                .expect("sign-up");
            [guest, cookie(&signed_up, "chess_session")]
        });
        Fixture {
            runtime,
            http,
            base_url,
            cookies,
            folder,
            stop: Some(stop),
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

fn cookie(response: &reqwest::Response, name: &str) -> String {
    response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.split(';').next())
        .find(|pair| pair.starts_with(&format!("{name}=")))
        .unwrap_or_else(|| panic!("a {name} cookie"))
        .to_owned()
}

/// What a refused body must leave unchanged: the caller's games and the
/// open seeks.
async fn snapshot(fixture: &Fixture, cookie: &str) -> (Vec<Value>, Vec<Value>) {
    let get = |path: &str| {
        fixture
            .http
            .get(format!("{}{path}", fixture.base_url))
            .header("cookie", cookie)
            .send()
    };
    let games: Value = get("/api/games/mine")
        .await
        .expect("my games")
        .json()
        .await
        .expect("json");
    let seeks: Value = get("/api/lobby/seeks")
        .await
        .expect("seeks")
        .json()
        .await
        .expect("json");
    let ids = |list: &Value, key: &str, id: &str| -> Vec<Value> {
        list[key]
            .as_array()
            .map(|items| items.iter().map(|item| item[id].clone()).collect())
            .unwrap_or_default()
    };
    (ids(&games, "games", "game_id"), ids(&seeks, "seeks", "id"))
}

/// A body: random JSON, a mutation of the endpoint's valid body, garbage,
/// or more than the 16 KiB limit.
fn body(valid: &'static str) -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<String>().prop_map(Value::from),
        prop::sample::select(&["clock", "correspondence", "white", "black", "random"][..])
            .prop_map(Value::from),
    ];
    let json = leaf.prop_recursive(3, 16, 4, |inner| {
        prop::collection::btree_map(
            prop::sample::select(
                &[
                    "time_control",
                    "kind",
                    "initial_ms",
                    "increment_ms",
                    "color",
                    "level",
                    "fen",
                    "username",
                    "password",
                    "current_password",
                    "new_password",
                ][..],
            )
            .prop_map(str::to_owned),
            inner,
            0..5,
        )
        .prop_map(|map| Value::Object(map.into_iter().collect()))
    });
    prop_oneof![
        3 => json.prop_map(|v| v.to_string()),
        3 => prop::collection::vec((0u8..3, any::<usize>(), any::<char>()), 1..6).prop_map(move |edits| {
            let mut chars: Vec<char> = valid.chars().collect();
            for (op, at, c) in edits {
                let at = at % chars.len().max(1);
                match op {
                    0 => chars.insert(at, c),
                    1 if !chars.is_empty() => { chars.remove(at); }
                    _ if !chars.is_empty() => chars[at] = c,
                    _ => {}
                }
            }
            chars.into_iter().collect()
        }),
        1 => any::<String>(),
        1 => Just(format!(r#"{{"fen":"{}"}}"#, "x".repeat(20 * 1024))),
    ]
}

/// One case: POST `body` to endpoint `endpoint`; a refusal must carry a
/// code and change nothing, and nothing may fail on the server.
fn check_case(
    fixture: &Fixture,
    endpoint: usize,
    body: &str,
    as_account: bool,
    content_type: &str,
) -> Result<(), TestCaseError> {
    let (path, _) = ENDPOINTS[endpoint];
    let cookie = &fixture.cookies[usize::from(as_account)];
    let (status, answer, before, after) = fixture.runtime.block_on(async {
        let before = snapshot(fixture, cookie).await;
        let mut request = fixture
            .http
            .post(format!("{}{path}", fixture.base_url))
            .header("cookie", cookie)
            .body(body.to_owned());
        if !content_type.is_empty() {
            request = request.header("content-type", content_type);
        }
        let response = request.send().await.expect("the server answers");
        let status = response.status();
        let answer: Value = response.json().await.unwrap_or(Value::Null);
        let after = snapshot(fixture, cookie).await;
        (status, answer, before, after)
    });
    prop_assert!(
        !status.is_server_error(),
        "{path} {body:?}: {status} {answer}"
    );
    if status.is_client_error() {
        prop_assert!(
            answer["error"]["code"].is_string(),
            "{path} {body:?}: {status} {answer}"
        );
        prop_assert_eq!(
            &before,
            &after,
            "{} {:?} was refused ({}) but changed something",
            path,
            body,
            answer
        );
    }
    Ok(())
}

#[test]
fn refused_bodies_get_a_code_and_change_nothing() {
    // One server for every case (proptest's config, PROPTEST_CASES included,
    // decides how many), stopped and removed at the end.
    let fixture = Fixture::start();
    let cases = (
        (0..ENDPOINTS.len()).prop_flat_map(|i| (Just(i), body(ENDPOINTS[i].1))),
        any::<bool>(),
        prop::sample::select(&["application/json", "text/plain", ""][..]),
    );
    let outcome = TestRunner::new(ProptestConfig::default()).run(
        &cases,
        |((endpoint, body), as_account, content_type)| {
            check_case(&fixture, endpoint, &body, as_account, content_type)
        },
    );
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
}
