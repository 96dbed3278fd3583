//! The node's writer (group commit) with the writes that set a game up: a
//! new player, a new game and a seat taken ride in the batches, and one bad
//! item does not take the rest of its batch down; and what it tells the
//! other nodes.

use chess_live::notice::{ChangeNotice, GAMES_CHANNEL, parse_game_notice};
use chess_live::writer::{LINGER_BELOW, LINGER_MIN_LIVE_GAMES, LiveGames, Writer, WriterSettings};
use chess_live::{
    GameMode, GameRow, GameStage, GameWrite, PlayerKind, PlayerRow, SeatClaim, UnixMs, WriteOutcome,
};
use chess_rules::ByColor;
use chess_server::metrics::Metrics;
use chess_store::Store;
use chess_store::testing::{Connection, Listener};
use uuid::Uuid;

use crate::helpers::{Backend, TestDatabase, WriteLock, fresh_store, sample};
use chess_store::on_both_stores;

/// A writer that commits each batch as soon as it takes it.
const AT_ONCE: WriterSettings = WriterSettings {
    queue: 64,
    linger: std::time::Duration::ZERO,
};

fn guest() -> PlayerRow {
    PlayerRow {
        id: Uuid::new_v4(),
        kind: PlayerKind::Guest,
        name: "quiet-heron-7".to_owned(),
        created_at: UnixMs::from_stored(1),
        bot: false,
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
        let (writer, task) = start_writer(
            &store,
            Uuid::new_v4(),
            &Metrics::new(),
            &LiveGames::default(),
            AT_ONCE,
        );

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
                .is_err_and(chess_live::StoreError::is_unavailable),
            "{after:?}"
        );
        store.close().await;
    }
);

/// Other nodes hear of the changes that landed and only of those: a write
/// that lost its compare-and-set and a claim on a seat taken first go
/// unannounced, a landed write's notice goes out as the owner made it, and
/// a seat taken is named (its nodes reread it). The lost write sends the
/// batch statement by statement.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_changes_that_landed_are_announced() {
    changes_announced(true).await;
}

/// As [`only_the_changes_that_landed_are_announced`] without the lost
/// write: the batch is one call of `chess_commit_batch`, which answers the
/// claims itself and announces only the seat it took.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_in_one_statement_announces_only_the_seat_it_took() {
    changes_announced(false).await;
}

