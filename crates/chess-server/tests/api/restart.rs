//! The server stopped in the middle of games and started again on the same
//! database: acknowledged moves are there, clocks kept running, a game whose
//! time ran out meanwhile is a timeout, and clients carry on.

use std::time::Duration;

use serde_json::{Value, json};

use chess_server::startup::{Application, StartupError};
use chess_store::StoreError;

use crate::helpers::{Backend, TestApp, clock, correspondence, play_moves, spawn_app};
use crate::on_both_backends;

on_both_backends!(restart_mid_games, |app: TestApp| async move {
    let (alice, bob) = (app.guest().await, app.guest().await);
    let slow = app.online_game(&alice, &bob, correspondence()).await;
    let timed = app.online_game(&alice, &bob, clock(180_000, 0)).await;
    let doomed = app.online_game(&alice, &bob, clock(15_000, 0)).await;
    for game_id in [&slow, &timed, &doomed] {
        let mut white = app.socket(game_id, Some(&alice)).await;
        let mut black = app.socket(game_id, Some(&bob)).await;
        white.hello().await;
        black.hello().await;
        play_moves(&mut white, &mut black, &["e2e4", "e7e5", "g1f3"]).await;
    }
    let before = app.state(&timed, None).await;
    let black_before = before["clocks"]["black_ms"].as_u64().expect("clock");

    let stopped_at = std::time::Instant::now();
    let mut app = app;
    app.stop().await;
    // Long enough for the 15 s game's Black clock to run out while down.
    tokio::time::sleep(Duration::from_millis(15_500)).await;
    let app = app.restart().await;
    let down_ms = u64::try_from(stopped_at.elapsed().as_millis()).expect("ms");

    for game_id in [&slow, &timed, &doomed] {
        let state = app.state(game_id, None).await;
        let ucis: Vec<&str> = state["moves"]
            .as_array()
            .expect("moves")
            .iter()
            .filter_map(|m| m["uci"].as_str())
            .collect();
        assert_eq!(ucis, ["e2e4", "e7e5", "g1f3"], "acknowledged moves survive");
    }
    let doomed_state = app.state(&doomed, None).await;
    assert_eq!(
        doomed_state["result"],
        json!({ "winner": "white", "reason": "timeout" })
    );
    let timed_state = app.state(&timed, None).await;
    assert_eq!(timed_state["status"], "playing");
    let black_now = timed_state["clocks"]["black_ms"].as_u64().expect("clock");
    assert!(
        black_now <= black_before - down_ms + 50,
        "the clock kept running: {black_before} -> {black_now} after {down_ms} ms down"
    );

    // Clients reconnect and carry on.
    let mut white = app.socket(&slow, Some(&alice)).await;
    let mut black = app.socket(&slow, Some(&bob)).await;
    let resumed = black.hello().await;
    assert_eq!(resumed["seat"], "black");
    assert_eq!(resumed["turn"], "black");
    white.hello().await;
    black.play("b8c6", 3).await;
    white.play("f1b5", 4).await;
    assert_eq!(
        app.state(&slow, None).await["moves"]
            .as_array()
            .map(Vec::len),
        Some(5)
    );
});

on_both_backends!(
    reconnect_gets_exactly_the_missed_events,
    |app: TestApp| async move {
        let (alice, bob) = (app.guest().await, app.guest().await);
        let game_id = app.online_game(&alice, &bob, correspondence()).await;
        let mut white = app.socket(&game_id, Some(&alice)).await;
        let mut black = app.socket(&game_id, Some(&bob)).await;
        white.hello().await;
        let seen = black.hello().await["version"].as_u64().expect("version");
        black.close().await;
        white.play("e2e4", 0).await;
        let mut black = app.socket(&game_id, Some(&bob)).await;
        black
            .send(json!({ "type": "hello", "version": seen }))
            .await;
        let missed = black.recv().await;
        assert_eq!(missed["type"], "event", "{missed}");
        assert_eq!(missed["event"]["uci"], "e2e4");
        assert_eq!(missed["version"], seen + 1);
        assert!(
            missed["dests"]["e7"].is_array(),
            "black to move sees its moves"
        );
        // A retried move (same ply, same move) gets the same acknowledgement.
        let first = black.play("e7e5", 1).await;
        let again = black.play("e7e5", 1).await;
        assert_eq!(first, again);
        assert_eq!(
            app.state(&game_id, None).await["moves"]
                .as_array()
                .map(Vec::len),
            Some(2)
        );
    }
);

