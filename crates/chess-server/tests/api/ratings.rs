//! Ratings against real databases: a rated game's end changes both
//! accounts' ratings by Glicko-2 in the transaction of its result, exactly
//! once (written twice, raced from two nodes); casual games, aborts and
//! guests change nothing; the JSON API shows the ratings and the change.

use chess_game::{EndReason, Game, GameResult, GameSettings, GameSpec};
use chess_live::{
    Batch, GameMode, GameRow, GameStage, GameWrite, PlayerKind, PlayerRow, UnixMs, WriteOutcome,
};
use chess_rules::{ByColor, Color};
use chess_store::ratings::Perf;
use chess_store::ratings::glicko2::{self, DEFAULT};
use chess_store::{Store, StoredRating, shown};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{Guest, TestApp, TestDatabase, clock, play_moves};
use crate::on_both_backends;
use chess_store::on_both_stores;

fn account(name: &str) -> PlayerRow {
    PlayerRow {
        id: Uuid::new_v4(),
        kind: PlayerKind::Account,
        name: name.to_owned(),
        created_at: UnixMs::from_stored(1),
        bot: false,
    }
}

/// A blitz game (5+0) between `white` and `black` in play, stored.
async fn game_in_play(store: &Store, white: &PlayerRow, black: &PlayerRow, rated: bool) -> GameRow {
    let spec = GameSpec::standard("5+0".parse().expect("preset")).with_rated(rated);
    let game = Game::new(spec, GameSettings::default(), 10);
    let row = GameRow {
        id: Uuid::new_v4(),
        mode: GameMode::Online,
        white_id: Some(white.id),
        black_id: Some(black.id),
        computer_level: None,
        time_control: r#"{"kind":"clock","initial_ms":300000,"increment_ms":0}"#.to_owned(),
        status: GameStage::Playing,
        result: None,
        state: chess_live::stored::state_json(&game),
        version: 0,
        rematch_of: None,
        rematch_id: None,
        created_at: UnixMs::from_stored(10),
        updated_at: UnixMs::from_stored(10),
        deadline_at: None,
        recent_events: "[]".to_owned(),
        premove_nodes: ByColor::default(),
    };
    store.insert_game(&row).await.expect("insert the game");
    row
}

/// The write that ends `row` with `result`, from `version` on.
fn ending(row: &GameRow, version: i64, result: GameResult) -> GameWrite {
    GameWrite {
        row: GameRow {
            version: version + 1,
            status: GameStage::Finished,
            result: Some(format!("{result:?}")),
            updated_at: UnixMs::from_stored(1_000 + version),
            ..row.clone()
        },
        expected_version: version,
        keep_moves: None,
        new_moves: Vec::new(),
        settle: Some(result),
        rematch: None,
        notice: None,
    }
}

async fn write(store: &Store, write: GameWrite) -> WriteOutcome {
    store
        .write_batch(&Batch::of_writes(vec![write]), "chess_test", |_| Vec::new())
        .await
        .expect("the batch commits")
        .writes[0]
}

fn white_wins() -> GameResult {
    GameResult {
        winner: Some(Color::White),
        reason: EndReason::Resignation,
    }
}

/// (rating, games) of `player` in blitz.
async fn blitz(store: &Store, player: &PlayerRow) -> (f64, i64) {
    let stored = store
        .rating_of(player.id, Perf::Blitz)
        .await
        .expect("read the rating");
    (stored.rating.rating, stored.games)
}

