//! The lobby, challenge links and the game lists.

use std::time::Duration;

use serde_json::json;

use crate::helpers::{TestApp, clock, correspondence};
use crate::on_both_backends;

on_both_backends!(seeks_update_live_and_pair, |app: TestApp| async move {
    let (alice, bob, carol) = (app.guest().await, app.guest().await, app.guest().await);
    let mut watcher = app
        .try_socket("/api/lobby/socket", Some(&carol), None)
        .await
        .expect("lobby socket");
    let mut alice_lobby = app
        .try_socket("/api/lobby/socket", Some(&alice), None)
        .await
        .expect("lobby socket");
    assert_eq!(
        watcher.recv().await,
        json!({ "type": "seeks", "seeks": [] })
    );
    alice_lobby.recv_type("seeks").await;

    let (status, created) = app
        .post(
            "/api/lobby/seeks",
            &alice,
            json!({ "time_control": clock(180_000, 2_000), "color": "random" }),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["outcome"], "created");
    let seek_id = created["seek"]["id"].as_str().expect("seek id").to_owned();
    let added = watcher.recv_type("seek_added").await;
    assert_eq!(added["seek"]["id"], seek_id.as_str());
    assert_eq!(added["seek"]["is_yours"], false);

    // The same preset from someone else joins the open seek instead of adding one.
    let (status, joined) = app
        .post(
            "/api/lobby/seeks",
            &bob,
            json!({ "time_control": clock(180_000, 2_000), "color": "random" }),
        )
        .await;
    assert_eq!(status, 200, "{joined}");
    assert_eq!(joined["outcome"], "joined");
    let game_id = joined["game_id"].as_str().expect("game id").to_owned();
    assert_eq!(
        watcher.recv_type("seek_removed").await["seek_id"],
        seek_id.as_str()
    );
    let started = alice_lobby.recv_type("game_started").await;
    assert_eq!(started["game_id"], game_id.as_str());
    let state = app.state(&game_id, Some(&alice)).await;
    assert!(
        state["seat"] == "white" || state["seat"] == "black",
        "{state}"
    );
    let (_, seeks) = app.get("/api/lobby/seeks", None).await;
    assert_eq!(seeks["seeks"], json!([]));

    // Live games and my games list it.
    let (_, live) = app.get("/api/games/live", None).await;
    assert!(
        live["games"]
            .as_array()
            .expect("games")
            .iter()
            .any(|g| g["game_id"] == game_id.as_str())
    );
});

on_both_backends!(
    seeks_can_be_cancelled_only_by_their_owner,
    |app: TestApp| async move {
        let (alice, bob) = (app.guest().await, app.guest().await);
        let (_, created) = app
            .post(
                "/api/lobby/seeks",
                &alice,
                json!({ "time_control": correspondence(), "color": "white" }),
            )
            .await;
        let seek_id = created["seek"]["id"].as_str().expect("seek id").to_owned();
        let path = format!("/api/lobby/seeks/{seek_id}");
        let (status, body) = app.send("DELETE", &path, Some(&bob.cookie), None).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (403, Some("not_your_seek"))
        );
        let (status, body) = app.post(&format!("{path}/join"), &alice, json!({})).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (409, Some("own_seek"))
        );
        let (status, _) = app.send("DELETE", &path, Some(&alice.cookie), None).await;
        assert_eq!(status, 204);
        let (status, body) = app.post(&format!("{path}/join"), &bob, json!({})).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (404, Some("seek_not_found"))
        );
    }
);

on_both_backends!(
    challenge_link_seats_the_first_other_person,
    |app: TestApp| async move {
        let (alice, bob, carol) = (app.guest().await, app.guest().await, app.guest().await);
        let game_id = app
            .create_challenge(&alice, correspondence(), "black", None)
            .await;
        let mut alice_socket = app.socket(&game_id, Some(&alice)).await;
        let open = alice_socket.hello().await;
        assert_eq!(
            (open["status"].as_str(), open["seat"].as_str()),
            (Some("open"), Some("black"))
        );
        assert_eq!(open["players"]["white"], json!(null));
        let (status, body) = app.join_game(&alice, &game_id).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (409, Some("own_challenge"))
        );
        let (status, body) = app.join_game(&bob, &game_id).await;
        assert_eq!((status, body["color"].as_str()), (200, Some("white")));
        let fresh = alice_socket.recv_type("state").await;
        assert_eq!(fresh["status"], "playing");
        assert_eq!(fresh["players"]["white"]["name"], bob.name.as_str());
        let (status, body) = app.join_game(&carol, &game_id).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (409, Some("seat_taken"))
        );
    }
);

