//! Shedding load: past the node's limits (open sockets, the writer's queue,
//! creations in flight) the server refuses at once with `busy`, changes
//! nothing, and serves what it already holds.

use std::time::Duration;

use serde_json::{Value, json};
use tokio_tungstenite::tungstenite;

use crate::helpers::{Backend, Socket, TestApp, clock, play_moves};
use crate::on_both_backends;

/// Asserts a refused socket upgrade is `429 busy` with a `Retry-After`.
fn assert_busy_upgrade(refused: tungstenite::Error) {
    let tungstenite::Error::Http(response) = refused else {
        panic!("expected an HTTP refusal of the upgrade, got {refused}");
    };
    assert_eq!(response.status(), 429);
    let retry_after: u64 = response
        .headers()
        .get("retry-after")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse().ok())
        .expect("a Retry-After in seconds");
    assert!(retry_after >= 1);
    let body: Value =
        serde_json::from_slice(response.body().as_deref().unwrap_or_default()).expect("json");
    assert_eq!(body["error"]["code"], "busy", "{body}");
}

on_both_backends!(
    sockets_over_the_cap_are_refused_busy_and_the_open_ones_keep_playing,
    |app: TestApp| async move {
        let mut settings = app.settings.clone();
        settings.max_sockets = Some(2);
        let app = app.restart_with(settings).await;
        let (white, black) = (app.guest().await, app.guest().await);
        let game = app.online_game(&white, &black, clock(300_000, 0)).await;
        let (mut white_socket, mut black_socket) = app.seat_both(&game, &white, &black).await;

        // A third socket of any kind, a spectator's or the lobby's, is over the cap.
        let game_path = format!("/api/games/{game}/socket");
        for path in [game_path.as_str(), "/api/lobby/socket"] {
            let refused = app
                .try_socket(path, None, None)
                .await
                .expect_err("a socket over the cap is refused");
            assert_busy_upgrade(refused);
        }

        // The sockets already open are served as before.
        play_moves(&mut white_socket, &mut black_socket, &["e2e4", "e7e5"]).await;

        // A closed socket gives its place back (once the server has seen
        // the close): White comes back on a new socket and plays on.
        white_socket.close().await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        let mut white_socket = loop {
            match app.try_socket(&game_path, Some(&white), None).await {
                Ok(socket) => break socket,
                Err(refused) if tokio::time::Instant::now() < deadline => {
                    assert_busy_upgrade(refused);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(refused) => panic!("the closed socket's place never came back: {refused}"),
            }
        };
        white_socket.hello().await;
        white_socket.play("g1f3", 2).await;
        let state = app.state(&game, Some(&white)).await;
        assert_eq!(state["moves"].as_array().map(Vec::len), Some(3), "{state}");
    }
);

/// The answer to a command on `socket`: `ack`, or the `error`'s code;
/// `None` if nothing came within `wait`. Broadcast events are skipped.
async fn answer(socket: &mut Socket, wait: Duration) -> Option<String> {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let message = socket.try_recv(left).await?;
        match message["type"].as_str() {
            Some("ack") => return Some("ack".to_owned()),
            Some("error") => return Some(message["code"].as_str()?.to_owned()),
            _ => {}
        }
    }
}

/// Resends White's first move, as a client does after `busy` or
/// `unavailable`, until it is acknowledged (within a few seconds).
async fn resend_until_taken(socket: &mut Socket) {
    for _ in 0..50 {
        socket
            .send(json!({ "type": "move", "uci": "e2e4", "ply": 0 }))
            .await;
        match answer(socket, Duration::from_secs(15)).await.as_deref() {
            Some("ack") => return,
            Some("busy" | "unavailable") => tokio::time::sleep(Duration::from_millis(100)).await,
            other => panic!("a resent move got {other:?}"),
        }
    }
    panic!("a resent move was never taken");
}

/// Games played against a writer with room for one waiting change.
const GAMES: usize = 5;

