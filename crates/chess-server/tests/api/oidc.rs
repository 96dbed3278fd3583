//! Sign-in with the host platform, against a real OpenID provider: the npm
//! package `oidc-provider`, run from `scripts/oidc-provider` on loopback as a
//! child process (installed by `scripts/ensure-oidc-provider.sh`;
//! `CHESS_SKIP_OIDC_TESTS=1` skips these tests). A reqwest client with its
//! own cookie jar plays the browser: it starts on our server, fills in the
//! provider's own login and consent forms and comes back.
//!
//! The ID-token checks are shown on tokens the provider really issued and
//! then altered on their way out of its token endpoint (its `TAMPER`
//! switch): a broken signature, or a token re-signed with the provider's own
//! key for another audience or with another nonce.

use std::collections::BTreeMap;
use std::io::BufRead as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::{
    Backend, Guest, TestApp, TestDatabase, clock, fresh_database, start, test_settings,
};

const CLIENT_ID: &str = "chess-test";
const CLIENT_SECRET: &str = "chess-test-client-secret-0123456789";

fn provider_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/oidc-provider")
}

fn skipped() -> bool {
    let skip = std::env::var("CHESS_SKIP_OIDC_TESTS").is_ok_and(|v| v == "1");
    if skip {
        eprintln!("skipping an OpenID test: CHESS_SKIP_OIDC_TESTS=1");
    }
    skip
}

/// A port nobody listens on right now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

/// The provider process; killed when dropped.
struct OidcProvider {
    child: Child,
}

impl OidcProvider {
    fn start(port: u16, redirect_uri: &str, tamper: &str) -> OidcProvider {
        let dir = provider_dir();
        assert!(
            dir.join("node_modules/oidc-provider").is_dir(),
            "the test OpenID provider is not installed: run scripts/ensure-oidc-provider.sh \
             (or set CHESS_SKIP_OIDC_TESTS=1)"
        );
        let mut child = Command::new("node")
            .arg(dir.join("provider.mjs"))
            .env("PORT", port.to_string())
            .env("CLIENT_ID", CLIENT_ID)
            .env("CLIENT_SECRET", CLIENT_SECRET)
            .env("REDIRECT_URI", redirect_uri)
            .env("TAMPER", tamper)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs the provider");
        let stdout = child.stdout.take().expect("stdout");
        let (ready, readied) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = std::io::BufReader::new(stdout).read_line(&mut line);
            let _ = ready.send(line);
        });
        let line = readied
            .recv_timeout(Duration::from_secs(60))
            .expect("the provider starts");
        assert!(line.starts_with("ready "), "the provider said {line:?}");
        OidcProvider { child }
    }
}

impl Drop for OidcProvider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Our server configured for the platform, and the provider.
struct Platform {
    app: TestApp,
    provider: Option<OidcProvider>,
    redirect_uri: String,
}

impl Platform {
    /// A server on `backend` signing in with a provider that alters its ID
    /// tokens as `tamper` says (`""`: not at all); local accounts as `local`.
    /// With `provider_up` false, nothing listens at the issuer.
    async fn start(
        backend: Backend,
        tamper: &str,
        local: bool,
        provider_up: bool,
    ) -> Option<Platform> {
        if skipped() {
            return None;
        }
        let db = fresh_database(backend).await?;
        let (app_port, provider_port) = (free_port(), free_port());
        let mut settings = platform_settings(&db, app_port, provider_port);
        settings.local_accounts = local;
        let redirect_uri = format!("http://127.0.0.1:{app_port}/auth/oidc/callback");
        let provider =
            provider_up.then(|| OidcProvider::start(provider_port, &redirect_uri, tamper));
        let mut app = start(settings, backend).await;
        app.db = Some(db);
        Some(Platform {
            app,
            provider,
            redirect_uri,
        })
    }

    /// A second node on the same database (Postgres), the same public URL.
    async fn second_node(&self) -> TestApp {
        let mut settings = self.app.settings.clone();
        settings.port = free_port();
        start(settings, self.app.backend).await
    }

