//! Accounts and rewards end to end: the real server, real sockets, both
//! databases. A win between two accounts pays $1, nothing else pays, the
//! sixth win of a day is recorded at $0, and two servers sharing one
//! Postgres still pay one account at most $5.

use serde_json::{Value, json};

use crate::helpers::{Backend, Guest, Socket, TestApp, correspondence, play_moves, start};
use crate::on_both_backends;

impl TestApp {
    /// Signs `guest` up as `username` (keeping the guest's player id): the
    /// returned player carries the session cookie.
    pub async fn sign_up(&self, guest: &Guest, username: &str) -> Guest {
        let body = json!({ "username": username, "password": "correct horse" }).to_string();
        let (status, reply) = self
            .send_with_cookie("POST", "/api/account/sign-up", &guest.cookie, body)
            .await;
        assert_eq!(status.0, 201, "{reply}");
        assert_eq!(reply["id"], guest.id.as_str());
        Guest {
            id: guest.id.clone(),
            name: username.to_owned(),
            cookie: status.1.expect("a session cookie"),
        }
    }

    /// A request that returns the `chess_session` cookie it set.
    async fn send_with_cookie(
        &self,
        method: &str,
        path: &str,
        cookie: &str,
        body: String,
    ) -> ((u16, Option<String>), Value) {
        let client = reqwest::Client::new();
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let response = client
            .request(method, format!("{}{path}", self.address))
            .header("cookie", cookie)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("request");
        let status = response.status().as_u16();
        let session = response
            .headers()
            .get_all("set-cookie")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .filter_map(|value| value.split(';').next())
            .find(|pair| pair.starts_with("chess_session=") && pair.len() > "chess_session=".len())
            .map(str::to_owned);
        let text = response.text().await.expect("body");
        (
            (status, session),
            serde_json::from_str(&text).unwrap_or(Value::Null),
        )
    }

    /// `GET /api/account/rewards` for `player`.
    pub async fn rewards(&self, player: &Guest) -> Value {
        let (status, body) = self.get("/api/account/rewards", Some(&player.cookie)).await;
        assert_eq!(status, 200, "{body}");
        body
    }
}

/// Two accounts in a fresh correspondence game: (game, white socket, black socket).
async fn game_between(app: &TestApp, white: &Guest, black: &Guest) -> (String, Socket, Socket) {
    let game_id = app.online_game(white, black, correspondence()).await;
    let mut white_socket = app.socket(&game_id, Some(white)).await;
    let mut black_socket = app.socket(&game_id, Some(black)).await;
    assert_eq!(white_socket.hello().await["seat"], "white");
    assert_eq!(black_socket.hello().await["seat"], "black");
    (game_id, white_socket, black_socket)
}

/// Plays fool's mate: black wins by checkmate.
async fn black_mates(app: &TestApp, white: &Guest, black: &Guest) {
    let (_, mut white_socket, mut black_socket) = game_between(app, white, black).await;
    play_moves(
        &mut white_socket,
        &mut black_socket,
        &["f2f3", "e7e5", "g2g4", "d8h4"],
    )
    .await;
    let ended = white_socket.recv_event("ended").await;
    assert_eq!(ended["event"]["result"]["reason"], "checkmate");
}

async fn two_accounts(app: &TestApp) -> (Guest, Guest) {
    let (a, b) = (app.guest().await, app.guest().await);
    (app.sign_up(&a, "Alice").await, app.sign_up(&b, "Bob").await)
}

on_both_backends!(
    a_win_between_accounts_pays_the_winner_one_dollar,
    |app: TestApp| async move {
        let (alice, bob) = two_accounts(&app).await;
        let (status, me) = app.get("/api/me", Some(&bob.cookie)).await;
        assert_eq!(status, 200);
        assert_eq!(
            me,
            json!({ "id": bob.id, "name": "Bob", "kind": "account" })
        );

        black_mates(&app, &alice, &bob).await;

        let rewards = app.rewards(&bob).await;
        assert_eq!(rewards["total_cents"], 100, "{rewards}");
        assert_eq!(rewards["cap_cents"], 500);
        assert_eq!(rewards["entries"][0]["status"], "credited");
        assert_eq!(rewards["entries"][0]["amount_cents"], 100);
        assert_eq!(app.rewards(&alice).await["total_cents"], 0);
    }
);

