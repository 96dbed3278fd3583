//! A game in the browser, through the messages the game page exchanges
//! with it: what it answers, what it refuses, and what survives a reload.

use chess_wasm::{Analyst, Command, LocalGame, Message, Opponent};
use serde_json::{Value, json};

const T0: u64 = 1_764_000_000_000;

fn one_screen(time_control: &str) -> LocalGame {
    LocalGame::new("g1".to_owned(), Opponent::OneScreen, time_control, T0).expect("a game")
}

fn send(game: &mut LocalGame, command: Value, now_ms: u64) -> Vec<Message> {
    let command: Command = serde_json::from_value(command).expect("a command");
    game.command(&command, now_ms, || "next".to_owned())
}

fn play(game: &mut LocalGame, moves: &[&str], mut now_ms: u64) -> u64 {
    for uci in moves {
        let ply = game.game().ply();
        let answer = send(
            game,
            json!({ "type": "move", "uci": uci, "ply": ply }),
            now_ms,
        );
        assert_eq!(answer[0]["type"], "ack", "{uci}: {answer:?}");
        now_ms += 1_000;
    }
    now_ms
}

fn kinds(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m["type"].as_str() {
            Some("event") => format!("event:{}", m["event"]["kind"].as_str().unwrap_or("?")),
            other => other.unwrap_or("?").to_owned(),
        })
        .collect()
}

#[test]
fn a_one_screen_game_is_played_to_mate_with_both_sides_from_the_same_page() {
    let mut game = one_screen("5+3");
    let state = game.state(T0);
    assert_eq!(state["type"], "state");
    assert_eq!(state["mode"], "local");
    assert_eq!(state["seat"], "both");
    assert_eq!(state["status"], "playing");
    assert_eq!(
        state["time_control"],
        json!({ "kind": "clock", "initial_ms": 300_000, "increment_ms": 3_000 })
    );
    assert_eq!(state["dests"]["g1"], json!(["f3", "h3"]));

    let now = play(&mut game, &["f2f3", "e7e5", "g2g4"], T0 + 1_000);
    let answer = send(
        &mut game,
        json!({ "type": "move", "uci": "d8h4", "ply": 3 }),
        now,
    );
    assert_eq!(kinds(&answer), ["ack", "event:move", "event:ended"]);
    let mate = &answer[1];
    assert_eq!(mate["event"]["san"], "Qh4#");
    assert_eq!(mate["check"], "e1");
    assert_eq!(mate["status"], "finished");
    assert_eq!(mate["dests"], json!({}));
    assert_eq!(
        answer[2]["event"]["result"],
        json!({ "winner": "black", "reason": "checkmate" })
    );
    let state = game.state(now);
    assert_eq!(state["moves"].as_array().map(Vec::len), Some(4));
    assert_eq!(state["result"]["reason"], "checkmate");
}

