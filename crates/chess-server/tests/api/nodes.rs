//! Several nodes on one Postgres: players, spectators and lobby watchers on
//! different nodes play together, live, and the limits that protect
//! accounts count every node's attempts. (SQLite is one node by design.)

use std::time::Duration;

use chess_server::auth::rate_limit::{
    SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS, SIGN_UPS_PER_ADDRESS,
};
use serde_json::{Value, json};

use crate::helpers::{
    Backend, Guest, Socket, TestApp, clock, correspondence, play_moves, sample, spawn_app, start,
};

/// A first node on a fresh Postgres database and `more` nodes beside it,
/// each of those with a metrics listener; `None` when Postgres tests are
/// skipped.
async fn nodes(more: usize) -> Option<(TestApp, Vec<TestApp>)> {
    let first = spawn_app(Backend::Postgres).await?;
    let mut settings = first.settings.clone();
    settings.metrics_listen = Some("127.0.0.1:0".parse().expect("an address"));
    let mut others = Vec::new();
    for _ in 0..more {
        others.push(start(settings.clone(), Backend::Postgres).await);
    }
    Some((first, others))
}

/// How many of the other nodes' changes `node` followed from their notices
/// and how many it reread from the database.
async fn remote_changes(node: &TestApp) -> (f64, f64) {
    let (_, text) = node.scrape_metrics().await;
    let count = |how: &str| {
        sample(
            &text,
            &format!("chess_remote_changes_total{{how=\"{how}\"}}"),
        )
        .unwrap_or(-1.0)
    };
    (count("followed"), count("reread"))
}

/// How long a message may take to cross nodes before the test fails: far
/// above the figures in docs/performance.md, so a busy machine does not fail it.
const PATIENCE: Duration = Duration::from_secs(10);

/// White's socket on node `a` and Black's on node `b`, each past its `hello`.
async fn seat_across(
    a: &TestApp,
    b: &TestApp,
    game_id: &str,
    white: &Guest,
    black: &Guest,
) -> (Socket, Socket) {
    let mut white_socket = a.socket(game_id, Some(white)).await;
    white_socket.hello().await;
    let mut black_socket = b.socket(game_id, Some(black)).await;
    black_socket.hello().await;
    (white_socket, black_socket)
}

/// Plays `moves` from ply 0, each seen by the opponent before the reply is
/// sent (a socket that plays reads past its own earlier messages).
async fn play_across(white: &mut Socket, black: &mut Socket, moves: &[&str]) {
    for (ply, uci) in moves.iter().enumerate() {
        let ply = u32::try_from(ply).expect("few moves");
        let (mover, waiter) = if ply % 2 == 0 {
            (&mut *white, &mut *black)
        } else {
            (&mut *black, &mut *white)
        };
        mover.play(uci, ply).await;
        move_seen(waiter, uci, "a move made on the other node").await;
    }
}

/// The next message on `socket` within a few seconds, failing the test
/// with `what` otherwise.
async fn within(socket: &mut Socket, kind: &str, what: &str) -> Value {
    tokio::time::timeout(PATIENCE, socket.recv_type(kind))
        .await
        .unwrap_or_else(|_| panic!("no {kind} in time: {what}"))
}

