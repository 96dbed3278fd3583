//! Arenas through lichess's tournament API (`docs/lichess-api.md`), on
//! both databases: creating one and every refusal, joining and
//! withdrawing, the organiser's terminate, and a running arena whose
//! director pairs two Board API players, scores their game from the stored
//! result and leaves out a game that ends after the arena.

use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::TestApp;
use crate::lichess::{Ndjson, Player, error_text};
use crate::on_both_backends;

const ORGANISER: [&str; 1] = ["tournament:write"];
const PLAYER: [&str; 3] = ["tournament:write", "board:play", "challenge:read"];

impl TestApp {
    /// `organiser` creates an arena with `form`: its JSON.
    async fn create_arena(&self, organiser: &Player, form: &[(&str, &str)]) -> Value {
        let (status, arena) = self
            .api("POST", "/api/tournament", Some(&organiser.token), form)
            .await;
        assert_eq!(status, 200, "{arena}");
        arena
    }

    async fn arena(&self, id: &str) -> Value {
        let (status, arena) = self
            .api("GET", &format!("/api/tournament/{id}"), None, &[])
            .await;
        assert_eq!(status, 200, "{arena}");
        arena
    }

    /// The NDJSON lines of `path`.
    async fn lines(&self, path: &str, accept: &str) -> Vec<Value> {
        let response = reqwest::Client::new()
            .get(format!("{}{path}", self.address))
            .header("accept", accept)
            .send()
            .await
            .expect("request");
        assert_eq!(response.status(), 200, "GET {path}");
        let text = response.text().await.expect("body");
        text.lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).expect("a json line"))
            .collect()
    }

    async fn act(&self, player: &Player, id: &str, action: &str) -> (u16, Value) {
        self.api(
            "POST",
            &format!("/api/tournament/{id}/{action}"),
            Some(&player.token),
            &[],
        )
        .await
    }
}

/// The `gameStart` of the next tournament game on `events`: its id and the
/// colour the stream's owner plays.
async fn next_game(events: &mut Ndjson) -> (String, String) {
    let started = loop {
        let line = events
            .next_within(Duration::from_secs(20))
            .await
            .expect("a gameStart within 20 s");
        if line["type"] == "gameStart" {
            break line;
        }
    };
    (
        started["game"]["gameId"].as_str().expect("id").to_owned(),
        started["game"]["color"].as_str().expect("color").to_owned(),
    )
}

