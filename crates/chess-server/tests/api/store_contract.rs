//! The store's contract, run against SQLite and Postgres alike.

use chess_server::model::{GameMode, GameStatus, PlayerKind};
use chess_server::store::{self, GameRow, MoveRow, PlayerRow, SeekRow, Store, StoreError};
use uuid::Uuid;

use crate::helpers::{Backend, TestDatabase, fresh_database};

async fn store_on(backend: Backend) -> Option<(Store, TestDatabase)> {
    let db = fresh_database(backend).await?;
    let store = store::connect(&db.url)
        .await
        .expect("connects and migrates");
    Some((store, db))
}

fn player() -> PlayerRow {
    PlayerRow {
        id: Uuid::new_v4(),
        kind: PlayerKind::Guest,
        name: "brave-otter-42".to_owned(),
        created_at: 1,
    }
}

fn game(white: &PlayerRow, black: &PlayerRow) -> GameRow {
    GameRow {
        id: Uuid::new_v4(),
        mode: GameMode::Online,
        white_id: Some(white.id),
        black_id: Some(black.id),
        computer_level: None,
        time_control: r#"{"kind":"correspondence"}"#.to_owned(),
        status: GameStatus::Playing,
        result: None,
        state: "{}".to_owned(),
        version: 0,
        rematch_of: None,
        rematch_id: None,
        created_at: 10,
        updated_at: 10,
    }
}

fn move_row(ply: i64, uci: &str) -> MoveRow {
    MoveRow {
        ply,
        uci: uci.to_owned(),
        san: uci.to_owned(),
        clock_ms: None,
        played_at: 20 + ply,
        record: "{}".to_owned(),
    }
}

async fn contract(backend: Backend) {
    let Some((store, _db)) = store_on(backend).await else {
        return;
    };
    let (white, black) = (player(), player());
    store.insert_player(&white).await.expect("insert");
    store.insert_player(&black).await.expect("insert");
    store
        .insert_player(&white)
        .await
        .expect("inserting twice is harmless");
    assert_eq!(
        store.player(white.id).await.expect("read"),
        Some(white.clone())
    );
    assert_eq!(store.player(Uuid::new_v4()).await.expect("read"), None);

    let mut row = game(&white, &black);
    store.insert_game(&row).await.expect("insert game");
    assert_eq!(store.game(row.id).await.expect("read"), Some(row.clone()));

    // Compare-and-set: version 0 -> 1 with a move.
    let stale = row.clone();
    row.version = 1;
    row.updated_at = 30;
    store
        .update_game(&row, 0, None, &[move_row(0, "e2e4")])
        .await
        .expect("cas from 0");
    // A writer still holding version 0 loses and writes nothing.
    let mut loser = stale.clone();
    loser.version = 1;
    loser.state = "lost".to_owned();
    let lost = store
        .update_game(&loser, 0, None, &[move_row(1, "e7e5")])
        .await;
    assert!(matches!(lost, Err(StoreError::Conflict)), "{lost:?}");
    assert_eq!(store.game(row.id).await.expect("read"), Some(row.clone()));
    assert_eq!(store.moves(row.id).await.expect("moves").len(), 1);

    // A ply can never be written twice, and the failed write changes nothing.
    let mut twice = row.clone();
    twice.version = 2;
    assert!(
        store
            .update_game(&twice, 1, None, &[move_row(0, "d2d4")])
            .await
            .is_err()
    );
    assert_eq!(
        store.game(row.id).await.expect("read").map(|g| g.version),
        Some(1)
    );

    // A take-back removes moves from a ply on.
    row.version = 2;
    store
        .update_game(&row, 1, None, &[move_row(1, "e7e5")])
        .await
        .expect("second move");
    row.version = 3;
    store
        .update_game(&row, 2, Some(1), &[])
        .await
        .expect("take back");
    let moves = store.moves(row.id).await.expect("moves");
    assert_eq!(
        moves.iter().map(|m| m.uci.as_str()).collect::<Vec<_>>(),
        ["e2e4"]
    );

    assert_eq!(store.unfinished_games().await.expect("unfinished").len(), 1);
    assert_eq!(
        store
            .games_of_player(black.id, 10)
            .await
            .expect("mine")
            .len(),
        1
    );
    assert_eq!(store.live_games(10).await.expect("live").len(), 1);

    // An open challenge's seat is claimed exactly once.
    let mut open = game(&white, &black);
    open.black_id = None;
    open.status = GameStatus::Open;
    store.insert_game(&open).await.expect("insert open");
    assert!(
        store
            .claim_seat(open.id, false, black.id, "{}", 40)
            .await
            .expect("claim")
    );
    assert!(
        !store
            .claim_seat(open.id, false, white.id, "{}", 41)
            .await
            .expect("claim")
    );
    let claimed = store.game(open.id).await.expect("read").expect("exists");
    assert_eq!(
        (claimed.black_id, claimed.status),
        (Some(black.id), GameStatus::Playing)
    );

    // A seek is deleted exactly once.
    let seek = SeekRow {
        id: Uuid::new_v4(),
        player_id: white.id,
        time_control: r#"{"kind":"correspondence"}"#.to_owned(),
        time_control_key: "correspondence".to_owned(),
        color: "random".to_owned(),
        created_at: 50,
    };
    store.insert_seek(&seek).await.expect("insert seek");
    assert_eq!(store.seeks().await.expect("seeks"), vec![seek.clone()]);
    assert!(store.delete_seek(seek.id).await.expect("delete"));
    assert!(!store.delete_seek(seek.id).await.expect("delete"));
    store.close().await;
}

#[tokio::test]
async fn contract_on_sqlite() {
    contract(Backend::Sqlite).await;
}

#[tokio::test]
async fn contract_on_postgres() {
    contract(Backend::Postgres).await;
}
