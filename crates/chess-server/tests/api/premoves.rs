//! Premoves: played at once after the opponent's move with the premover's
//! measured round trip charged, dropped when illegal, cleared on disconnect.

use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::{Relay, Socket, TestApp, clock, correspondence, play_moves};
use crate::on_both_backends;

/// The round trip the server measured for this socket (waits for a sample).
async fn measured_rtt(socket: &mut Socket) -> u64 {
    for attempt in 0..50 {
        socket.send(json!({ "type": "ping", "t": attempt })).await;
        let pong = socket.recv_type("pong").await;
        if let Some(rtt) = pong["rtt_ms"].as_u64() {
            return rtt;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the server never measured a round trip");
}

on_both_backends!(
    premove_is_played_instantly_with_rtt_charged,
    |app: TestApp| async move {
        let (white_guest, black_guest) = (app.guest().await, app.guest().await);
        let game_id = app
            .online_game(&white_guest, &black_guest, clock(180_000, 0))
            .await;
        let (mut white, mut black) = app.seat_both(&game_id, &white_guest, &black_guest).await;
        play_moves(&mut white, &mut black, &["e2e4", "e7e5"]).await;

        let rtt = measured_rtt(&mut black).await;
        black
            .send(json!({ "type": "premove", "uci": "b8c6" }))
            .await;
        let set = black.recv_type("premove").await;
        assert_eq!(set["premove"], json!({ "uci": "b8c6" }));
        assert_eq!(set["reason"], "set");

        white.play("g1f3", 2).await;
        // Black's premove follows at once as a move of its own.
        let reply = white.recv_event("move").await;
        let reply = if reply["event"]["uci"] == "g1f3" {
            white.recv_event("move").await
        } else {
            reply
        };
        assert_eq!(reply["event"]["uci"], "b8c6");
        assert_eq!(reply["event"]["premove"], true);
        assert_eq!(reply["turn"], "white");
        let played = black.recv_type("premove").await;
        assert_eq!(played["reason"], "played");
        assert_eq!(played["premove"], json!(null));
        let ack = black.recv_type("ack").await;
        assert_eq!(
            (ack["ply"].as_u64(), ack["uci"].as_str()),
            (Some(3), Some("b8c6"))
        );
        // Black's clock: the first move was free; this one cost exactly the
        // charge, the round trip measured when the premove was set (a Ping
        // landing in between may have updated the estimate: either value).
        let rtt_after = measured_rtt(&mut black).await;
        let black_ms = reply["clocks"]["black_ms"].as_u64().expect("clock");
        assert!(
            black_ms == 180_000 - rtt || black_ms == 180_000 - rtt_after,
            "black has {black_ms} ms, round trip {rtt} then {rtt_after} ms"
        );
    }
);

on_both_backends!(
    premove_that_became_illegal_is_dropped,
    |app: TestApp| async move {
        let (white_guest, black_guest) = (app.guest().await, app.guest().await);
        let game_id = app
            .online_game(&white_guest, &black_guest, correspondence())
            .await;
        let (mut white, mut black) = app.seat_both(&game_id, &white_guest, &black_guest).await;
        play_moves(&mut white, &mut black, &["e2e4", "d7d5"]).await;
        // Black plans dxe4; White takes the pawn first.
        black
            .send(json!({ "type": "premove", "uci": "d5e4" }))
            .await;
        assert_eq!(black.recv_type("premove").await["reason"], "set");
        white.play("e4d5", 2).await;
        let dropped = black.recv_type("premove").await;
        assert_eq!(dropped["reason"], "dropped_illegal");
        let state = black.hello().await;
        assert_eq!(state["turn"], "black");
        assert_eq!(state["moves"].as_array().map(Vec::len), Some(3));
        assert_eq!(state["premove"], json!(null));
    }
);

on_both_backends!(
    premove_is_cleared_when_its_player_disconnects,
    |app: TestApp| async move {
        let (white_guest, black_guest) = (app.guest().await, app.guest().await);
        let game_id = app
            .online_game(&white_guest, &black_guest, correspondence())
            .await;
        let (mut white, mut black) = app.seat_both(&game_id, &white_guest, &black_guest).await;
        play_moves(&mut white, &mut black, &["e2e4", "e7e5"]).await;
        black
            .send(json!({ "type": "premove", "uci": "b8c6" }))
            .await;
        assert_eq!(black.recv_type("premove").await["reason"], "set");
        black.close().await;
        // Give the server a moment to see the socket close.
        tokio::time::sleep(Duration::from_millis(300)).await;
        white.play("g1f3", 2).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut black = app.socket(&game_id, Some(&black_guest)).await;
        let state = black.hello().await;
        assert_eq!(state["premove"], json!(null));
        assert_eq!(state["turn"], "black", "the cleared premove was not played");
        assert_eq!(state["moves"].as_array().map(Vec::len), Some(3));
    }
);

on_both_backends!(
    a_connection_that_goes_silent_is_dropped_and_takes_its_premove_with_it,
    |app: TestApp| async move {
        // A phone that loses its signal sends no close frame: the server must
        // notice the silence itself.
        let mut settings = app.settings.clone();
        settings.ws_silence_timeout_ms = 2_000;
        let app = app.restart_with(settings).await;
        let relay = Relay::start(app.port).await;
        let (white, black) = (app.guest().await, app.guest().await);
        let game_id = app.online_game(&white, &black, correspondence()).await;
        let mut white_socket = app.socket(&game_id, Some(&white)).await;
        white_socket.hello().await;
        let mut black_socket = app.socket_through(&relay, &game_id, &black).await;
        black_socket.hello().await;
        play_moves(&mut white_socket, &mut black_socket, &["e2e4", "e7e5"]).await;
        black_socket
            .send(json!({ "type": "premove", "uci": "b8c6" }))
            .await;
        assert_eq!(black_socket.recv_type("premove").await["reason"], "set");

        relay.go_silent();
        // Keep White's socket read so that it answers the server's pings.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(6);
        while tokio::time::Instant::now() < deadline {
            white_socket.try_recv(Duration::from_millis(200)).await;
        }
        let state = app.state(&game_id, Some(&black)).await;
        assert_eq!(state["premove"], Value::Null, "{state}");
        white_socket.play("g1f3", 2).await;
        let after = app.state(&game_id, None).await;
        assert_eq!(
            after["moves"].as_array().map(Vec::len),
            Some(3),
            "the premove of a silent player was played: {after}"
        );
    }
);

on_both_backends!(
    a_premove_does_not_survive_a_server_restart,
    |app: TestApp| async move {
        let (white, black) = (app.guest().await, app.guest().await);
        let game_id = app.online_game(&white, &black, correspondence()).await;
        let (mut white_socket, mut black_socket) = app.seat_both(&game_id, &white, &black).await;
        play_moves(
            &mut white_socket,
            &mut black_socket,
            &["e2e4", "e7e5", "g1f3"],
        )
        .await;
        white_socket
            .send(json!({ "type": "premove", "uci": "f1c4" }))
            .await;
        assert_eq!(white_socket.recv_type("premove").await["reason"], "set");
        // The restart ends every connection; whether the server still hears
        // the close or not (a crash), the premove must not outlive it.
        let app = app.restart().await;
        drop(white_socket);
        drop(black_socket);
        let mut black_again = app.socket(&game_id, Some(&black)).await;
        let state = black_again.hello().await;
        assert_eq!(state["moves"].as_array().map(Vec::len), Some(3), "{state}");
        black_again.play("b8c6", 3).await;
        let after = app.state(&game_id, Some(&white)).await;
        assert_eq!(after["premove"], Value::Null, "{after}");
        assert_eq!(
            after["moves"].as_array().map(Vec::len),
            Some(4),
            "the premove was played for a player who never came back: {after}"
        );
    }
);

on_both_backends!(
    a_new_connection_of_the_player_starts_from_no_premove,
    |app: TestApp| async move {
        let (white_guest, black_guest) = (app.guest().await, app.guest().await);
        let game_id = app
            .online_game(&white_guest, &black_guest, clock(180_000, 0))
            .await;
        let (mut white, mut black) = app.seat_both(&game_id, &white_guest, &black_guest).await;
        play_moves(&mut white, &mut black, &["e2e4", "e7e5"]).await;
        black
            .send(json!({ "type": "premove", "uci": "b8c6" }))
            .await;
        assert_eq!(black.recv_type("premove").await["reason"], "set");

        // Black opens the game again (a reload, a second tab): the premove
        // belongs to the first connection and is void, here and there.
        let mut black_again = app.socket(&game_id, Some(&black_guest)).await;
        let state = black_again.hello().await;
        assert_eq!(state["premove"], json!(null), "{state}");
        let voided = black.recv_type("premove").await;
        assert_eq!(voided["reason"], "disconnected", "{voided}");

        // White's move is not answered by the old premove.
        white.play("g1f3", 2).await;
        let moved = black_again.recv_event("move").await;
        assert_eq!(moved["event"]["uci"], "g1f3");
        assert_eq!(moved["turn"], "black", "{moved}");
        let state = app.state(&game_id, None).await;
        assert_eq!(state["moves"].as_array().map(Vec::len), Some(3), "{state}");
    }
);

on_both_backends!(
    a_premove_nobody_is_connected_for_is_never_played,
    |app: TestApp| async move {
        let mut app = app;
        let (white_guest, black_guest) = (app.guest().await, app.guest().await);
        let game_id = app
            .online_game(&white_guest, &black_guest, clock(180_000, 0))
            .await;
        let (mut white, mut black) = app.seat_both(&game_id, &white_guest, &black_guest).await;
        play_moves(&mut white, &mut black, &["e2e4", "e7e5"]).await;
        white.close().await;
        black.close().await;
        app.stop().await;
        // A premove stored as if set through a node that died with its
        // connection: in the database, and no connection anywhere set it.
        {
            let store = chess_store::connect(&app.settings.database_url)
                .await
                .expect("the database");
            let id = game_id.parse().expect("a uuid");
            let mut row = store.game(id).await.expect("read").expect("stored");
            let mut state: Value = serde_json::from_str(&row.state).expect("json");
            state["state"]["premoves"]["black"] =
                json!({ "from": "b8", "to": "c6", "promotion": null, "charge_ms": 0 });
            row.state = state.to_string();
            store
                .update_game(&row, row.version, None, &[])
                .await
                .expect("the premove is stored");
            store.close().await;
        }
        let app = app.restart().await;

        let mut white = app.socket(&game_id, Some(&white_guest)).await;
        white.hello().await;
        white.play("g1f3", 2).await;
        let state = app.state(&game_id, None).await;
        assert_eq!(state["moves"].as_array().map(Vec::len), Some(3), "{state}");
        assert_eq!(state["turn"], "black", "the orphan premove was not played");

        // Black comes back: a new connection, no premove.
        let mut black = app.socket(&game_id, Some(&black_guest)).await;
        let state = black.hello().await;
        assert_eq!(state["premove"], json!(null), "{state}");
        assert_eq!(state["turn"], "black", "{state}");
    }
);