on_both_backends!(
    arenas_are_created_with_lichess_fields_and_bad_ones_are_refused,
    |app: TestApp| async move {
        let alice = app.api_player("Alice", &ORGANISER).await;
        let created = app
            .create_arena(
                &alice,
                &[
                    ("name", "Club night"),
                    ("clockTime", "3"),
                    ("clockIncrement", "2"),
                    ("minutes", "45"),
                    ("waitMinutes", "10"),
                    ("rated", "false"),
                    ("berserkable", "true"),
                    ("conditions.maxRating.rating", "2000"),
                ],
            )
            .await;
        let id = created["id"].as_str().expect("id").to_owned();
        assert_eq!(id.len(), 8, "{created}");
        assert_eq!(created["fullName"], "Club night Arena");
        assert_eq!(created["createdBy"], "alice");
        assert_eq!(created["system"], "arena");
        assert_eq!(created["clock"], json!({ "limit": 180, "increment": 2 }));
        assert_eq!(created["minutes"], 45);
        assert_eq!(created["rated"], false);
        assert_eq!(created["status"], 10);
        assert_eq!(created["perf"]["key"], "blitz");
        assert_eq!(created["maxRating"]["rating"], 2000);
        let to_start = created["secondsToStart"].as_i64().expect("secondsToStart");
        assert!((595..=600).contains(&to_start), "{created}");
        assert_eq!(
            created["finishesAt"].as_i64().unwrap() - created["startsAt"].as_i64().unwrap(),
            45 * 60_000
        );
        // The same arena, read back from the store.
        let read = app.arena(&id).await;
        assert_eq!(read["fullName"], created["fullName"]);
        assert_eq!(read["standing"], json!({ "page": 1, "players": [] }));
        assert_eq!(read["isStarted"], false);

        let base = [
            ("clockTime", "3"),
            ("clockIncrement", "0"),
            ("minutes", "30"),
        ];
        let refused = |change: (&'static str, &'static str)| {
            let mut form: Vec<(&str, &str)> = base
                .iter()
                .copied()
                .filter(|(k, _)| *k != change.0)
                .collect();
            if !change.1.is_empty() {
                form.push(change);
            }
            form
        };
        for (change, names) in [
            (("clockTime", "1.7"), "clockTime"),
            (("clockTime", ""), "clockTime"),
            (("clockTime", "lots"), "clockTime"),
            (("clockIncrement", "90"), "clockIncrement"),
            (("clockIncrement", "1.5"), "clockIncrement"),
            (("minutes", "0"), "minutes"),
            (("minutes", "721"), "minutes"),
            (("waitMinutes", "61"), "waitMinutes"),
            (("rated", "maybe"), "rated"),
            (("name", "x"), "name"),
            (("name", "<b>bold</b>"), "name"),
            (("variant", "chess960"), "variant"),
            (("password", "secret"), "password"),
            (("description", "snacks"), "description"),
            (
                ("conditions.minRating.rating", "-5"),
                "conditions.minRating.rating",
            ),
        ] {
            let (status, body) = app
                .api(
                    "POST",
                    "/api/tournament",
                    Some(&alice.token),
                    &refused(change),
                )
                .await;
            assert_eq!(status, 400, "{change:?}: {body}");
            assert!(
                error_text(&body).contains(names),
                "{change:?} names {names}: {body}"
            );
        }
        let (status, body) = app
            .api(
                "POST",
                "/api/tournament",
                Some(&alice.token),
                &[
                    ("clockTime", "3"),
                    ("clockIncrement", "0"),
                    ("minutes", "30"),
                    ("conditions.teamMember.teamId", "no-such-club"),
                ],
            )
            .await;
        assert_eq!(status, 403, "only a club's leaders: {body}");

        let bob = app.api_player("Bob", &["board:play"]).await;
        let (status, body) = app
            .api("POST", "/api/tournament", Some(&bob.token), &base)
            .await;
        assert_eq!(status, 403, "tournament:write is needed: {body}");
        let (status, _) = app.api("POST", "/api/tournament", None, &base).await;
        assert_eq!(status, 401);

        let (status, body) = app.api("GET", "/api/tournament/nosuchid", None, &[]).await;
        assert_eq!((status, error_text(&body)), (404, "Tournament not found"));
        let (status, _) = app
            .api("GET", "/api/team/no-such-club/arena", None, &[])
            .await;
        assert_eq!(status, 404);
    }
);

