//! Players' pages and archives: the archive kept from real games,
//! keyset pages with filters, counts, the Postgres plans of every page query,
//! the streamed lichess-shaped export of 10,000 games, and the lobby's
//! `moved` message, on one node and across two.

use std::collections::HashSet;
use std::time::Duration;

use chess_store::{ArchiveCursor, ArchiveFilter, Outcome, Store};
use serde_json::{Value, json};

use crate::helpers::{
    Backend, Guest, TestApp, TestDatabase, correspondence, play_moves, spawn_app, start,
};
use crate::on_both_backends;

/// Fool's mate between `white` and `black` (black wins), played through the
/// server: the archive rows come from the real write path. The game's id.
async fn fools_mate(app: &TestApp, white: &Guest, black: &Guest) -> String {
    let game_id = app.online_game(white, black, correspondence()).await;
    let mut white_socket = app.socket(&game_id, Some(white)).await;
    let mut black_socket = app.socket(&game_id, Some(black)).await;
    white_socket.hello().await;
    black_socket.hello().await;
    play_moves(
        &mut white_socket,
        &mut black_socket,
        &["f2f3", "e7e5", "g2g4", "d8h4"],
    )
    .await;
    let ended = white_socket.recv_event("ended").await;
    assert_eq!(ended["event"]["result"]["reason"], "checkmate");
    game_id
}

/// A random uuid made by the database, per dialect.
fn uuid_sql(backend: Backend) -> &'static str {
    match backend {
        Backend::Postgres => "gen_random_uuid()::text",
        Backend::Sqlite => {
            "lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || \
             substr(hex(randomblob(2)), 2) || '-a' || substr(hex(randomblob(2)), 2) || '-' || \
             hex(randomblob(6)))"
        }
    }
}

/// `count` copies of finished game `original` (new ids, its moves too), each
/// finished `i` ms after the original (i = 1..=count), with the seats,
/// time control and result given as SQL expressions of `i` and of the
/// original's columns. Inserted finished, so the archive trigger files them.
async fn clone_games(
    db: &TestDatabase,
    backend: Backend,
    original: &str,
    count: usize,
    seats: (&str, &str),
    time_control: &str,
    result: &str,
) {
    let series = match backend {
        Backend::Postgres => format!("generate_series(1, {count}) as n (i)"),
        Backend::Sqlite => format!(
            "(with recursive s(i) as (select 1 union all select i + 1 from s where i < {count}) \
             select i from s) as n"
        ),
    };
    let uuid = uuid_sql(backend);
    db.raw(&format!(
        "insert into games (id, mode, white_id, black_id, computer_level, time_control, status, \
         result, state, version, rematch_of, rematch_id, created_at, updated_at, deadline_at, \
         recent_events, premove_nodes) \
         select {uuid}, g.mode, {white}, {black}, g.computer_level, {time_control}, 'finished', \
         {result}, g.state, g.version, null, null, g.created_at, g.updated_at + n.i, null, '[]', null \
         from games g cross join {series} where g.id = '{original}'",
        white = seats.0,
        black = seats.1,
    ))
    .await
    .expect("games cloned");
    db.raw(&format!(
        "insert into moves (game_id, ply, uci, san, clock_ms, record, played_at) \
         select c.id, m.ply, m.uci, m.san, m.clock_ms, m.record, m.played_at \
         from games c cross join moves m \
         where m.game_id = '{original}' and c.id <> '{original}' \
         and not exists (select 1 from moves x where x.game_id = c.id)"
    ))
    .await
    .expect("moves cloned");
}

async fn archive_page(app: &TestApp, username: &str, query: &str) -> Value {
    let (status, body) = app
        .get(&format!("/api/players/{username}/games?{query}"), None)
        .await;
    assert_eq!(status, 200, "{query}: {body}");
    body
}

/// Every page of a query, following `next`: the game ids in order.
async fn all_pages(app: &TestApp, username: &str, query: &str) -> Vec<Value> {
    let mut entries = Vec::new();
    let mut next: Option<String> = None;
    for _ in 0..1_000 {
        let mut q = query.to_owned();
        if let Some(cursor) = &next {
            q.push_str(&format!("&before={cursor}"));
        }
        let page = archive_page(app, username, &q).await;
        entries.extend(page["games"].as_array().expect("games").iter().cloned());
        match page["next"].as_str() {
            Some(cursor) => next = Some(cursor.to_owned()),
            None => return entries,
        }
    }
    panic!("the pages never end");
}