    async fn count(&self, sql: &str) -> usize {
        self.app
            .db
            .as_ref()
            .expect("a database")
            .raw(sql)
            .await
            .expect("query")
    }

    /// No account of the platform and no session at all were written.
    async fn nothing_written(&self) {
        assert_eq!(
            self.count("select 1 from accounts where platform_subject is not null")
                .await,
            0
        );
        assert_eq!(self.count("select 1 from account_sessions").await, 0);
    }
}

fn platform_settings(
    db: &TestDatabase,
    app_port: u16,
    provider_port: u16,
) -> chess_server::Settings {
    let mut settings = test_settings(&db.url);
    settings.port = app_port;
    settings.public_url = Some(format!("http://127.0.0.1:{app_port}"));
    settings.oidc_issuer = Some(format!("http://127.0.0.1:{provider_port}"));
    settings.oidc_client_id = Some(CLIENT_ID.to_owned());
    settings.oidc_client_secret = Some(CLIENT_SECRET.to_owned());
    settings.oidc_provider_name = Some("Test Platform".to_owned());
    settings
}

/// A browser: a cookie jar (all on 127.0.0.1, where cookies ignore ports,
/// as in a real browser) and no automatic redirects.
struct Browser {
    http: reqwest::Client,
    jar: BTreeMap<String, String>,
}

/// One answer: status, `Location`, body.
struct Answer {
    status: u16,
    location: Option<String>,
    body: String,
}

impl Browser {
    fn new() -> Browser {
        Browser {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
            jar: BTreeMap::new(),
        }
    }

    /// A browser holding `guest`'s cookie.
    fn of(guest: &Guest) -> Browser {
        let mut browser = Browser::new();
        browser.keep(&guest.cookie);
        browser
    }

    fn keep(&mut self, pair: &str) {
        if let Some((name, value)) = pair.split_once('=') {
            self.jar
                .insert(name.trim().to_owned(), value.trim().to_owned());
        }
    }

    fn cookie(&self, name: &str) -> Option<&str> {
        self.jar.get(name).map(String::as_str)
    }

