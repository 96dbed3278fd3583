//! The lichess Board and Bot API end to end (`docs/lichess-api.md`): the
//! real server, personal access tokens, NDJSON streams read as a client
//! reads them, on both databases.

use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::{Guest, TestApp};
use crate::on_both_backends;

/// An account with a token.
pub(crate) struct Player {
    pub(crate) web: Guest,
    pub(crate) token: String,
}

/// One NDJSON response, read line by line.
pub(crate) struct Ndjson {
    response: reqwest::Response,
    buffer: Vec<u8>,
    keep_alives: usize,
}

impl Ndjson {
    /// The next JSON line (keep-alive lines are counted and skipped);
    /// `None` when the stream ended or nothing came within `wait`.
    pub(crate) async fn next_within(&mut self, wait: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(end) = self.buffer.iter().position(|byte| *byte == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                let text = String::from_utf8(line).expect("utf-8");
                if text.trim().is_empty() {
                    self.keep_alives += 1;
                    continue;
                }
                return Some(serde_json::from_str(&text).expect("a json line"));
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.chunk())
                .await
                .ok()?
                .expect("stream read")?;
            self.buffer.extend_from_slice(&chunk);
        }
    }

    pub(crate) async fn next(&mut self) -> Value {
        self.next_within(Duration::from_secs(10))
            .await
            .expect("a line on the stream")
    }

    /// The next line of `kind`, skipping others.
    pub(crate) async fn next_of(&mut self, kind: &str) -> Value {
        loop {
            let line = self.next().await;
            if line["type"] == kind {
                return line;
            }
        }
    }

    /// Whether the server ends the stream within `wait` (no more lines).
    async fn ends_within(&mut self, wait: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            match tokio::time::timeout_at(deadline, self.response.chunk()).await {
                Err(_) => return false,
                Ok(Ok(None) | Err(_)) => return true,
                Ok(Ok(Some(chunk))) => self.buffer.extend_from_slice(&chunk),
            }
        }
    }
}

impl TestApp {
    /// A new account named `name` with a token of `scopes`.
    pub(crate) async fn api_player(&self, name: &str, scopes: &[&str]) -> Player {
        let guest = self.guest().await;
        let web = self.sign_up(&guest, name).await;
        let token = self.new_token(&web, scopes).await;
        Player { web, token }
    }

    async fn new_token(&self, web: &Guest, scopes: &[&str]) -> String {
        let (status, body) = self
            .post(
                "/api/account/tokens",
                web,
                json!({ "description": "test client", "scopes": scopes }),
            )
            .await;
        assert_eq!(status, 201, "{body}");
        body["token"].as_str().expect("the token text").to_owned()
    }