on_both_backends!(
    draws_aborts_guests_and_self_play_pay_nothing,
    |app: TestApp| async move {
        let (alice, bob) = two_accounts(&app).await;
        let guest = app.guest().await;

        // A draw by agreement between two accounts.
        let (_, mut white, mut black) = game_between(&app, &alice, &bob).await;
        play_moves(&mut white, &mut black, &["e2e4", "e7e5"]).await;
        white.send(json!({ "type": "draw_offer" })).await;
        black.recv_event("draw_offered").await;
        black.send(json!({ "type": "draw_accept" })).await;
        assert_eq!(
            white.recv_event("ended").await["event"]["result"]["winner"],
            Value::Null
        );

        // An abort between two accounts.
        let (_, mut white, _black) = game_between(&app, &alice, &bob).await;
        white.send(json!({ "type": "abort" })).await;
        assert_eq!(
            white.recv_event("ended").await["event"]["result"]["reason"],
            "aborted"
        );

        // An account beating a guest.
        black_mates(&app, &guest, &bob).await;

        // An account beating itself on one screen.
        let local = app.create_local(&bob, correspondence()).await;
        let mut both = app.socket(&local, Some(&bob)).await;
        both.hello().await;
        for (ply, uci) in ["f2f3", "e7e5", "g2g4", "d8h4"].iter().enumerate() {
            both.play(uci, u32::try_from(ply).expect("few")).await;
        }
        assert_eq!(
            both.recv_event("ended").await["event"]["result"]["reason"],
            "checkmate"
        );

        for player in [&alice, &bob] {
            let rewards = app.rewards(player).await;
            assert_eq!(rewards["total_cents"], 0, "{rewards}");
            assert_eq!(rewards["entries"], json!([]));
        }
    }
);

