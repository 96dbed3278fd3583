//! The database slow to answer (a restart, a lock held elsewhere): a move
//! waits for its commit, and the player's socket stays open meanwhile.

use std::time::Duration;

use chess_store::testing::Connection;
use serde_json::json;

use crate::helpers::{Backend, TestApp, correspondence, spawn_app};
use crate::on_both_backends;

/// Another connection holding up every write of game `game_id`: SQLite's
/// write lock, or the game's row lock on Postgres. Writes wait until
/// [`WritesHeld::release`].
struct WritesHeld(Connection);

impl WritesHeld {
    async fn take(app: &TestApp, game_id: &str) -> WritesHeld {
        let url = &app.db.as_ref().expect("the test's database").url;
        let mut connection = Connection::open(url).await.expect("connects");
        match app.backend {
            Backend::Sqlite => connection
                .execute("begin immediate")
                .await
                .expect("takes the write lock"),
            Backend::Postgres => {
                connection.execute("begin").await.expect("begins");
                let locked = connection
                    .rows(&format!(
                        "select id from games where id = '{game_id}' for update"
                    ))
                    .await
                    .expect("locks the game's row");
                assert_eq!(locked.len(), 1, "the game's row is locked");
            }
        }
        WritesHeld(connection)
    }

    async fn release(mut self) {
        self.0.execute("rollback").await.expect("releases the lock");
        self.0.close().await;
    }
}

on_both_backends!(
    a_move_waiting_for_the_database_is_not_the_client_going_silent,
    |app: TestApp| async move {
        // While a move waits for its commit the server reads nothing from
        // that socket, so it cannot hear the client either: that wait is not
        // the client's silence. The socket must stay open and the move be
        // acknowledged.
        let silence = Duration::from_millis(2_000);
        let mut settings = app.settings.clone();
        settings.ws_silence_timeout_ms = u64::try_from(silence.as_millis()).expect("small");
        let app = app.restart_with(settings).await;
        let (white, black) = (app.guest().await, app.guest().await);
        let game_id = app.online_game(&white, &black, correspondence()).await;

        // Held before the socket opens, so the move goes out at once after
        // `hello`, with no ping of the server's left unanswered.
        let held = WritesHeld::take(&app, &game_id).await;
        let mut white_socket = app.socket(&game_id, Some(&white)).await;
        white_socket.hello().await;
        white_socket
            .send(json!({ "type": "move", "uci": "e2e4", "ply": 0 }))
            .await;
        // Longer than the silence timeout, shorter than SQLite's busy wait.
        tokio::time::sleep(silence + Duration::from_millis(1_000)).await;
        held.release().await;
        // The client reads nothing until the server has answered the move
        // and looked at the silence: a ping of the server's from before the
        // move, answered now, would arrive as the server resumes and hide
        // the wait from it.
        tokio::time::sleep(Duration::from_millis(1_000)).await;

        let ack = white_socket.recv_type("ack").await;
        assert_eq!(ack["uci"], "e2e4", "{ack}");
        // Read on (answering the server's pings) for well over the timeout.
        assert!(
            !white_socket.closed_within(silence * 2).await,
            "the socket of a client that answers every ping was closed as silent"
        );
        white_socket.send(json!({ "type": "ping", "t": 7 })).await;
        assert_eq!(white_socket.recv_type("pong").await["t"], 7);
        let state = app.state(&game_id, None).await;
        assert_eq!(state["moves"].as_array().map(Vec::len), Some(1), "{state}");
    }
);

/// Every connection of the node cut while nobody plays, as a restart of the
/// database or `pg_terminate_backend` does (Postgres: SQLite has no server to
/// lose). The next moves are committed and acknowledged: the group commit's
/// connection, which the node keeps from batch to batch, died idle and is
/// replaced, rather than failing the first batch after the cut (the crash
/// tool's `restart-database` fault found it failing new guests' sign-ups
/// seconds after the database was back).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_cut_while_nobody_plays_fail_no_later_move() {
    let Some(app) = spawn_app(Backend::Postgres).await else {
        return;
    };
    let (white, black) = (app.guest().await, app.guest().await);
    let game_id = app.online_game(&white, &black, correspondence()).await;
    let mut white_socket = app.socket(&game_id, Some(&white)).await;
    white_socket.hello().await;
    let mut black_socket = app.socket(&game_id, Some(&black)).await;
    black_socket.hello().await;
    // The group commit now holds its connection.
    white_socket.play("e2e4", 0).await;

    let cut = app
        .db
        .as_ref()
        .expect("the test's database")
        .raw(
            "select pg_terminate_backend(pid) from pg_stat_activity \
             where datname = current_database() and pid <> pg_backend_pid()",
        )
        .await
        .expect("terminates the node's connections");
    assert!(
        cut >= 2,
        "the node's pools and its writer are connected: {cut}"
    );
    // Past the writer's check of a connection idle for a while.
    tokio::time::sleep(Duration::from_millis(300)).await;

    black_socket.play("e7e5", 1).await;
    white_socket.play("g1f3", 2).await;
    let state = app.state(&game_id, None).await;
    assert_eq!(state["moves"].as_array().map(Vec::len), Some(3), "{state}");
}
