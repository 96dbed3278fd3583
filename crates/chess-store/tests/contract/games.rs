//! Games, moves, seeks and players: the store's contract of the live games.

use chess_game::{EndReason, GameResult};
use chess_live::{
    Batch, BatchPath, GameMode, GameRow, GameStage, GameWrite, MoveRow, PlayerKind, PlayerRow,
    SeatClaim, UnixMs, WriteOutcome,
};
use chess_rules::{ByColor, Color};
use chess_store::{SeekRow, StoreError};
use uuid::Uuid;

use chess_store::testing::{Backend, fresh_store};

/// The moment `millis` ms after the epoch.
fn ms(millis: i64) -> UnixMs {
    UnixMs::from_stored(millis)
}

fn player() -> PlayerRow {
    PlayerRow {
        id: Uuid::new_v4(),
        kind: PlayerKind::Guest,
        name: "brave-otter-42".to_owned(),
        created_at: ms(1),
        bot: false,
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
        status: GameStage::Playing,
        result: None,
        state: "{}".to_owned(),
        version: 0,
        rematch_of: None,
        rematch_id: None,
        created_at: ms(10),
        updated_at: ms(10),
        deadline_at: None,
        recent_events: "[]".to_owned(),
        premove_nodes: ByColor::default(),
    }
}

fn move_row(ply: i64, uci: &str) -> MoveRow {
    MoveRow {
        ply,
        uci: uci.to_owned(),
        san: uci.to_owned(),
        clock_ms: None,
        played_at: ms(20 + ply),
        record: "{}".to_owned(),
    }
}

