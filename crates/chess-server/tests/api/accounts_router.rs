//! The account endpoints through their router, on SQLite and Postgres:
//! sign-up, sign-in, sign-out, password change, enumeration-resistant
//! errors, rate limits, and the rewards view. Requests go straight to the
//! router (`tower::ServiceExt::oneshot`), so no port is opened.

use std::net::SocketAddr;

use argon2::Params;
use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::header::{CONTENT_TYPE, COOKIE, RETRY_AFTER, SET_COOKIE};
use axum::http::{Request, StatusCode};
use chess_server::auth::identity::{GuestTokens, Identity};
use chess_server::auth::password::PasswordHasher;
use chess_server::auth::routes::{Accounts, router};
use chess_server::auth::session::{KeyRing, Sessions};
use chess_store::Store;
use serde_json::{Value, json};
use tower::ServiceExt;
use uuid::Uuid;

use crate::helpers::TestDatabase;
use chess_store::on_both_stores;

const SECRET: &str = "k7Qw9zX2mN4pR8tV1bY6cH3jL5sD0fGa";

/// The router, plus the guest tokens and session keys it trusts.
struct AccountsApp {
    router: Router,
    guests: GuestTokens,
    sessions: Sessions,
}

/// A reply: status, the session cookie it set (if any), the JSON body.
#[derive(Debug)]
struct Reply {
    status: StatusCode,
    session: Option<String>,
    set_cookie: Option<String>,
    retry_after: Option<String>,
    body: Value,
}

impl AccountsApp {
    fn new(store: Store) -> AccountsApp {
        let secret = SECRET.parse().expect("a long secret");
        let guests = GuestTokens::new(&secret).expect("guest keys");
        let hasher =
            PasswordHasher::new(Params::new(64, 1, 1, None).expect("params"), 4).expect("hasher");
        let sessions =
            Sessions::new(KeyRing::single("test", SECRET.as_bytes()).expect("a key ring"));
        let accounts = Accounts::new(store, hasher, sessions.clone(), guests.clone(), false);
        AccountsApp {
            router: router(accounts),
            guests,
            sessions,
        }
    }

    async fn call(
        &self,
        method: &str,
        path: &str,
        cookie: Option<&str>,
        body: Option<Value>,
        from: &str,
    ) -> Reply {
        let mut request = Request::builder().method(method).uri(path);
        if let Some(cookie) = cookie {
            request = request.header(COOKIE, cookie);
        }
        let body = match body {
            Some(json) => {
                request = request.header(CONTENT_TYPE, "application/json");
                Body::from(json.to_string())
            }
            None => Body::empty(),
        };
        let mut request = request.body(body).expect("a request");
        let address: SocketAddr = format!("{from}:40000").parse().expect("an address");
        request.extensions_mut().insert(ConnectInfo(address));
        let response = self
            .router
            .clone()
            .oneshot(request)
            .await
            .expect("a response");
        let status = response.status();
        let header = |name| {
            response
                .headers()
                .get(name)
                .map(|value: &axum::http::HeaderValue| value.to_str().expect("ascii").to_owned())
        };
        let set_cookie = header(SET_COOKIE);
        let retry_after = header(RETRY_AFTER);
        let session = set_cookie.as_deref().and_then(|cookie| {
            let pair = cookie.split(';').next()?;
            let (name, value) = pair.split_once('=')?;
            (name == "chess_session" && !value.is_empty()).then(|| pair.to_owned())
        });
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .expect("a body");
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).expect("json")
        };
        Reply {
            status,
            session,
            set_cookie,
            retry_after,
            body,
        }
    }

    async fn sign_up(&self, username: &str, password: &str) -> Reply {
        let body = json!({ "username": username, "password": password });
        self.send("POST", "/api/account/sign-up", None, Some(body))
            .await
    }

    async fn sign_in(&self, username: &str, password: &str, from: &str) -> Reply {
        let body = json!({ "username": username, "password": password });
        self.call("POST", "/api/account/sign-in", None, Some(body), from)
            .await
    }

    /// A request from the address the tests use by default.
    async fn send(
        &self,
        method: &str,
        path: &str,
        cookie: Option<&str>,
        body: Option<Value>,
    ) -> Reply {
        self.call(method, path, cookie, body, "192.0.2.1").await
    }

    /// Signs up a new account with the password "correct horse": its
    /// session cookie.
    async fn new_session(&self, username: &str) -> String {
        self.sign_up(username, "correct horse")
            .await
            .session
            .expect("a session")
    }

    async fn account(&self, cookie: &str) -> Reply {
        self.send("GET", "/api/account", Some(cookie), None).await
    }
}