    /// The `Cookie` header of everything held.
    fn cookies(&self) -> String {
        self.jar
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    async fn send(&mut self, request: reqwest::RequestBuilder) -> Answer {
        let response = request
            .header("cookie", self.cookies())
            .send()
            .await
            .expect("request");
        for set in response.headers().get_all("set-cookie") {
            let set = set.to_str().expect("ascii cookie");
            let pair = set.split(';').next().unwrap_or_default();
            let lower = set.to_ascii_lowercase();
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            if value.is_empty()
                || lower.contains("max-age=0")
                || lower.contains("expires=thu, 01 jan 1970")
            {
                self.jar.remove(name.trim());
            } else {
                self.keep(pair);
            }
        }
        let status = response.status().as_u16();
        let location = response
            .headers()
            .get("location")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let body = response.text().await.unwrap_or_default();
        Answer {
            status,
            location,
            body,
        }
    }

    async fn get(&mut self, url: &str) -> Answer {
        let request = self.http.get(url);
        self.send(request).await
    }

    async fn post_form(&mut self, url: &str, fields: &[(&str, &str)]) -> Answer {
        let body = serde_urlencoded::to_string(fields).expect("form");
        let request = self
            .http
            .post(url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        self.send(request).await
    }

    /// Clicks "Sign in with …" on `app`: the provider's authorization URL.
    async fn start_sign_in(&mut self, app: &TestApp) -> String {
        let answer = self
            .get(&format!(
                "{}/auth/oidc/start?return_to=/account.html",
                app.address
            ))
            .await;
        assert_eq!(answer.status, 303, "{}", answer.body);
        assert!(self.cookie("chess_oidc_state").is_some(), "a state cookie");
        answer.location.expect("to the provider")
    }

    /// From the provider's authorization URL, logs in as `login` on its
    /// own login page and consents (or cancels when `consent` is false):
    /// the callback URL it sends the browser back to, not yet followed.
    async fn at_provider(
        &mut self,
        authorize: &str,
        login: &str,
        consent: bool,
        redirect_uri: &str,
    ) -> String {
        let origin = {
            let url = reqwest::Url::parse(authorize).expect("url");
            format!(
                "{}://{}",
                url.scheme(),
                url.host_str()
                    .zip(url.port())
                    .map(|(h, p)| format!("{h}:{p}"))
                    .expect("host")
            )
        };
        let absolute = |location: &str| {
            if location.starts_with("http") {
                location.to_owned()
            } else {
                format!("{origin}{location}")
            }
        };
        let mut url = authorize.to_owned();
        for _ in 0..12 {
            let answer = self.get(&url).await;
            if let Some(location) = &answer.location {
                if location.starts_with(redirect_uri) {
                    return location.clone();
                }
                url = absolute(location);
                continue;
            }
            assert_eq!(answer.status, 200, "{}", answer.body);
            let action = form_action(&answer.body).expect("a form on the provider's page");
            let posted = if answer.body.contains("name=\"prompt\" value=\"login\"") {
                self.post_form(
                    &absolute(&action),
                    &[
                        ("prompt", "login"),
                        ("login", login),
                        ("password", "anything"),
                    ],
                )
                .await
            } else if consent {
                self.post_form(&absolute(&action), &[("prompt", "consent")])
                    .await
            } else {
                self.get(&absolute(&format!("{action}/abort"))).await
            };
            let location = posted.location.expect("the provider redirects");
            if location.starts_with(redirect_uri) {
                return location;
            }
            url = absolute(&location);
        }
        panic!("the provider never sent the browser back");
    }

    /// A whole sign-in as `login` on `app`: the answer of our callback.
    async fn sign_in(&mut self, platform: &Platform, login: &str) -> Answer {
        let authorize = self.start_sign_in(&platform.app).await;
        let callback = self
            .at_provider(&authorize, login, true, &platform.redirect_uri)
            .await;
        self.get(&callback).await
    }

    /// `GET /api/account` with this browser's cookies.
    async fn account(&mut self, app: &TestApp) -> (u16, Value) {
        let answer = self.get(&format!("{}/api/account", app.address)).await;
        (
            answer.status,
            serde_json::from_str(&answer.body).unwrap_or(Value::Null),
        )
    }
}

/// The `action` of the first form of `html`.
fn form_action(html: &str) -> Option<String> {
    let form = &html[html.find("<form")?..];
    let start = form.find("action=\"")? + "action=\"".len();
    let end = form[start..].find('"')?;
    Some(form[start..start + end].replace("&amp;", "&"))
}

/// `callback` (a URL at the public address) sent to `app` instead.
fn at_node(callback: &str, app: &TestApp) -> String {
    let query = callback.split_once('?').map_or("", |(_, query)| query);
    format!("{}/auth/oidc/callback?{query}", app.address)
}

/// Runs a test once per backend with a platform set up by `$setup`
/// (`(tamper, local accounts, provider up)`).
macro_rules! on_both_platforms {
    ($name:ident, $setup:expr, $body:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let (tamper, local, up) = $setup;
                if let Some(platform) = Platform::start(Backend::Sqlite, tamper, local, up).await {
                    ($body)(platform).await;
                }
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let (tamper, local, up) = $setup;
                if let Some(platform) = Platform::start(Backend::Postgres, tamper, local, up).await
                {
                    ($body)(platform).await;
                }
            }
        }
    };
}