async fn contract(backend: Backend) {
    let Some((store, _db)) = fresh_store(backend).await else {
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
    row.updated_at = ms(30);
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
    open.status = GameStage::Open;
    store.insert_game(&open).await.expect("insert open");
    assert!(
        store
            .claim_seat(&claim(&open, &black, 40))
            .await
            .expect("claim")
    );
    assert!(
        !store
            .claim_seat(&claim(&open, &white, 41))
            .await
            .expect("claim")
    );
    let claimed = store.game(open.id).await.expect("read").expect("exists");
    assert_eq!(
        (claimed.black_id, claimed.status, claimed.deadline_at),
        (Some(black.id), GameStage::Playing, Some(ms(30_040)))
    );

    // A seek is deleted exactly once.
    let seek = SeekRow {
        id: Uuid::new_v4(),
        player_id: white.id,
        time_control: r#"{"kind":"correspondence"}"#.to_owned(),
        time_control_key: "correspondence".to_owned(),
        color: "random".to_owned(),
        created_at: ms(50),
        rated: true,
        rating_range: Some((1400, 1700)),
    };
    store.insert_seek(&seek).await.expect("insert seek");
    assert_eq!(store.seeks().await.expect("seeks"), vec![seek.clone()]);
    assert!(store.delete_seek(seek.id).await.expect("delete"));
    assert!(!store.delete_seek(seek.id).await.expect("delete"));
    store.close().await;
}

/// `player` takes the black seat of `open` at `at` ms, with a first-move
/// deadline 30 s later.
fn claim(open: &GameRow, player: &PlayerRow, at: i64) -> SeatClaim {
    SeatClaim {
        game: open.id,
        white: false,
        player: player.id,
        state: "{}".to_owned(),
        now: ms(at),
        deadline_at: Some(ms(at + 30_000)),
        version: open.version,
    }
}

fn write(row: &GameRow, expected_version: i64, moves: Vec<MoveRow>) -> GameWrite {
    GameWrite {
        row: row.clone(),
        expected_version,
        keep_moves: None,
        new_moves: moves,
        settle: None,
        rematch: None,
        notice: None,
    }
}

/// Two new players and `count` games in play between them, all stored.
async fn stored_games(
    store: &chess_store::Store,
    count: usize,
) -> (PlayerRow, PlayerRow, Vec<GameRow>) {
    let (white, black) = (player(), player());
    store.insert_player(&white).await.expect("insert");
    store.insert_player(&black).await.expect("insert");
    let games: Vec<GameRow> = (0..count).map(|_| game(&white, &black)).collect();
    for row in &games {
        store.insert_game(row).await.expect("insert game");
    }
    (white, black, games)
}

/// The common batch, changes to games in play that all land (one statement
/// on Postgres): every column of every game is stored, with its new moves,
/// and the notices made of the outcome go out.
async fn changes_batch_contract(backend: Backend) {
    let Some((store, _db)) = fresh_store(backend).await else {
        return;
    };
    let (_, _, games) = stored_games(&store, 2).await;
    let moved = GameRow {
        version: 2,
        state: r#"{"moved":true}"#.to_owned(),
        updated_at: ms(40),
        deadline_at: Some(ms(99)),
        recent_events: r#"[{"version":1},{"version":2}]"#.to_owned(),
        premove_nodes: ByColor {
            white: None,
            black: Some(Uuid::new_v4()),
        },
        ..games[0].clone()
    };
    // An ending with no reward to settle (the store is not asked to).
    let ended = GameRow {
        version: 1,
        status: GameStage::Finished,
        result: Some(r#"{"winner":"white","reason":"resign"}"#.to_owned()),
        state: r#"{"ended":true}"#.to_owned(),
        updated_at: ms(41),
        premove_nodes: ByColor {
            white: Some(Uuid::new_v4()),
            black: Some(Uuid::new_v4()),
        },
        ..games[1].clone()
    };
    let announced = std::sync::Mutex::new(Vec::new());
    let outcome = store
        .write_batch(
            &Batch::of_writes(vec![
                write(&moved, 0, vec![move_row(0, "e2e4"), move_row(1, "e7e5")]),
                write(&ended, 0, vec![]),
            ]),
            "chess_test",
            |outcome| {
                announced.lock().expect("lock").push(outcome.writes.len());
                vec!["notice".to_owned()]
            },
        )
        .await
        .expect("the batch commits");
    assert!(
        outcome
            .writes
            .iter()
            .all(|write| *write == WriteOutcome::Written)
    );
    // Changes alone go in one round trip on both backends.
    assert_eq!(outcome.path, BatchPath::OneStatement);
    assert_eq!(
        store.game(moved.id).await.expect("read"),
        Some(moved.clone())
    );
    assert_eq!(
        store.game(ended.id).await.expect("read"),
        Some(ended.clone())
    );
    assert_eq!(
        store.moves(moved.id).await.expect("moves"),
        vec![move_row(0, "e2e4"), move_row(1, "e7e5")]
    );
    assert_eq!(store.moves(ended.id).await.expect("moves"), vec![]);
    // Only Postgres has other nodes to tell.
    let postgres = backend == Backend::Postgres;
    assert_eq!(outcome.notices_sent, usize::from(postgres));
    assert_eq!(
        *announced.lock().expect("lock"),
        if postgres { vec![2] } else { vec![] }
    );
    store.close().await;
}

/// A batch larger than one of SQLite's inserts takes (256 rows), twice in a
/// row: every game and every move of both lands, the second batch's rows
/// are its own (the first one's are gone from SQLite's batch tables), and a
/// stale game among them is refused alone.
async fn large_batches_contract(backend: Backend) {
    let Some((store, _db)) = fresh_store(backend).await else {
        return;
    };
    let (_, _, games) = stored_games(&store, 300).await;
    let after = |row: &GameRow, version: i64| GameRow {
        version,
        state: format!(r#"{{"after":{version}}}"#),
        ..row.clone()
    };
    let first: Vec<GameWrite> = games
        .iter()
        .map(|row| write(&after(row, 1), 0, vec![move_row(0, "e2e4")]))
        .collect();
    let outcome = store
        .write_batch(&Batch::of_writes(first), "chess_test", |_| Vec::new())
        .await
        .expect("the first batch commits");
    assert!(
        outcome
            .writes
            .iter()
            .all(|write| matches!(write, WriteOutcome::Written))
    );
    // The second batch: every game moves again but the last, which still
    // expects the version the first batch moved on from.
    let second: Vec<GameWrite> = games
        .iter()
        .enumerate()
        .map(|(index, row)| {
            let expected = if index == games.len() - 1 { 0 } else { 1 };
            write(&after(row, 2), expected, vec![move_row(1, "e7e5")])
        })
        .collect();
    let outcome = store
        .write_batch(&Batch::of_writes(second), "chess_test", |_| Vec::new())
        .await
        .expect("the second batch commits");
    let conflicts = outcome
        .writes
        .iter()
        .filter(|write| matches!(write, WriteOutcome::Conflict))
        .count();
    assert_eq!(conflicts, 1);
    assert!(matches!(
        outcome.writes.last(),
        Some(WriteOutcome::Conflict)
    ));
    for (index, row) in games.iter().enumerate() {
        let stale = index == games.len() - 1;
        let version = if stale { 1 } else { 2 };
        assert_eq!(
            store.game(row.id).await.expect("read"),
            Some(after(row, version))
        );
        let mut moves = vec![move_row(0, "e2e4")];
        if !stale {
            moves.push(move_row(1, "e7e5"));
        }
        assert_eq!(store.moves(row.id).await.expect("moves"), moves);
    }
    store.close().await;
}

#[tokio::test]
async fn large_batches_contract_on_sqlite() {
    large_batches_contract(Backend::Sqlite).await;
}

#[tokio::test]
async fn large_batches_contract_on_postgres() {
    large_batches_contract(Backend::Postgres).await;
}

/// Group commit: one game's lost compare-and-set refuses that game alone;
/// a failing statement fails the whole batch and stores nothing.
async fn batch_contract(backend: Backend) {
    let Some((store, _db)) = fresh_store(backend).await else {
        return;
    };
    let (white, black, games) = stored_games(&store, 3).await;
    let mut next: Vec<GameRow> = games
        .iter()
        .map(|row| GameRow {
            version: 1,
            deadline_at: Some(ms(99)),
            recent_events: "[1]".to_owned(),
            premove_nodes: ByColor {
                white: Some(Uuid::new_v4()),
                black: None,
            },
            ..row.clone()
        })
        .collect();
    let writes = vec![
        write(&next[0], 0, vec![move_row(0, "e2e4")]),
        // Expects a version the game never had: another node won.
        write(&next[1], 7, vec![move_row(0, "d2d4")]),
        write(&next[2], 0, vec![move_row(0, "c2c4")]),
    ];
    let outcome = store
        .write_batch(&Batch::of_writes(writes), "chess_test", |_| {
            vec!["notice".to_owned()]
        })
        .await
        .expect("the batch commits");
    // SQLite's one round trip refuses the stale game alone; Postgres's
    // function hands such a batch back to the statements.
    let path = if backend == Backend::Sqlite {
        BatchPath::OneStatement
    } else {
        BatchPath::Statements
    };
    assert_eq!(outcome.path, path);
    let outcomes = outcome.writes;
    assert_eq!(
        outcomes,
        [
            WriteOutcome::Written,
            WriteOutcome::Conflict,
            WriteOutcome::Written
        ]
    );
    assert_eq!(
        store.game(next[0].id).await.expect("read"),
        Some(next[0].clone())
    );
    assert_eq!(
        store.game(next[1].id).await.expect("read"),
        Some(games[1].clone())
    );
    assert_eq!(
        store.game(next[2].id).await.expect("read"),
        Some(next[2].clone())
    );
    assert_eq!(store.moves(next[1].id).await.expect("moves"), vec![]);
    assert_eq!(
        store.moves(next[2].id).await.expect("moves"),
        vec![move_row(0, "c2c4")]
    );

    // A ply written twice fails the statement: nothing of the batch lands,
    // not even the other game's good change.
    let good = GameRow {
        version: 2,
        ..next[0].clone()
    };
    let bad = GameRow {
        version: 2,
        ..next[2].clone()
    };
    let failed = store
        .write_batch(
            &Batch::of_writes(vec![
                write(&good, 1, vec![move_row(1, "e7e5")]),
                write(&bad, 1, vec![move_row(0, "c2c4")]),
            ]),
            "chess_test",
            |_| Vec::new(),
        )
        .await;
    assert!(failed.is_err(), "{failed:?}");
    assert_eq!(
        store.game(good.id).await.expect("read").map(|g| g.version),
        Some(1)
    );
    assert_eq!(store.moves(good.id).await.expect("moves").len(), 1);
    // The failed batch was rolled back whole: the next one commits.
    let retried = store
        .write_batch(
            &Batch::of_writes(vec![write(&good, 1, vec![move_row(1, "e7e5")])]),
            "chess_test",
            |_| Vec::new(),
        )
        .await
        .expect("the next batch commits");
    assert!(matches!(retried.writes[0], WriteOutcome::Written));
    assert_eq!(store.moves(good.id).await.expect("moves").len(), 2);

    // A rematch is stored with the change that starts it; a conflicting
    // change leaves no rematch behind.
    let rematch = GameRow {
        id: Uuid::new_v4(),
        white_id: Some(black.id),
        black_id: Some(white.id),
        rematch_of: Some(next[0].id),
        ..game(&black, &white)
    };
    next[0].version = 3;
    next[0].status = GameStage::Finished;
    next[0].rematch_id = Some(rematch.id);
    let mut conflicting = write(&next[0], 0, vec![]);
    conflicting.rematch = Some(rematch.clone());
    let outcomes = store
        .write_batch(
            &Batch::of_writes(vec![conflicting.clone()]),
            "chess_test",
            |_| Vec::new(),
        )
        .await
        .expect("commits")
        .writes;
    assert!(matches!(outcomes[0], WriteOutcome::Conflict));
    assert_eq!(store.game(rematch.id).await.expect("read"), None);
    conflicting.expected_version = 2;
    let outcomes = store
        .write_batch(&Batch::of_writes(vec![conflicting]), "chess_test", |_| {
            Vec::new()
        })
        .await
        .expect("commits")
        .writes;
    assert!(matches!(outcomes[0], WriteOutcome::Written));
    assert_eq!(store.game(rematch.id).await.expect("read"), Some(rematch));
    store.close().await;
}

/// Timers and nodes: due games come from the stored deadline; a node's
/// heartbeat says who is alive; a restarted node replaces its earlier rows.
/// A game's set-up rides in the group commit: new players, a new game that
/// points at them and a seat taken commit with the other games' changes,
/// each claim answered on its own; a batch that fails stores none of them.
async fn setup_batch_contract(backend: Backend) {
    let Some((store, _db)) = fresh_store(backend).await else {
        return;
    };
    let (white, black) = (player(), player());
    store.insert_player(&white).await.expect("insert");
    let mut open = game(&white, &black);
    open.black_id = None;
    open.status = GameStage::Open;
    let mut taken = open.clone();
    taken.id = Uuid::new_v4();
    store.insert_game(&taken).await.expect("insert");
    let latecomer = player();
    store.insert_player(&latecomer).await.expect("insert");
    assert!(
        store
            .claim_seat(&claim(&taken, &latecomer, 5))
            .await
            .expect("claim")
    );
    let playing = game(&white, &white);
    store.insert_game(&playing).await.expect("insert");
    let moved = GameRow {
        version: 1,
        ..playing.clone()
    };
    // An open game whose white seat is free, taken in the batch.
    let mut white_free = game(&white, &latecomer);
    white_free.white_id = None;
    white_free.status = GameStage::Open;
    store.insert_game(&white_free).await.expect("insert");
    let white_claim = SeatClaim {
        white: true,
        player: black.id,
        state: r#"{"started":true}"#.to_owned(),
        ..claim(&white_free, &black, 8)
    };

    // Black is new, and so is the open game; a second claim on the game
    // already taken loses, alone, and the free seat is taken.
    let outcome = store
        .write_batch(
            &Batch {
                players: vec![black.clone(), white.clone()],
                games: vec![open.clone()],
                claims: vec![claim(&taken, &black, 6), white_claim],
                writes: vec![write(&moved, 0, vec![move_row(0, "e2e4")])],
            },
            "chess_test",
            |_| Vec::new(),
        )
        .await
        .expect("the batch commits");
    assert_eq!(outcome.claimed, vec![false, true]);
    assert!(matches!(outcome.writes[..], [WriteOutcome::Written]));
    // A game's set-up rides in the one round trip on both backends.
    assert_eq!(outcome.path, BatchPath::OneStatement);
    assert_eq!(
        store.game(white_free.id).await.expect("read"),
        Some(GameRow {
            white_id: Some(black.id),
            status: GameStage::Playing,
            state: r#"{"started":true}"#.to_owned(),
            updated_at: ms(8),
            deadline_at: Some(ms(8 + 30_000)),
            ..white_free.clone()
        })
    );
    assert_eq!(
        store.player(black.id).await.expect("read"),
        Some(black.clone())
    );
    assert_eq!(
        store.player(white.id).await.expect("read"),
        Some(white.clone())
    );
    assert_eq!(store.game(open.id).await.expect("read"), Some(open.clone()));
    assert_eq!(
        store
            .game(taken.id)
            .await
            .expect("read")
            .and_then(|g| g.black_id),
        Some(latecomer.id)
    );
    assert_eq!(store.moves(playing.id).await.expect("moves").len(), 1);

    // A claim and a new game in the batch that fails are not stored.
    let newcomer = player();
    let another = game(&newcomer, &newcomer);
    let failed = store
        .write_batch(
            &Batch {
                players: vec![newcomer.clone()],
                games: vec![another.clone()],
                claims: vec![claim(&open, &newcomer, 7)],
                // The ply is already stored: the statement fails.
                writes: vec![write(
                    &GameRow {
                        version: 2,
                        ..moved.clone()
                    },
                    1,
                    vec![move_row(0, "d2d4")],
                )],
            },
            "chess_test",
            |_| Vec::new(),
        )
        .await;
    assert!(failed.is_err(), "{failed:?}");
    assert_eq!(store.player(newcomer.id).await.expect("read"), None);
    assert_eq!(store.game(another.id).await.expect("read"), None);
    assert_eq!(store.game(open.id).await.expect("read"), Some(open));
    store.close().await;
}

/// An ending settles its reward in the batch that stores it, exactly as
/// the ledger decides (`ledger.rs` checks each case through the ledger
/// alone): on both backends an ending won by an account goes statement by
/// statement, through the ledger; any other is written in one round trip
/// and pays nothing.
async fn endings_batch_contract(backend: Backend) {
    let Some((store, _db)) = fresh_store(backend).await else {
        return;
    };
    let of_kind = |kind| PlayerRow { kind, ..player() };
    let (a, b) = (of_kind(PlayerKind::Account), of_kind(PlayerKind::Account));
    let (guest, computer) = (player(), of_kind(PlayerKind::Computer));
    for someone in [&a, &b, &guest, &computer] {
        store.insert_player(someone).await.expect("insert");
    }
    let won = |winner, reason| GameResult {
        winner: Some(winner),
        reason,
    };
    let drawn = GameResult {
        winner: None,
        reason: EndReason::Agreement,
    };
    let cases = [
        (&a, &b, won(Color::White, EndReason::Checkmate), Some(a.id)),
        (
            &a,
            &b,
            won(Color::Black, EndReason::Resignation),
            Some(b.id),
        ),
        (&b, &a, won(Color::White, EndReason::Timeout), Some(b.id)),
        (&a, &b, drawn, None),
        (&a, &b, won(Color::White, EndReason::Aborted), None),
        (&a, &guest, won(Color::White, EndReason::Resignation), None),
        (&guest, &b, won(Color::White, EndReason::Resignation), None),
        (&guest, &b, won(Color::Black, EndReason::Timeout), None),
        (&computer, &a, won(Color::White, EndReason::Checkmate), None),
        (&a, &a, won(Color::Black, EndReason::Checkmate), None),
        (&guest, &guest, drawn, None),
    ];
    for (white, black, result, payee) in cases {
        let playing = game(white, black);
        store.insert_game(&playing).await.expect("insert");
        let ended = GameRow {
            version: 1,
            status: GameStage::Finished,
            result: Some(format!("{result:?}")),
            ..playing.clone()
        };
        let ending = GameWrite {
            settle: Some(result),
            ..write(&ended, 0, vec![move_row(0, "e2e4")])
        };
        let outcome = store
            .write_batch(&Batch::of_writes(vec![ending]), "chess_test", |_| {
                Vec::new()
            })
            .await
            .expect("the batch commits");
        let case = format!("{result:?} between {} and {}", white.kind, black.kind);
        assert_eq!(outcome.writes, [WriteOutcome::Written], "{case}");
        // The ledger holds an entry for the game only for whom it pays.
        let mut paid = Vec::new();
        for account in [&a, &b] {
            let entries = store.reward_entries(account.id, 100).await.expect("read");
            if entries.iter().any(|entry| entry.game_id == playing.id) {
                paid.push(account.id);
            }
        }
        assert_eq!(paid, Vec::from_iter(payee), "{case}");
        let account_won = result.reason != EndReason::Aborted
            && result.winner.is_some_and(|winner| {
                let seats = ByColor {
                    white: white.kind,
                    black: black.kind,
                };
                *seats.get(winner) == PlayerKind::Account
            });
        let path = if !account_won {
            BatchPath::OneStatement
        } else {
            BatchPath::Statements
        };
        assert_eq!(outcome.path, path, "{case}");
        assert_eq!(
            store.game(ended.id).await.expect("read"),
            Some(ended),
            "{case}"
        );
        assert_eq!(
            store.moves(playing.id).await.expect("moves").len(),
            1,
            "{case}"
        );
    }
    store.close().await;
}

/// The two ways of writing a batch store it alike: the same batch, written
/// in one go in one database and statement by statement in another, leaves
/// the same rows in both. The second goes statement by statement because
/// one of its writes takes back moves from a ply it never reached, which
/// deletes nothing.
async fn both_ways_store_alike_contract(backend: Backend) {
    let (Some((one_go, _one_go_db)), Some((by_statements, _statements_db))) =
        (fresh_store(backend).await, fresh_store(backend).await)
    else {
        return;
    };
    // The rows both databases hold before the batch.
    let (white, black) = (player(), player());
    let mut open_black = game(&white, &black);
    open_black.black_id = None;
    open_black.status = GameStage::Open;
    let mut open_white = game(&white, &black);
    open_white.white_id = None;
    open_white.status = GameStage::Open;
    let (playing, ending) = (game(&white, &black), game(&white, &black));
    for store in [&one_go, &by_statements] {
        for someone in [&white, &black] {
            store.insert_player(someone).await.expect("insert");
        }
        for row in [&open_black, &open_white, &playing, &ending] {
            store.insert_game(row).await.expect("insert");
        }
    }
    // The batch: a new player and an existing one, a new game, three claims
    // (the second on a seat the first takes), a move that changes only what
    // a move changes, and an ending a guest wins.
    let newcomer = player();
    let new_game = GameRow {
        deadline_at: Some(ms(30_000)),
        computer_level: Some(2),
        premove_nodes: ByColor {
            white: Some(Uuid::new_v4()),
            black: None,
        },
        ..game(&newcomer, &white)
    };
    let moved = GameRow {
        version: 1,
        state: r#"{"moved":true}"#.to_owned(),
        updated_at: ms(40),
        deadline_at: Some(ms(99)),
        recent_events: r#"[{"version":1}]"#.to_owned(),
        premove_nodes: ByColor {
            white: None,
            black: Some(Uuid::new_v4()),
        },
        ..playing.clone()
    };
    let timed_move = MoveRow {
        clock_ms: Some(59_000),
        ..move_row(1, "e7e5")
    };
    let ended = GameRow {
        version: 1,
        status: GameStage::Finished,
        result: Some(r#"{"winner":"white","reason":"resignation"}"#.to_owned()),
        state: r#"{"ended":true}"#.to_owned(),
        updated_at: ms(41),
        deadline_at: None,
        ..ending.clone()
    };
    let batch = |take_back: Option<u32>| Batch {
        players: vec![newcomer.clone(), white.clone()],
        games: vec![new_game.clone()],
        claims: vec![
            claim(&open_black, &newcomer, 6),
            claim(&open_black, &black, 7),
            SeatClaim {
                white: true,
                ..claim(&open_white, &newcomer, 8)
            },
        ],
        writes: vec![
            GameWrite {
                keep_moves: take_back,
                ..write(&moved, 0, vec![move_row(0, "e2e4"), timed_move.clone()])
            },
            GameWrite {
                settle: Some(GameResult {
                    winner: Some(Color::White),
                    reason: EndReason::Resignation,
                }),
                ..write(&ended, 0, vec![move_row(0, "d2d4")])
            },
        ],
    };

    let in_one_go = one_go
        .write_batch(&batch(None), "chess_test", |_| Vec::new())
        .await
        .expect("commits");
    let statement_by_statement = by_statements
        .write_batch(&batch(Some(5)), "chess_test", |_| Vec::new())
        .await
        .expect("commits");

    assert_eq!(in_one_go.path, BatchPath::OneStatement);
    assert_eq!(statement_by_statement.path, BatchPath::Statements);
    for outcome in [&in_one_go, &statement_by_statement] {
        assert_eq!(outcome.claimed, [true, false, true]);
        assert_eq!(
            outcome.writes,
            [WriteOutcome::Written, WriteOutcome::Written]
        );
    }
    for id in [white.id, black.id, newcomer.id] {
        let stored = one_go.player(id).await.expect("read");
        assert!(stored.is_some());
        assert_eq!(stored, by_statements.player(id).await.expect("read"));
    }
    for id in [
        open_black.id,
        open_white.id,
        playing.id,
        ending.id,
        new_game.id,
    ] {
        let stored = one_go.game(id).await.expect("read");
        assert!(stored.is_some());
        assert_eq!(
            stored,
            by_statements.game(id).await.expect("read"),
            "game {id}"
        );
        assert_eq!(
            one_go.moves(id).await.expect("moves"),
            by_statements.moves(id).await.expect("moves"),
            "moves of {id}"
        );
    }
    // And they are the batch's rows, not the same mistake twice.
    assert_eq!(one_go.game(playing.id).await.expect("read"), Some(moved));
    assert_eq!(one_go.game(ending.id).await.expect("read"), Some(ended));
    assert_eq!(
        one_go.game(new_game.id).await.expect("read"),
        Some(new_game)
    );
    assert_eq!(
        one_go.moves(playing.id).await.expect("moves"),
        [move_row(0, "e2e4"), timed_move]
    );
    let taken = |row: Option<GameRow>| row.map(|row| (row.white_id, row.black_id, row.status));
    assert_eq!(
        taken(one_go.game(open_black.id).await.expect("read")),
        Some((Some(white.id), Some(newcomer.id), GameStage::Playing))
    );
    assert_eq!(
        taken(one_go.game(open_white.id).await.expect("read")),
        Some((Some(newcomer.id), Some(black.id), GameStage::Playing))
    );
    one_go.close().await;
    by_statements.close().await;
}

async fn timers_and_nodes_contract(backend: Backend) {
    let Some((store, _db)) = fresh_store(backend).await else {
        return;
    };
    let (white, black) = (player(), player());
    store.insert_player(&white).await.expect("insert");
    store.insert_player(&black).await.expect("insert");
    let mut due = game(&white, &black);
    due.deadline_at = Some(ms(1_000));
    let mut later = game(&white, &black);
    later.deadline_at = Some(ms(5_000));
    let mut untimed = game(&white, &black);
    untimed.deadline_at = None;
    let mut finished = game(&white, &black);
    finished.deadline_at = Some(ms(500));
    finished.status = GameStage::Finished;
    for row in [&due, &later, &untimed, &finished] {
        store.insert_game(row).await.expect("insert");
    }
    assert_eq!(
        store.due_games(ms(2_000), 10).await.expect("due"),
        vec![due.id]
    );
    assert_eq!(
        store.due_games(ms(6_000), 10).await.expect("due"),
        vec![due.id, later.id]
    );
    assert_eq!(
        store.due_games(ms(6_000), 1).await.expect("due"),
        vec![due.id]
    );
    // The deadline is corrected at the game's version only.
    assert!(
        store
            .set_deadline(due.id, 0, Some(ms(9_000)))
            .await
            .expect("set")
    );
    assert!(!store.set_deadline(due.id, 5, None).await.expect("set"));
    assert_eq!(
        store.due_games(ms(6_000), 10).await.expect("due"),
        vec![later.id]
    );

    let (first, second) = (Uuid::new_v4(), Uuid::new_v4());
    store
        .register_node(first, "a:1", ms(100))
        .await
        .expect("register");
    store
        .register_node(second, "b:1", ms(100))
        .await
        .expect("register");
    let mut alive = store
        .heartbeat(first, "a:1", ms(200), ms(150))
        .await
        .expect("beat");
    alive.sort();
    assert_eq!(alive, vec![first]);
    let mut alive = store
        .heartbeat(second, "b:1", ms(210), ms(100))
        .await
        .expect("beat");
    alive.sort();
    let mut both = vec![first, second];
    both.sort();
    assert_eq!(alive, both);
    // "a:1" restarts under a new id: its earlier run is gone at once.
    let restarted = Uuid::new_v4();
    store
        .register_node(restarted, "a:1", ms(300))
        .await
        .expect("register");
    let alive = store
        .heartbeat(second, "b:1", ms(310), ms(0))
        .await
        .expect("beat");
    assert!(!alive.contains(&first), "{alive:?}");
    assert!(alive.contains(&restarted), "{alive:?}");
    store.remove_node(second).await.expect("remove");
    let alive = store
        .heartbeat(restarted, "a:1", ms(320), ms(0))
        .await
        .expect("beat");
    assert_eq!(alive, vec![restarted]);
    store.close().await;
}

/// A player's games: from either seat, a game with them in both seats once,
/// unfinished ones newest change first, then the newest finished ones.
async fn games_of_player_contract(backend: Backend) {
    let Some((store, _db)) = fresh_store(backend).await else {
        return;
    };
    let (me, other) = (player(), player());
    store.insert_player(&me).await.expect("insert");
    store.insert_player(&other).await.expect("insert");
    let game_at = |white: &PlayerRow, black: &PlayerRow, status, updated| GameRow {
        status,
        updated_at: ms(updated),
        ..game(white, black)
    };
    let as_white = game_at(&me, &other, GameStage::Playing, 100);
    let as_black = game_at(&other, &me, GameStage::Playing, 300);
    let local = GameRow {
        mode: GameMode::Local,
        ..game_at(&me, &me, GameStage::Playing, 200)
    };
    let waiting_for_white = GameRow {
        white_id: None,
        ..game_at(&me, &me, GameStage::Open, 400)
    };
    let not_mine = game_at(&other, &other, GameStage::Playing, 500);
    let finished: Vec<GameRow> = (0..5)
        .map(|i| {
            let (white, black) = if i % 2 == 0 {
                (&me, &other)
            } else {
                (&other, &me)
            };
            game_at(white, black, GameStage::Finished, 1_000 + i)
        })
        .collect();
    for row in [&as_white, &as_black, &local, &waiting_for_white, &not_mine]
        .into_iter()
        .chain(&finished)
    {
        store.insert_game(row).await.expect("insert game");
    }

    let ids = |games: Vec<GameRow>| games.into_iter().map(|g| g.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.games_of_player(me.id, 3).await.expect("mine")),
        [
            waiting_for_white.id,
            as_black.id,
            local.id,
            as_white.id,
            finished[4].id,
            finished[3].id,
            finished[2].id,
        ]
    );
    assert_eq!(
        ids(store.games_of_player(me.id, 0).await.expect("mine")).len(),
        4,
        "no finished game when none is asked for"
    );
}

#[tokio::test]
async fn games_of_player_contract_on_sqlite() {
    games_of_player_contract(Backend::Sqlite).await;
}

#[tokio::test]
async fn games_of_player_contract_on_postgres() {
    games_of_player_contract(Backend::Postgres).await;
}

#[tokio::test]
async fn setup_batch_contract_on_sqlite() {
    setup_batch_contract(Backend::Sqlite).await;
}

#[tokio::test]
async fn setup_batch_contract_on_postgres() {
    setup_batch_contract(Backend::Postgres).await;
}

#[tokio::test]
async fn changes_batch_contract_on_sqlite() {
    changes_batch_contract(Backend::Sqlite).await;
}

#[tokio::test]
async fn changes_batch_contract_on_postgres() {
    changes_batch_contract(Backend::Postgres).await;
}

#[tokio::test]
async fn batch_contract_on_sqlite() {
    batch_contract(Backend::Sqlite).await;
}

#[tokio::test]
async fn batch_contract_on_postgres() {
    batch_contract(Backend::Postgres).await;
}

#[tokio::test]
async fn endings_batch_contract_on_sqlite() {
    endings_batch_contract(Backend::Sqlite).await;
}

#[tokio::test]
async fn endings_batch_contract_on_postgres() {
    endings_batch_contract(Backend::Postgres).await;
}

#[tokio::test]
async fn both_ways_store_alike_contract_on_sqlite() {
    both_ways_store_alike_contract(Backend::Sqlite).await;
}

#[tokio::test]
async fn both_ways_store_alike_contract_on_postgres() {
    both_ways_store_alike_contract(Backend::Postgres).await;
}

#[tokio::test]
async fn timers_and_nodes_contract_on_sqlite() {
    timers_and_nodes_contract(Backend::Sqlite).await;
}

#[tokio::test]
async fn timers_and_nodes_contract_on_postgres() {
    timers_and_nodes_contract(Backend::Postgres).await;
}

#[tokio::test]
async fn contract_on_sqlite() {
    contract(Backend::Sqlite).await;
}

#[tokio::test]
async fn contract_on_postgres() {
    contract(Backend::Postgres).await;
}