/// The `move` event of `uci` (skipping earlier ones, such as the socket's
/// own moves coming back).
async fn move_seen(socket: &mut Socket, uci: &str, what: &str) -> Value {
    tokio::time::timeout(PATIENCE, async {
        loop {
            let event = socket.recv_event("move").await;
            if event["event"]["uci"] == uci {
                return event;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no move {uci} in time: {what}"))
}

async fn next_event(socket: &mut Socket, kind: &str, what: &str) -> Value {
    tokio::time::timeout(PATIENCE, socket.recv_event(kind))
        .await
        .unwrap_or_else(|_| panic!("no {kind} event in time: {what}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_and_a_spectator_on_three_nodes_play_to_mate() {
    let Some((a, others)) = nodes(2).await else {
        return;
    };
    let (b, c) = (&others[0], &others[1]);
    let (white, black) = (a.guest().await, b.guest().await);
    // The challenge is made on A and joined on B.
    let game_id = a
        .create_challenge(&white, correspondence(), "white", None)
        .await;
    let mut white_socket = a.socket(&game_id, Some(&white)).await;
    white_socket.hello().await;
    let (status, body) = b.join_game(&black, &game_id).await;
    assert_eq!(status, 200, "{body}");
    // White's node learns of the join and sends a fresh state.
    let state = within(&mut white_socket, "state", "the join on another node").await;
    assert_eq!(state["status"], "playing", "{state}");
    let mut black_socket = b.socket(&game_id, Some(&black)).await;
    black_socket.hello().await;
    let mut spectator = c.socket(&game_id, None).await;
    spectator.hello().await;

    let fools_mate = ["f2f3", "e7e5", "g2g4", "d8h4"];
    play_across(&mut white_socket, &mut black_socket, &fools_mate).await;
    for uci in fools_mate {
        move_seen(&mut spectator, uci, "a move seen by a spectator").await;
    }
    for socket in [&mut white_socket, &mut black_socket, &mut spectator] {
        let ended = next_event(socket, "ended", "the mate").await;
        assert_eq!(ended["event"]["result"]["winner"], "black", "{ended}");
        assert_eq!(ended["event"]["result"]["reason"], "checkmate", "{ended}");
    }
    // The spectator's node followed every move from its notice, without
    // reading the database.
    assert_eq!(remote_changes(c).await, (4.0, 0.0));
    // Every node answers with the same stored game.
    for node in [&a, b, c] {
        let state = node.state(&game_id, None).await;
        assert_eq!(state["moves"].as_array().map(Vec::len), Some(4));
        assert_eq!(state["status"], "finished");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draw_offer_and_a_rematch_across_nodes() {
    let Some((a, others)) = nodes(1).await else {
        return;
    };
    let b = &others[0];
    let (white, black) = (a.guest().await, b.guest().await);
    let game_id = a.online_game(&white, &black, correspondence()).await;
    let (mut white_socket, mut black_socket) = seat_across(&a, b, &game_id, &white, &black).await;
    play_across(&mut white_socket, &mut black_socket, &["e2e4", "e7e5"]).await;

    white_socket.send(json!({ "type": "draw_offer" })).await;
    next_event(&mut black_socket, "draw_offered", "the offer from node A").await;
    black_socket.send(json!({ "type": "draw_accept" })).await;
    let ended = next_event(&mut white_socket, "ended", "the accepted draw").await;
    assert_eq!(ended["event"]["result"]["winner"], Value::Null, "{ended}");
    assert_eq!(ended["event"]["result"]["reason"], "agreement", "{ended}");

    black_socket.send(json!({ "type": "rematch_offer" })).await;
    next_event(&mut white_socket, "rematch_offered", "the rematch offer").await;
    white_socket.send(json!({ "type": "rematch_accept" })).await;
    let here = within(&mut white_socket, "redirect", "the rematch on node A").await;
    let there = within(&mut black_socket, "redirect", "the rematch on node B").await;
    assert_eq!(here["game_id"], there["game_id"]);
    let rematch = here["game_id"].as_str().expect("id").to_owned();
    // Colours swap, and the new game is played across the nodes too.
    let mut new_white = b.socket(&rematch, Some(&black)).await;
    let state = new_white.hello().await;
    assert_eq!(state["seat"], "white", "{state}");
    let mut new_black = a.socket(&rematch, Some(&white)).await;
    new_black.hello().await;
    new_white.play("d2d4", 0).await;
    move_seen(&mut new_black, "d2d4", "the rematch's first move").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_premove_set_on_one_node_is_played_when_the_opponent_moves_on_the_other() {
    let Some((a, others)) = nodes(1).await else {
        return;
    };
    let b = &others[0];
    let (white, black) = (a.guest().await, b.guest().await);
    let game_id = a.online_game(&white, &black, clock(300_000, 0)).await;
    let (mut white_socket, mut black_socket) = seat_across(&a, b, &game_id, &white, &black).await;
    play_across(&mut white_socket, &mut black_socket, &["e2e4", "e7e5"]).await;

    black_socket
        .send(json!({ "type": "premove", "uci": "b8c6" }))
        .await;
    let set = within(&mut black_socket, "premove", "the premove being set").await;
    assert_eq!(set["reason"], "set", "{set}");
    white_socket.play("g1f3", 2).await;
    // Node A played Black's premove at once, on White's move.
    let reply = move_seen(&mut white_socket, "b8c6", "the premove played on node A").await;
    assert_eq!(reply["event"]["premove"], true, "{reply}");
    let played = within(&mut black_socket, "ack", "black's premove acknowledged").await;
    assert_eq!(played["uci"], "b8c6", "{played}");
    let state = b.state(&game_id, None).await;
    assert_eq!(state["moves"].as_array().map(Vec::len), Some(4));
}

/// A node stops while its player's premove waits, at a moment around the
/// opponent's move on the other node (before it, together with it, after
/// it): the premove is played only by its own node while that node runs,
/// never by the other node, and the player finds no premove when they come
/// back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_premove_is_played_only_while_its_connection_is_there() {
    // The stop comes this many milliseconds after the opponent's move
    // (negative: before it).
    for stop_after_ms in [-50_i64, -5, 0, 3, 20, 200] {
        let Some((a, mut others)) = nodes(1).await else {
            return;
        };
        let b = others.remove(0);
        let (white, black) = (b.guest().await, a.guest().await);
        let game_id = b.online_game(&white, &black, clock(300_000, 0)).await;
        // White plays through B, Black through A.
        let (mut black_socket, mut white_socket) =
            seat_across(&a, &b, &game_id, &black, &white).await;
        play_across(&mut white_socket, &mut black_socket, &["e2e4", "e7e5"]).await;
        black_socket
            .send(json!({ "type": "premove", "uci": "b8c6" }))
            .await;
        assert_eq!(
            within(&mut black_socket, "premove", "the premove set").await["reason"],
            "set"
        );

        let mut a = a;
        let mut stop_requested = None;
        let stop = async {
            if stop_after_ms > 0 {
                tokio::time::sleep(Duration::from_millis(stop_after_ms.unsigned_abs())).await;
            }
            stop_requested = Some(chess_live::now_ms());
            a.stop().await;
        };
        let opponent_moves = async {
            if stop_after_ms < 0 {
                tokio::time::sleep(Duration::from_millis(stop_after_ms.unsigned_abs())).await;
            }
            play_resending(&mut white_socket, "g1f3", 2).await;
        };
        tokio::join!(stop, opponent_moves);
        let stop_requested = stop_requested.expect("the node was stopped");
        drop(black_socket);

        let id = game_id.parse().expect("a uuid");
        let moves = b.store.moves(id).await.expect("the moves");
        if let Some(premove) = moves.get(3) {
            assert_eq!(premove.uci, "b8c6", "stop {stop_after_ms} ms: {moves:?}");
            assert!(
                premove.played_at <= stop_requested,
                "stop {stop_after_ms} ms after the move: the premove was played at {} ms, \
                 after its node began to stop at {stop_requested} ms",
                premove.played_at
            );
        }
        // Black comes back through B: no premove is waiting.
        let mut black_again = b.socket(&game_id, Some(&black)).await;
        let again = black_again.hello().await;
        assert_eq!(
            again["premove"],
            json!(null),
            "stop {stop_after_ms} ms: {again}"
        );
        // And none is played later either.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let later = b.store.moves(id).await.expect("the moves");
        assert_eq!(
            later.len(),
            moves.len(),
            "stop {stop_after_ms} ms: {later:?}"
        );
    }
}

/// Sends a move and waits for its ack, sending it again when another
/// node's change came first (`conflict`), as a client does.
async fn play_resending(socket: &mut Socket, uci: &str, ply: u32) {
    for _ in 0..5 {
        socket
            .send(json!({ "type": "move", "uci": uci, "ply": ply }))
            .await;
        loop {
            let message = socket.recv().await;
            match message["type"].as_str() {
                Some("ack") => return,
                Some("error") if message["code"] == "conflict" => break,
                Some("error") => panic!("move {uci} at ply {ply} refused: {message}"),
                _ => {}
            }
        }
    }
    panic!("move {uci} kept conflicting");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_nobody_hosts_flags_exactly_once_with_two_nodes_running() {
    let Some((a, mut others)) = nodes(1).await else {
        return;
    };
    let (white, black) = (a.guest().await, a.guest().await);
    let game_id = a.online_game(&white, &black, clock(15_000, 0)).await;
    let (mut white_socket, mut black_socket) = a.seat_both(&game_id, &white, &black).await;
    play_moves(&mut white_socket, &mut black_socket, &["e2e4", "e7e5"]).await;
    let before = a.state(&game_id, None).await;
    let version = before["version"].as_u64().expect("version");
    white_socket.close().await;
    black_socket.close().await;
    // Node A goes away: nobody hosts the game, node B never saw it.
    let mut a = a;
    a.stop().await;
    let b = others.remove(0);
    let mut watcher = None;
    for _ in 0..80 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let state = b.state(&game_id, None).await;
        if state["status"] == "finished" {
            watcher = Some(state);
            break;
        }
    }
    let state = watcher.expect("the game was flagged within 40 s of White's clock running out");
    assert_eq!(state["result"]["winner"], "black", "{state}");
    assert_eq!(state["result"]["reason"], "timeout", "{state}");
    // One change: the flag. A second node flagging too would have failed its
    // compare-and-set; a second stored ending would show as another version.
    assert_eq!(state["version"].as_u64(), Some(version + 1), "{state}");
    let a = a.restart().await;
    let again = a.state(&game_id, None).await;
    assert_eq!(again["version"], state["version"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_a_node_stops_mid_game_the_game_goes_on_on_the_other() {
    let Some((a, others)) = nodes(1).await else {
        return;
    };
    let b = &others[0];
    let (white, black) = (a.guest().await, b.guest().await);
    let game_id = a.online_game(&white, &black, correspondence()).await;
    let (mut white_socket, mut black_socket) = seat_across(&a, b, &game_id, &white, &black).await;
    play_across(&mut white_socket, &mut black_socket, &["e2e4", "e7e5"]).await;
    // A goes away.
    let mut a = a;
    a.stop().await;
    drop(white_socket);
    // White reconnects through B and the game goes on.
    let mut white_again = b.socket(&game_id, Some(&white)).await;
    let state = white_again.hello().await;
    assert_eq!(state["moves"].as_array().map(Vec::len), Some(2), "{state}");
    white_again.play("g1f3", 2).await;
    move_seen(&mut black_socket, "g1f3", "white's move on the same node").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_listener_reconnects_and_no_socket_misses_a_move() {
    let Some((a, others)) = nodes(1).await else {
        return;
    };
    let b = &others[0];
    let (white, black) = (a.guest().await, b.guest().await);
    let game_id = a.online_game(&white, &black, correspondence()).await;
    let (mut white_socket, mut black_socket) = seat_across(&a, b, &game_id, &white, &black).await;

    // Cut every listening connection of the database (both nodes', once
    // both listen).
    let db = a.db.as_ref().expect("db");
    let mut cut = 0;
    for _ in 0..100 {
        cut += db
            .raw(
                "select pg_terminate_backend(pid) from pg_stat_activity \
                 where datname = current_database() and query ilike 'listen%' \
                 and pid <> pg_backend_pid()",
            )
            .await
            .expect("terminate");
        if cut >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(cut >= 2, "both nodes listen on their own connections");

    // Moves made right away may race the reconnection: none may be missed.
    white_socket.play("e2e4", 0).await;
    move_seen(&mut black_socket, "e2e4", "a move after the cut").await;
    black_socket.play("e7e5", 1).await;
    move_seen(&mut white_socket, "e7e5", "the reply after the cut").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seek_made_on_one_node_is_seen_and_taken_on_another() {
    let Some((a, others)) = nodes(1).await else {
        return;
    };
    let b = &others[0];
    let (alice, bob) = (a.guest().await, b.guest().await);
    let mut alice_lobby = a
        .try_socket("/api/lobby/socket", Some(&alice), None)
        .await
        .expect("lobby socket");
    within(&mut alice_lobby, "seeks", "the lobby snapshot").await;
    let mut bob_lobby = b
        .try_socket("/api/lobby/socket", Some(&bob), None)
        .await
        .expect("lobby socket");
    within(&mut bob_lobby, "seeks", "the lobby snapshot").await;

    let (status, body) = a
        .post(
            "/api/lobby/seeks",
            &alice,
            json!({ "time_control": clock(300_000, 3_000), "color": "random" }),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let added = within(&mut bob_lobby, "seek_added", "a seek made on node A").await;
    let seek_id = added["seek"]["id"].as_str().expect("id").to_owned();
    assert_eq!(added["seek"]["is_yours"], false);

    let (status, body) = b
        .post(&format!("/api/lobby/seeks/{seek_id}/join"), &bob, json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    let started = within(&mut alice_lobby, "game_started", "bob joined on node B").await;
    assert_eq!(started["game_id"], body["game_id"], "{started}");
    let removed = within(&mut bob_lobby, "seek_removed", "the taken seek").await;
    assert_eq!(removed["seek_id"], seek_id.as_str());
}

/// A sign-in of Magnus on `node` with `password`: the status.
async fn sign_in(node: &TestApp, password: &str) -> u16 {
    let body = json!({ "username": "Magnus", "password": password });
    node.request("POST", "/api/account/sign-in", &[], Some(body))
        .await
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_sign_ins_and_sign_ups_on_two_nodes_count_together() {
    let Some((a, others)) = nodes(1).await else {
        return;
    };
    let b = &others[0];
    let both = [&a, b];
    let owner = a.guest().await;
    a.sign_up(&owner, "Magnus").await;

    // Wrong passwords from one address, taking turns between the nodes:
    // the account is locked for that address after as many as on one
    // node, on both nodes, even for the right password.
    let lockout = SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS.max;
    for attempt in 0..lockout {
        let node = both[attempt % 2];
        assert_eq!(sign_in(node, "wrong horse").await, 401, "attempt {attempt}");
    }
    for node in both {
        assert_eq!(sign_in(node, "correct horse").await, 429);
    }

    // Sign-ups from one address, the first above included: as many as one
    // node allows, then refused on both.
    for n in 1..SIGN_UPS_PER_ADDRESS.max {
        let node = both[n % 2];
        let guest = node.guest().await;
        node.sign_up(&guest, &format!("player{n}")).await;
    }
    for (n, node) in both.into_iter().enumerate() {
        let guest = node.guest().await;
        let body = json!({ "username": format!("late{n}"), "password": "correct horse" });
        let (status, reply) = node
            .send(
                "POST",
                "/api/account/sign-up",
                Some(&guest.cookie),
                Some(body.to_string()),
            )
            .await;
        assert_eq!(status, 429, "{reply}");
    }
}

/// A tournament's pairing reaches the players' lobby sockets at once on
/// every node, whichever node's director made it: the page they wait on
/// goes to the game without waiting for its next poll.
#[tokio::test]
async fn arena_pairings_reach_the_players_lobby_sockets_on_every_node() {
    let Some((a, others)) = nodes(1).await else {
        return;
    };
    let b = &others[0];
    let organiser = a.sign_up(&a.guest().await, "Organiser").await;
    let ann = a.sign_up(&a.guest().await, "Ann").await;
    let ben = b.sign_up(&b.guest().await, "Ben").await;
    // It starts in a few seconds: both are in by then, and the start pairs them.
    let starts_at = chess_live::now_ms().to_stored() + 4_000;
    let arena =
        json!({ "clockTime": 3, "clockIncrement": 0, "minutes": 20, "startDate": starts_at });
    let (status, arena) = a.post("/api/arenas", &organiser, arena).await;
    assert_eq!(status, 201, "{arena}");
    let id = arena["id"].as_str().expect("id").to_owned();
    let mut ann_lobby = a
        .try_socket("/api/lobby/socket", Some(&ann), None)
        .await
        .expect("lobby socket");
    let mut ben_lobby = b
        .try_socket("/api/lobby/socket", Some(&ben), None)
        .await
        .expect("lobby socket");
    ann_lobby.recv_type("seeks").await;
    ben_lobby.recv_type("seeks").await;
    for (node, player) in [(&a, &ann), (b, &ben)] {
        let (status, body) = node
            .post(&format!("/api/arenas/{id}/join"), player, json!({}))
            .await;
        assert_eq!(status, 204, "{body}");
    }
    let started = tokio::time::timeout(PATIENCE + PATIENCE, ann_lobby.recv_type("game_started"))
        .await
        .expect("Ann is told of her game");
    let game_id = started["game_id"].as_str().expect("game").to_owned();
    let told = tokio::time::timeout(PATIENCE, ben_lobby.recv_type("game_started"))
        .await
        .expect("Ben, on the other node, is told too");
    assert_eq!(told["game_id"], game_id.as_str());
    assert_eq!(told["url"], format!("/game/{game_id}").as_str());
    let (status, view) = b.get(&format!("/api/arenas/{id}"), Some(&ben.cookie)).await;
    assert_eq!(
        (status, &view["me"]["game_id"]),
        (200, &json!(game_id)),
        "{view}"
    );
}