on_both_backends!(
    players_join_and_withdraw_and_the_organiser_terminates,
    |app: TestApp| async move {
        let alice = app.api_player("Alice", &ORGANISER).await;
        let bob = app.api_player("Bob", &ORGANISER).await;
        let carol = app.api_player("Carol", &ORGANISER).await;
        let created = app
            .create_arena(
                &alice,
                &[
                    ("clockTime", "5"),
                    ("clockIncrement", "0"),
                    ("minutes", "60"),
                    ("waitMinutes", "30"),
                    ("conditions.minRating.rating", "1600"),
                ],
            )
            .await;
        assert_eq!(created["fullName"], "Alice Arena", "the default name");
        let floor_id = created["id"].as_str().unwrap().to_owned();
        let (status, body) = app.act(&bob, &floor_id, "join").await;
        assert_eq!(status, 400, "Bob's 1500 is under the floor: {body}");
        assert!(error_text(&body).contains("rating"), "{body}");

        let id = app
            .create_arena(
                &alice,
                &[
                    ("clockTime", "5"),
                    ("clockIncrement", "0"),
                    ("minutes", "60"),
                    ("waitMinutes", "30"),
                ],
            )
            .await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        for player in [&bob, &carol, &bob] {
            let (status, body) = app.act(player, &id, "join").await;
            assert_eq!((status, &body), (200, &json!({ "ok": true })));
        }
        let arena = app.arena(&id).await;
        assert_eq!(arena["nbPlayers"], 2, "joining twice counts once: {arena}");
        let names: Vec<&str> = arena["standing"]["players"]
            .as_array()
            .unwrap()
            .iter()
            .map(|line| line["name"].as_str().unwrap())
            .collect();
        assert_eq!(names.len(), 2);
        assert!(
            names.contains(&"Bob") && names.contains(&"Carol"),
            "{arena}"
        );
        for line in arena["standing"]["players"].as_array().unwrap() {
            assert_eq!(line["score"], 0);
            assert_eq!(line["rating"], 1500);
            assert_eq!(line["sheet"]["scores"], "");
        }

        let (status, _) = app.act(&carol, &id, "withdraw").await;
        assert_eq!(status, 200);
        let (status, body) = app.act(&carol, &id, "withdraw").await;
        assert_eq!(status, 400, "not in it any more: {body}");
        assert_eq!(app.arena(&id).await["nbPlayers"], 1);

        let (status, body) = app.act(&bob, &id, "terminate").await;
        assert_eq!(status, 403, "only the organiser: {body}");
        let (status, _) = app.act(&alice, &id, "terminate").await;
        assert_eq!(status, 200);
        let over = app.arena(&id).await;
        assert_eq!(over["status"], 30, "{over}");
        assert_eq!(over["isFinished"], true);
        assert_eq!(over["winner"]["name"], "Bob", "the only player: {over}");
        let (status, body) = app.act(&carol, &id, "join").await;
        assert_eq!(status, 400, "it is over: {body}");
        let (status, _) = app.act(&bob, "nosuchid", "join").await;
        assert_eq!(status, 404);
    }
);