on_both_backends!(
    the_archive_pages_filters_and_counts_finished_games,
    |app: TestApp| async move {
        let (a, b, c) = (app.guest().await, app.guest().await, app.guest().await);
        let alice = app.sign_up(&a, "Alice").await;
        let bob = app.sign_up(&b, "Bob").await;
        let carol = app.sign_up(&c, "Carol").await;
        let game = fools_mate(&app, &alice, &bob).await;

        // The game itself, from both sides, as the real write path filed it.
        let bobs = archive_page(&app, "bob", "").await;
        assert_eq!(bobs["next"], Value::Null);
        let entry = &bobs["games"][0];
        assert_eq!(entry["game_id"], game.as_str(), "{bobs}");
        assert_eq!(entry["url"], format!("/game/{game}"));
        assert_eq!(entry["result"], "win");
        assert_eq!(entry["color"], "black");
        assert_eq!(entry["reason"], "checkmate");
        assert_eq!(entry["speed"], "correspondence");
        assert_eq!(entry["opponent"]["name"], "Alice");
        assert_eq!(entry["opponent"]["url"], "/@/Alice");
        assert_eq!(
            archive_page(&app, "ALICE", "").await["games"][0]["result"],
            "loss"
        );

        // 60 more for Alice: against Bob and Carol, three speeds, every result,
        // and 5 aborted (in the archive, in no count).
        let db = app.db.as_ref().expect("a test database");
        let tc = |initial: u64, increment: u64| {
            format!(
                "'{{\"kind\":\"clock\",\"initial_ms\":{initial},\"increment_ms\":{increment}}}'"
            )
        };
        let (a_id, b_id, c_id) = (&alice.id, &bob.id, &carol.id);
        let seats_vs = |other: &str| (format!("'{a_id}'"), format!("'{other}'"));
        let won = "'{\"winner\":\"white\",\"reason\":\"resignation\"}'";
        let lost = "'{\"winner\":\"black\",\"reason\":\"timeout\"}'";
        let drawn = "'{\"winner\":null,\"reason\":\"agreement\"}'";
        let aborted = "'{\"winner\":null,\"reason\":\"aborted\"}'";
        for (count, other, time_control, result) in [
            (20, b_id, tc(180_000, 2_000), won),    // blitz wins vs Bob
            (15, c_id, tc(60_000, 0), lost),        // bullet losses vs Carol
            (10, b_id, tc(900_000, 10_000), drawn), // rapid draws vs Bob
            (5, c_id, tc(15_000, 0), aborted),      // ultra-bullet, aborted
            (10, c_id, tc(180_000, 2_000), lost),   // blitz losses vs Carol
        ] {
            let (white, black) = seats_vs(other);
            clone_games(
                db,
                app.backend,
                &game,
                count,
                (&white, &black),
                &time_control,
                result,
            )
            .await;
        }

        let (status, profile) = app.get("/api/players/alice", None).await;
        assert_eq!(status, 200, "{profile}");
        assert_eq!(profile["username"], "Alice");
        assert_eq!(
            profile["counts"],
            json!({ "games": 56, "wins": 20, "draws": 10, "losses": 26 })
        );
        let (_, bob_profile) = app.get("/api/players/Bob", None).await;
        assert_eq!(bob_profile["counts"]["wins"], 1);

        // Every page of 7, newest first, each game once, the real one last.
        let entries = all_pages(&app, "alice", "limit=7").await;
        assert_eq!(entries.len(), 61);
        let ids: HashSet<&str> = entries
            .iter()
            .filter_map(|e| e["game_id"].as_str())
            .collect();
        assert_eq!(ids.len(), 61, "no game twice");
        let times: Vec<i64> = entries
            .iter()
            .filter_map(|e| e["finished_at"].as_i64())
            .collect();
        assert!(
            times.windows(2).all(|w| w[0] >= w[1]),
            "newest first: {times:?}"
        );
        assert_eq!(entries[60]["game_id"], game.as_str());

        // Filters, alone and together.
        let count = |entries: Vec<Value>| entries.len();
        assert_eq!(
            count(all_pages(&app, "alice", "speed=blitz&limit=9").await),
            30
        );
        assert_eq!(
            count(all_pages(&app, "alice", "speed=ultra_bullet").await),
            5
        );
        assert_eq!(
            count(all_pages(&app, "alice", "result=win&limit=6").await),
            20
        );
        assert_eq!(
            count(all_pages(&app, "alice", "result=loss&limit=6").await),
            26
        );
        assert_eq!(count(all_pages(&app, "alice", "result=draw").await), 10);
        assert_eq!(
            count(all_pages(&app, "alice", "vs=carol&limit=8").await),
            30
        );
        assert_eq!(count(all_pages(&app, "alice", "vs=Bob&limit=8").await), 31);
        let blitz_losses =
            all_pages(&app, "alice", "speed=blitz&result=loss&vs=carol&limit=4").await;
        assert_eq!(blitz_losses.len(), 10);
        assert!(blitz_losses.iter().all(|e| e["result"] == "loss"
            && e["speed"] == "blitz"
            && e["opponent"]["name"] == "Carol"));
        assert_eq!(count(all_pages(&app, "alice", "vs=nobody").await), 0);

        // Refusals.
        for query in [
            "speed=fast",
            "result=won",
            "limit=0",
            "limit=101",
            "before=12",
            "colour=white",
        ] {
            let (status, body) = app
                .get(&format!("/api/players/alice/games?{query}"), None)
                .await;
            assert_eq!(status, 422, "{query}: {body}");
        }
        let (status, body) = app.get("/api/players/nobody/games", None).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (404, Some("player_not_found"))
        );
        let (status, _) = app.get("/api/players/nobody", None).await;
        assert_eq!(status, 404);

        // The page, and a 404 page for a name nobody has.
        let (status, page) = app.get_text("/@/alice").await;
        assert_eq!(status, 200);
        assert!(page.contains("/js/player.js"), "{page}");
        let (status, page) = app.get_text("/@/nobody").await;
        assert_eq!(status, 404);
        assert!(page.contains("No such player"), "{page}");
    }
);