on_both_backends!(
    a_full_writer_queue_refuses_moves_busy_and_stores_nothing_of_them,
    |app: TestApp| async move {
        let mut settings = app.settings.clone();
        settings.write_queue = Some(1);
        let app = app.restart_with(settings).await;
        let mut games = Vec::new();
        let mut sockets = Vec::new();
        for _ in 0..GAMES {
            let (white, black) = (app.guest().await, app.guest().await);
            let game = app.online_game(&white, &black, clock(300_000, 0)).await;
            let mut socket = app.socket(&game, Some(&white)).await;
            let version = socket.hello().await["version"].clone();
            games.push((game, white, version));
            sockets.push(socket);
        }

        let lock = app.write_lock().await;
        for socket in &mut sockets {
            socket
                .send(json!({ "type": "move", "uci": "e2e4", "ply": 0 }))
                .await;
        }
        // The first move to reach the writer waits on the lock, one more
        // waits in the queue: every other is refused at once.
        let mut answers = Vec::new();
        for socket in &mut sockets {
            answers.push(answer(socket, Duration::from_secs(2)).await);
        }
        let busy = answers
            .iter()
            .filter(|code| code.as_deref() == Some("busy"))
            .count();
        assert!(
            busy >= GAMES - 2,
            "at most two moves fit (one committing, one queued): {answers:?}"
        );
        for (answer, (game, white, version)) in answers.iter().zip(&games) {
            assert_ne!(answer.as_deref(), Some("ack"), "acked under the lock");
            if answer.as_deref() == Some("busy") {
                let state = app.state(game, Some(white)).await;
                assert_eq!(
                    state["moves"],
                    json!([]),
                    "a refused move was stored: {state}"
                );
                assert_eq!(&state["version"], version, "{state}");
            }
        }
        // A game's set-up waits in the same line: while it is full (one move
        // committing, one queued), a new guest is refused at once, nothing
        // stored, and told when to come back.
        if busy == GAMES - 2 {
            let response = app.request("GET", "/api/me", &[], None).await;
            assert_eq!(response.status().as_u16(), 503);
            assert!(response.headers().get("retry-after").is_some());
            assert!(response.headers().get("set-cookie").is_none());
            let body: Value = response.json().await.expect("a json body");
            assert_eq!(body["error"]["code"], "unavailable", "{body}");
        }

        lock.release().await;
        // The moves that got past the queue are answered once the database
        // is free: stored, or (SQLite's busy timeout ran out first) refused
        // as `unavailable`.
        for (answer_of, socket) in answers.iter_mut().zip(&mut sockets) {
            if answer_of.is_none() {
                *answer_of = answer(socket, Duration::from_secs(15)).await;
            }
            let code = answer_of.as_deref();
            assert!(
                matches!(code, Some("ack" | "busy" | "unavailable")),
                "unexpected answer {code:?}"
            );
            // A refusal means "send it again (shortly, for busy)": the resend
            // is played once. Other moves may still fill the one-change queue
            // for a moment, so a client resends until it is taken.
            if code != Some("ack") {
                resend_until_taken(socket).await;
            }
        }
        for (game, white, _) in &games {
            let state = app.state(game, Some(white)).await;
            let moves: Vec<&str> = state["moves"]
                .as_array()
                .expect("moves")
                .iter()
                .filter_map(|mv| mv["uci"].as_str())
                .collect();
            assert_eq!(moves, ["e2e4"], "{state}");
        }
    }
);