on_both_backends!(
    challenge_creator_is_told_when_the_friend_joins,
    |app: TestApp| async move {
        let (alice, bob, carol) = (app.guest().await, app.guest().await, app.guest().await);
        // Alice waits on a page that is not the game's (her lobby socket is
        // open on every page); Carol is another lobby watcher.
        let mut alice_lobby = app
            .try_socket("/api/lobby/socket", Some(&alice), None)
            .await
            .expect("lobby socket");
        let mut carol_lobby = app
            .try_socket("/api/lobby/socket", Some(&carol), None)
            .await
            .expect("lobby socket");
        alice_lobby.recv_type("seeks").await;
        carol_lobby.recv_type("seeks").await;
        let game_id = app
            .create_challenge(&alice, clock(300_000, 0), "white", None)
            .await;
        let (status, body) = app.join_game(&bob, &game_id).await;
        assert_eq!((status, body["color"].as_str()), (200, Some("black")));

        let started = alice_lobby.recv_type("game_started").await;
        assert_eq!(started["game_id"], game_id.as_str());
        assert_eq!(started["url"], format!("/game/{game_id}").as_str());
        assert!(
            started.get("seek_id").is_none(),
            "no seek behind a challenge: {started}"
        );
        assert_eq!(
            carol_lobby.try_recv(Duration::from_millis(300)).await,
            None,
            "only the challenge's creator is told"
        );
    }
);

on_both_backends!(
    my_games_put_correspondence_games_waiting_for_me_first,
    |app: TestApp| async move {
        let (alice, bob) = (app.guest().await, app.guest().await);
        let waiting_on_bob = app.online_game(&alice, &bob, correspondence()).await;
        let timed = app.online_game(&bob, &alice, clock(600_000, 0)).await;
        let waiting_on_alice = app.online_game(&bob, &alice, correspondence()).await;
        let mut bob_socket = app.socket(&waiting_on_alice, Some(&bob)).await;
        bob_socket.hello().await;
        bob_socket.play("e2e4", 0).await;
        let (_, mine) = app.get("/api/games/mine", Some(&alice.cookie)).await;
        let games = mine["games"].as_array().expect("games");
        assert_eq!(games.len(), 3);
        assert_eq!(games[0]["game_id"], waiting_on_alice.as_str());
        assert_eq!(games[0]["your_turn"], true);
        let ids: Vec<&str> = games.iter().filter_map(|g| g["game_id"].as_str()).collect();
        assert!(ids.contains(&timed.as_str()) && ids.contains(&waiting_on_bob.as_str()));
    }
);

on_both_backends!(computer_answers_a_move, |app: TestApp| async move {
    let guest = app.guest().await;
    let (status, body) = app
        .post(
            "/api/games/computer",
            &guest,
            json!({ "level": 1, "color": "white", "time_control": correspondence() }),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let game_id = body["game_id"].as_str().expect("game id").to_owned();
    let mut socket = app.socket(&game_id, Some(&guest)).await;
    let state = socket.hello().await;
    assert_eq!(state["players"]["black"]["kind"], "computer");
    assert_eq!(state["players"]["black"]["level"], 1);
    socket.play("e2e4", 0).await;
    loop {
        let event = socket.recv_event("move").await;
        if event["event"]["color"] == "black" {
            assert_eq!(event["event"]["ply"], 1);
            assert!(
                event["dests"].as_object().is_some_and(|d| !d.is_empty()),
                "my turn again: {event}"
            );
            break;
        }
    }
    socket.send(json!({ "type": "takeback" })).await;
    let taken = socket.recv_event("takeback").await;
    assert_eq!(
        taken["event"]["moves"], 0,
        "back to my turn before my first move"
    );
});

on_both_backends!(
    real_time_seeks_leave_with_their_player,
    |app: TestApp| async move {
        let (alice, carol) = (app.guest().await, app.guest().await);
        let mut watcher = app
            .try_socket("/api/lobby/socket", Some(&carol), None)
            .await
            .expect("lobby socket");
        watcher.recv_type("seeks").await;
        let alice_lobby = app
            .try_socket("/api/lobby/socket", Some(&alice), None)
            .await
            .expect("lobby socket");
        let (_, timed) = app
            .post(
                "/api/lobby/seeks",
                &alice,
                json!({ "time_control": clock(300_000, 0), "color": "random" }),
            )
            .await;
        let (_, slow) = app
            .post(
                "/api/lobby/seeks",
                &alice,
                json!({ "time_control": correspondence(), "color": "random" }),
            )
            .await;
        watcher.recv_type("seek_added").await;
        watcher.recv_type("seek_added").await;
        alice_lobby.close().await;
        let removed = watcher.recv_type("seek_removed").await;
        assert_eq!(removed["seek_id"], timed["seek"]["id"]);
        let (_, seeks) = app.get("/api/lobby/seeks", None).await;
        let ids: Vec<&serde_json::Value> = seeks["seeks"]
            .as_array()
            .expect("seeks")
            .iter()
            .map(|s| &s["id"])
            .collect();
        assert_eq!(ids, [&slow["seek"]["id"]], "the correspondence seek stays");
    }
);
