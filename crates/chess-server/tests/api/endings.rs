//! Whole games between two guests, each ending its own way.

use serde_json::json;

use crate::helpers::{TestApp, correspondence, play_moves};
use crate::on_both_backends;

/// Two guests in a fresh correspondence game, both sockets synced.
async fn two_players(app: &TestApp) -> (String, crate::helpers::Socket, crate::helpers::Socket) {
    let (white, black) = (app.guest().await, app.guest().await);
    let game_id = app.online_game(&white, &black, correspondence()).await;
    let mut white_socket = app.socket(&game_id, Some(&white)).await;
    let mut black_socket = app.socket(&game_id, Some(&black)).await;
    let white_state = white_socket.hello().await;
    assert_eq!(white_state["seat"], "white");
    assert_eq!(white_state["status"], "playing");
    assert_eq!(white_state["dests"]["e2"], json!(["e3", "e4"]));
    let black_state = black_socket.hello().await;
    assert_eq!(black_state["seat"], "black");
    assert_eq!(black_state["dests"], json!({}), "black is not to move");
    (game_id, white_socket, black_socket)
}

on_both_backends!(checkmate, |app: TestApp| async move {
    let (game_id, mut white, mut black) = two_players(&app).await;
    play_moves(&mut white, &mut black, &["f2f3", "e7e5", "g2g4", "d8h4"]).await;
    let ended = white.recv_event("ended").await;
    assert_eq!(
        ended["event"]["result"],
        json!({ "winner": "black", "reason": "checkmate" })
    );
    assert_eq!(ended["status"], "finished");
    assert_eq!(ended["check"], "e1");
    let state = app.state(&game_id, None).await;
    let sans: Vec<&str> = state["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .filter_map(|m| m["san"].as_str())
        .collect();
    assert_eq!(sans, ["f3", "e5", "g4", "Qh4#"]);
    assert_eq!(state["result"]["reason"], "checkmate");
});

on_both_backends!(stalemate, |app: TestApp| async move {
    let (_game_id, mut white, mut black) = two_players(&app).await;
    // Sam Loyd's ten-move stalemate.
    let moves = [
        "e2e3", "a7a5", "d1h5", "a8a6", "h5a5", "h7h5", "h2h4", "a6h6", "a5c7", "f7f6", "c7d7",
        "e8f7", "d7b7", "d8d3", "b7b8", "d3h7", "b8c8", "f7g6", "c8e6",
    ];
    play_moves(&mut white, &mut black, &moves).await;
    let ended = black.recv_event("ended").await;
    assert_eq!(
        ended["event"]["result"],
        json!({ "winner": null, "reason": "stalemate" })
    );
});

on_both_backends!(threefold_repetition, |app: TestApp| async move {
    let (_game_id, mut white, mut black) = two_players(&app).await;
    let moves = [
        "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8",
    ];
    play_moves(&mut white, &mut black, &moves).await;
    let ended = white.recv_event("ended").await;
    assert_eq!(ended["event"]["result"]["reason"], "threefold_repetition");
});

on_both_backends!(draw_by_agreement, |app: TestApp| async move {
    let (game_id, mut white, mut black) = two_players(&app).await;
    play_moves(&mut white, &mut black, &["e2e4", "e7e5"]).await;
    white.send(json!({ "type": "draw_offer" })).await;
    let offered = black.recv_event("draw_offered").await;
    assert_eq!(offered["offers"]["draw"], "white");
    black.send(json!({ "type": "draw_accept" })).await;
    let ended = white.recv_event("ended").await;
    assert_eq!(
        ended["event"]["result"],
        json!({ "winner": null, "reason": "agreement" })
    );
    assert_eq!(app.state(&game_id, None).await["status"], "finished");
});

on_both_backends!(resignation, |app: TestApp| async move {
    let (_game_id, mut white, mut black) = two_players(&app).await;
    play_moves(&mut white, &mut black, &["e2e4", "e7e5"]).await;
    black.send(json!({ "type": "resign" })).await;
    let ended = white.recv_event("ended").await;
    assert_eq!(
        ended["event"]["result"],
        json!({ "winner": "white", "reason": "resignation" })
    );
    // Nothing more can be played.
    let error = white
        .expect_error(json!({ "type": "move", "uci": "g1f3", "ply": 2 }))
        .await;
    assert_eq!(error["code"], "game_over");
});

on_both_backends!(abort, |app: TestApp| async move {
    let (_game_id, mut white, mut black) = two_players(&app).await;
    white.play("e2e4", 0).await;
    black.send(json!({ "type": "abort" })).await;
    let ended = white.recv_event("ended").await;
    assert_eq!(
        ended["event"]["result"],
        json!({ "winner": null, "reason": "aborted" })
    );
});

on_both_backends!(rematch_swaps_colours, |app: TestApp| async move {
    let (white_guest, black_guest) = (app.guest().await, app.guest().await);
    let game_id = app
        .online_game(&white_guest, &black_guest, correspondence())
        .await;
    let (mut white, mut black) = app.seat_both(&game_id, &white_guest, &black_guest).await;
    play_moves(&mut white, &mut black, &["e2e4", "e7e5"]).await;
    white.send(json!({ "type": "resign" })).await;
    black.recv_event("ended").await;
    black.send(json!({ "type": "rematch_offer" })).await;
    white.recv_event("rematch_offered").await;
    white.send(json!({ "type": "rematch_accept" })).await;
    let started = black.recv_event("rematch_started").await;
    let new_id = started["event"]["game_id"]
        .as_str()
        .expect("new game id")
        .to_owned();
    for socket in [&mut white, &mut black] {
        let redirect = socket.recv_type("redirect").await;
        assert_eq!(redirect["game_id"], new_id.as_str());
        assert_eq!(redirect["url"], format!("/game/{new_id}"));
    }
    let rematch = app.state(&new_id, Some(&white_guest)).await;
    assert_eq!(rematch["seat"], "black", "colours swap");
    assert_eq!(rematch["players"]["white"]["id"], black_guest.id.as_str());
    assert_eq!(rematch["status"], "playing");
    assert_eq!(
        app.state(&game_id, None).await["rematch_game_id"],
        new_id.as_str()
    );
});

on_both_backends!(
    spectators_see_every_move_but_nothing_private,
    |app: TestApp| async move {
        let (white_guest, black_guest, watcher) =
            (app.guest().await, app.guest().await, app.guest().await);
        let game_id = app
            .online_game(&white_guest, &black_guest, correspondence())
            .await;
        let mut white = app.socket(&game_id, Some(&white_guest)).await;
        let mut black = app.socket(&game_id, Some(&black_guest)).await;
        let mut anonymous = app.socket(&game_id, None).await;
        let mut signed_in_watcher = app.socket(&game_id, Some(&watcher)).await;
        white.hello().await;
        black.hello().await;
        for spectator in [&mut anonymous, &mut signed_in_watcher] {
            let state = spectator.hello().await;
            assert_eq!(state["seat"], "none");
            assert_eq!(state["dests"], json!({}));
        }
        let moves = ["e2e4", "e7e5", "g1f3", "b8c6"];
        // Black prepares a premove during White's first turn: spectators must not see it.
        black
            .send(json!({ "type": "premove", "uci": "e7e5" }))
            .await;
        assert_eq!(black.recv_type("premove").await["reason"], "set");
        play_moves(&mut white, &mut black, &moves).await;
        for spectator in [&mut anonymous, &mut signed_in_watcher] {
            let mut seen = Vec::new();
            while seen.len() < moves.len() {
                let message = spectator.recv().await;
                assert_ne!(
                    message["type"], "premove",
                    "a spectator saw a premove: {message}"
                );
                if message["type"] == "event" {
                    assert_eq!(
                        message["dests"],
                        json!({}),
                        "a spectator saw legal destinations"
                    );
                    assert_eq!(message["premove_dests"], json!({}));
                    if message["event"]["kind"] == "move" {
                        seen.push(message["event"]["uci"].as_str().expect("uci").to_owned());
                    }
                }
            }
            assert_eq!(seen, moves);
            let error = spectator.expect_error(json!({ "type": "resign" })).await;
            assert_eq!(error["code"], "not_a_player");
        }
    }
);

on_both_backends!(
    one_person_holds_both_seats_and_takes_back,
    |app: TestApp| async move {
        let guest = app.guest().await;
        let game_id = app.create_local(&guest, correspondence()).await;
        let mut socket = app.socket(&game_id, Some(&guest)).await;
        let state = socket.hello().await;
        assert_eq!(state["seat"], "both");
        socket.play("e2e4", 0).await;
        let after = socket.recv_event("move").await;
        assert!(
            after["dests"]["e7"].is_array(),
            "the local player sees Black's moves: {after}"
        );
        socket.play("e7e5", 1).await;
        socket.send(json!({ "type": "takeback" })).await;
        let taken = socket.recv_event("takeback").await;
        assert_eq!(taken["event"]["moves"], 1);
        assert_eq!(taken["turn"], "black");
        assert_eq!(
            app.state(&game_id, None).await["moves"]
                .as_array()
                .map(Vec::len),
            Some(1)
        );
    }
);

on_both_backends!(pgn_export_has_moves_and_clocks, |app: TestApp| async move {
    let (white_guest, black_guest) = (app.guest().await, app.guest().await);
    let game_id = app
        .online_game(
            &white_guest,
            &black_guest,
            crate::helpers::clock(180_000, 2_000),
        )
        .await;
    let (mut white, mut black) = app.seat_both(&game_id, &white_guest, &black_guest).await;
    play_moves(&mut white, &mut black, &["e2e4", "e7e5", "g1f3"]).await;
    let (status, pgn) = app.get_text(&format!("/api/games/{game_id}/pgn")).await;
    assert_eq!(status, 200);
    assert!(
        pgn.contains(&format!("[White \"{}\"]", white_guest.name)),
        "{pgn}"
    );
    assert!(pgn.contains("[TimeControl \"180+2\"]"), "{pgn}");
    assert!(
        pgn.contains("1. e4 { [%clk 0:03:00] } 1... e5 { [%clk 0:03:00] } 2. Nf3 { [%clk 0:03:0"),
        "{pgn}"
    );
});