on_both_backends!(
    a_running_arena_pairs_its_players_and_scores_the_stored_games,
    |app: TestApp| async move {
        let alice = app.api_player("Alice", &PLAYER).await;
        let bob = app.api_player("Bob", &PLAYER).await;
        let mut alice_events = app.stream("/api/stream/event", &alice.token).await;
        let mut bob_events = app.stream("/api/stream/event", &bob.token).await;
        let id = app
            .create_arena(
                &alice,
                &[
                    ("name", "Lunch"),
                    ("clockTime", "3"),
                    ("clockIncrement", "0"),
                    ("minutes", "20"),
                    ("waitMinutes", "0"),
                ],
            )
            .await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        for player in [&alice, &bob] {
            assert_eq!(app.act(player, &id, "join").await.0, 200);
        }
        // The director starts the arena and pairs the two within a tick or two.
        let (game, alice_color) = next_game(&mut alice_events).await;
        let (bob_game, bob_color) = next_game(&mut bob_events).await;
        assert_eq!(bob_game, game);
        assert_ne!(alice_color, bob_color);
        let (white, black) = if alice_color == "white" {
            (&alice, &bob)
        } else {
            (&bob, &alice)
        };
        assert_eq!(app.arena(&id).await["status"], 20);
        // A tournament game is played: no abort.
        let (status, _) = app
            .api(
                "POST",
                &format!("/api/board/game/{game}/abort"),
                Some(&white.token),
                &[],
            )
            .await;
        assert_eq!(status, 400, "tournament games cannot be aborted");
        // Black berserks: half the base time, once.
        let berserk = format!("/api/board/game/{game}/berserk");
        let (status, body) = app.api("POST", &berserk, Some(&black.token), &[]).await;
        assert_eq!(status, 200, "{body}");
        let (status, body) = app.api("POST", &berserk, Some(&black.token), &[]).await;
        assert_eq!(status, 400, "once: {body}");
        let state = app.state(&game, None).await;
        assert_eq!(state["mandatory"], true, "{state}");
        assert_eq!(state["berserk"], json!({ "white": false, "black": true }));
        assert_eq!(state["clocks"]["black_ms"], 90_000, "{state}");
        for (player, uci) in [(white, "e2e4"), (black, "e7e5")] {
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
                Some(&white.token),
                &[],
            )
            .await;
        assert_eq!(status, 200);

        // The standings come from the stored game: the winner has 2.
        let results = app
            .lines(&format!("/api/tournament/{id}/results"), "*/*")
            .await;
        assert_eq!(results.len(), 2, "{results:?}");
        assert_eq!(results[0]["username"], black.web.name);
        assert_eq!(results[0]["rank"], 1);
        assert_eq!(results[0]["score"], 2);
        assert_eq!(results[1]["username"], white.web.name);
        assert_eq!(results[1]["score"], 0);
        // Python clients (berserk) send booleans as `True` and `False`.
        for (query, with_sheet) in [
            ("sheet=True", true),
            ("sheet=False", false),
            ("sheet=true", true),
        ] {
            let lines = app
                .lines(&format!("/api/tournament/{id}/results?{query}"), "*/*")
                .await;
            assert_eq!(
                lines[0]["sheet"].is_object(),
                with_sheet,
                "{query}: {lines:?}"
            );
        }
        let standing = &app.arena(&id).await["standing"]["players"];
        assert_eq!(standing[0]["sheet"]["scores"], "2", "{standing}");
        assert_eq!(standing[1]["sheet"]["scores"], "0", "{standing}");
        let games = app
            .lines(
                &format!("/api/tournament/{id}/games"),
                "application/x-ndjson",
            )
            .await;
        assert_eq!(games.len(), 1, "{games:?}");
        assert_eq!(games[0]["id"], game);
        assert_eq!(games[0]["status"], "resign");
        assert_eq!(games[0]["winner"], "black");
        assert_eq!(games[0]["moves"], "e4 e5");

        // Free again, the two are paired again (with only two players in
        // the arena a rematch is the only pairing there is).
        let (second, _) = next_game(&mut alice_events).await;
        assert_ne!(second, game);
        assert_eq!(next_game(&mut bob_events).await.0, second);
        // The arena ends; the game still running then does not count.
        assert_eq!(app.act(&alice, &id, "terminate").await.0, 200);
        assert_eq!(app.arena(&id).await["status"], 30);
        let exported = app
            .lines(
                &format!("/api/tournament/{id}/games"),
                "application/x-ndjson",
            )
            .await;
        assert_eq!(exported.len(), 1, "the running game is not exported");
        let (status, body) = app
            .api(
                "POST",
                &format!("/api/board/game/{second}/resign"),
                Some(&alice.token),
                &[],
            )
            .await;
        assert_eq!(
            status, 200,
            "a tournament game may be resigned at once: {body}"
        );
        let after = app
            .lines(&format!("/api/tournament/{id}/results"), "*/*")
            .await;
        assert_eq!(
            after, results,
            "a game ended after the arena counts nothing"
        );
        let over = app.arena(&id).await;
        assert_eq!(over["winner"]["name"], black.web.name);
        // Each player's page lists the arena with their place in it.
        let (status, played) = app
            .get(
                &format!("/api/players/{}/tournaments", black.web.name),
                None,
            )
            .await;
        assert_eq!(status, 200, "{played}");
        assert_eq!(played["tournaments"][0]["id"], id.as_str());
        assert_eq!(played["tournaments"][0]["rank"], 1);
        assert_eq!(played["tournaments"][0]["score"], 2);
        let (_, played) = app
            .get(
                &format!("/api/players/{}/tournaments", white.web.name),
                None,
            )
            .await;
        assert_eq!(played["tournaments"][0]["rank"], 2);
        let (status, _) = app.get("/api/players/nobody/tournaments", None).await;
        assert_eq!(status, 404);
        assert_eq!(over["podium"][0]["nb"]["game"], 1, "{over}");
        assert_eq!(
            over["podium"][0]["nb"]["berserk"], 1,
            "the berserk is read from the stored game: {over}"
        );
    }
);

