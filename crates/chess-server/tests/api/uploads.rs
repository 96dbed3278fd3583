//! Finished games played in the browser, handed over by a signed-in player:
//! kept whole in the archive and the export when every move replays and the
//! result follows; refused with a clear error, storing nothing, otherwise.

use chess_rules::Color;
use chess_wasm::{Command, LocalGame, Opponent};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{Guest, TestApp};
use crate::on_both_backends;

/// A game of the browser, played from `now_ms` a second a move.
fn played(opponent: Opponent, time_control: &str, moves: &[&str], now_ms: u64) -> LocalGame {
    let mut game =
        LocalGame::new(Uuid::new_v4().to_string(), opponent, time_control, now_ms).expect("a game");
    let mut at = now_ms;
    for uci in moves {
        at += 1_000;
        let ply = game.game().ply();
        let answer = if game.computer_to_move() {
            game.computer_move(uci, ply, at)
        } else {
            let command = Command::Move {
                uci: (*uci).to_owned(),
                ply: Some(ply),
            };
            game.command(&command, at, String::new)
        };
        assert!(
            answer.iter().all(|m| m["type"] != "error"),
            "{uci}: {answer:?}"
        );
    }
    game
}

fn saved(game: &LocalGame) -> Value {
    serde_json::from_str(&game.save()).expect("json")
}

async fn upload(app: &TestApp, who: &Guest, game: Value, white: &str, black: &str) -> (u16, Value) {
    app.post(
        "/api/games/played-here",
        who,
        json!({ "game": game, "white": white, "black": black }),
    )
    .await
}

fn now() -> u64 {
    chess_live::now_ms().millis()
}

const FOOLS_MATE: [&str; 4] = ["f2f3", "e7e5", "g2g4", "d8h4"];

on_both_backends!(
    a_finished_computer_game_is_kept_in_the_archive_and_the_export,
    |app: TestApp| async move {
        let alice = app.sign_up(&app.guest().await, "Alice").await;
        // Alice plays White; the computer mates her.
        let computer = Opponent::Computer {
            level: 2,
            color: Color::Black,
        };
        let game = played(computer, "5+3", &FOOLS_MATE, now() - 60_000);
        let id = game.id().to_owned();
        let (status, body) =
            upload(&app, &alice, saved(&game), "Alice", "Computer (level 2)").await;
        assert_eq!(status, 201, "{body}");
        assert_eq!(body["url"], format!("/game/{id}"));

        let (status, archive) = app.get("/api/players/alice/games", None).await;
        assert_eq!(status, 200);
        let entry = &archive["games"][0];
        assert_eq!(entry["game_id"], id.as_str(), "{archive}");
        assert_eq!(
            (entry["result"].as_str(), entry["reason"].as_str()),
            (Some("loss"), Some("checkmate"))
        );
        assert_eq!(entry["opponent"]["name"], "Computer (level 2)");

        let state = app.state(&id, None).await;
        assert_eq!(state["mode"], "computer");
        assert_eq!(state["status"], "finished");
        assert_eq!(state["rated"], false);
        let sans: Vec<&str> = state["moves"]
            .as_array()
            .expect("moves")
            .iter()
            .filter_map(|m| m["san"].as_str())
            .collect();
        assert_eq!(sans, ["f3", "e5", "g4", "Qh4#"]);
        let (status, pgn) = app.get_text(&format!("/api/games/{id}/pgn")).await;
        assert_eq!(status, 200);
        assert!(
            pgn.contains("[White \"Alice\"]") && pgn.contains("2... Qh4#"),
            "{pgn}"
        );

        // The same upload again (an answer lost on the way) stores nothing more.
        let (status, again) =
            upload(&app, &alice, saved(&game), "Alice", "Computer (level 2)").await;
        assert_eq!(
            (status, again["stored"].clone()),
            (200, json!(false)),
            "{again}"
        );
        let (_, archive) = app.get("/api/players/alice/games", None).await;
        assert_eq!(archive["games"].as_array().map(Vec::len), Some(1));
    }
);