#[test]
fn an_illegal_or_out_of_turn_command_is_refused_and_changes_nothing() {
    let mut game = one_screen("correspondence");
    let before = game.state(T0);
    for (command, code) in [
        (
            json!({ "type": "move", "uci": "e2e5", "ply": 0 }),
            "illegal_move",
        ),
        (
            json!({ "type": "move", "uci": "e2e4", "ply": 3 }),
            "wrong_ply",
        ),
        (json!({ "type": "premove", "uci": "e7e5" }), "unsupported"),
        (json!({ "type": "draw_offer" }), "unsupported"),
        (json!({ "type": "takeback" }), "nothing_to_take_back"),
        (json!({ "type": "rematch_offer" }), "game_not_over"),
    ] {
        let answer = send(&mut game, command.clone(), T0 + 10);
        assert_eq!(kinds(&answer), ["error"], "{command}");
        assert_eq!(answer[0]["code"], code, "{command}: {answer:?}");
        assert!(answer[0]["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
    assert_eq!(game.state(T0), before);
}

#[test]
fn a_take_back_undoes_one_move_on_one_screen_and_the_reply_too_against_the_computer() {
    let mut game = one_screen("correspondence");
    play(&mut game, &["e2e4", "e7e5"], T0);
    let answer = send(&mut game, json!({ "type": "takeback" }), T0 + 5_000);
    assert_eq!(kinds(&answer), ["event:takeback"]);
    assert_eq!(answer[0]["event"]["moves"], 1);
    assert_eq!(answer[0]["turn"], "black");

    let computer = Opponent::Computer {
        level: 1,
        color: chess_rules::Color::Black,
    };
    let mut game = LocalGame::new("c1".to_owned(), computer, "correspondence", T0).expect("a game");
    play(&mut game, &["e2e4"], T0);
    assert!(game.computer_to_move());
    let reply = game.computer_move("e7e5", 1, T0 + 2_000);
    assert_eq!(kinds(&reply), ["event:move"]);
    let answer = send(&mut game, json!({ "type": "takeback" }), T0 + 3_000);
    assert_eq!(
        answer.last().map(|m| m["event"]["moves"].clone()),
        Some(json!(0))
    );
    assert_eq!(game.game().ply(), 0);
}

#[test]
fn the_computer_moves_only_its_own_side_and_only_for_the_position_it_was_asked_about() {
    let computer = Opponent::Computer {
        level: 2,
        color: chess_rules::Color::White,
    };
    let mut game = LocalGame::new("c2".to_owned(), computer, "3+2", T0).expect("a game");
    let state = game.state(T0);
    assert_eq!(state["seat"], "black");
    assert_eq!(state["players"]["white"]["name"], "Computer (level 2)");
    assert_eq!(state["players"]["black"]["is_you"], true);
    // The person may not move White's pieces.
    let answer = send(
        &mut game,
        json!({ "type": "move", "uci": "e2e4", "ply": 0 }),
        T0,
    );
    assert_eq!(answer[0]["code"], "not_your_turn");

    let search = game.computer_search(T0).expect("the computer is to move");
    assert_eq!(search["level"], 2);
    assert_eq!(search["moves"], json!([]));
    assert_eq!(
        search["limit"],
        json!({ "kind": "move", "remaining_ms": 180_000, "increment_ms": 2_000 })
    );
    // A move found for another ply is stale: dropped without a word.
    assert!(game.computer_move("e2e4", 5, T0).is_empty());
    assert_eq!(game.game().ply(), 0);
    // An illegal one is an error, not a move.
    assert_eq!(game.computer_move("e2e5", 0, T0)[0]["code"], "illegal_move");
    assert_eq!(
        kinds(&game.computer_move("e2e4", 0, T0 + 500)),
        ["event:move"]
    );
    assert!(
        game.computer_search(T0 + 500).is_none(),
        "the person's turn"
    );
}

#[test]
fn a_saved_game_comes_back_as_it_was_and_a_tampered_one_is_refused() {
    let mut game = one_screen("3+0");
    let now = play(&mut game, &["e2e4", "e7e5", "g1f3"], T0 + 500);
    let saved = game.save();
    let restored = LocalGame::restore(&saved).expect("restored");
    assert_eq!(restored.state(now), game.state(now));

    let tampered = saved.replacen("g1f3", "g1g3", 1);
    assert_ne!(tampered, saved);
    assert!(
        LocalGame::restore(&tampered).is_err(),
        "an illegal saved move"
    );
    assert!(LocalGame::restore("{\"id\": 3}").is_err());
    assert!(LocalGame::restore("not json").is_err());
    let other_level = saved.replace(
        "\"one_screen\"",
        "\"computer\",\"level\":7,\"color\":\"white\"",
    );
    assert!(LocalGame::restore(&other_level).is_err(), "no level 7");
}

#[test]
fn a_clock_that_runs_out_ends_the_game_even_with_nobody_moving() {
    let mut game = one_screen("1+0");
    // The clock starts with Black's first move; White then has a minute.
    let now = play(&mut game, &["e2e4", "e7e5"], T0);
    let deadline = game.game().flag_deadline().expect("White's clock runs");
    assert!(game.check_time(deadline - 1).is_empty());
    let ended = game.check_time(deadline);
    assert_eq!(kinds(&ended), ["event:ended"]);
    assert_eq!(
        ended[0]["result"],
        json!({ "winner": "black", "reason": "timeout" })
    );
    assert!(now < deadline);
}

#[test]
fn a_rematch_starts_a_new_game_with_the_colours_swapped_against_the_computer() {
    let computer = Opponent::Computer {
        level: 1,
        color: chess_rules::Color::Black,
    };
    let mut game = LocalGame::new("c3".to_owned(), computer, "correspondence", T0).expect("a game");
    play(&mut game, &["d2d4"], T0);
    game.computer_move("d7d5", 1, T0);
    send(&mut game, json!({ "type": "resign" }), T0 + 1);
    assert_eq!(
        game.state(T0)["result"],
        json!({ "winner": "black", "reason": "resignation" })
    );
    let answer = send(&mut game, json!({ "type": "rematch_offer" }), T0 + 2);
    assert_eq!(
        answer,
        vec![json!({ "type": "redirect", "url": "/local/next" })]
    );
    let next = game.take_rematch().expect("the new game");
    assert_eq!(next.id(), "next");
    assert_eq!(
        next.opponent(),
        Opponent::Computer {
            level: 1,
            color: chess_rules::Color::White
        }
    );
    assert!(game.take_rematch().is_none(), "handed over once");
}

#[test]
fn the_pgn_is_the_game_with_its_tags_and_clocks() {
    let mut game = one_screen("3+2");
    let now = play(&mut game, &["f2f3", "e7e5", "g2g4", "d8h4"], T0);
    let pgn = game.pgn("2026.12.07");
    for needed in [
        "[Event \"Casual game\"]",
        "[Site \"/local/g1\"]",
        "[Date \"2026.12.07\"]",
        "[White \"White\"]",
        "[Result \"0-1\"]",
        "[TimeControl \"180+2\"]",
        "[Termination \"checkmate\"]",
        // g4 took a second and earned the 2 s increment.
        "1. f3 { [%clk 0:03:00] } 1... e5 { [%clk 0:03:00] } 2. g4 { [%clk 0:03:01] }",
        "Qh4#",
    ] {
        assert!(pgn.contains(needed), "{needed} in\n{pgn}");
    }
    assert!(now > T0);
}

#[test]
fn bad_messages_and_bad_games_get_clear_errors() {
    assert!(
        LocalGame::new(
            "x".to_owned(),
            Opponent::Computer {
                level: 3,
                color: chess_rules::Color::White
            },
            "5+0",
            T0
        )
        .is_err()
    );
    let err = LocalGame::new("x".to_owned(), Opponent::OneScreen, "5 minutes", T0)
        .expect_err("no such time control");
    assert!(err.to_string().contains("time control"), "{err}");
    assert!(
        serde_json::from_value::<Command>(json!({ "type": "move" })).is_err(),
        "a move names its move"
    );
}

#[test]
fn the_engine_answers_a_request_with_a_legal_move_and_refuses_a_bad_one() {
    let mut analyst = Analyst::new(7, chess_engine::system_time);
    let report = analyst
        .search(
            r#"{"moves": ["f2f3", "e7e5", "g2g4"], "level": 2, "limit": {"kind": "depth", "depth": 3}}"#,
            |_| {},
        )
        .expect("searched");
    assert_eq!(
        report.best_move.as_deref(),
        Some("d8h4"),
        "mate in one: {report:?}"
    );
    assert_eq!(report.pv_san.first().map(String::as_str), Some("Qh4#"));
    assert_eq!(report.score, chess_wasm::ScoreReport::Mate(1));

    // Each completed iteration is reported as it completes.
    let mut iterations = Vec::new();
    let report = analyst
        .search(
            r#"{"level": 2, "limit": {"kind": "depth", "depth": 4}}"#,
            |iteration| {
                iterations.push(iteration.depth);
            },
        )
        .expect("searched");
    assert_eq!(iterations, [1, 2, 3, 4]);
    assert_eq!(report.depth, 4);
    assert_eq!(report.pv.len(), report.pv_san.len());
    for bad in [
        "{}",
        r#"{"level": 3, "limit": {"kind": "depth", "depth": 1}}"#,
        r#"{"moves": ["e2e5"], "level": 1, "limit": {"kind": "depth", "depth": 1}}"#,
        r#"{"initial_fen": "8/8/8", "level": 1, "limit": {"kind": "depth", "depth": 1}}"#,
    ] {
        assert!(analyst.search(bad, |_| {}).is_err(), "{bad}");
    }
}