on_both_platforms!(
    a_sign_in_creates_the_account_of_the_sub_and_finds_it_again,
    ("", true, true),
    |platform: Platform| async move {
        let app = &platform.app;
        let mut browser = Browser::new();
        let answer = browser.sign_in(&platform, "alice#1").await;
        assert_eq!(answer.status, 303, "{}", answer.body);
        assert_eq!(answer.location.as_deref(), Some("/account.html"));
        assert!(
            browser.cookie("chess_oidc_state").is_none(),
            "the state cookie is cleared"
        );
        let (status, account) = browser.account(app).await;
        assert_eq!(status, 200, "{account}");
        assert_eq!(
            account["username"], "alice",
            "from preferred_username: {account}"
        );
        assert_eq!(
            account["has_password"], false,
            "a platform account has no password to change: {account}"
        );
        assert_eq!(
            platform
                .count("select 1 from accounts where platform_subject = 'alice#1' and username = 'alice'")
                .await,
            1
        );

        // Another browser, the same person: the same account.
        let mut again = Browser::new();
        assert_eq!(again.sign_in(&platform, "alice#1").await.status, 303);
        let (_, second) = again.account(app).await;
        assert_eq!(second["id"], account["id"]);
        assert_eq!(platform.count("select 1 from accounts").await, 1);

        // Another person who wants the same name gets it with a suffix.
        let mut other = Browser::new();
        assert_eq!(other.sign_in(&platform, "alice#2").await.status, 303);
        let (_, third) = other.account(app).await;
        assert_ne!(third["id"], account["id"]);
        assert_eq!(third["username"], "alice-2", "{third}");

        // The platform account has no password that local sign-in takes.
        let (status, reply) = app
            .send(
                "POST",
                "/api/account/sign-in",
                None,
                Some(
                    json!({ "username": "alice", "password": "!no-password:platform-account" })
                        .to_string(),
                ),
            )
            .await;
        assert_eq!(status, 401, "{reply}");
        assert_eq!(reply["error"]["code"], "invalid_credentials");
    }
);

on_both_platforms!(
    a_name_taken_by_a_local_account_is_made_unique,
    ("", true, true),
    |platform: Platform| async move {
        let app = &platform.app;
        let local = app.guest().await;
        app.sign_up(&local, "bob").await;
        let mut browser = Browser::new();
        assert_eq!(browser.sign_in(&platform, "bob#x").await.status, 303);
        let (_, account) = browser.account(app).await;
        assert_eq!(account["username"], "bob-2", "{account}");
        assert_ne!(account["id"], local.id.as_str());
    }
);

on_both_platforms!(
    a_guest_who_signs_in_mid_game_keeps_the_game,
    ("", true, true),
    |platform: Platform| async move {
        let app = &platform.app;
        let (white, black) = (app.guest().await, app.guest().await);
        let game_id = app.online_game(&white, &black, clock(300_000, 0)).await;
        let mut browser = Browser::of(&white);
        assert_eq!(browser.sign_in(&platform, "carol").await.status, 303);
        let (_, account) = browser.account(app).await;
        assert_eq!(
            account["id"],
            white.id.as_str(),
            "the guest became the account"
        );
        let signed_in = Guest {
            id: white.id.clone(),
            name: "carol".to_owned(),
            cookie: browser.cookies(),
        };
        let mut socket = app.socket(&game_id, Some(&signed_in)).await;
        assert_eq!(socket.hello().await["seat"], "white");
    }
);

on_both_platforms!(
    a_callback_with_another_state_or_from_another_browser_is_refused,
    ("", true, true),
    |platform: Platform| async move {
        let app = &platform.app;
        let mut browser = Browser::new();
        let authorize = browser.start_sign_in(app).await;
        let callback = browser
            .at_provider(&authorize, "dave", true, &platform.redirect_uri)
            .await;
        // The state in the URL altered: refused, whatever the code.
        let forged = callback.replace("state=", "state=x");
        let answer = browser.get(&forged).await;
        assert_eq!(answer.status, 400);
        assert!(
            answer.body.contains("not started in this browser"),
            "{}",
            answer.body
        );
        // The right link, in a browser that did not start it (login CSRF).
        let mut victim = Browser::new();
        let answer = victim.get(&callback).await;
        assert_eq!(answer.status, 400);
        assert!(
            answer.body.contains("not started in this browser"),
            "{}",
            answer.body
        );
        assert!(victim.cookie("chess_session").is_none());
        platform.nothing_written().await;
    }
);