on_both_backends!(
    a_one_screen_game_names_the_player_on_both_sides,
    |app: TestApp| async move {
        let bob = app.sign_up(&app.guest().await, "Bob").await;
        let mut game = played(
            Opponent::OneScreen,
            "correspondence",
            &["e2e4", "e7e5"],
            now() - 10_000,
        );
        game.command(&Command::Resign, now() - 5_000, String::new);
        let (status, body) = upload(&app, &bob, saved(&game), "Bob", "Bob").await;
        assert_eq!(status, 201, "{body}");
        let id = body["game_id"].as_str().expect("id").to_owned();
        let state = app.state(&id, None).await;
        assert_eq!(state["mode"], "local");
        assert_eq!(state["result"]["reason"], "resignation");

        // In Bob's archive once, as neither his win nor his loss: he held
        // both seats.
        let (status, archive) = app.get("/api/players/bob/games", None).await;
        assert_eq!(status, 200);
        let entries = archive["games"].as_array().expect("games");
        assert_eq!(entries.len(), 1, "{archive}");
        assert_eq!(entries[0]["game_id"], id.as_str());
        assert_eq!(entries[0]["result"], "both_sides");
        assert_eq!(entries[0]["opponent"], Value::Null);
        let (_, profile) = app.get("/api/players/bob", None).await;
        assert_eq!(
            profile["counts"],
            json!({ "games": 0, "wins": 0, "draws": 0, "losses": 0 }),
            "{profile}"
        );
        // A result filter asks for his wins, draws or losses: not this game.
        let (_, wins) = app.get("/api/players/bob/games?result=win", None).await;
        assert_eq!(wins["games"], json!([]));

        // And in his export, with its moves.
        let (status, export) = app.get_text("/api/games/user/bob").await;
        assert_eq!(status, 200);
        assert!(
            export.contains("[White \"Bob\"]")
                && export.contains("[Black \"Bob\"]")
                && export.contains("1. e4 e5"),
            "{export}"
        );
    }
);

on_both_backends!(
    forged_games_are_refused_and_nothing_is_stored,
    |app: TestApp| async move {
        let alice = app.sign_up(&app.guest().await, "Alice").await;
        let _bob = app.sign_up(&app.guest().await, "Bob").await;
        let computer = Opponent::Computer {
            level: 1,
            color: Color::Black,
        };
        let mated = played(computer, "5+0", &FOOLS_MATE, now() - 60_000);
        let good = saved(&mated);

        let mut illegal = good.clone();
        illegal["game"]["moves"][2]["uci"] = json!("g2g5");
        let mut wrong_winner = good.clone();
        wrong_winner["game"]["state"]["result"] =
            json!({ "winner": "white", "reason": "checkmate" });
        let mut no_such_mate = saved(&played(computer, "5+0", &["e2e4", "e7e5"], now() - 60_000));
        no_such_mate["game"]["state"]["result"] =
            json!({ "winner": "white", "reason": "checkmate" });
        let unfinished = saved(&played(computer, "5+0", &["e2e4", "e7e5"], now() - 60_000));
        let mut future = good.clone();
        future["game"]["created_at_ms"] = json!(now() + 3_600_000);
        for moved in future["game"]["moves"].as_array_mut().expect("moves") {
            moved["at_ms"] = json!(now() + 3_600_000);
        }
        let mut rated = good.clone();
        rated["game"]["spec"]["rated"] = json!(true);
        let mut not_uuid = good.clone();
        not_uuid["id"] = json!("my-game");

        for (name, body, white, black, status, code) in [
            (
                "an illegal move",
                illegal,
                "Alice",
                "Computer (level 1)",
                422,
                "illegal_game",
            ),
            (
                "a winner the board denies",
                wrong_winner,
                "Alice",
                "Computer (level 1)",
                422,
                "result_does_not_follow",
            ),
            (
                "a mate that is not",
                no_such_mate,
                "Alice",
                "Computer (level 1)",
                422,
                "result_does_not_follow",
            ),
            (
                "a game not over",
                unfinished,
                "Alice",
                "Computer (level 1)",
                422,
                "game_not_over",
            ),
            (
                "times in the future",
                future,
                "Alice",
                "Computer (level 1)",
                422,
                "bad_times",
            ),
            (
                "a rated game",
                rated,
                "Alice",
                "Computer (level 1)",
                422,
                "not_casual",
            ),
            (
                "an id that is no UUID",
                not_uuid,
                "Alice",
                "Computer (level 1)",
                422,
                "bad_game_id",
            ),
            (
                "someone else's name",
                good.clone(),
                "Bob",
                "Computer (level 1)",
                403,
                "not_your_game",
            ),
            (
                "another level's computer",
                good.clone(),
                "Alice",
                "Computer (level 2)",
                403,
                "not_your_game",
            ),
            (
                "not a game at all",
                json!({ "moves": [] }),
                "Alice",
                "Computer (level 1)",
                422,
                "illegal_game",
            ),
        ] {
            let (got, reply) = upload(&app, &alice, body, white, black).await;
            assert_eq!(
                (got, reply["error"]["code"].as_str()),
                (status, Some(code)),
                "{name}: {reply}"
            );
            assert!(
                reply["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty()),
                "{name}: {reply}"
            );
        }
        let (_, archive) = app.get("/api/players/alice/games", None).await;
        assert_eq!(archive["games"], json!([]), "nothing was stored");

        // A guest has no archive to keep it in.
        let guest = app.guest().await;
        let (status, reply) = upload(&app, &guest, good, &guest.name, "Computer (level 1)").await;
        assert_eq!(
            (status, reply["error"]["code"].as_str()),
            (401, Some("not_signed_in"))
        );
    }
);