    /// A request with a bearer token and an optional form body.
    pub(crate) async fn api(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        form: &[(&str, &str)],
    ) -> (u16, Value) {
        let response = self.api_response(method, path, token, form).await;
        let status = response.status().as_u16();
        let text = response.text().await.expect("body");
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    pub(crate) async fn api_response(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        form: &[(&str, &str)],
    ) -> reqwest::Response {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut request = reqwest::Client::new().request(method, format!("{}{path}", self.address));
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        if !form.is_empty() {
            let body: Vec<String> = form
                .iter()
                .map(|(key, value)| format!("{key}={value}"))
                .collect();
            request = request
                .header("content-type", "application/x-www-form-urlencoded")
                .body(body.join("&"));
        }
        request.send().await.expect("request")
    }

    pub(crate) async fn stream(&self, path: &str, token: &str) -> Ndjson {
        let response = self.api_response("GET", path, Some(token), &[]).await;
        assert_eq!(response.status(), 200, "GET {path}");
        assert_eq!(
            response.headers()["content-type"],
            "application/x-ndjson",
            "GET {path}"
        );
        Ndjson {
            response,
            buffer: Vec::new(),
            keep_alives: 0,
        }
    }

    /// `challenger` challenges `dest` (by name) and `dest` accepts: the game
    /// id, from both players' `gameStart`.
    async fn api_game(
        &self,
        challenger: &Player,
        challenger_events: &mut Ndjson,
        dest: &Player,
        dest_events: &mut Ndjson,
        form: &[(&str, &str)],
    ) -> String {
        let (status, created) = self
            .api(
                "POST",
                &format!("/api/challenge/{}", dest.web.name),
                Some(&challenger.token),
                form,
            )
            .await;
        assert_eq!(status, 200, "{created}");
        let challenge_id = created["challenge"]["id"].as_str().expect("id").to_owned();
        let incoming = dest_events.next_of("challenge").await;
        assert_eq!(incoming["challenge"]["id"], challenge_id);
        assert_eq!(incoming["challenge"]["direction"], "in");
        assert_eq!(
            incoming["challenge"]["challenger"]["name"],
            challenger.web.name
        );
        let (status, body) = self
            .api(
                "POST",
                &format!("/api/challenge/{challenge_id}/accept"),
                Some(&dest.token),
                &[],
            )
            .await;
        assert_eq!((status, &body), (200, &json!({ "ok": true })));
        let started = challenger_events.next_of("gameStart").await;
        let game_id = started["game"]["gameId"]
            .as_str()
            .expect("game id")
            .to_owned();
        assert_eq!(
            dest_events.next_of("gameStart").await["game"]["gameId"],
            game_id
        );
        assert_eq!(
            game_id, challenge_id,
            "the game is the challenge, as on lichess"
        );
        game_id
    }
}

/// Alice and Bob, board accounts, in a game Alice challenged Bob to with
/// `form` (through `app`): both players and the game's id.
async fn board_game(app: &TestApp, form: &[(&str, &str)]) -> (Player, Player, String) {
    let scopes = ["challenge:write", "challenge:read", "board:play"];
    let alice = app.api_player("Alice", &scopes).await;
    let bob = app.api_player("Bob", &scopes).await;
    let mut alice_events = app.stream("/api/stream/event", &alice.token).await;
    let mut bob_events = app.stream("/api/stream/event", &bob.token).await;
    let game_id = app
        .api_game(&alice, &mut alice_events, &bob, &mut bob_events, form)
        .await;
    (alice, bob, game_id)
}

pub(crate) fn error_text(body: &Value) -> &str {
    body["error"]
        .as_str()
        .unwrap_or_else(|| panic!("a lichess error: {body}"))
}

on_both_backends!(
    tokens_are_created_listed_used_and_revoked,
    |app: TestApp| async move {
        let alice = app
            .api_player("Alice", &["board:play", "challenge:read"])
            .await;
        assert!(alice.token.starts_with("lip_"), "{}", alice.token);

        let (status, account) = app
            .api("GET", "/api/account", Some(&alice.token), &[])
            .await;
        assert_eq!(status, 200, "{account}");
        assert_eq!(account["id"], "alice");
        assert_eq!(account["username"], "Alice");
        assert!(account.get("title").is_none(), "not a bot: {account}");
        // The same path with the session cookie is still the web's account.
        let (_, web) = app.get("/api/account", Some(&alice.web.cookie)).await;
        assert_eq!(web["id"], alice.web.id.as_str());
        assert_eq!(web["kind"], "account");

        let (status, list) = app
            .get("/api/account/tokens", Some(&alice.web.cookie))
            .await;
        assert_eq!(status, 200);
        let tokens = list["tokens"].as_array().expect("tokens");
        assert_eq!(tokens.len(), 1, "{list}");
        assert_eq!(tokens[0]["scopes"], json!(["board:play", "challenge:read"]));
        assert!(
            tokens[0]["last_used_at"].is_i64(),
            "the use is recorded: {list}"
        );
        assert!(
            !list.to_string().contains(&alice.token),
            "the text is never listed"
        );

        let id = tokens[0]["id"].as_str().expect("id").to_owned();
        let (status, _) = app
            .send(
                "DELETE",
                &format!("/api/account/tokens/{id}"),
                Some(&alice.web.cookie),
                None,
            )
            .await;
        assert_eq!(status, 204);
        let (status, body) = app
            .api("GET", "/api/account", Some(&alice.token), &[])
            .await;
        assert_eq!(status, 401, "a revoked token stops working: {body}");
        error_text(&body);
        let (status, _) = app
            .send(
                "DELETE",
                &format!("/api/account/tokens/{id}"),
                Some(&alice.web.cookie),
                None,
            )
            .await;
        assert_eq!(status, 404, "revoked already");
        let (_, list) = app
            .get("/api/account/tokens", Some(&alice.web.cookie))
            .await;
        assert_eq!(list["tokens"], json!([]));
    }
);

on_both_backends!(token_requests_are_checked, |app: TestApp| async move {
    let alice = app.api_player("Alice", &["board:play"]).await;
    let bob_guest = app.guest().await;
    let bob = app.sign_up(&bob_guest, "Bob").await;
    let cases = [
        (
            json!({ "description": "", "scopes": ["board:play"] }),
            "invalid_description",
        ),
        (
            json!({ "description": "x".repeat(101), "scopes": ["board:play"] }),
            "invalid_description",
        ),
        (
            json!({ "description": "ok", "scopes": [] }),
            "invalid_scope",
        ),
        (
            json!({ "description": "ok", "scopes": ["email:read"] }),
            "invalid_scope",
        ),
    ];
    for (body, code) in cases {
        let (status, reply) = app.post("/api/account/tokens", &bob, body.clone()).await;
        assert_eq!(
            (status, reply["error"]["code"].as_str()),
            (422, Some(code)),
            "{body}"
        );
    }
    let (status, reply) = app
        .post("/api/account/tokens", &bob, json!({ "description": "ok" }))
        .await;
    assert_eq!(status, 422, "missing scopes: {reply}");
    // A guest (no account) and a stranger's token id.
    let guest = app.guest().await;
    let (status, _) = app
        .post(
            "/api/account/tokens",
            &guest,
            json!({ "description": "x", "scopes": ["board:play"] }),
        )
        .await;
    assert_eq!(status, 401);
    let (_, list) = app
        .get("/api/account/tokens", Some(&alice.web.cookie))
        .await;
    let alice_token_id = list["tokens"][0]["id"].as_str().expect("id").to_owned();
    let (status, _) = app
        .send(
            "DELETE",
            &format!("/api/account/tokens/{alice_token_id}"),
            Some(&bob.cookie),
            None,
        )
        .await;
    assert_eq!(status, 404, "Bob cannot revoke Alice's token");
    let (status, _) = app
        .api("GET", "/api/account", Some(&alice.token), &[])
        .await;
    assert_eq!(status, 200, "and it still works");

    // Bad bearer tokens: lichess's 401 with an error text.
    for token in [None, Some("lip_0000"), Some("not-a-token"), Some("")] {
        let (status, body) = app.api("GET", "/api/stream/event", token, &[]).await;
        assert_eq!(status, 401, "{token:?}: {body}");
        error_text(&body);
    }
    // A scope the token lacks: 403.
    let (status, body) = app
        .api("POST", "/api/bot/account/upgrade", Some(&alice.token), &[])
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(error_text(&body).contains("bot:play"), "{body}");
    let (status, body) = app
        .api(
            "POST",
            "/api/challenge/bob",
            Some(&alice.token),
            &[("clock.limit", "300")],
        )
        .await;
    assert_eq!(status, 200, "board:play may challenge: {body}");
    let reader = app.api_player("Reader", &["challenge:read"]).await;
    let (status, body) = app
        .api(
            "POST",
            "/api/board/seek",
            Some(&reader.token),
            &[("time", "5"), ("increment", "0")],
        )
        .await;
    assert_eq!(status, 403, "{body}");
    let (status, _) = app
        .api("POST", "/api/challenge/alice", Some(&reader.token), &[])
        .await;
    assert_eq!(status, 403, "challenge:read cannot write");
});

on_both_backends!(
    a_bot_and_a_board_player_play_to_mate_and_the_bot_earns_nothing,
    |app: TestApp| async move {
        let alice = app
            .api_player(
                "Alice",
                &["board:play", "challenge:read", "challenge:write"],
            )
            .await;
        let bot = app.api_player("Engine", &["bot:play"]).await;
        let (status, body) = app
            .api("POST", "/api/bot/account/upgrade", Some(&bot.token), &[])
            .await;
        assert_eq!((status, &body), (200, &json!({ "ok": true })));
        let (_, account) = app.api("GET", "/api/account", Some(&bot.token), &[]).await;
        assert_eq!(account["title"], "BOT");

        let mut alice_events = app.stream("/api/stream/event", &alice.token).await;
        let mut bot_events = app.stream("/api/stream/event", &bot.token).await;
        // Alice plays white; the bot wins with fool's mate. She asks for a
        // rated game, but a game with a bot is always casual.
        let game = app
            .api_game(
                &alice,
                &mut alice_events,
                &bot,
                &mut bot_events,
                &[
                    ("clock.limit", "300"),
                    ("clock.increment", "2"),
                    ("color", "white"),
                    ("rated", "true"),
                ],
            )
            .await;

        // A board account cannot use the bot stream and the bot not the board one.
        let (status, _) = app
            .api(
                "GET",
                &format!("/api/bot/game/stream/{game}"),
                Some(&alice.token),
                &[],
            )
            .await;
        assert_eq!(status, 403);
        let (status, _) = app
            .api(
                "GET",
                &format!("/api/board/game/stream/{game}"),
                Some(&bot.token),
                &[],
            )
            .await;
        assert_eq!(status, 403);

        let mut alice_game = app
            .stream(&format!("/api/board/game/stream/{game}"), &alice.token)
            .await;
        let mut bot_game = app
            .stream(&format!("/api/bot/game/stream/{game}"), &bot.token)
            .await;
        let full = alice_game.next().await;
        assert_eq!(full["type"], "gameFull", "{full}");
        assert_eq!(full["id"], game.as_str());
        assert_eq!(full["white"]["name"], "Alice");
        assert_eq!(full["black"]["name"], "Engine");
        assert_eq!(full["black"]["title"], "BOT");
        assert_eq!(full["rated"], false, "a bot's game is casual: {full}");
        assert_eq!(
            full["clock"],
            json!({ "initial": 300_000, "increment": 2000 })
        );
        assert_eq!(full["initialFen"], "startpos");
        assert_eq!(full["state"]["moves"], "");
        assert_eq!(full["state"]["status"], "started");
        assert_eq!(full["state"]["wtime"], 300_000);
        assert_eq!(full["state"]["winc"], 2000);
        assert_eq!(bot_game.next().await["type"], "gameFull");

        // Out of turn, illegal and malformed moves: lichess's 400 with a text.
        let cases = [
            (&bot.token, "bot", "e7e5"),
            (&alice.token, "board", "e2e5"),
            (&alice.token, "board", "zz99"),
        ];
        for (token, api, uci) in cases {
            let (status, body) = app
                .api(
                    "POST",
                    &format!("/api/{api}/game/{game}/move/{uci}"),
                    Some(token),
                    &[],
                )
                .await;
            assert_eq!(status, 400, "{uci}: {body}");
            error_text(&body);
        }

        let moves = [
            ("f2f3", &alice, "board"),
            ("e7e5", &bot, "bot"),
            ("g2g4", &alice, "board"),
            ("d8h4", &bot, "bot"),
        ];
        let mut played = Vec::new();
        for (uci, player, api) in moves {
            let (status, body) = app
                .api(
                    "POST",
                    &format!("/api/{api}/game/{game}/move/{uci}"),
                    Some(&player.token),
                    &[],
                )
                .await;
            assert_eq!((status, &body), (200, &json!({ "ok": true })), "{uci}");
            played.push(uci);
            let expected = played.join(" ");
            for stream in [&mut alice_game, &mut bot_game] {
                let state = stream.next().await;
                assert_eq!(state["type"], "gameState", "{state}");
                assert_eq!(state["moves"], expected.as_str(), "{state}");
            }
        }
        // The last state said how it ended; then the stream ends.
        for stream in [&mut alice_game, &mut bot_game] {
            assert!(
                stream.ends_within(Duration::from_secs(5)).await,
                "the game stream ends"
            );
        }
        let (status, body) = app
            .api(
                "POST",
                &format!("/api/board/game/{game}/move/a2a3"),
                Some(&alice.token),
                &[],
            )
            .await;
        assert_eq!(status, 400, "the game is over: {body}");

        for events in [&mut alice_events, &mut bot_events] {
            let finish = events.next_of("gameFinish").await;
            assert_eq!(finish["game"]["gameId"], game.as_str());
            assert_eq!(finish["game"]["status"]["name"], "mate");
            assert_eq!(finish["game"]["winner"], "black");
        }
        // A new stream of the finished game: gameFull with the ending, then the end.
        let mut again = app
            .stream(&format!("/api/board/game/stream/{game}"), &alice.token)
            .await;
        let full = again.next().await;
        assert_eq!(full["state"]["status"], "mate");
        assert_eq!(full["state"]["winner"], "black");
        assert_eq!(full["state"]["moves"], "f2f3 e7e5 g2g4 d8h4");
        assert!(again.ends_within(Duration::from_secs(5)).await);

        let (status, pgn) = app.get_text(&format!("/api/games/{game}/pgn")).await;
        assert_eq!(status, 200);
        assert!(pgn.contains("[Result \"0-1\"]"), "{pgn}");
        assert!(pgn.contains("Qh4#"), "{pgn}");

        // A bot's win between two accounts pays nothing, to anyone, and
        // changes no rating.
        assert_eq!(app.rewards(&bot.web).await["entries"], json!([]));
        assert_eq!(app.rewards(&alice.web).await["entries"], json!([]));
        for player in [&alice, &bot] {
            let (_, account) = app
                .api("GET", "/api/account", Some(&player.token), &[])
                .await;
            assert_eq!(
                account["perfs"]["blitz"],
                json!({ "rating": 1500, "rd": 350, "games": 0, "prog": 0, "prov": true }),
                "{account}"
            );
        }
        // And a bot cannot be made of an account that has played.
        let (status, body) = app
            .api("POST", "/api/bot/account/upgrade", Some(&alice.token), &[])
            .await;
        assert_eq!(status, 403, "board:play only: {body}");
        let alice_bot_token = app.new_token(&alice.web, &["bot:play"]).await;
        let (status, body) = app
            .api(
                "POST",
                "/api/bot/account/upgrade",
                Some(&alice_bot_token),
                &[],
            )
            .await;
        assert_eq!(status, 400, "{body}");
        let (_, account) = app
            .api("GET", "/api/account", Some(&alice.token), &[])
            .await;
        assert!(account.get("title").is_none(), "still a person: {account}");
    }
);

on_both_backends!(
    two_board_accounts_play_through_the_api_and_the_winner_is_paid,
    |app: TestApp| async move {
        let scopes = ["board:play"];
        let alice = app.api_player("Alice", &scopes).await;
        let bob = app.api_player("Bob", &scopes).await;
        let mut alice_events = app.stream("/api/stream/event", &alice.token).await;
        let mut bob_events = app.stream("/api/stream/event", &bob.token).await;
        let game = app
            .api_game(
                &alice,
                &mut alice_events,
                &bob,
                &mut bob_events,
                &[("color", "black"), ("days", "3")],
            )
            .await;
        let mut bob_game = app
            .stream(&format!("/api/board/game/stream/{game}"), &bob.token)
            .await;
        let full = bob_game.next().await;
        assert_eq!(full["white"]["name"], "Bob");
        assert_eq!(full["clock"], Value::Null, "correspondence: {full}");
        assert_eq!(full["speed"], "correspondence");

        // Takebacks and chat are refused clearly; a draw offer with a move,
        // declined; then Bob resigns.
        for path in ["takeback/yes", "chat"] {
            let (status, body) = app
                .api(
                    "POST",
                    &format!("/api/board/game/{game}/{path}"),
                    Some(&bob.token),
                    &[("room", "player"), ("text", "hi")],
                )
                .await;
            assert_eq!(status, 400, "{path}: {body}");
            error_text(&body);
        }
        // Too early for a draw offer (before each side has moved): the
        // move stands, the offer is not made.
        let moves = [
            ("e2e4?offeringDraw=true", &bob),
            ("e7e5", &alice),
            ("g1f3?offeringDraw=true", &bob),
        ];
        for (mv, player) in moves {
            let (status, body) = app
                .api(
                    "POST",
                    &format!("/api/board/game/{game}/move/{mv}"),
                    Some(&player.token),
                    &[],
                )
                .await;
            assert_eq!(status, 200, "{mv}: {body}");
        }
        let state = bob_game.next_of("gameState").await;
        assert_eq!(
            (&state["moves"], &state["wdraw"]),
            (&json!("e2e4"), &json!(false))
        );
        assert_eq!(bob_game.next_of("gameState").await["moves"], "e2e4 e7e5");
        let state = bob_game.next_of("gameState").await;
        assert_eq!(state["moves"], "e2e4 e7e5 g1f3");
        let state = if state["wdraw"] == true {
            state
        } else {
            bob_game.next_of("gameState").await
        };
        assert_eq!(state["wdraw"], true, "{state}");
        assert_eq!(state["bdraw"], false);
        let (status, _) = app
            .api(
                "POST",
                &format!("/api/board/game/{game}/draw/no"),
                Some(&alice.token),
                &[],
            )
            .await;
        assert_eq!(status, 200);
        assert_eq!(bob_game.next_of("gameState").await["wdraw"], false);
        let (status, body) = app
            .api(
                "POST",
                &format!("/api/board/game/{game}/draw/maybe"),
                Some(&alice.token),
                &[],
            )
            .await;
        assert_eq!(status, 400, "{body}");

        // Someone else's game does not exist for them.
        let carol = app.api_player("Carol", &scopes).await;
        for path in ["move/b8c6", "resign", "abort", "draw/yes"] {
            let (status, body) = app
                .api(
                    "POST",
                    &format!("/api/board/game/{game}/{path}"),
                    Some(&carol.token),
                    &[],
                )
                .await;
            assert_eq!(status, 404, "{path}: {body}");
            assert_eq!(error_text(&body), "No such game");
        }
        let (status, _) = app
            .api(
                "GET",
                &format!("/api/board/game/stream/{game}"),
                Some(&carol.token),
                &[],
            )
            .await;
        assert_eq!(status, 404);
        let (status, _) = app
            .api(
                "POST",
                "/api/board/game/not-a-game/resign",
                Some(&carol.token),
                &[],
            )
            .await;
        assert_eq!(status, 404);

        let (status, _) = app
            .api(
                "POST",
                &format!("/api/board/game/{game}/resign"),
                Some(&bob.token),
                &[],
            )
            .await;
        assert_eq!(status, 200);
        let last = bob_game.next_of("gameState").await;
        assert_eq!(last["status"], "resign");
        assert_eq!(last["winner"], "black");
        let finish = alice_events.next_of("gameFinish").await;
        assert_eq!(finish["game"]["color"], "black");
        assert_eq!(finish["game"]["opponent"]["username"], "Bob");

        let rewards = app.rewards(&alice.web).await;
        assert_eq!(
            rewards["total_cents"], 100,
            "two people's decisive game pays: {rewards}"
        );
    }
);

on_both_backends!(
    challenges_are_declined_cancelled_and_checked,
    |app: TestApp| async move {
        let alice = app
            .api_player("Alice", &["challenge:write", "challenge:read"])
            .await;
        let bob = app
            .api_player("Bob", &["challenge:write", "challenge:read"])
            .await;
        let mut alice_events = app.stream("/api/stream/event", &alice.token).await;
        let mut bob_events = app.stream("/api/stream/event", &bob.token).await;

        let bad = [
            ("nobody", vec![("clock.limit", "300")], 404),
            ("alice", vec![("clock.limit", "300")], 400),
            ("bob", vec![("clock.limit", "7")], 400),
            ("bob", vec![("clock.limit", "abc")], 400),
            ("bob", vec![("clock.increment", "3")], 400),
            ("bob", vec![("clock.limit", "300"), ("color", "green")], 400),
            (
                "bob",
                vec![("clock.limit", "300"), ("variant", "chess960")],
                400,
            ),
        ];
        for (target, form, expected) in bad {
            let (status, body) = app
                .api(
                    "POST",
                    &format!("/api/challenge/{target}"),
                    Some(&alice.token),
                    &form,
                )
                .await;
            assert_eq!(status, expected, "{target} {form:?}: {body}");
            error_text(&body);
        }

        // Declined: the challenger hears why.
        let (_, created) = app
            .api(
                "POST",
                "/api/challenge/BOB",
                Some(&alice.token),
                &[("clock.limit", "180"), ("clock.increment", "0")],
            )
            .await;
        let id = created["challenge"]["id"].as_str().expect("id").to_owned();
        assert_eq!(created["challenge"]["timeControl"]["limit"], 180);
        assert_eq!(created["challenge"]["speed"], "blitz");
        assert_eq!(
            alice_events.next_of("challenge").await["challenge"]["direction"],
            "out"
        );
        assert_eq!(
            bob_events.next_of("challenge").await["challenge"]["id"],
            id.as_str()
        );
        let (status, _) = app
            .api(
                "POST",
                &format!("/api/challenge/{id}/accept"),
                Some(&alice.token),
                &[],
            )
            .await;
        assert_eq!(
            status, 404,
            "the challenger cannot accept their own challenge"
        );
        let (status, _) = app
            .api(
                "POST",
                &format!("/api/challenge/{id}/decline"),
                Some(&bob.token),
                &[("reason", "later")],
            )
            .await;
        assert_eq!(status, 200);
        let declined = alice_events.next_of("challengeDeclined").await;
        assert_eq!(declined["challenge"]["id"], id.as_str());
        assert_eq!(declined["challenge"]["declineReasonKey"], "later");
        let (status, _) = app
            .api(
                "POST",
                &format!("/api/challenge/{id}/accept"),
                Some(&bob.token),
                &[],
            )
            .await;
        assert_eq!(status, 404, "a declined challenge is gone");

        // Cancelled: the challenged account hears it; a stream opened
        // meanwhile lists the challenges still waiting.
        let (_, created) = app
            .api("POST", "/api/challenge/bob", Some(&alice.token), &[])
            .await;
        let id = created["challenge"]["id"].as_str().expect("id").to_owned();
        assert_eq!(created["challenge"]["timeControl"]["type"], "unlimited");
        let mut late = app.stream("/api/stream/event", &bob.token).await;
        assert_eq!(
            late.next_of("challenge").await["challenge"]["id"],
            id.as_str()
        );
        let (status, _) = app
            .api(
                "POST",
                &format!("/api/challenge/{id}/cancel"),
                Some(&bob.token),
                &[],
            )
            .await;
        assert_eq!(status, 404, "only the challenger cancels");
        let (status, _) = app
            .api(
                "POST",
                &format!("/api/challenge/{id}/cancel"),
                Some(&alice.token),
                &[],
            )
            .await;
        assert_eq!(status, 200);
        assert_eq!(
            bob_events.next_of("challengeCanceled").await["challenge"]["id"],
            id.as_str()
        );
        assert_eq!(
            late.next_of("challengeCanceled").await["challenge"]["status"],
            "canceled"
        );
    }
);

on_both_backends!(
    a_board_seek_lives_while_its_request_is_open,
    |app: TestApp| async move {
        let alice = app.api_player("Alice", &["board:play"]).await;
        let mut alice_events = app.stream("/api/stream/event", &alice.token).await;

        // Closing the request cancels the seek.
        let seek = app
            .api_response(
                "POST",
                "/api/board/seek",
                Some(&alice.token),
                &[("time", "5"), ("increment", "0")],
            )
            .await;
        assert_eq!(seek.status(), 200);
        let (_, seeks) = app.get("/api/lobby/seeks", None).await;
        assert_eq!(seeks["seeks"].as_array().map(Vec::len), Some(1), "{seeks}");
        drop(seek);
        let mut gone = false;
        for _ in 0..50 {
            let (_, seeks) = app.get("/api/lobby/seeks", None).await;
            if seeks["seeks"] == json!([]) {
                gone = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(gone, "the seek left the lobby with its request");

        // Taken on the web page: the request ends and the game is on the event stream.
        let seek = app
            .api_response(
                "POST",
                "/api/board/seek",
                Some(&alice.token),
                &[("time", "3"), ("increment", "2"), ("color", "white")],
            )
            .await;
        let mut seek = Ndjson {
            response: seek,
            buffer: Vec::new(),
            keep_alives: 0,
        };
        let (_, seeks) = app.get("/api/lobby/seeks", None).await;
        let seek_id = seeks["seeks"][0]["id"]
            .as_str()
            .expect("the seek")
            .to_owned();
        assert_eq!(seeks["seeks"][0]["player"]["name"], "Alice");
        let person = app.guest().await;
        let (status, joined) = app
            .post(
                &format!("/api/lobby/seeks/{seek_id}/join"),
                &person,
                json!({}),
            )
            .await;
        assert_eq!(status, 200, "{joined}");
        assert!(
            seek.ends_within(Duration::from_secs(5)).await,
            "the seek request ends"
        );
        let started = alice_events.next_of("gameStart").await;
        assert_eq!(started["game"]["gameId"], joined["game_id"]);
        assert_eq!(started["game"]["color"], "white");
        assert_eq!(started["game"]["isMyTurn"], true);
        assert_eq!(
            started["game"]["opponent"]["username"],
            person.name.as_str()
        );

        // Bad seeks.
        for form in [
            vec![("increment", "2")],
            vec![("time", "0.1"), ("increment", "0")],
            vec![],
        ] {
            let (status, body) = app
                .api("POST", "/api/board/seek", Some(&alice.token), &form)
                .await;
            assert_eq!(status, 400, "{form:?}: {body}");
        }
    }
);

on_both_backends!(
    two_api_seeks_pair_and_an_aborted_game_says_so,
    |app: TestApp| async move {
        let bot = app.api_player("Engine", &["bot:play"]).await;
        let (status, _) = app
            .api("POST", "/api/bot/account/upgrade", Some(&bot.token), &[])
            .await;
        assert_eq!(status, 200);
        let alice = app.api_player("Alice", &["board:play"]).await;
        let mut bot_events = app.stream("/api/stream/event", &bot.token).await;
        let mut alice_events = app.stream("/api/stream/event", &alice.token).await;

        // A bot may seek here; a matching seek of someone else pairs with it.
        let bot_seek = app
            .api_response(
                "POST",
                "/api/board/seek",
                Some(&bot.token),
                &[("time", "1"), ("increment", "1")],
            )
            .await;
        assert_eq!(bot_seek.status(), 200);
        let mut bot_seek = Ndjson {
            response: bot_seek,
            buffer: Vec::new(),
            keep_alives: 0,
        };
        let alice_seek = app
            .api_response(
                "POST",
                "/api/board/seek",
                Some(&alice.token),
                &[("time", "1"), ("increment", "1")],
            )
            .await;
        let mut alice_seek = Ndjson {
            response: alice_seek,
            buffer: Vec::new(),
            keep_alives: 0,
        };
        assert!(
            alice_seek.ends_within(Duration::from_secs(5)).await,
            "paired at once"
        );
        assert!(
            bot_seek.ends_within(Duration::from_secs(5)).await,
            "the bot's seek was taken"
        );
        let game = alice_events.next_of("gameStart").await["game"]["gameId"].clone();
        assert_eq!(
            bot_events.next_of("gameStart").await["game"]["gameId"],
            game
        );
        let (_, seeks) = app.get("/api/lobby/seeks", None).await;
        assert_eq!(seeks["seeks"], json!([]));

        let game = game.as_str().expect("id").to_owned();
        let (status, body) = app
            .api(
                "POST",
                &format!("/api/board/game/{game}/abort"),
                Some(&alice.token),
                &[],
            )
            .await;
        assert_eq!((status, &body), (200, &json!({ "ok": true })));
        for events in [&mut alice_events, &mut bot_events] {
            let finish = events.next_of("gameFinish").await;
            assert_eq!(finish["game"]["status"]["name"], "aborted", "{finish}");
            assert!(finish["game"].get("winner").is_none());
        }
        let (status, body) = app
            .api(
                "POST",
                &format!("/api/bot/game/{game}/resign"),
                Some(&bot.token),
                &[],
            )
            .await;
        assert_eq!(status, 400, "over already: {body}");
    }
);

/// The `chess_live_games` gauge of `app`'s metrics listener.
async fn live_games(app: &TestApp) -> Option<f64> {
    let address = app.metrics_address.expect("a metrics listener");
    let text = reqwest::get(format!("http://{address}/metrics"))
        .await
        .expect("GET /metrics")
        .text()
        .await
        .expect("text");
    text.lines()
        .find_map(|line| line.strip_prefix("chess_live_games ")?.parse().ok())
}

on_both_backends!(
    a_finished_api_game_leaves_memory_once_its_streams_end,
    |app: TestApp| async move {
        let mut settings = app.settings.clone();
        settings.metrics_listen = Some("127.0.0.1:0".parse().expect("an address"));
        let app = app.restart_with(settings).await;
        let alice = app.api_player("Alice", &["board:play"]).await;
        let bob = app.api_player("Bob", &["board:play"]).await;
        let mut alice_events = app.stream("/api/stream/event", &alice.token).await;
        let mut bob_events = app.stream("/api/stream/event", &bob.token).await;
        let game = app
            .api_game(
                &alice,
                &mut alice_events,
                &bob,
                &mut bob_events,
                &[("color", "white")],
            )
            .await;
        let mut streams = Vec::new();
        for player in [&alice, &bob] {
            let mut stream = app
                .stream(&format!("/api/board/game/stream/{game}"), &player.token)
                .await;
            assert_eq!(stream.next().await["type"], "gameFull");
            streams.push(stream);
        }
        assert_eq!(live_games(&app).await, Some(1.0));
        let (status, _) = app
            .api(
                "POST",
                &format!("/api/board/game/{game}/abort"),
                Some(&alice.token),
                &[],
            )
            .await;
        assert_eq!(status, 200);
        for stream in &mut streams {
            assert!(stream.ends_within(Duration::from_secs(5)).await);
        }
        alice_events.next_of("gameFinish").await;
        // The game streams and the watcher let go of the finished game: its
        // owner unloads (the event streams stay open and hold nothing).
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while live_games(&app).await != Some(0.0) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the finished game stayed loaded"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        drop(alice_events);
    }
);

on_both_backends!(
    a_waiting_challenge_survives_a_restart,
    |app: TestApp| async move {
        let alice = app
            .api_player(
                "Alice",
                &["challenge:write", "challenge:read", "board:play"],
            )
            .await;
        let bob = app
            .api_player("Bob", &["challenge:write", "challenge:read", "board:play"])
            .await;
        let (status, created) = app
            .api(
                "POST",
                "/api/challenge/bob",
                Some(&alice.token),
                &[
                    ("clock.limit", "300"),
                    ("clock.increment", "2"),
                    ("color", "white"),
                ],
            )
            .await;
        assert_eq!(status, 200, "{created}");
        let id = created["challenge"]["id"].as_str().expect("id").to_owned();

        let app = app.restart().await;
        // The new server lists it to Bob and lets him accept it.
        let mut bob_events = app.stream("/api/stream/event", &bob.token).await;
        let mut alice_events = app.stream("/api/stream/event", &alice.token).await;
        let listed = bob_events.next_of("challenge").await;
        assert_eq!(listed["challenge"]["id"], id.as_str());
        assert_eq!(listed["challenge"]["timeControl"]["limit"], 300);
        assert_eq!(listed["challenge"]["timeControl"]["increment"], 2);
        assert_eq!(listed["challenge"]["challenger"]["name"], "Alice");
        let (status, body) = app
            .api(
                "POST",
                &format!("/api/challenge/{id}/accept"),
                Some(&bob.token),
                &[],
            )
            .await;
        assert_eq!((status, &body), (200, &json!({ "ok": true })));
        let game_id = alice_events.next_of("gameStart").await["game"]["gameId"].clone();
        assert_eq!(
            bob_events.next_of("gameStart").await["game"]["gameId"],
            game_id
        );
        let (status, _) = app
            .api(
                "POST",
                &format!("/api/challenge/{id}/accept"),
                Some(&bob.token),
                &[],
            )
            .await;
        assert_eq!(status, 404, "an accepted challenge is answered");
    }
);

on_both_backends!(
    outgoing_challenges_are_limited_in_the_store,
    |app: TestApp| async move {
        let alice = app
            .api_player("Alice", &["challenge:write", "challenge:read"])
            .await;
        let _bob = app.api_player("Bob", &["challenge:read"]).await;
        let mut ids = Vec::new();
        let mut refused = None;
        // The per-minute game limit may refuse first on a busy run; the
        // outgoing limit (20) must refuse by the 21st.
        for _ in 0..21 {
            let (status, body) = app
                .api("POST", "/api/challenge/bob", Some(&alice.token), &[])
                .await;
            if status == 200 {
                ids.push(body["challenge"]["id"].as_str().expect("id").to_owned());
            } else {
                refused = Some((status, body));
                break;
            }
        }
        let (status, body) = refused.expect("the 21st waiting challenge is refused");
        assert_eq!(ids.len(), 20, "twenty wait: {body}");
        assert_eq!(status, 400);
        assert!(error_text(&body).contains("20 challenges"), "{body}");
        // Cancelling one makes room again.
        let (status, _) = app
            .api(
                "POST",
                &format!("/api/challenge/{}/cancel", ids[0]),
                Some(&alice.token),
                &[],
            )
            .await;
        assert_eq!(status, 200);
        let (status, body) = app
            .api("POST", "/api/challenge/bob", Some(&alice.token), &[])
            .await;
        assert_eq!(status, 200, "{body}");
    }
);

/// A second node on `first`'s Postgres database.
async fn second_node(first: &TestApp) -> TestApp {
    crate::helpers::start(first.settings.clone(), crate::helpers::Backend::Postgres).await
}

/// Each node remembers the tokens it resolved (a move through the API reads
/// no token row); a token revoked through one node must stop working on a
/// node that remembers it, at once and not when its memory expires.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_revoked_on_one_node_stops_working_on_another_that_remembers_it() {
    let Some(a) = crate::helpers::spawn_app(crate::helpers::Backend::Postgres).await else {
        return;
    };
    let b = second_node(&a).await;
    let alice = a.api_player("Alice", &["board:play"]).await;
    let (status, body) = b.api("GET", "/api/account", Some(&alice.token), &[]).await;
    assert_eq!(status, 200, "{body}");
    let (_, list) = a.get("/api/account/tokens", Some(&alice.web.cookie)).await;
    let id = list["tokens"][0]["id"]
        .as_str()
        .expect("a token id")
        .to_owned();
    let (status, _) = a
        .send(
            "DELETE",
            &format!("/api/account/tokens/{id}"),
            Some(&alice.web.cookie),
            None,
        )
        .await;
    assert_eq!(status, 204);
    let (status, body) = a.api("GET", "/api/account", Some(&alice.token), &[]).await;
    assert_eq!(status, 401, "the revoking node forgets it at once: {body}");
    // The other node hears of it in moments: far within the minute it
    // would otherwise believe what it remembers.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let (status, body) = b.api("GET", "/api/account", Some(&alice.token), &[]).await;
        if status == 401 {
            break;
        }
        assert_eq!(status, 200, "{body}");
        assert!(
            std::time::Instant::now() < deadline,
            "the other node still takes the revoked token"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_challenge_made_on_one_node_is_answered_on_another() {
    let Some(a) = crate::helpers::spawn_app(crate::helpers::Backend::Postgres).await else {
        return;
    };
    let b = second_node(&a).await;
    let scopes = ["challenge:write", "challenge:read", "board:play"];
    let alice = a.api_player("Alice", &scopes).await;
    let bob = a.api_player("Bob", &scopes).await;
    let mut alice_events = a.stream("/api/stream/event", &alice.token).await;
    let mut bob_events = b.stream("/api/stream/event", &bob.token).await;

    // Made on A, cancelled on A: Bob's stream on B hears both.
    let (status, created) = a
        .api("POST", "/api/challenge/bob", Some(&alice.token), &[])
        .await;
    assert_eq!(status, 200, "{created}");
    let id = created["challenge"]["id"].as_str().expect("id").to_owned();
    let incoming = bob_events.next_of("challenge").await;
    assert_eq!(incoming["challenge"]["id"], id.as_str());
    assert_eq!(incoming["challenge"]["direction"], "in");
    let (status, _) = a
        .api(
            "POST",
            &format!("/api/challenge/{id}/cancel"),
            Some(&alice.token),
            &[],
        )
        .await;
    assert_eq!(status, 200);
    let canceled = bob_events.next_of("challengeCanceled").await;
    assert_eq!(canceled["challenge"]["id"], id.as_str());

    // Made on A, declined on B: Alice's stream on A hears why.
    let (_, created) = a
        .api("POST", "/api/challenge/bob", Some(&alice.token), &[])
        .await;
    let id = created["challenge"]["id"].as_str().expect("id").to_owned();
    assert_eq!(
        bob_events.next_of("challenge").await["challenge"]["id"],
        id.as_str()
    );
    let (status, _) = b
        .api(
            "POST",
            &format!("/api/challenge/{id}/decline"),
            Some(&bob.token),
            &[("reason", "later")],
        )
        .await;
    assert_eq!(status, 200);
    let declined = alice_events.next_of("challengeDeclined").await;
    assert_eq!(declined["challenge"]["id"], id.as_str());
    assert_eq!(declined["challenge"]["declineReasonKey"], "later");

    // Made on A, accepted on B and on A at once: exactly one game starts.
    let (_, created) = a
        .api(
            "POST",
            "/api/challenge/bob",
            Some(&alice.token),
            &[("clock.limit", "600"), ("color", "white")],
        )
        .await;
    let id = created["challenge"]["id"].as_str().expect("id").to_owned();
    assert_eq!(
        bob_events.next_of("challenge").await["challenge"]["id"],
        id.as_str()
    );
    let accept = format!("/api/challenge/{id}/accept");
    let (on_a, on_b) = tokio::join!(
        a.api("POST", &accept, Some(&bob.token), &[]),
        b.api("POST", &accept, Some(&bob.token), &[]),
    );
    let mut statuses = [on_a.0, on_b.0];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 404], "one accept wins: {on_a:?} {on_b:?}");
    let bob_start = bob_events.next_of("gameStart").await;
    let game_id = bob_start["game"]["gameId"]
        .as_str()
        .expect("game id")
        .to_owned();
    assert_eq!(bob_start["game"]["color"], "black", "Alice chose white");
    assert_eq!(
        alice_events.next_of("gameStart").await["game"]["gameId"],
        game_id.as_str()
    );

    // Alice ends the game through A (abort: nobody has moved yet): Bob's
    // stream on B gets gameFinish.
    let (status, body) = a
        .api(
            "POST",
            &format!("/api/board/game/{game_id}/abort"),
            Some(&alice.token),
            &[],
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let finished = bob_events.next_of("gameFinish").await;
    assert_eq!(finished["game"]["gameId"], game_id.as_str());
    assert_eq!(finished["game"]["status"]["name"], "aborted");
}

/// How long the server lets an opponent stay away before `opponentGone`
/// (`OPPONENT_GONE_AFTER` in `lichess/games.rs`), less a margin for the
/// lower bound the tests check.
const GONE_AFTER_AT_LEAST: Duration = Duration::from_millis(4_500);

/// The next `opponentGone` line within `wait`, skipping others.
async fn opponent_gone_within(stream: &mut Ndjson, wait: Duration) -> Option<bool> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let line = stream.next_within(left).await?;
        if line["type"] == "opponentGone" {
            assert!(
                line.get("claimWinInSeconds").is_none(),
                "no claiming here: {line}"
            );
            return Some(line["gone"].as_bool().expect("gone is a boolean"));
        }
    }
}

on_both_backends!(
    a_game_stream_says_when_the_opponent_is_gone_and_back,
    |app: TestApp| async move {
        let (alice, bob, game_id) =
            board_game(&app, &[("clock.limit", "600"), ("color", "white")]).await;
        let path = format!("/api/board/game/stream/{game_id}");
        let mut alice_game = app.stream(&path, &alice.token).await;
        assert_eq!(alice_game.next().await["type"], "gameFull");
        let mut bob_game = app.stream(&path, &bob.token).await;
        assert_eq!(bob_game.next().await["type"], "gameFull");

        // Both connected: nobody is gone, not even after the grace period.
        assert_eq!(
            opponent_gone_within(&mut alice_game, Duration::from_secs(6)).await,
            None
        );

        // Bob's client goes away: Alice hears it, but only after a while.
        drop(bob_game);
        let left = tokio::time::Instant::now();
        assert_eq!(
            opponent_gone_within(&mut alice_game, Duration::from_secs(15)).await,
            Some(true)
        );
        assert!(
            left.elapsed() >= GONE_AFTER_AT_LEAST,
            "gone after {:?}: a page reload must not count",
            left.elapsed()
        );

        // Back through the web page this time: a socket counts as much as a stream.
        let bob_socket = app.socket(&game_id, Some(&bob.web)).await;
        assert_eq!(
            opponent_gone_within(&mut alice_game, Duration::from_secs(10)).await,
            Some(false)
        );

        // A reload (away for less than the grace period) says nothing.
        bob_socket.close().await;
        let _bob_socket = app.socket(&game_id, Some(&bob.web)).await;
        assert_eq!(
            opponent_gone_within(&mut alice_game, Duration::from_secs(6)).await,
            None
        );
    }
);

on_both_backends!(
    a_game_against_the_computer_never_says_the_opponent_is_gone,
    |app: TestApp| async move {
        let alice = app.api_player("Alice", &["board:play"]).await;
        let (status, body) = app
            .post(
                "/api/games/computer",
                &alice.web,
                json!({ "level": 1, "color": "white", "time_control": { "kind": "correspondence" } }),
            )
            .await;
        assert_eq!(status, 201, "{body}");
        let game_id = body["game_id"].as_str().expect("game id").to_owned();
        let mut game = app
            .stream(&format!("/api/board/game/stream/{game_id}"), &alice.token)
            .await;
        assert_eq!(game.next().await["type"], "gameFull");
        assert_eq!(
            opponent_gone_within(&mut game, Duration::from_secs(7)).await,
            None,
            "the computer has no connection and is never gone"
        );
    }
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_stream_hears_of_an_opponent_on_another_node() {
    let Some(a) = crate::helpers::spawn_app(crate::helpers::Backend::Postgres).await else {
        return;
    };
    let mut b = second_node(&a).await;
    let (alice, bob, game_id) = board_game(&a, &[("clock.limit", "600"), ("color", "white")]).await;
    let path = format!("/api/board/game/stream/{game_id}");
    // Alice on A first; Bob's node B loads the game afterwards and must
    // learn from A that Alice is there (it asks when it starts hosting it).
    let mut alice_game = a.stream(&path, &alice.token).await;
    assert_eq!(alice_game.next().await["type"], "gameFull");
    let mut bob_game = b.stream(&path, &bob.token).await;
    assert_eq!(bob_game.next().await["type"], "gameFull");
    let (alice_hears, bob_hears) = tokio::join!(
        opponent_gone_within(&mut alice_game, Duration::from_secs(6)),
        opponent_gone_within(&mut bob_game, Duration::from_secs(6)),
    );
    assert_eq!((alice_hears, bob_hears), (None, None), "both are connected");

    // Bob leaves B: Alice on A hears it; he comes back on B: she hears that.
    drop(bob_game);
    assert_eq!(
        opponent_gone_within(&mut alice_game, Duration::from_secs(15)).await,
        Some(true)
    );
    let mut bob_game = b.stream(&path, &bob.token).await;
    assert_eq!(bob_game.next().await["type"], "gameFull");
    assert_eq!(
        opponent_gone_within(&mut alice_game, Duration::from_secs(10)).await,
        Some(false)
    );

    // Alice leaves A: Bob on B hears it.
    drop(alice_game);
    assert_eq!(
        opponent_gone_within(&mut bob_game, Duration::from_secs(15)).await,
        Some(true)
    );

    // Alice is back on A, then node B stops with Bob's stream: whatever B
    // could or could not say on its way out, A hears that Bob is gone.
    let mut alice_game = a.stream(&path, &alice.token).await;
    assert_eq!(alice_game.next().await["type"], "gameFull");
    assert_eq!(
        opponent_gone_within(&mut alice_game, Duration::from_secs(6)).await,
        None,
        "Bob is still on B"
    );
    b.stop().await;
    drop(bob_game);
    assert_eq!(
        opponent_gone_within(&mut alice_game, Duration::from_secs(20)).await,
        Some(true)
    );
}

/// Forty plies with no repetition to speak of: every pawn two squares in
/// two steps, then each side's knights out and home again.
const FORTY_PLIES: [&str; 40] = [
    "a2a3", "a7a6", "b2b3", "b7b6", "c2c3", "c7c6", "d2d3", "d7d6", "e2e3", "e7e6", "f2f3", "f7f6",
    "g2g3", "g7g6", "h2h3", "h7h6", "a3a4", "a6a5", "b3b4", "b6b5", "c3c4", "c6c5", "d3d4", "d6d5",
    "e3e4", "e6e5", "f3f4", "f6f5", "g3g4", "g6g5", "h3h4", "h6h5", "b1c3", "b8c6", "g1f3", "g8f6",
    "c3b1", "c6b8", "f3g1", "f6g8",
];

on_both_backends!(
    a_game_stream_that_is_not_read_is_ended_not_buffered,
    |app: TestApp| async move {
        use axum::body::Body;
        use axum::extract::ConnectInfo;
        use futures_util::StreamExt;
        use tower::ServiceExt;

        let (alice, bob, game_id) = board_game(&app, &[("days", "1"), ("color", "white")]).await;
        let path = format!("/api/board/game/stream/{game_id}");

        // Bob's client opens its game stream and then reads nothing: through
        // the router itself, so no socket buffer reads on its behalf.
        let mut request = axum::http::Request::get(path.as_str())
            .header("authorization", format!("Bearer {}", bob.token))
            .body(Body::empty())
            .expect("a request");
        request
            .extensions_mut()
            .insert(ConnectInfo(std::net::SocketAddr::from((
                [127, 0, 0, 1],
                40_001,
            ))));
        let unread = app
            .router
            .clone()
            .oneshot(request)
            .await
            .expect("a response");
        assert_eq!(unread.status(), 200);

        // Forty moves: more changes than a game keeps for its streams.
        for (ply, uci) in FORTY_PLIES.iter().enumerate() {
            let token = if ply % 2 == 0 {
                &alice.token
            } else {
                &bob.token
            };
            let (status, body) = app
                .api(
                    "POST",
                    &format!("/api/board/game/{game_id}/move/{uci}"),
                    Some(token),
                    &[],
                )
                .await;
            assert_eq!(status, 200, "ply {ply} {uci}: {body}");
        }

        // Read at last: the stream ends instead of replaying what it missed
        // (the server kept nothing for it beyond the game's bounded broadcast).
        let mut body = unread.into_body().into_data_stream();
        let mut text = Vec::new();
        let ended = tokio::time::timeout(Duration::from_secs(10), async {
            while let Some(chunk) = body.next().await {
                text.extend_from_slice(&chunk.expect("a chunk"));
            }
        })
        .await;
        assert!(ended.is_ok(), "the lagging stream was ended by the server");
        let lines: Vec<Value> = String::from_utf8(text)
            .expect("utf-8")
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).expect("a json line"))
            .collect();
        assert_eq!(
            lines.first().map(|line| line["type"].clone()),
            Some(json!("gameFull"))
        );
        assert!(
            lines.len() < FORTY_PLIES.len(),
            "{} lines: the missed changes were not buffered for it",
            lines.len()
        );

        // Reconnecting gives the whole game at once.
        let mut again = app.stream(&path, &bob.token).await;
        let full = again.next().await;
        assert_eq!(full["type"], "gameFull");
        assert_eq!(full["state"]["moves"], FORTY_PLIES.join(" "));
    }
);