on_both_backends!(
    the_sixth_win_of_a_day_is_recorded_at_zero,
    |app: TestApp| async move {
        let (alice, bob) = two_accounts(&app).await;
        for _ in 0..6 {
            black_mates(&app, &alice, &bob).await;
        }
        let rewards = app.rewards(&bob).await;
        assert_eq!(rewards["total_cents"], 500, "{rewards}");
        let statuses: Vec<&str> = rewards["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .filter_map(|entry| entry["status"].as_str())
            .collect();
        assert_eq!(statuses.len(), 6);
        assert_eq!(statuses.iter().filter(|s| **s == "credited").count(), 5);
        assert_eq!(statuses[0], "over_cap", "newest first: {statuses:?}");
    }
);

on_both_backends!(
    a_signed_out_browser_is_a_new_guest,
    |app: TestApp| async move {
        let guest = app.guest().await;
        let account = app.sign_up(&guest, "Alice").await;
        let (status, _) = app
            .send("POST", "/api/account/sign-out", Some(&account.cookie), None)
            .await;
        assert_eq!(status, 204);
        // The old guest cookie names the account's player: it no longer acts.
        let (status, me) = app.get("/api/me", Some(&guest.cookie)).await;
        assert_eq!(status, 200);
        assert_ne!(me["id"], guest.id.as_str(), "{me}");
        assert_eq!(me["kind"], "guest");
        let (status, _) = app.get("/api/account", Some(&account.cookie)).await;
        assert_eq!(status, 401);
    }
);

on_both_backends!(
    signing_out_closes_the_accounts_game_sockets,
    |app: TestApp| async move {
        let (alice, bob) = two_accounts(&app).await;
        let (game_id, mut white, _black) = game_between(&app, &alice, &bob).await;
        let mut spectator = app.socket(&game_id, None).await;
        spectator.hello().await;

        let (status, _) = app
            .send("POST", "/api/account/sign-out", Some(&alice.cookie), None)
            .await;
        assert_eq!(status, 204);

        // Checked every 2 s: closed well within the wait.
        assert!(white.closed_within(std::time::Duration::from_secs(8)).await);
        // Others keep watching.
        assert!(
            !spectator
                .closed_within(std::time::Duration::from_secs(3))
                .await
        );
        // The signed-out token cannot open a new socket as the player.
        let mut again = app.socket(&game_id, Some(&alice)).await;
        assert_eq!(again.hello().await["seat"], "none");
    }
);

on_both_backends!(
    a_sign_out_right_after_a_socket_opens_still_closes_it,
    |app: TestApp| async move {
        let (alice, bob) = two_accounts(&app).await;
        let (game_id, _white, _black) = game_between(&app, &alice, &bob).await;
        // The sign-out lands before the new socket's first session check
        // has had time to run: the socket still acts for the session, so it
        // must still close.
        let mut fresh = app.socket(&game_id, Some(&alice)).await;
        let (status, _) = app
            .send("POST", "/api/account/sign-out", Some(&alice.cookie), None)
            .await;
        assert_eq!(status, 204);
        assert!(fresh.closed_within(std::time::Duration::from_secs(8)).await);
    }
);

/// Two servers on one Postgres end ten games won by one account at the same
/// moment (five on each): still exactly $5.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_on_one_postgres_pay_one_account_at_most_five_dollars() {
    let Some(first) = crate::helpers::spawn_app(Backend::Postgres).await else {
        return;
    };
    let second = start(first.settings.clone(), Backend::Postgres).await;
    let (alice, bob) = two_accounts(&first).await;

    let mut resigners = Vec::new();
    for index in 0..10 {
        let node = if index % 2 == 0 { &first } else { &second };
        let game_id = first.online_game(&alice, &bob, correspondence()).await;
        let mut white = node.socket(&game_id, Some(&alice)).await;
        let mut black = node.socket(&game_id, Some(&bob)).await;
        white.hello().await;
        black.hello().await;
        play_moves(&mut white, &mut black, &["e2e4", "e7e5"]).await;
        resigners.push((white, black));
    }
    // Every white resigns at once; black (Bob) wins all ten.
    let sends = resigners
        .iter_mut()
        .map(|(white, _)| white.send(json!({ "type": "resign" })));
    futures_util::future::join_all(sends).await;
    for (_, black) in &mut resigners {
        assert_eq!(
            black.recv_event("ended").await["event"]["result"]["winner"],
            "black"
        );
    }

    let rewards = first.rewards(&bob).await;
    assert_eq!(rewards["total_cents"], 500, "{rewards}");
    let entries = rewards["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 10);
    let paid: i64 = entries
        .iter()
        .filter_map(|entry| entry["amount_cents"].as_i64())
        .sum();
    assert_eq!(paid, 500);
    drop(second);
}

on_both_backends!(
    signing_out_closes_the_accounts_lobby_socket,
    |app: TestApp| async move {
        let (alice, _bob) = two_accounts(&app).await;
        let guest = app.guest().await;
        let mut alice_lobby = app
            .try_socket("/api/lobby/socket", Some(&alice), None)
            .await
            .expect("lobby socket");
        alice_lobby.recv_type("seeks").await;
        let mut guest_lobby = app
            .try_socket("/api/lobby/socket", Some(&guest), None)
            .await
            .expect("lobby socket");
        guest_lobby.recv_type("seeks").await;

        let (status, _) = app
            .send("POST", "/api/account/sign-out", Some(&alice.cookie), None)
            .await;
        assert_eq!(status, 204);

        // Checked every 2 s: closed well within the wait; a guest's stays open.
        assert!(
            alice_lobby
                .closed_within(std::time::Duration::from_secs(8))
                .await
        );
        assert!(
            !guest_lobby
                .closed_within(std::time::Duration::from_secs(3))
                .await
        );
    }
);