/// Two nodes on one Postgres database: the row is the truth, each node's
/// game a cache; the stale node's write fails its compare-and-set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_loses_the_race_reloads() {
    let Some(app) = spawn_app(Backend::Postgres).await else {
        return;
    };
    let other = crate::helpers::start(app.settings.clone(), app.backend).await;
    let (alice, bob) = (app.guest().await, app.guest().await);
    let game_id = app.online_game(&alice, &bob, correspondence()).await;
    // Both nodes cache the game.
    app.state(&game_id, None).await;
    other.state(&game_id, None).await;

    let mut white_here = app.socket(&game_id, Some(&alice)).await;
    white_here.hello().await;
    white_here.play("e2e4", 0).await;

    // White, on the stale node, tries another first move: the stale game
    // accepts it, the compare-and-set refuses it, the node reloads and the
    // retry on the fresh game says why (ply 0 was played there).
    let mut white_there = other.socket(&game_id, Some(&alice)).await;
    // No `hello` (it would refresh the cache first): straight to the move.
    let error = white_there
        .expect_error(json!({ "type": "move", "uci": "d2d4", "ply": 0 }))
        .await;
    assert_eq!(error["code"], "wrong_ply", "{error}");

    // Black's move on the other node is played on the reloaded game.
    let mut black_there = other.socket(&game_id, Some(&bob)).await;
    black_there.hello().await;
    black_there.play("e7e5", 1).await;
    let ucis: Vec<Value> = app.state(&game_id, None).await["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| m["uci"].clone())
        .collect();
    assert_eq!(ucis, [json!("e2e4"), json!("e7e5")]);
}

/// SQLite serves one node (its nodes would never hear of each other's
/// moves): a second server on the same file is refused at start, saying
/// why, while the first goes on serving; once the first has stopped, a
/// server starts on the file again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_on_an_sqlite_file_is_refused() {
    let Some(app) = spawn_app(Backend::Sqlite).await else {
        return;
    };
    let (alice, bob) = (app.guest().await, app.guest().await);
    let game_id = app.online_game(&alice, &bob, correspondence()).await;

    let refused = Application::build(app.settings.clone())
        .await
        .expect_err("a second server on the same SQLite file");
    assert!(
        matches!(refused, StartupError::Store(StoreError::InUse(_))),
        "{refused}"
    );
    let message = refused.to_string();
    assert!(
        message.contains("another server") && message.contains("Postgres"),
        "{message}"
    );

    let mut white = app.socket(&game_id, Some(&alice)).await;
    white.hello().await;
    white.play("e2e4", 0).await;
    drop(white);

    let app = app.restart().await;
    let moves = app.state(&game_id, None).await["moves"].clone();
    assert_eq!(moves.as_array().map(Vec::len), Some(1), "{moves}");
}

on_both_backends!(
    shutdown_never_loses_an_acknowledged_move,
    |app: TestApp| async move {
        let guest = app.guest().await;
        let game_id = app.create_local(&guest, correspondence()).await;
        let mut socket = app.socket(&game_id, Some(&guest)).await;
        socket.hello().await;
        socket.play("e2e4", 0).await;
        // A move in flight while the server is told to stop.
        socket
            .send(json!({ "type": "move", "uci": "e7e5", "ply": 1 }))
            .await;
        let mut app = app;
        app.stop().await;
        let mut acknowledged = false;
        while let Some(message) = socket.try_recv(std::time::Duration::from_secs(2)).await {
            acknowledged |= message["type"] == "ack" && message["uci"] == "e7e5";
        }
        let app = app.restart().await;
        let moves = app.state(&game_id, None).await["moves"].clone();
        let stored: Vec<&str> = moves
            .as_array()
            .expect("moves")
            .iter()
            .filter_map(|m| m["uci"].as_str())
            .collect();
        if acknowledged {
            assert_eq!(stored, ["e2e4", "e7e5"], "an acknowledged move was lost");
        } else {
            assert!(
                stored == ["e2e4"] || stored == ["e2e4", "e7e5"],
                "{stored:?}"
            );
        }
    }
);