on_both_backends!(
    the_web_lists_arenas_and_takes_a_paired_player_to_the_game,
    |app: TestApp| async move {
        let (status, lists) = app.get("/api/arenas", None).await;
        assert_eq!(status, 200, "{lists}");
        assert_eq!(
            lists,
            json!({ "running": [], "upcoming": [], "finished": [] })
        );

        let guest = app.guest().await;
        let form = json!({ "clockTime": 3, "clockIncrement": 0, "minutes": 30, "waitMinutes": 0 });
        let (status, body) = app.post("/api/arenas", &guest, form.clone()).await;
        assert_eq!(status, 401, "guests do not organise: {body}");
        assert_eq!(body["error"]["code"], "not_signed_in");

        let alice = app.sign_up(&app.guest().await, "Alice").await;
        let bob = app.sign_up(&app.guest().await, "Bob").await;
        let (status, body) = app
            .post(
                "/api/arenas",
                &alice,
                json!({ "clockTime": 1.7, "clockIncrement": 0, "minutes": 30 }),
            )
            .await;
        assert_eq!(status, 422, "{body}");
        assert_eq!(body["error"]["code"], "bad_settings");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("clockTime")
        );
        let (status, lists) = app.get("/api/arenas", None).await;
        assert_eq!(
            (status, &lists["upcoming"]),
            (200, &json!([])),
            "nothing stored"
        );

        let (status, created) = app.post("/api/arenas", &alice, form).await;
        assert_eq!(status, 201, "{created}");
        let id = created["id"].as_str().unwrap().to_owned();
        assert_eq!(created["full_name"], "Alice Arena");
        assert_eq!(created["clock"], json!({ "base_s": 180, "increment_s": 0 }));
        let (status, page) = app.get_text(&format!("/tournament/{id}")).await;
        assert_eq!(status, 200);
        assert!(page.contains("tournament.js"), "the arena page");
        assert_eq!(app.get_text("/tournament/nosuchid").await.0, 404);

        for player in [&alice, &bob] {
            let (status, body) = app
                .send(
                    "POST",
                    &format!("/api/arenas/{id}/join"),
                    Some(&player.cookie),
                    None,
                )
                .await;
            assert_eq!(status, 204, "{body}");
        }
        // Both are paired by the director: each sees the same game as theirs.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        let games = loop {
            let (_, a) = app
                .get(&format!("/api/arenas/{id}"), Some(&alice.cookie))
                .await;
            let (_, b) = app
                .get(&format!("/api/arenas/{id}"), Some(&bob.cookie))
                .await;
            if a["me"]["game_id"].is_string() && b["me"]["game_id"].is_string() {
                assert_eq!(a["status"], "started");
                assert_eq!(a["me"]["joined"], true);
                assert_eq!(a["me"]["organiser"], true);
                assert_eq!(b["me"]["organiser"], false);
                break (a["me"]["game_id"].clone(), b["me"]["game_id"].clone());
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "paired within 20 s: {a}"
            );
            tokio::time::sleep(Duration::from_millis(300)).await;
        };
        assert_eq!(games.0, games.1);
        let game_id = games.0.as_str().unwrap();
        let state = app.state(game_id, Some(&alice)).await;
        assert_eq!(state["game_id"], game_id, "{state}");
        assert_ne!(state["seat"], "none", "Alice holds a seat: {state}");

        let (_, view) = app.get(&format!("/api/arenas/{id}"), None).await;
        assert!(view.get("me").is_none(), "no session, no own state");
        assert_eq!(view["standings"]["lines"].as_array().unwrap().len(), 2);
        assert_eq!(view["standings"]["pages"], 1);
        let (_, lists) = app.get("/api/arenas", None).await;
        assert_eq!(lists["running"][0]["id"], id.as_str());
        assert_eq!(lists["running"][0]["players"], 2);

        let (status, body) = app
            .send(
                "POST",
                &format!("/api/arenas/{id}/terminate"),
                Some(&bob.cookie),
                None,
            )
            .await;
        assert_eq!(status, 403, "{body}");
        assert_eq!(body["error"]["code"], "not_the_organiser");
        let (status, _) = app
            .send(
                "POST",
                &format!("/api/arenas/{id}/withdraw"),
                Some(&bob.cookie),
                None,
            )
            .await;
        assert_eq!(status, 204);
        let (_, view) = app
            .get(&format!("/api/arenas/{id}"), Some(&bob.cookie))
            .await;
        assert_eq!(view["me"]["withdrawn"], true);
        let (status, _) = app
            .send(
                "POST",
                &format!("/api/arenas/{id}/terminate"),
                Some(&alice.cookie),
                None,
            )
            .await;
        assert_eq!(status, 204);
        let (_, view) = app.get(&format!("/api/arenas/{id}"), None).await;
        assert_eq!(view["status"], "finished");
        assert_eq!(view["podium"].as_array().unwrap().len(), 2);
        let (status, body) = app
            .send(
                "POST",
                &format!("/api/arenas/{id}/join"),
                Some(&bob.cookie),
                None,
            )
            .await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (409, &json!("tournament_over"))
        );
    }
);