on_both_backends!(
    creations_over_the_limit_are_refused_busy_while_the_database_is_slow,
    |app: TestApp| async move {
        let mut settings = app.settings.clone();
        settings.max_concurrent_creations = 1;
        let app = std::sync::Arc::new(app.restart_with(settings).await);
        let (first, second) = (app.guest().await, app.guest().await);

        let lock = app.write_lock().await;
        // Two creations at once: one holds the only place while its insert
        // waits on the lock, the other is refused at once.
        let create = |guest: crate::helpers::Guest| {
            let app = std::sync::Arc::clone(&app);
            tokio::spawn(async move {
                let response = app
                    .request(
                        "POST",
                        "/api/games/local",
                        &[("cookie", guest.cookie.as_str())],
                        Some(json!({ "time_control": clock(60_000, 0) })),
                    )
                    .await;
                let status = response.status().as_u16();
                let retry_after = response.headers().get("retry-after").cloned();
                let body: Value = response.json().await.unwrap_or(Value::Null);
                (status, retry_after, body)
            })
        };
        // Both answers are awaited (the one holding the place gives up on the
        // lock after the 5 s busy wait). On a busy machine the holder can give
        // up before the other is even served, and then nothing was over the
        // limit: such a round proves nothing and is played again.
        let mut refused = None;
        let mut rounds = Vec::new();
        for _round in 0..3 {
            let (one, two) = (create(first.clone()), create(second.clone()));
            let answers = [one.await.expect("request"), two.await.expect("request")];
            rounds.push(format!(
                "{} {} / {} {}",
                answers[0].0, answers[0].2, answers[1].0, answers[1].2
            ));
            if let Some(answer) = answers.into_iter().find(|answer| answer.0 == 429) {
                refused = Some(answer);
                break;
            }
        }
        let refused = refused.unwrap_or_else(|| {
            panic!(
                "one of two creations at once was over the limit; the rounds' answers: {rounds:#?}"
            )
        });
        assert_eq!(refused.0, 429, "{:?}", refused.2);
        assert_eq!(refused.2["error"]["code"], "busy");
        assert!(refused.1.is_some(), "a Retry-After");
        lock.release().await;

        // Afterwards creations go through again (the waiting one finished
        // or gave up, and its place came back).
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            let (status, body) = app
                .post(
                    "/api/games/local",
                    &first,
                    json!({ "time_control": clock(60_000, 0) }),
                )
                .await;
            if status == 201 {
                break;
            }
            assert_eq!(status, 429, "{body}");
            assert!(
                tokio::time::Instant::now() < deadline,
                "never admitted again"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
);

/// A new pooled connection checks that it may write without waiting for the
/// write lock: while another connection holds the lock (a long commit), a
/// read that needs a new connection is answered at once. (The check used to
/// wait out SQLite's 5 s busy timeout, as long as a request waits for the
/// pool: such a read took 5 to 10 s, or was refused `503 unavailable`.)
#[tokio::test]
async fn a_new_connection_opens_while_another_holds_the_write_lock() {
    let app = crate::helpers::spawn_app(Backend::Sqlite)
        .await
        .expect("SQLite tests always run");
    let guest = app.guest().await;
    let game = app.create_local(&guest, clock(60_000, 0)).await;
    // Nothing idle left: the next read opens a new connection.
    app.store.close_idle_sqlite_connections().await;

    let lock = app.write_lock().await;
    let started = tokio::time::Instant::now();
    let (status, body) = app
        .get(&format!("/api/games/{game}"), Some(&guest.cookie))
        .await;
    let took = started.elapsed();
    lock.release().await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["game_id"], game.as_str(), "{body}");
    // Far below the busy timeout the old check waited out (a read takes
    // milliseconds), with room for a slow machine.
    assert!(took < Duration::from_secs(4), "the read took {took:?}");
}

on_both_backends!(
    a_node_that_cannot_keep_up_refuses_new_games_before_the_games_in_play,
    |app: TestApp| async move {
        let mut settings = app.settings.clone();
        settings.write_queue = Some(4);
        settings.metrics_listen = Some("127.0.0.1:0".parse().expect("an address"));
        let app = app.restart_with(settings).await;
        // Twice the queue's room: the writer's first batch takes what it
        // finds (and what comes within its linger), the rest must queue.
        let mut sockets = Vec::new();
        let mut games = Vec::new();
        for _ in 0..8 {
            let (white, black) = (app.guest().await, app.guest().await);
            let game = app.online_game(&white, &black, clock(300_000, 0)).await;
            let mut socket = app.socket(&game, Some(&white)).await;
            socket.hello().await;
            sockets.push(socket);
            games.push((game, black));
        }
        let creator = app.guest().await;

        // The database stops answering: the first move waits on it, the
        // next ones fill the writer's queue past half. Moves go one at a
        // time so that the first batch cannot swallow them all.
        let lock = app.write_lock().await;
        let mut filled = false;
        for socket in &mut sockets {
            socket
                .send(json!({ "type": "move", "uci": "e2e4", "ply": 0 }))
                .await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            let (_, text) = app.scrape_metrics().await;
            if crate::helpers::sample(&text, "chess_writer_queue_fill") >= Some(0.5) {
                filled = true;
                break;
            }
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !filled {
            let (_, text) = app.scrape_metrics().await;
            filled = crate::helpers::sample(&text, "chess_writer_queue_fill") >= Some(0.5);
            assert!(std::time::Instant::now() < deadline, "{text}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let refused = app
            .request(
                "POST",
                "/api/challenges",
                &[("cookie", &creator.cookie)],
                Some(json!({ "time_control": clock(180_000, 0), "color": "white" })),
            )
            .await;
        assert_eq!(
            refused.status().as_u16(),
            429,
            "a new game was still accepted"
        );
        assert_eq!(
            refused
                .headers()
                .get("retry-after")
                .and_then(|value| value.to_str().ok()),
            Some("5")
        );
        let body: Value = refused.json().await.expect("a json body");
        assert_eq!(body["error"]["code"], "busy", "{body}");
        // A player of a game in play still gets in (a reconnect, a reload):
        // the socket is admitted, and its state comes once the game's
        // owner has its commit back.
        let (game, black) = &games[0];
        let mut black_socket = app.socket(game, Some(black)).await;
        let (_, text) = app.scrape_metrics().await;
        assert!(
            crate::helpers::sample(&text, "chess_busy_refusals_total{limit=\"pressure\"}")
                >= Some(1.0),
            "{text}"
        );

        // The database answers again; the queue empties: new games are welcome.
        lock.release().await;
        black_socket.hello().await;
        let deadline = std::time::Instant::now() + Duration::from_secs(15);
        loop {
            let (status, body) = app
                .post(
                    "/api/challenges",
                    &creator,
                    json!({ "time_control": clock(180_000, 0), "color": "white" }),
                )
                .await;
            if status == 201 {
                break;
            }
            assert_eq!(status, 429, "{body}");
            assert!(std::time::Instant::now() < deadline, "still busy: {body}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
);