on_both_stores!(
    sign_up_signs_in_with_a_safe_cookie,
    async |store: Store, _db: &TestDatabase| {
        let app = AccountsApp::new(store);

        let reply = app.sign_up("Magnus", "correct horse").await;

        assert_eq!(reply.status, StatusCode::CREATED, "{reply:?}");
        assert_eq!(reply.body["username"], "Magnus");
        let cookie = reply.set_cookie.expect("a cookie");
        for attribute in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=3600"] {
            assert!(cookie.contains(attribute), "{cookie}");
        }
        let me = app.account(&reply.session.expect("a session")).await;
        assert_eq!(me.status, StatusCode::OK);
        assert_eq!(
            (me.body["username"].clone(), me.body["id"].clone()),
            (json!("Magnus"), reply.body["id"].clone())
        );
        assert_eq!(me.body["has_password"], true, "{:?}", me.body);
    }
);

on_both_stores!(
    a_guest_who_signs_up_keeps_their_player_id,
    async |store: Store, _db: &TestDatabase| {
        let app = AccountsApp::new(store);
        let guest = Identity {
            id: Uuid::new_v4(),
            name: "Brave Pawn".into(),
            stored: None,
        };
        let token = app.guests.issue(&guest).expect("a guest token");
        let body = json!({ "username": "Magnus", "password": "correct horse" });

        let reply = app
            .send(
                "POST",
                "/api/account/sign-up",
                Some(&format!("chess_guest={token}")),
                Some(body),
            )
            .await;

        assert_eq!(reply.status, StatusCode::CREATED, "{reply:?}");
        assert_eq!(reply.body["id"], json!(guest.id));
    }
);