async fn changes_announced(with_lost_write: bool) {
    let Some((store, db)) = fresh_store(Backend::Postgres).await else {
        return;
    };
    let white = guest();
    store.insert_player(&white).await.expect("insert");
    let playing = |version| GameRow {
        status: GameStage::Playing,
        version,
        black_id: Some(white.id),
        ..challenge(&white)
    };
    let (landing, losing) = (playing(3), playing(3));
    let (open, taken) = (challenge(&white), challenge(&white));
    for game in [&landing, &losing, &open, &taken] {
        store.insert_game(game).await.expect("insert");
    }
    let black = guest();
    store.insert_player(&black).await.expect("insert");
    let claim = |game: &GameRow| SeatClaim {
        game: game.id,
        white: false,
        player: black.id,
        state: "{}".to_owned(),
        now: UnixMs::from_stored(20),
        deadline_at: None,
        version: game.version,
    };
    assert!(store.claim_seat(&claim(&taken)).await.expect("claimed"));

    let mut listener = Listener::listen(&db.url, GAMES_CHANNEL)
        .await
        .expect("listener");
    let node = Uuid::new_v4();
    let metrics = Metrics::new();
    let (writer, task) = start_writer(&store, node, &metrics, &LiveGames::default(), AT_ONCE);
    let notice_of = |row: &GameRow| {
        ChangeNotice {
            id: row.id,
            version: row.version,
            change: None,
        }
        .to_json()
    };
    let write = |row: GameRow, expected_version| {
        let writer = writer.clone();
        let notice = Some(notice_of(&row));
        tokio::spawn(async move {
            writer
                .write(GameWrite {
                    row,
                    expected_version,
                    keep_moves: None,
                    new_moves: Vec::new(),
                    settle: None,
                    rematch: None,
                    notice,
                })
                .await
        })
    };
    // Held behind the lock, the four go in one batch.
    let lock = WriteLock::take_on(&db.url, Backend::Postgres).await;
    let landed = write(
        GameRow {
            version: 4,
            ..landing.clone()
        },
        3,
    );
    // Expects a version the game never had: another node won.
    let lost = with_lost_write.then(|| {
        write(
            GameRow {
                version: 4,
                ..losing.clone()
            },
            9,
        )
    });
    let seated = {
        let (writer, claim) = (writer.clone(), claim(&open));
        tokio::spawn(async move { writer.claim_seat(claim).await })
    };
    let too_late = {
        let (writer, claim) = (writer.clone(), claim(&taken));
        tokio::spawn(async move { writer.claim_seat(claim).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    lock.release().await;
    assert!(matches!(
        landed.await.expect("task"),
        Ok(WriteOutcome::Written)
    ));
    if let Some(lost) = lost {
        assert!(matches!(
            lost.await.expect("task"),
            Ok(WriteOutcome::Conflict)
        ));
    }
    assert!(seated.await.expect("task").expect("answered"));
    assert!(!too_late.await.expect("task").expect("answered"));

    // Everything the batch announced (a later write marks the end).
    let end = write(
        GameRow {
            version: 5,
            ..landing.clone()
        },
        4,
    );
    assert!(matches!(
        end.await.expect("task"),
        Ok(WriteOutcome::Written)
    ));
    let mut announced = Vec::new();
    while !announced
        .iter()
        .any(|(id, version, _)| (*id, *version) == (landing.id, 5))
    {
        let notification =
            tokio::time::timeout(std::time::Duration::from_secs(10), listener.recv())
                .await
                .expect("the notices arrive")
                .expect("a notification");
        let notice = parse_game_notice(&notification).expect("a game notice");
        assert_eq!(notice.node, node);
        announced.extend(notice.games.into_iter().map(|game| {
            let json = game.to_json();
            (game.id, game.version, json)
        }));
    }
    // Two batches or one, in whichever order the items queued.
    announced.sort();
    let mut expected = vec![
        (
            landing.id,
            4,
            notice_of(&GameRow {
                version: 4,
                ..landing.clone()
            }),
        ),
        (open.id, open.version, notice_of(&open)),
        (
            landing.id,
            5,
            notice_of(&GameRow {
                version: 5,
                ..landing.clone()
            }),
        ),
    ];
    expected.sort();
    assert_eq!(announced, expected);
    // Only the batch with the lost write went statement by statement (the
    // held items made one batch or two, and the last write one more).
    let text = metrics.encode();
    let batches = |path| {
        sample(
            &text,
            &format!("chess_commit_batches_total{{path=\"{path}\"}}"),
        )
        .unwrap_or(-1.0)
    };
    let statements = if with_lost_write { 1.0 } else { 0.0 };
    assert_eq!(batches("statements"), statements, "{text}");
    assert!(batches("one_statement") >= 1.0, "{text}");
    writer.stop();
    task.await.expect("the writer stops");
    store.close().await;
}

/// On SQLite the writer's commits are copied from the log into the
/// database file by the background checkpointer, not by a commit of the
/// writer's own (which waits for 10,000 pages): a copy of the database
/// file alone, without its `-wal`, holds a game set up through the writer
/// once the checkpointer has run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_checkpointer_copies_committed_pages_into_the_database_file() {
    let Some((store, db)) = fresh_store(Backend::Sqlite).await else {
        return;
    };
    let metrics = Metrics::new();
    let (writer, task) = start_writer(
        &store,
        Uuid::new_v4(),
        &metrics,
        &LiveGames::default(),
        AT_ONCE,
    );
    let white = guest();
    writer.insert_player(white.clone()).await.expect("stored");
    let game = challenge(&white);
    writer.insert_game(game.clone()).await.expect("stored");

    // Only a checkpoint puts the game in the file itself: the writer's
    // own would wait for 10,000 pages, and the test's store stays open
    // (the last connection to close would checkpoint too).
    let file = db.url.trim_start_matches("sqlite://").to_owned();
    let in_the_file_alone = || async {
        let copy = format!("{file}.copy");
        std::fs::copy(&file, &copy).expect("copy the database file");
        let mut copied = Connection::open(&format!("sqlite://{copy}?mode=ro"))
            .await
            .expect("open the copy");
        // Before any checkpoint the file has not even the tables.
        let found = copied
            .rows(&format!("select id from games where id = '{}'", game.id))
            .await
            .unwrap_or_default();
        copied.close().await;
        found == vec![vec![Some(game.id.to_string())]]
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !in_the_file_alone().await {
        assert!(
            std::time::Instant::now() < deadline,
            "the game is still only in the log"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let metrics = metrics.encode();
    assert!(sample(&metrics, "chess_wal_checkpoints_total") >= Some(1.0));
    assert!(sample(&metrics, "chess_wal_pages") > Some(0.0));

    writer.stop();
    task.await.expect("the writer stops");
}

/// The node's writer over `store`, as the server starts it: reporting to
/// `metrics`, lingering by `live_games`, and on SQLite with the store's
/// checkpoints after its commits.
fn start_writer(
    store: &Store,
    node: Uuid,
    metrics: &Metrics,
    live_games: &LiveGames,
    settings: WriterSettings,
) -> (Writer, tokio::task::JoinHandle<()>) {
    let checkpoints = metrics.clone();
    store.start_checkpoints(move |checkpoint| checkpoints.wal_checkpointed(checkpoint.log_pages));
    Writer::start(
        std::sync::Arc::new(store.clone()),
        node,
        std::sync::Arc::new(metrics.clone()),
        live_games.clone(),
        settings,
    )
}

/// Transactions the writer committed, from its metrics.
fn transactions(metrics: &Metrics) -> f64 {
    sample(&metrics.encode(), "chess_commit_batch_seconds_count").unwrap_or(0.0)
}

/// A small batch waits for more when many games are live, and only then:
/// a player stored 100 ms after another shares its transaction within a
/// 2 s linger, and gets one of its own with few games live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_batch_lingers_for_more_only_while_many_games_are_live() {
    let Some((store, _db)) = fresh_store(Backend::Sqlite).await else {
        return;
    };
    let linger = std::time::Duration::from_secs(2);
    let two_players_apart = |writer: &Writer| {
        let (first, second) = (guest(), guest());
        let writer = writer.clone();
        async move {
            let early = tokio::spawn({
                let writer = writer.clone();
                async move { writer.insert_player(first).await }
            });
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            writer.insert_player(second).await.expect("stored");
            early.await.expect("task").expect("stored");
        }
    };
    for (live, expected) in [
        (LINGER_MIN_LIVE_GAMES, 1.0),
        (LINGER_MIN_LIVE_GAMES - 1, 2.0),
    ] {
        let metrics = Metrics::new();
        let live_games = LiveGames::default();
        live_games.set(live);
        let settings = WriterSettings { queue: 64, linger };
        let (writer, task) = start_writer(&store, Uuid::new_v4(), &metrics, &live_games, settings);
        two_players_apart(&writer).await;
        assert_eq!(
            transactions(&metrics),
            expected,
            "{live} games live: transactions for two players sent 100 ms apart"
        );
        writer.stop();
        task.await.expect("the writer stops");
    }
}

/// Lingering ends as soon as the batch is large enough: with a minute to
/// wait, [`LINGER_BELOW`] players sent together are all answered at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_that_fills_up_stops_lingering() {
    let Some((store, _db)) = fresh_store(Backend::Sqlite).await else {
        return;
    };
    let metrics = Metrics::new();
    let live_games = LiveGames::default();
    live_games.set(LINGER_MIN_LIVE_GAMES);
    let settings = WriterSettings {
        queue: 64,
        linger: std::time::Duration::from_secs(60),
    };
    let (writer, task) = start_writer(&store, Uuid::new_v4(), &metrics, &live_games, settings);
    let stores: Vec<_> = (0..LINGER_BELOW)
        .map(|_| {
            let writer = writer.clone();
            tokio::spawn(async move { writer.insert_player(guest()).await })
        })
        .collect();
    let answered = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        for stored in stores {
            stored.await.expect("task").expect("stored");
        }
    })
    .await;
    assert!(answered.is_ok(), "a full batch still waited out its linger");
    writer.stop();
    task.await.expect("the writer stops");
}