on_both_backends!(
    a_client_follows_its_challenge_by_the_challenge_id,
    |app: TestApp| async move {
        let scopes = ["challenge:write", "board:play"];
        let alice = app.api_player("Alice", &scopes).await;
        let bob = app.api_player("Bob", &scopes).await;
        // What scripts do: challenge, then stream the game by the
        // challenge's id once it is accepted, without an event stream.
        let (status, created) = app
            .api(
                "POST",
                &format!("/api/challenge/{}", bob.web.name),
                Some(&alice.token),
                &[
                    ("clock.limit", "300"),
                    ("clock.increment", "2"),
                    ("color", "white"),
                ],
            )
            .await;
        assert_eq!(status, 200, "{created}");
        let id = created["challenge"]["id"].as_str().expect("id").to_owned();
        let (status, body) = app
            .api(
                "POST",
                &format!("/api/challenge/{id}/accept"),
                Some(&bob.token),
                &[],
            )
            .await;
        assert_eq!(status, 200, "{body}");
        for player in [&alice, &bob] {
            let mut game = app
                .stream(&format!("/api/board/game/stream/{id}"), &player.token)
                .await;
            let full = game.next().await;
            assert_eq!(full["type"], "gameFull", "{full}");
            assert_eq!(full["id"], id.as_str(), "{full}");
        }
        let (status, body) = app
            .api(
                "POST",
                &format!("/api/board/game/{id}/move/e2e4"),
                Some(&alice.token),
                &[],
            )
            .await;
        assert_eq!((status, &body), (200, &json!({ "ok": true })), "{body}");
    }
);