on_both_backends!(
    leaving_a_running_arena_is_a_pause_that_keeps_the_score,
    |app: TestApp| async move {
        let alice = app.api_player("Alice", &ORGANISER).await;
        let bob = app.api_player("Bob", &ORGANISER).await;
        let form = [
            ("clockTime", "3"),
            ("clockIncrement", "0"),
            ("minutes", "30"),
            ("waitMinutes", "0"),
        ];
        let id = app.create_arena(&alice, &form).await["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let (status, _) = app.act(&bob, &id, "join").await;
        assert_eq!(status, 200);
        // The director starts it within a tick or two.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while app.arena(&id).await["status"] != 20 {
            assert!(
                std::time::Instant::now() < deadline,
                "the arena never started"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let bob_row = |players: Vec<chess_store::tournaments::TournamentPlayer>| {
            players
                .into_iter()
                .find(|player| player.username == "Bob")
                .expect("Bob is in it")
        };
        let (status, _) = app.act(&bob, &id, "withdraw").await;
        assert_eq!(status, 200);
        let paused = bob_row(app.store.tournament_players(&id).await.expect("players"));
        assert!(paused.withdrawn, "out of the pool");
        assert_eq!(paused.pauses.count, 1, "{paused:?}");
        let (at, until) = (
            paused.pauses.last_at.expect("when"),
            paused.pauses.until.expect("until"),
        );
        assert_eq!(until - at, 10_000, "the first pause waits 10 s: {paused:?}");
        let arena = app.arena(&id).await;
        let line = &arena["standing"]["players"][0];
        assert_eq!(
            (&line["name"], &line["withdraw"]),
            (&json!("Bob"), &json!(true))
        );

        // Joining again: in, and back in the pool once the pause is over.
        let (status, _) = app.act(&bob, &id, "join").await;
        assert_eq!(status, 200);
        let back = bob_row(app.store.tournament_players(&id).await.expect("players"));
        assert!(!back.withdrawn);
        assert_eq!(back.pauses, paused.pauses, "the pause still holds");
        // A second pause waits as long as the rule says for the second.
        let (status, _) = app.act(&bob, &id, "withdraw").await;
        assert_eq!(status, 200);
        let again = bob_row(app.store.tournament_players(&id).await.expect("players"));
        assert_eq!(again.pauses.count, 2, "{again:?}");
    }
);