on_both_stores!(
    a_rated_ending_changes_both_ratings_once_however_often_it_is_written,
    async |store: Store, db: &TestDatabase| {
        let (a, b) = (account("alice"), account("bob"));
        for player in [&a, &b] {
            store.insert_player(player).await.expect("insert");
        }
        let row = game_in_play(&store, &a, &b, true).await;
        // Two nodes write the same ending at once: one lands, and rates.
        let other = chess_store::connect(&db.url)
            .await
            .expect("a second node's store");
        let (first, second) = tokio::join!(
            write(&store, ending(&row, 0, white_wins())),
            write(&other, ending(&row, 0, white_wins())),
        );
        let mut outcomes = [first, second];
        outcomes.sort_by_key(|outcome| *outcome == WriteOutcome::Conflict);
        assert_eq!(outcomes, [WriteOutcome::Written, WriteOutcome::Conflict]);
        other.close().await;

        let (white_after, black_after) = glicko2::rate_game(DEFAULT, DEFAULT, 1.0);
        let (white, white_games) = blitz(&store, &a).await;
        let (black, black_games) = blitz(&store, &b).await;
        assert!((white - white_after.rating).abs() < 1e-9, "{white}");
        assert!((black - black_after.rating).abs() < 1e-9, "{black}");
        assert_eq!((white_games, black_games), (1, 1));
        let changes = store.rating_changes_of_game(row.id).await.expect("read");
        assert_eq!(changes.len(), 2);
        let change_of = |id| {
            changes
                .iter()
                .find(|change| change.player_id == id)
                .expect("a change per player")
                .change
        };
        assert_eq!(change_of(a.id), shown(white_after.rating) - 1500);
        assert_eq!(change_of(b.id), shown(black_after.rating) - 1500);
        assert!(change_of(a.id) > 0 && change_of(b.id) < 0);

        // The same ending written again (a node that restarted between the
        // commit and its reply and wrote it once more): nothing changes.
        assert_eq!(
            write(&store, ending(&row, 1, white_wins())).await,
            WriteOutcome::Written
        );
        assert_eq!(blitz(&store, &a).await, (white, 1));
        assert_eq!(blitz(&store, &b).await, (black, 1));
        assert_eq!(store.rating_history(a.id).await.expect("read").len(), 1);
        assert_eq!(
            db.raw("select * from rating_history").await.expect("query"),
            2
        );

        // Both seats read at once, each in its place, whichever order; an
        // account with no rated game yet has the starting rating.
        let blitz_of = |id| store.rating_of(id, Perf::Blitz);
        let (a_blitz, b_blitz) = (
            blitz_of(a.id).await.expect("read"),
            blitz_of(b.id).await.expect("read"),
        );
        assert_ne!(a_blitz, b_blitz);
        let pair = |players| store.ratings_of_pair(players, Perf::Blitz);
        assert_eq!(pair([a.id, b.id]).await.expect("read"), [a_blitz, b_blitz]);
        assert_eq!(pair([b.id, a.id]).await.expect("read"), [b_blitz, a_blitz]);
        assert_eq!(pair([a.id, a.id]).await.expect("read"), [a_blitz, a_blitz]);
        let newcomer = account("carol");
        store.insert_player(&newcomer).await.expect("insert");
        assert_eq!(
            pair([newcomer.id, b.id]).await.expect("read"),
            [StoredRating::NEW, b_blitz]
        );
    }
);

on_both_stores!(
    casual_games_aborts_and_guests_change_no_rating,
    async |store: Store, db: &TestDatabase| {
        let (a, b) = (account("alice"), account("bob"));
        let guest = PlayerRow {
            kind: PlayerKind::Guest,
            ..account("guest")
        };
        for player in [&a, &b, &guest] {
            store.insert_player(player).await.expect("insert");
        }
        let casual = game_in_play(&store, &a, &b, false).await;
        assert_eq!(
            write(&store, ending(&casual, 0, white_wins())).await,
            WriteOutcome::Written
        );
        let aborted = game_in_play(&store, &a, &b, true).await;
        let abort = GameResult {
            winner: None,
            reason: EndReason::Aborted,
        };
        assert_eq!(
            write(&store, ending(&aborted, 0, abort)).await,
            WriteOutcome::Written
        );
        let with_guest = game_in_play(&store, &a, &guest, true).await;
        assert_eq!(
            write(&store, ending(&with_guest, 0, white_wins())).await,
            WriteOutcome::Written
        );
        assert_eq!(blitz(&store, &a).await, (1500.0, 0));
        assert_eq!(blitz(&store, &b).await, (1500.0, 0));
        assert_eq!(
            db.raw("select * from rating_history").await.expect("query"),
            0
        );
        // A draw between the two accounts is rated: both stay at 1500, the
        // deviations shrink.
        let drawn = game_in_play(&store, &a, &b, true).await;
        let draw = GameResult {
            winner: None,
            reason: EndReason::Agreement,
        };
        write(&store, ending(&drawn, 0, draw)).await;
        let after = store.rating_of(a.id, Perf::Blitz).await.expect("read");
        assert_eq!((shown(after.rating.rating), after.games), (1500, 1));
        assert!(after.rating.deviation < 350.0);
    }
);