on_both_platforms!(
    a_replayed_callback_signs_in_once_on_any_node,
    ("", true, true),
    |platform: Platform| async move {
        let app = &platform.app;
        let mut browser = Browser::new();
        let authorize = browser.start_sign_in(app).await;
        let callback = browser
            .at_provider(&authorize, "erin", true, &platform.redirect_uri)
            .await;
        let state = browser
            .cookie("chess_oidc_state")
            .expect("state")
            .to_owned();
        // On Postgres the callback lands on another node than the start.
        let other = if app.backend == Backend::Postgres {
            Some(platform.second_node().await)
        } else {
            None
        };
        let first = browser
            .get(&at_node(&callback, other.as_ref().unwrap_or(app)))
            .await;
        assert_eq!(first.status, 303, "{}", first.body);
        assert!(browser.cookie("chess_session").is_some());
        // Replayed with the state cookie put back, on the first node.
        browser.keep(&format!("chess_oidc_state={state}"));
        browser.jar.remove("chess_session");
        let replay = browser.get(&callback).await;
        assert_eq!(replay.status, 400);
        assert!(
            replay.body.contains("expired or was already used"),
            "{}",
            replay.body
        );
        assert!(browser.cookie("chess_session").is_none());
        assert_eq!(platform.count("select 1 from account_sessions").await, 1);
    }
);

on_both_platforms!(
    denied_consent_ends_on_a_page_and_writes_nothing,
    ("", true, true),
    |platform: Platform| async move {
        let mut browser = Browser::new();
        let authorize = browser.start_sign_in(&platform.app).await;
        let callback = browser
            .at_provider(&authorize, "frank", false, &platform.redirect_uri)
            .await;
        assert!(callback.contains("error=access_denied"), "{callback}");
        let answer = browser.get(&callback).await;
        assert_eq!(answer.status, 403);
        assert!(answer.body.contains("Sign-in cancelled"), "{}", answer.body);
        assert!(browser.cookie("chess_session").is_none());
        platform.nothing_written().await;
        assert_eq!(
            platform.count("select 1 from oidc_pending").await,
            0,
            "forgotten"
        );
    }
);

on_both_platforms!(
    a_code_the_provider_refuses_ends_on_a_page,
    ("", true, true),
    |platform: Platform| async move {
        let mut browser = Browser::new();
        let authorize = browser.start_sign_in(&platform.app).await;
        let callback = browser
            .at_provider(&authorize, "grace", true, &platform.redirect_uri)
            .await;
        // The real state, a code the provider never issued.
        let state = browser
            .cookie("chess_oidc_state")
            .expect("state")
            .to_owned();
        let forged = format!(
            "{}/auth/oidc/callback?code=not-a-code&state={state}",
            platform.app.address
        );
        assert!(callback.contains(&state));
        let answer = browser.get(&forged).await;
        assert_eq!(answer.status, 400);
        assert!(
            answer.body.contains("did not accept this sign-in"),
            "{}",
            answer.body
        );
        assert!(browser.cookie("chess_session").is_none());
        platform.nothing_written().await;
    }
);

/// A sign-in through a provider altering its ID tokens as the test's
/// setup says ends on a page naming `reason`, with nothing written.
async fn refused_for(platform: Platform, reason: &str) {
    let mut browser = Browser::new();
    let answer = browser.sign_in(&platform, "heidi").await;
    assert_eq!(answer.status, 502, "{}", answer.body);
    assert!(answer.body.contains(reason), "{reason}: {}", answer.body);
    assert!(browser.cookie("chess_session").is_none());
    platform.nothing_written().await;
}

on_both_platforms!(
    an_id_token_with_a_bad_signature_is_refused,
    ("signature", true, true),
    |platform: Platform| refused_for(platform, "its signature does not verify")
);

on_both_platforms!(
    an_id_token_for_another_client_is_refused,
    ("audience", true, true),
    |platform: Platform| refused_for(platform, "it is meant for another client")
);