on_both_stores!(
    bad_usernames_and_passwords_get_exact_errors,
    async |store: Store, _db: &TestDatabase| {
        let app = AccountsApp::new(store);
        let cases = [
            (
                "ab",
                "correct horse",
                "invalid_username",
                "a username needs at least 3 characters, this one has 2",
            ),
            (
                "has space",
                "correct horse",
                "invalid_username",
                "a username may only contain letters a-z, digits, '_' and '-', not ' '",
            ),
            (
                "Magnus",
                "short",
                "invalid_password",
                "a password needs at least 8 characters, this one has 5",
            ),
        ];
        for (username, password, code, message) in cases {
            let reply = app.sign_up(username, password).await;
            assert_eq!(
                reply.status,
                StatusCode::UNPROCESSABLE_ENTITY,
                "{username}/{password}"
            );
            assert_eq!(reply.body["error"]["code"], code);
            assert_eq!(reply.body["error"]["message"], message);
        }
        let long = app.sign_up("Magnus", &"x".repeat(129)).await;
        assert_eq!(long.body["error"]["code"], "invalid_password");
        let missing = app
            .send(
                "POST",
                "/api/account/sign-up",
                None,
                Some(json!({ "username": "Magnus" })),
            )
            .await;
        assert_eq!(missing.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(missing.body["error"]["code"], "invalid_body");
    }
);

on_both_stores!(
    a_username_taken_in_another_case_is_refused,
    async |store: Store, _db: &TestDatabase| {
        let app = AccountsApp::new(store);
        assert_eq!(
            app.sign_up("Magnus", "correct horse").await.status,
            StatusCode::CREATED
        );
        let reply = app.sign_up("mAGNUS", "other password").await;
        assert_eq!(reply.status, StatusCode::CONFLICT);
        assert_eq!(reply.body["error"]["code"], "username_taken");
    }
);

on_both_stores!(
    unknown_users_and_wrong_passwords_get_the_same_answer,
    async |store: Store, _db: &TestDatabase| {
        let app = AccountsApp::new(store);
        app.sign_up("Magnus", "correct horse").await;

        let right = app.sign_in("magnus", "correct horse", "192.0.2.5").await;
        let wrong = app.sign_in("Magnus", "wrong horse", "192.0.2.6").await;
        let unknown = app.sign_in("Nobody", "wrong horse", "192.0.2.7").await;
        let malformed = app.sign_in("no", "x", "192.0.2.8").await;

        assert_eq!(right.status, StatusCode::OK);
        assert!(right.session.is_some());
        for reply in [&wrong, &unknown, &malformed] {
            assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{reply:?}");
            assert_eq!(reply.body, unknown.body);
            assert!(reply.session.is_none());
        }
        assert_eq!(unknown.body["error"]["code"], "invalid_credentials");
    }
);

on_both_stores!(
    failed_sign_ins_are_limited_per_account_and_address_and_per_address,
    async |store: Store, _db: &TestDatabase| {
        let app = AccountsApp::new(store);
        app.sign_up("Magnus", "correct horse").await;
        for _ in 0..5 {
            let reply = app.sign_in("Magnus", "wrong horse", "198.51.100.66").await;
            assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
        }
        // The guessing address is locked out of this account, even
        // with the right password...
        let locked = app
            .sign_in("Magnus", "correct horse", "198.51.100.66")
            .await;
        assert_eq!(locked.status, StatusCode::TOO_MANY_REQUESTS, "{locked:?}");
        assert_eq!(locked.body["error"]["code"], "too_many_requests");
        assert!(locked.retry_after.is_some());
        // ...but it cannot lock the owner out from their own address.
        let owner = app.sign_in("Magnus", "correct horse", "203.0.113.1").await;
        assert_eq!(owner.status, StatusCode::OK, "{owner:?}");

        // One address spraying many names is stopped too.
        for i in 0..20 {
            app.sign_in(&format!("user{i}"), "wrong horse", "203.0.113.50")
                .await;
        }
        let sprayed = app.sign_in("someone", "wrong horse", "203.0.113.50").await;
        assert_eq!(sprayed.status, StatusCode::TOO_MANY_REQUESTS);
    }
);

on_both_stores!(
    sign_ups_are_limited_per_address,
    async |store: Store, _db: &TestDatabase| {
        let app = AccountsApp::new(store);
        for i in 0..5 {
            assert_eq!(
                app.sign_up(&format!("player{i}"), "correct horse")
                    .await
                    .status,
                StatusCode::CREATED
            );
        }
        let reply = app.sign_up("player5", "correct horse").await;
        assert_eq!(reply.status, StatusCode::TOO_MANY_REQUESTS);
    }
);

on_both_stores!(
    signing_out_ends_the_session_even_for_a_copied_token,
    async |store: Store, _db: &TestDatabase| {
        let app = AccountsApp::new(store);
        let session = app.new_session("Magnus").await;

        let out = app
            .send("POST", "/api/account/sign-out", Some(&session), None)
            .await;

        assert_eq!(out.status, StatusCode::NO_CONTENT);
        assert!(
            out.set_cookie
                .expect("a clearing cookie")
                .contains("Max-Age=0")
        );
        let after = app.account(&session).await;
        assert_eq!(after.status, StatusCode::UNAUTHORIZED);
        assert_eq!(after.body["error"]["code"], "not_signed_in");
    }
);

on_both_stores!(
    a_password_change_needs_the_current_one_and_ends_other_sessions,
    async |store: Store, _db: &TestDatabase| {
        let app = AccountsApp::new(store);
        let laptop = app.new_session("Magnus").await;
        let phone = app
            .sign_in("Magnus", "correct horse", "192.0.2.9")
            .await
            .session
            .expect("a session");
        let change = |current: &str| json!({ "current_password": current, "new_password": "battery staple" });

        let refused = app
            .send(
                "POST",
                "/api/account/password",
                Some(&laptop),
                Some(change("wrong horse")),
            )
            .await;
        assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
        let changed = app
            .send(
                "POST",
                "/api/account/password",
                Some(&laptop),
                Some(change("correct horse")),
            )
            .await;
        assert_eq!(changed.status, StatusCode::NO_CONTENT, "{changed:?}");

        assert_eq!(app.account(&laptop).await.status, StatusCode::OK);
        assert_eq!(app.account(&phone).await.status, StatusCode::UNAUTHORIZED);
        assert_eq!(
            app.sign_in("Magnus", "correct horse", "192.0.2.10")
                .await
                .status,
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(
            app.sign_in("Magnus", "battery staple", "192.0.2.11")
                .await
                .status,
            StatusCode::OK
        );
    }
);

on_both_stores!(
    a_session_id_of_another_account_is_refused,
    async |store: Store, _db: &TestDatabase| {
        let app = AccountsApp::new(store);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_secs();
        let session_of = |reply: Reply| {
            let cookie = reply.session.expect("a session");
            let token = cookie.trim_start_matches("chess_session=").to_owned();
            app.sessions.verify(&token, now).expect("a valid token")
        };
        let magnus = session_of(app.sign_up("Magnus", "correct horse").await);
        let hikaru = session_of(app.sign_up("Hikaru", "correct horse").await);

        // Signed with the server's own key: only the pairing is wrong.
        let forged = app
            .sessions
            .issue_for(magnus.account_id, hikaru.session_id, now)
            .expect("a token");
        let reply = app.account(&format!("chess_session={forged}")).await;
        assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{reply:?}");
        assert_eq!(reply.body["error"]["code"], "not_signed_in");

        let own = app
            .sessions
            .issue_for(hikaru.account_id, hikaru.session_id, now)
            .expect("a token");
        let reply = app.account(&format!("chess_session={own}")).await;
        assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
        assert_eq!(reply.body["username"], "Hikaru");
    }
);

on_both_stores!(
    tokens_that_are_not_account_sessions_are_refused,
    async |store: Store, _db: &TestDatabase| {
        let app = AccountsApp::new(store);
        let guest = Identity {
            id: Uuid::new_v4(),
            name: "Brave Pawn".into(),
            stored: None,
        };
        let guest_token = app.guests.issue(&guest).expect("a guest token");
        for cookie in [
            format!("chess_session={guest_token}"),
            "chess_session=not.a.token".to_owned(),
            format!("chess_guest={guest_token}"),
            String::new(),
        ] {
            let reply = app.account(&cookie).await;
            assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{cookie}");
        }
    }
);

on_both_stores!(
    rewards_show_todays_total_against_the_cap,
    async |store: Store, _db: &TestDatabase| {
        let app = AccountsApp::new(store);
        let session = app.new_session("Magnus").await;

        let reply = app
            .send("GET", "/api/account/rewards", Some(&session), None)
            .await;

        assert_eq!(reply.status, StatusCode::OK, "{reply:?}");
        assert_eq!(reply.body["total_cents"], 0);
        assert_eq!(reply.body["cap_cents"], 500);
        assert_eq!(reply.body["entries"], json!([]));
        let unsigned = app.send("GET", "/api/account/rewards", None, None).await;
        assert_eq!(unsigned.status, StatusCode::UNAUTHORIZED);
    }
);