on_both_backends!(
    rated_challenges_change_the_ratings_the_api_shows,
    |app: TestApp| async move {
        use chess_store::ratings::glicko2::{DEFAULT, rate_game};
        use chess_store::shown;
        let scopes = ["board:play", "challenge:write", "challenge:read"];
        let alice = app.api_player("Alice", &scopes).await;
        let bob = app.api_player("Bob", &scopes).await;
        let (_, account) = app
            .api("GET", "/api/account", Some(&alice.token), &[])
            .await;
        let perfs = account["perfs"].as_object().expect("perfs");
        assert_eq!(perfs.len(), 5, "{account}");
        assert_eq!(
            account["perfs"]["blitz"],
            json!({ "rating": 1500, "rd": 350, "games": 0, "prog": 0, "prov": true })
        );

        let mut alice_events = app.stream("/api/stream/event", &alice.token).await;
        let mut bob_events = app.stream("/api/stream/event", &bob.token).await;
        let game = app
            .api_game(
                &alice,
                &mut alice_events,
                &bob,
                &mut bob_events,
                &[
                    ("clock.limit", "300"),
                    ("color", "white"),
                    ("rated", "true"),
                ],
            )
            .await;
        let mut alice_game = app
            .stream(&format!("/api/board/game/stream/{game}"), &alice.token)
            .await;
        let full = alice_game.next().await;
        assert_eq!(full["rated"], true, "{full}");
        assert_eq!(full["white"]["rating"], 1500);
        assert_eq!(full["white"]["provisional"], true);
        for (player, uci) in [(&alice, "e2e4"), (&bob, "e7e5")] {
            let (status, body) = app
                .api(
                    "POST",
                    &format!("/api/board/game/{game}/move/{uci}"),
                    Some(&player.token),
                    &[],
                )
                .await;
            assert_eq!(status, 200, "{uci}: {body}");
        }
        let (status, _) = app
            .api(
                "POST",
                &format!("/api/board/game/{game}/resign"),
                Some(&bob.token),
                &[],
            )
            .await;
        assert_eq!(status, 200);
        let finish = alice_events.next_of("gameFinish").await;
        assert_eq!(finish["game"]["rated"], true);

        let (white_after, black_after) = rate_game(DEFAULT, DEFAULT, 1.0);
        let (_, account) = app
            .api("GET", "/api/account", Some(&alice.token), &[])
            .await;
        assert_eq!(
            account["perfs"]["blitz"]["rating"],
            shown(white_after.rating)
        );
        assert_eq!(account["perfs"]["blitz"]["games"], 1);
        let (_, account) = app.api("GET", "/api/account", Some(&bob.token), &[]).await;
        assert_eq!(
            account["perfs"]["blitz"]["rating"],
            shown(black_after.rating)
        );
        assert_eq!(account["perfs"]["bullet"]["games"], 0);
    }
);