async fn two_accounts(app: &TestApp) -> (Guest, Guest) {
    let (a, b) = (app.guest().await, app.guest().await);
    (app.sign_up(&a, "Alice").await, app.sign_up(&b, "Bob").await)
}

/// A challenge by `white`, taken by `black`: the game id.
async fn challenge(app: &TestApp, white: &Guest, black: &Guest, rated: bool) -> String {
    let (status, body) = app
        .post(
            "/api/challenges",
            white,
            json!({ "time_control": clock(300_000, 0), "color": "white", "rated": rated }),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let game_id = body["game_id"].as_str().expect("game id").to_owned();
    let (status, body) = app.join_game(black, &game_id).await;
    assert_eq!(status, 200, "{body}");
    game_id
}

async fn resign_black(app: &TestApp, game_id: &str, white: &Guest, black: &Guest) {
    let (mut white_socket, mut black_socket) = app.seat_both(game_id, white, black).await;
    play_moves(&mut white_socket, &mut black_socket, &["e2e4", "e7e5"]).await;
    black_socket.send(json!({ "type": "resign" })).await;
    let ended = white_socket.recv_event("ended").await;
    assert_eq!(ended["event"]["result"]["reason"], "resignation");
}

async fn ratings(app: &TestApp, username: &str) -> Value {
    let (status, body) = app
        .get(&format!("/api/players/{username}/ratings"), None)
        .await;
    assert_eq!(status, 200, "{body}");
    body
}

on_both_backends!(
    a_rated_game_between_accounts_shows_the_change_and_a_casual_one_none,
    |app: TestApp| async move {
        let (alice, bob) = two_accounts(&app).await;
        let before = ratings(&app, "alice").await;
        assert_eq!(
            before["ratings"]["blitz"],
            json!({ "rating": 1500, "rd": 350, "provisional": true, "games": 0, "history": [] })
        );

        let casual = challenge(&app, &alice, &bob, false).await;
        assert_eq!(app.state(&casual, Some(&alice)).await["rated"], false);
        resign_black(&app, &casual, &alice, &bob).await;
        assert_eq!(ratings(&app, "alice").await, before);

        let rated = challenge(&app, &alice, &bob, true).await;
        assert_eq!(app.state(&rated, Some(&alice)).await["rated"], true);
        let (_, during) = app.get(&format!("/api/games/{rated}/ratings"), None).await;
        assert_eq!(during["white"]["change"], Value::Null);
        assert_eq!(during["white"]["rating"], 1500);
        resign_black(&app, &rated, &alice, &bob).await;

        let (white_after, black_after) = glicko2::rate_game(DEFAULT, DEFAULT, 1.0);
        let (status, game) = app.get(&format!("/api/games/{rated}/ratings"), None).await;
        assert_eq!(status, 200, "{game}");
        assert_eq!(game["rated"], true);
        assert_eq!(game["perf"], "blitz");
        assert_eq!(game["white"]["rating"], 1500);
        assert_eq!(game["white"]["change"], shown(white_after.rating) - 1500);
        assert_eq!(game["black"]["change"], shown(black_after.rating) - 1500);
        assert_eq!(game["white"]["after"], shown(white_after.rating));

        let alice_now = ratings(&app, "Alice").await;
        let blitz = &alice_now["ratings"]["blitz"];
        assert_eq!(blitz["rating"], shown(white_after.rating));
        assert_eq!(blitz["rd"], shown(white_after.deviation));
        assert_eq!(blitz["games"], 1);
        assert_eq!(blitz["provisional"], true);
        let history = blitz["history"].as_array().expect("history");
        assert_eq!(history.len(), 1);
        assert_eq!(history[0]["game_id"], rated.as_str());
        assert_eq!(history[0]["rating"], shown(white_after.rating));
        assert_eq!(alice_now["ratings"]["bullet"]["games"], 0);
        let bob_now = ratings(&app, "bob").await;
        assert_eq!(
            bob_now["ratings"]["blitz"]["rating"],
            shown(black_after.rating)
        );

        // The export's `rated` filter: the one game that changed the ratings,
        // or the other one.
        for (rated_filter, shown_game, left_out) in
            [("true", &rated, &casual), ("false", &casual, &rated)]
        {
            let (status, pgn) = app
                .get_text(&format!("/api/games/user/alice?rated={rated_filter}"))
                .await;
            assert_eq!(status, 200, "{pgn}");
            assert!(pgn.contains(&format!("/game/{shown_game}")), "{pgn}");
            assert!(!pgn.contains(&format!("/game/{left_out}")), "{pgn}");
        }
    }
);

on_both_backends!(guests_cannot_play_rated, |app: TestApp| async move {
    let guest = app.guest().await;
    let (alice, _) = two_accounts(&app).await;
    let body = json!({ "time_control": clock(300_000, 0), "color": "white", "rated": true });
    let (status, reply) = app.post("/api/challenges", &guest, body.clone()).await;
    assert_eq!(
        (status, reply["error"]["code"].as_str()),
        (422, Some("rated_needs_account"))
    );
    let (status, reply) = app
        .post(
            "/api/lobby/seeks",
            &guest,
            json!({ "time_control": clock(300_000, 0), "color": "random", "rated": true }),
        )
        .await;
    assert_eq!(
        (status, reply["error"]["code"].as_str()),
        (422, Some("rated_needs_account"))
    );
    // A rated challenge link is for accounts only.
    let (status, reply) = app.post("/api/challenges", &alice, body).await;
    assert_eq!(status, 201, "{reply}");
    let game_id = reply["game_id"].as_str().expect("game id");
    let (status, reply) = app.join_game(&guest, game_id).await;
    assert_eq!(
        (status, reply["error"]["code"].as_str()),
        (422, Some("rated_needs_account"))
    );
    // Unknown players have no ratings.
    let (status, _) = app.get("/api/players/nobody/ratings", None).await;
    assert_eq!(status, 404);
});

on_both_backends!(
    a_seek_pairs_only_inside_its_rating_range_and_with_its_kind,
    |app: TestApp| async move {
        let (alice, bob) = two_accounts(&app).await;
        let seek = |rated: bool, range: Value| {
            json!({
                "time_control": clock(300_000, 0), "color": "random",
                "rated": rated, "rating_range": range,
            })
        };
        let (status, created) = app
            .post("/api/lobby/seeks", &alice, seek(true, json!([1600, 1800])))
            .await;
        assert_eq!(status, 201, "{created}");
        assert_eq!(created["seek"]["rated"], true);
        assert_eq!(created["seek"]["rating_range"], json!([1600, 1800]));
        assert_eq!(
            created["seek"]["rating"],
            json!({ "rating": 1500, "provisional": true })
        );
        let seek_id = created["seek"]["id"].as_str().expect("id").to_owned();
        // Bob (1500) is outside Alice's range: his equal seek does not pair,
        // and neither does a casual one.
        for body in [seek(true, Value::Null), seek(false, Value::Null)] {
            let (status, reply) = app.post("/api/lobby/seeks", &bob, body).await;
            assert_eq!(
                (status, reply["outcome"].as_str()),
                (201, Some("created")),
                "{reply}"
            );
        }
        let (status, reply) = app
            .post(&format!("/api/lobby/seeks/{seek_id}/join"), &bob, json!({}))
            .await;
        assert_eq!(
            (status, reply["error"]["code"].as_str()),
            (403, Some("rating_out_of_range"))
        );
        let (status, reply) = app
            .post("/api/lobby/seeks", &alice, seek(true, json!([1800, 1600])))
            .await;
        assert_eq!(
            (status, reply["error"]["code"].as_str()),
            (422, Some("bad_rating_range"))
        );
        // Alice's rated seek whose range Bob's rating fits pairs with Bob's
        // open rated seek (not his casual one), and the game is rated.
        let (status, joined) = app
            .post("/api/lobby/seeks", &alice, seek(true, json!([1400, 1600])))
            .await;
        assert_eq!(
            (status, joined["outcome"].as_str()),
            (200, Some("joined")),
            "{joined}"
        );
        let game_id = joined["game_id"].as_str().expect("game id");
        assert_eq!(app.state(game_id, Some(&bob)).await["rated"], true);
    }
);