on_both_platforms!(
    an_id_token_with_another_nonce_is_refused,
    ("nonce", true, true),
    |platform: Platform| refused_for(platform, "its nonce is not this sign-in")
);

on_both_platforms!(
    an_unreachable_provider_ends_on_a_page,
    ("", true, false),
    |platform: Platform| async move {
        let mut browser = Browser::new();
        let answer = browser
            .get(&format!("{}/auth/oidc/start", platform.app.address))
            .await;
        assert_eq!(answer.status, 502);
        assert!(
            answer.body.contains("could not be reached"),
            "{}",
            answer.body
        );
        assert!(browser.cookie("chess_oidc_state").is_none());
        assert_eq!(platform.count("select 1 from oidc_pending").await, 0);
        // One address may start only so many sign-ins (30 in ten minutes).
        for _ in 1..30 {
            let answer = browser
                .get(&format!("{}/auth/oidc/start", platform.app.address))
                .await;
            assert_eq!(answer.status, 502);
        }
        let answer = browser
            .get(&format!("{}/auth/oidc/start", platform.app.address))
            .await;
        assert_eq!(answer.status, 429);
        assert!(answer.body.contains("Too many sign-ins"), "{}", answer.body);
    }
);

on_both_platforms!(
    a_provider_that_goes_down_before_the_callback_ends_on_a_page,
    ("", true, true),
    |mut platform: Platform| async move {
        let mut browser = Browser::new();
        let authorize = browser.start_sign_in(&platform.app).await;
        let callback = browser
            .at_provider(&authorize, "ivan", true, &platform.redirect_uri)
            .await;
        drop(platform.provider.take());
        let answer = browser.get(&callback).await;
        assert_eq!(answer.status, 502, "{}", answer.body);
        assert!(
            answer.body.contains("could not be reached"),
            "{}",
            answer.body
        );
        assert!(browser.cookie("chess_session").is_none());
        platform.nothing_written().await;
    }
);

on_both_platforms!(
    without_local_accounts_only_the_platform_signs_in,
    ("", false, true),
    |platform: Platform| async move {
        let app = &platform.app;
        let (status, options) = app.get("/api/account/sign-in-options", None).await;
        assert_eq!(status, 200);
        assert_eq!(
            options,
            json!({ "local": false, "platform": { "name": "Test Platform", "start": "/auth/oidc/start" } })
        );
        let guest = app.guest().await;
        let credentials = json!({ "username": "mallory", "password": "correct horse" }).to_string();
        for path in ["/api/account/sign-up", "/api/account/sign-in"] {
            let (status, reply) = app
                .send("POST", path, Some(&guest.cookie), Some(credentials.clone()))
                .await;
            assert_eq!(status, 403, "{path}: {reply}");
            assert_eq!(reply["error"]["code"], "local_accounts_off");
            assert!(
                reply["error"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("Test Platform"),
                "{reply}"
            );
        }
        assert_eq!(platform.count("select 1 from accounts").await, 0);
        let mut browser = Browser::new();
        assert_eq!(browser.sign_in(&platform, "judy").await.status, 303);
        assert_eq!(browser.account(app).await.0, 200);
    }
);

crate::on_both_backends!(
    without_an_issuer_sign_in_is_local_as_before,
    |app: TestApp| async move {
        let (status, options) = app.get("/api/account/sign-in-options", None).await;
        assert_eq!(status, 200);
        assert_eq!(options, json!({ "local": true, "platform": null }));
        let (status, _) = app.get_text("/auth/oidc/start").await;
        assert_eq!(status, 404);
    }
);

#[tokio::test]
async fn an_issuer_without_its_settings_stops_the_start() {
    let Some(db) = fresh_database(Backend::Sqlite).await else {
        return;
    };
    let mut settings = platform_settings(&db, 0, free_port());
    settings.oidc_client_secret = None;
    let error = chess_server::Application::build(settings)
        .await
        .expect_err("refused");
    assert!(error.to_string().contains("OIDC_CLIENT_SECRET"), "{error}");
}