/// The plan of `sql` on Postgres, as JSON text.
async fn plan(db: &TestDatabase, sql: &str) -> String {
    let rows = db
        .rows(&format!("explain (format json) {sql}"))
        .await
        .expect("explain");
    rows.into_iter()
        .next()
        .and_then(|row| row.into_iter().next().flatten())
        .expect("a plan")
}

/// Every relation a plan reads, with how (`Seq Scan`, `Index Scan`, ...).
fn scans(plan: &Value, found: &mut Vec<(String, String)>) {
    match plan {
        Value::Object(node) => {
            if let Some(relation) = node.get("Relation Name").and_then(Value::as_str) {
                let how = node.get("Node Type").and_then(Value::as_str).unwrap_or("?");
                found.push((relation.to_owned(), how.to_owned()));
            }
            for value in node.values() {
                scans(value, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| scans(item, found)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_every_archive_page_reads_indexes_not_the_games() {
    let Some(app) = spawn_app(Backend::Postgres).await else {
        return;
    };
    let db = app.db.as_ref().expect("a test database");
    let guests = [
        app.guest().await,
        app.guest().await,
        app.guest().await,
        app.guest().await,
    ];
    let alice = app.sign_up(&guests[0], "Alice").await;
    let bob = app.sign_up(&guests[1], "Bob").await;
    let game = fools_mate(&app, &alice, &bob).await;
    // 3,000 games of Alice's and 3,000 between the others, then statistics.
    let blitz = "'{\"kind\":\"clock\",\"initial_ms\":180000,\"increment_ms\":2000}'";
    let rapid = "'{\"kind\":\"clock\",\"initial_ms\":600000,\"increment_ms\":0}'";
    let pairs = [
        (
            &alice.id,
            &bob.id,
            blitz,
            "'{\"winner\":\"white\",\"reason\":\"resignation\"}'",
        ),
        (
            &alice.id,
            &guests[2].id,
            rapid,
            "'{\"winner\":null,\"reason\":\"agreement\"}'",
        ),
        (
            &bob.id,
            &guests[2].id,
            blitz,
            "'{\"winner\":\"black\",\"reason\":\"timeout\"}'",
        ),
        (
            &guests[3].id,
            &guests[2].id,
            rapid,
            "'{\"winner\":\"white\",\"reason\":\"checkmate\"}'",
        ),
    ];
    for (white, black, tc, result) in pairs {
        clone_games(
            db,
            Backend::Postgres,
            &game,
            1_500,
            (&format!("'{white}'"), &format!("'{black}'")),
            tc,
            result,
        )
        .await;
    }
    db.raw("analyze").await.expect("analyze");
    let alice_id = uuid::Uuid::parse_str(&alice.id).expect("uuid");
    let bob_id = uuid::Uuid::parse_str(&bob.id).expect("uuid");
    let cursor = ArchiveCursor {
        finished_at: i64::MAX / 2,
        game_id: uuid::Uuid::max(),
    };
    let filters = [
        ArchiveFilter::default(),
        ArchiveFilter {
            speeds: vec!["blitz"],
            ..ArchiveFilter::default()
        },
        ArchiveFilter {
            outcome: Some(Outcome::Draw),
            ..ArchiveFilter::default()
        },
        ArchiveFilter {
            opponent: Some(bob_id),
            ..ArchiveFilter::default()
        },
        ArchiveFilter {
            speeds: vec!["blitz"],
            outcome: Some(Outcome::Win),
            opponent: Some(bob_id),
            since: Some(0),
            until: Some(i64::MAX / 2),
            rated: None,
        },
    ];
    for filter in &filters {
        for before in [None, Some(&cursor)] {
            let sql = Store::archive_page_sql(alice_id, filter, before, 21);
            let text = plan(db, &sql).await;
            let mut read = Vec::new();
            scans(&serde_json::from_str(&text).expect("json plan"), &mut read);
            assert!(
                read.iter().any(|(relation, _)| relation == "player_games"),
                "{read:?}"
            );
            // The index gives the page's order: a page reads its own rows,
            // not every game of the player sorted.
            assert!(
                !text.contains("\"Node Type\":\"Sort\""),
                "{filter:?}: {text}"
            );
            for (relation, how) in &read {
                assert_ne!(relation, "games", "the archive never reads games: {text}");
                if relation == "player_games" {
                    assert_ne!(how, "Seq Scan", "{filter:?}, before {before:?}: {text}");
                }
            }
        }
    }
    // And the pages are right on this many games.
    let page = app
        .store
        .archive_page(alice_id, &filters[1], None, 21)
        .await
        .expect("a page");
    assert_eq!(page.len(), 21);
    assert!(page.iter().all(|entry| entry.speed == "blitz"));
}

/// The body of `GET path` read frame by frame through the server's own
/// router: each frame is one chunk the export wrote.
async fn frames(app: &TestApp, path: &str, accept: &str) -> (u16, String, Vec<axum::body::Bytes>) {
    use futures_util::StreamExt as _;
    use tower::ServiceExt as _;
    let request = axum::http::Request::get(path)
        .header("accept", accept)
        .body(axum::body::Body::empty())
        .expect("request");
    let response = app.router.clone().oneshot(request).await.expect("response");
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let mut body = response.into_body().into_data_stream();
    let mut chunks = Vec::new();
    while let Some(chunk) = body.next().await {
        chunks.push(chunk.expect("a chunk"));
    }
    (status, content_type, chunks)
}

on_both_backends!(
    ten_thousand_games_export_in_bounded_pages_each_once_newest_first,
    |app: TestApp| async move {
        let (a, b) = (app.guest().await, app.guest().await);
        let alice = app.sign_up(&a, "Alice").await;
        let bob = app.sign_up(&b, "Bob").await;
        let game = fools_mate(&app, &alice, &bob).await;
        let db = app.db.as_ref().expect("a test database");
        clone_games(
            db,
            app.backend,
            &game,
            9_999,
            ("g.white_id", "g.black_id"),
            "g.time_control",
            "g.result",
        )
        .await;

        // NDJSON: every game once, newest first, in pages of at most 100.
        let (status, content_type, chunks) =
            frames(&app, "/api/games/user/alice", "application/x-ndjson").await;
        assert_eq!(status, 200);
        assert_eq!(content_type, "application/x-ndjson");
        let per_chunk: Vec<usize> = chunks
            .iter()
            .map(|chunk| chunk.iter().filter(|byte| **byte == b'\n').count())
            .collect();
        assert_eq!(per_chunk.len(), 100, "written page by page: {per_chunk:?}");
        assert!(per_chunk.iter().all(|games| *games == 100), "{per_chunk:?}");
        let text: String = chunks
            .iter()
            .map(|chunk| std::str::from_utf8(chunk).expect("utf-8"))
            .collect();
        let lines: Vec<Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).expect("a json game"))
            .collect();
        assert_eq!(lines.len(), 10_000);
        let ids: HashSet<&str> = lines.iter().filter_map(|g| g["id"].as_str()).collect();
        assert_eq!(ids.len(), 10_000, "every game exactly once");
        let last_moves: Vec<i64> = lines
            .iter()
            .filter_map(|g| g["lastMoveAt"].as_i64())
            .collect();
        assert_eq!(last_moves.len(), 10_000);
        let first = &lines[0];
        assert_eq!(first["status"], "mate");
        assert_eq!(first["winner"], "black");
        assert_eq!(first["moves"], "f3 e5 g4 Qh4#");
        assert_eq!(first["speed"], "correspondence");
        assert_eq!(first["players"]["white"]["user"]["name"], "Alice");
        assert_eq!(lines[9_999]["id"], game.as_str(), "the oldest last");
        // The order of the games' own rows, read without the archive.
        let expected = newest_first_ids(db, &alice.id).await;
        let got: Vec<&str> = lines.iter().filter_map(|g| g["id"].as_str()).collect();
        assert_eq!(got, expected.iter().map(String::as_str).collect::<Vec<_>>());

        // PGN (the default), with lichess's max and since.
        let (status, content_type, chunks) =
            frames(&app, "/api/games/user/Alice?max=250", "*/*").await;
        assert_eq!(status, 200);
        assert!(
            content_type.starts_with("application/x-chess-pgn"),
            "{content_type}"
        );
        let pgn: String = chunks
            .iter()
            .map(|chunk| std::str::from_utf8(chunk).expect("utf-8"))
            .collect();
        assert_eq!(pgn.matches("[Event ").count(), 250);
        assert_eq!(pgn.matches("Qh4#").count(), 250);
        assert_eq!(chunks.len(), 3, "pages of 100, 100 and 50");
        let (_, _, chunks) = frames(&app, "/api/games/user/alice?perfType=blitz", "*/*").await;
        assert!(chunks.iter().all(|chunk| chunk.is_empty()), "no blitz game");
        let (status, _, _) = frames(&app, "/api/games/user/alice?perfType=chess960", "*/*").await;
        assert_eq!(status, 422);
        let (status, _, _) = frames(&app, "/api/games/user/nobody", "*/*").await;
        assert_eq!(status, 404);
    }
);

/// Ids of `player`'s finished games from `games` itself, newest first.
async fn newest_first_ids(db: &TestDatabase, player: &str) -> Vec<String> {
    let sql = format!(
        "select id from games where (white_id = '{player}' or black_id = '{player}') \
         and status = 'finished' order by updated_at desc, id desc"
    );
    let rows = db.rows(&sql).await.expect("ids");
    rows.into_iter()
        .map(|row| row.into_iter().next().flatten().expect("an id"))
        .collect()
}

/// The next `moved` message on a lobby socket, within a generous wait.
async fn moved(lobby: &mut crate::helpers::Socket) -> Value {
    tokio::time::timeout(Duration::from_secs(10), lobby.recv_type("moved"))
        .await
        .expect("a moved message in time")
}

on_both_backends!(
    a_players_lobby_socket_hears_every_move_in_their_games,
    |app: TestApp| async move {
        let (white, black, stranger) = (app.guest().await, app.guest().await, app.guest().await);
        let game = app.online_game(&white, &black, correspondence()).await;
        let mut lobby = app
            .try_socket("/api/lobby/socket", Some(&black), None)
            .await
            .expect("lobby socket");
        lobby.recv_type("seeks").await;
        let mut strangers = app
            .try_socket("/api/lobby/socket", Some(&stranger), None)
            .await
            .expect("lobby socket");
        strangers.recv_type("seeks").await;
        let mut white_socket = app.socket(&game, Some(&white)).await;
        white_socket.hello().await;
        white_socket.play("e2e4", 0).await;
        let message = moved(&mut lobby).await;
        assert_eq!(message["game_id"], game.as_str());
        assert_eq!(message["moves"], 1);
        // The list the page rereads says it is Black's move, and since when.
        let (_, mine) = app.get("/api/games/mine", Some(&black.cookie)).await;
        let listed = &mine["games"][0];
        assert_eq!(listed["game_id"], game.as_str());
        assert_eq!(listed["your_turn"], true);
        assert!(listed["last_move_at"].as_u64().is_some(), "{listed}");
        assert!(
            strangers
                .try_recv(Duration::from_millis(500))
                .await
                .is_none(),
            "not the stranger's game"
        );
    }
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_on_one_node_reaches_the_players_lobby_socket_on_another() {
    let Some(a) = spawn_app(Backend::Postgres).await else {
        return;
    };
    let b = start(a.settings.clone(), Backend::Postgres).await;
    let (white, black) = (a.guest().await, a.guest().await);
    let game = a.online_game(&white, &black, correspondence()).await;
    // Black waits on node A's lobby; White plays on node B.
    let mut lobby = a
        .try_socket("/api/lobby/socket", Some(&black), None)
        .await
        .expect("lobby socket");
    lobby.recv_type("seeks").await;
    let mut white_socket = b.socket(&game, Some(&white)).await;
    white_socket.hello().await;
    white_socket.play("d2d4", 0).await;
    let message = moved(&mut lobby).await;
    assert_eq!(message["game_id"], game.as_str());
    assert_eq!(message["moves"], 1);
    drop(b);
}
