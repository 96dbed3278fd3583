//! The node's writer (group commit) with the writes that set a game up: a
//! new player, a new game and a seat taken ride in the batches, and one bad
//! item does not take the rest of its batch down.

use chess_rules::ByColor;
use chess_server::clock::UnixMs;
use chess_server::games::model::{GameMode, GameStage, PlayerKind};
use chess_server::games::writer::Writer;
use chess_server::metrics::Metrics;
use chess_server::store::{GameRow, PlayerRow, SeatClaim, Store};
use uuid::Uuid;

use crate::helpers::{Backend, TestDatabase, WriteLock};
use crate::on_both_stores;

fn guest() -> PlayerRow {
    PlayerRow {
        id: Uuid::new_v4(),
        kind: PlayerKind::Guest,
        name: "quiet-heron-7".to_owned(),
        created_at: UnixMs::from_stored(1),
    }
}

/// An open correspondence challenge by `white`, Black's seat empty.
fn challenge(white: &PlayerRow) -> GameRow {
    GameRow {
        id: Uuid::new_v4(),
        mode: GameMode::Online,
        white_id: Some(white.id),
        black_id: None,
        computer_level: None,
        time_control: r#"{"kind":"correspondence"}"#.to_owned(),
        status: GameStage::Open,
        result: None,
        state: "{}".to_owned(),
        version: 0,
        rematch_of: None,
        rematch_id: None,
        created_at: UnixMs::from_stored(10),
        updated_at: UnixMs::from_stored(10),
        deadline_at: None,
        recent_events: "[]".to_owned(),
        premove_nodes: ByColor::default(),
    }
}

on_both_stores!(
    a_bad_setup_item_is_refused_alone_and_the_rest_of_its_batch_commits,
    async |store: Store, db: &TestDatabase| {
        let white = guest();
        store.insert_player(&white).await.expect("insert");
        let stored = challenge(&white);
        store.insert_game(&stored).await.expect("insert");
        let open = challenge(&white);
        store.insert_game(&open).await.expect("insert");
        let (writer, task) = Writer::start(store.clone(), Uuid::new_v4(), Metrics::new(), 64);

        // The first item waits for the lock (SQLite's write lock; on Postgres
        // the games table); the next three queue behind
        // it and go in the writer's next batch (whether they share it or
        // not, each must get its own answer).
        let backend = if store.is_postgres() {
            Backend::Postgres
        } else {
            Backend::Sqlite
        };
        let lock = WriteLock::take_on(&db.url, backend).await;
        let first = challenge(&white);
        let first_write = tokio::spawn({
            let writer = writer.clone();
            let first = first.clone();
            async move { writer.insert_game(first).await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let black = guest();
        let duplicate = {
            let writer = writer.clone();
            let stored = stored.clone();
            tokio::spawn(async move { writer.insert_game(stored).await })
        };
        let new_player = {
            let writer = writer.clone();
            let black = black.clone();
            tokio::spawn(async move { writer.insert_player(black).await })
        };
        let claim = {
            let writer = writer.clone();
            let claim = SeatClaim {
                game: open.id,
                white: false,
                player: black.id,
                state: r#"{"started":true}"#.to_owned(),
                now: UnixMs::from_stored(20),
                deadline_at: None,
                version: open.version,
            };
            tokio::spawn(async move { writer.claim_seat(claim).await })
        };
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        lock.release().await;

        first_write
            .await
            .expect("task")
            .expect("the first game is stored");
        let refused = duplicate.await.expect("task");
        let error = refused.expect_err("a game id stored twice is refused");
        assert!(
            !error.is_unavailable(),
            "a constraint, not the database being away: {error}"
        );
        new_player
            .await
            .expect("task")
            .expect("the new player is stored");
        assert!(claim.await.expect("task").expect("the claim is answered"));

        assert_eq!(store.game(first.id).await.expect("read"), Some(first));
        assert_eq!(
            store.player(black.id).await.expect("read"),
            Some(black.clone())
        );
        let claimed = store.game(open.id).await.expect("read").expect("exists");
        assert_eq!(
            (claimed.black_id, claimed.status, claimed.state.as_str()),
            (Some(black.id), GameStage::Playing, r#"{"started":true}"#)
        );
        assert_eq!(store.game(stored.id).await.expect("read"), Some(stored));

        // A claim on a seat already taken is answered `false`, not an error.
        let late = guest();
        writer.insert_player(late.clone()).await.expect("stored");
        let again = SeatClaim {
            game: open.id,
            white: false,
            player: late.id,
            state: "{}".to_owned(),
            now: UnixMs::from_stored(30),
            deadline_at: None,
            version: open.version,
        };
        assert!(!writer.claim_seat(again).await.expect("answered"));

        writer.stop();
        task.await.expect("the writer stops");
        // Stopped: set-up writes are refused as unavailable, nothing stored.
        let after = writer.insert_player(guest()).await;
        assert!(
            after
                .as_ref()
                .is_err_and(chess_server::store::StoreError::is_unavailable),
            "{after:?}"
        );
        store.close().await;
    }
);
