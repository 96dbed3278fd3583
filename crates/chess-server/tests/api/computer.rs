//! Games against the computer over the WebSocket.

use serde_json::{Value, json};

use crate::helpers::{Socket, TestApp, correspondence};
use crate::on_both_backends;

/// Plays the first legal move the server offers (a queen on promotion).
/// `None` when the reply is an error other than a missing promotion piece.
async fn play_first_legal(socket: &mut Socket, dests: &Value, ply: u32) -> bool {
    let Some((from, targets)) = dests.as_object().and_then(|d| d.iter().next()) else {
        return false;
    };
    let to = targets[0].as_str().expect("square");
    for uci in [format!("{from}{to}"), format!("{from}{to}q")] {
        socket
            .send(json!({ "type": "move", "uci": uci, "ply": ply }))
            .await;
        loop {
            let message = socket.recv().await;
            match message["type"].as_str() {
                Some("ack") => return true,
                Some("error") if message["code"] == "illegal_move" => break,
                Some("error") => panic!("move refused: {message}"),
                _ => {}
            }
        }
    }
    false
}

on_both_backends!(
    a_whole_game_against_the_computer,
    |app: TestApp| async move {
        let guest = app.guest().await;
        let (status, body) = app
            .post(
                "/api/games/computer",
                &guest,
                json!({ "level": 1, "color": "black", "time_control": correspondence() }),
            )
            .await;
        assert_eq!(status, 201, "{body}");
        let game_id = body["game_id"].as_str().expect("game id").to_owned();
        let mut socket = app.socket(&game_id, Some(&guest)).await;
        let mut state = socket.hello().await;
        assert_eq!(state["seat"], "black");
        // The computer plays White: wait for its first move unless it is already there.
        let mut last = if state["moves"].as_array().is_some_and(|m| m.is_empty()) {
            socket.recv_event("move").await
        } else {
            state.clone()
        };
        let mut plies = 0;
        loop {
            if last["status"] == "finished" || state["status"] == "finished" {
                break;
            }
            assert!(plies < 1_000, "the game never ended");
            let ply = u32::try_from(
                app.state(&game_id, None).await["moves"]
                    .as_array()
                    .map_or(0, Vec::len),
            )
            .expect("ply");
            assert!(
                play_first_legal(&mut socket, &last["dests"], ply).await,
                "no move to play: {last}"
            );
            plies += 2;
            // The computer's answer, or the end.
            loop {
                let message = socket.recv_type("event").await;
                if message["status"] == "finished" {
                    last = message;
                    break;
                }
                if message["event"]["kind"] == "move" && message["event"]["color"] == "white" {
                    last = message;
                    break;
                }
            }
            state = json!({});
        }
        let finished = app.state(&game_id, None).await;
        assert_eq!(finished["status"], "finished");
        assert!(finished["result"]["reason"].is_string(), "{finished}");
    }
);

on_both_backends!(
    rematch_against_the_computer_swaps_colours_and_it_opens,
    |app: TestApp| async move {
        let guest = app.guest().await;
        let (_, body) = app
            .post(
                "/api/games/computer",
                &guest,
                json!({ "level": 2, "color": "white", "time_control": crate::helpers::clock(60_000, 0) }),
            )
            .await;
        let game_id = body["game_id"].as_str().expect("game id").to_owned();
        let mut socket = app.socket(&game_id, Some(&guest)).await;
        socket.hello().await;
        socket.play("e2e4", 0).await;
        loop {
            if socket.recv_event("move").await["event"]["color"] == "black" {
                break;
            }
        }
        socket.send(json!({ "type": "resign" })).await;
        let ended = socket.recv_event("ended").await;
        assert_eq!(
            ended["event"]["result"],
            json!({ "winner": "black", "reason": "resignation" })
        );
        socket.send(json!({ "type": "rematch_offer" })).await;
        let redirect = socket.recv_type("redirect").await;
        let new_id = redirect["game_id"].as_str().expect("new game").to_owned();
        let mut next = app.socket(&new_id, Some(&guest)).await;
        let state = next.hello().await;
        assert_eq!(state["seat"], "black");
        assert_eq!(state["players"]["white"]["kind"], "computer");
        assert_eq!(state["time_control"], crate::helpers::clock(60_000, 0));
        let opening = if state["moves"].as_array().is_some_and(Vec::is_empty) {
            next.recv_event("move").await["event"].clone()
        } else {
            json!({ "color": "white", "ply": 0 })
        };
        assert_eq!(
            (opening["color"].as_str(), opening["ply"].as_u64()),
            (Some("white"), Some(0))
        );
    }
);
