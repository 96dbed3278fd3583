//! Every bad input gets its stable error code, the connection stays usable
//! and nothing changes.

use serde_json::{Value, json};

use crate::helpers::{TestApp, clock, correspondence, play_moves};
use crate::on_both_backends;

/// A refused request: what it is, path, cookie, body, expected status and code.
type HttpCase<'a> = (
    &'a str,
    &'a str,
    Option<&'a str>,
    Option<String>,
    u16,
    &'a str,
);

on_both_backends!(
    bad_socket_messages_change_nothing,
    |app: TestApp| async move {
        let (white_guest, black_guest) = (app.guest().await, app.guest().await);
        let game_id = app
            .online_game(&white_guest, &black_guest, correspondence())
            .await;
        let (mut white, mut black) = app.seat_both(&game_id, &white_guest, &black_guest).await;
        play_moves(&mut white, &mut black, &["e2e4", "e7e5"]).await;
        let before = app.state(&game_id, None).await;

        let huge = format!(r#"{{"type":"premove","uci":"{}"}}"#, "x".repeat(5_000));
        let cases: Vec<(&str, String, &str)> = vec![
            (
                "malformed json",
                "{not json".to_owned(),
                "malformed_message",
            ),
            ("not an object", "[1,2,3]".to_owned(), "malformed_message"),
            (
                "no type",
                r#"{"uci":"g1f3","ply":2}"#.to_owned(),
                "unknown_message_type",
            ),
            (
                "unknown type",
                r#"{"type":"teleport"}"#.to_owned(),
                "unknown_message_type",
            ),
            (
                "missing field",
                r#"{"type":"move","uci":"g1f3"}"#.to_owned(),
                "malformed_message",
            ),
            ("too large", huge, "message_too_large"),
            (
                "unparsable move",
                r#"{"type":"move","uci":"zz99","ply":2}"#.to_owned(),
                "invalid_uci",
            ),
            (
                "illegal move",
                r#"{"type":"move","uci":"e1e3","ply":2}"#.to_owned(),
                "illegal_move",
            ),
            (
                "wrong ply",
                r#"{"type":"move","uci":"g1f3","ply":7}"#.to_owned(),
                "wrong_ply",
            ),
            (
                "accept without offer",
                r#"{"type":"draw_accept"}"#.to_owned(),
                "no_draw_offer",
            ),
            (
                "rematch during the game",
                r#"{"type":"rematch_offer"}"#.to_owned(),
                "game_not_over",
            ),
            (
                "abort after both moved",
                r#"{"type":"abort"}"#.to_owned(),
                "abort_not_allowed",
            ),
            (
                "takeback between two people",
                r#"{"type":"takeback"}"#.to_owned(),
                "takeback_not_allowed",
            ),
            (
                "premove on own turn",
                r#"{"type":"premove","uci":"g1f3"}"#.to_owned(),
                "premove_on_own_turn",
            ),
        ];
        for (what, text, code) in &cases {
            white.send_raw(text).await;
            let error = white.recv_type("error").await;
            assert_eq!(error["code"], *code, "{what}: {error}");
            assert!(
                error["message"].as_str().is_some_and(|m| !m.is_empty()),
                "{what}"
            );
        }
        // Out of turn: it is White's move.
        let error = black
            .expect_error(json!({ "type": "move", "uci": "g8f6", "ply": 2 }))
            .await;
        assert_eq!(error["code"], "not_your_turn");
        let error = black
            .expect_error(json!({ "type": "premove", "uci": "b8b6" }))
            .await;
        assert_eq!(error["code"], "invalid_premove");

        let after = app.state(&game_id, None).await;
        assert_eq!(after["version"], before["version"], "nothing changed");
        assert_eq!(after["moves"], before["moves"]);
        // The connection is still usable.
        white.play("g1f3", 2).await;
    }
);

on_both_backends!(
    a_stale_move_on_the_opponents_turn_is_the_wrong_ply,
    |app: TestApp| async move {
        let (white_guest, black_guest) = (app.guest().await, app.guest().await);
        let game_id = app
            .online_game(&white_guest, &black_guest, correspondence())
            .await;
        let (mut white, mut black) = app.seat_both(&game_id, &white_guest, &black_guest).await;
        play_moves(&mut white, &mut black, &["e2e4", "e7e5"]).await;
        let before = app.state(&game_id, None).await;

        // White is to move; Black sends another move for its ply 1.
        let error = black
            .expect_error(json!({ "type": "move", "uci": "d7d5", "ply": 1 }))
            .await;
        assert_eq!(error["code"], "wrong_ply", "{error}");
        // Black's ply from the future: the wrong ply as well.
        let error = black
            .expect_error(json!({ "type": "move", "uci": "g8f6", "ply": 3 }))
            .await;
        assert_eq!(error["code"], "wrong_ply", "{error}");
        // The same move again is a retry: the first move's ack.
        let ack = black.play("e7e5", 1).await;
        assert_eq!(ack["ply"], 1);

        let after = app.state(&game_id, None).await;
        assert_eq!(after["version"], before["version"], "nothing changed");
        assert_eq!(after["moves"], before["moves"]);
    }
);

on_both_backends!(finished_game_refuses_moves, |app: TestApp| async move {
    let (white_guest, black_guest) = (app.guest().await, app.guest().await);
    let game_id = app
        .online_game(&white_guest, &black_guest, correspondence())
        .await;
    let (mut white, mut black) = app.seat_both(&game_id, &white_guest, &black_guest).await;
    play_moves(&mut white, &mut black, &["f2f3", "e7e5", "g2g4", "d8h4"]).await;
    let error = white
        .expect_error(json!({ "type": "move", "uci": "e2e4", "ply": 4 }))
        .await;
    assert_eq!(error["code"], "game_over");
});

on_both_backends!(
    draw_offers_and_premoves_off_line_are_refused_as_not_online,
    |app: TestApp| async move {
        let guest = app.guest().await;
        let game_id = app.create_local(&guest, correspondence()).await;
        let mut both = app.socket(&game_id, Some(&guest)).await;
        both.hello().await;
        for (ply, uci) in ["e2e4", "e7e5"].iter().enumerate() {
            both.play(uci, u32::try_from(ply).expect("few")).await;
        }
        let before = app.state(&game_id, None).await;
        for message in [
            json!({ "type": "draw_offer" }),
            json!({ "type": "draw_accept" }),
            json!({ "type": "premove", "uci": "g8f6" }),
        ] {
            let error = both.expect_error(message.clone()).await;
            assert_eq!(error["code"], "not_online", "{message}: {error}");
            assert_eq!(error["in_reply_to"], message["type"]);
        }
        let after = app.state(&game_id, None).await;
        assert_eq!(after["version"], before["version"], "nothing changed");
    }
);

on_both_backends!(flood_is_rate_limited, |app: TestApp| async move {
    let guest = app.guest().await;
    let game_id = app.create_local(&guest, correspondence()).await;
    let mut socket = app.socket(&game_id, Some(&guest)).await;
    socket.hello().await;
    for t in 0..120 {
        socket.send(json!({ "type": "ping", "t": t })).await;
    }
    let mut limited = 0;
    let mut pongs = 0;
    while limited + pongs < 120 {
        let message = socket.recv().await;
        match message["type"].as_str() {
            Some("pong") => pongs += 1,
            Some("error") => {
                assert_eq!(message["code"], "rate_limited");
                limited += 1;
            }
            _ => {}
        }
    }
    assert!(
        limited > 0 && pongs >= 39,
        "{pongs} pongs, {limited} limited"
    );
});

on_both_backends!(
    bad_http_requests_get_exact_codes,
    |app: TestApp| async move {
        let guest = app.guest().await;
        let forged = crate::helpers::Guest {
            cookie: format!("{}x", guest.cookie),
            ..guest.clone()
        };
        let body = json!({ "time_control": correspondence() }).to_string();
        let cases: Vec<HttpCase<'_>> = vec![
            (
                "no cookie",
                "/api/games/local",
                None,
                Some(body.clone()),
                401,
                "not_signed_in",
            ),
            (
                "forged cookie",
                "/api/games/local",
                Some(forged.cookie.as_str()),
                Some(body.clone()),
                401,
                "bad_identity",
            ),
            (
                "bad json",
                "/api/games/local",
                Some(guest.cookie.as_str()),
                Some("{".to_owned()),
                400,
                "invalid_body",
            ),
            (
                "bad time control",
                "/api/games/local",
                Some(guest.cookie.as_str()),
                Some(json!({ "time_control": clock(1_000, 0) }).to_string()),
                422,
                "bad_time_control",
            ),
            (
                "bad level",
                "/api/games/computer",
                Some(guest.cookie.as_str()),
                Some(
                    json!({ "level": 3, "color": "white", "time_control": correspondence() })
                        .to_string(),
                ),
                422,
                "bad_level",
            ),
            (
                "bad fen",
                "/api/challenges",
                Some(guest.cookie.as_str()),
                Some(
                    json!({ "time_control": correspondence(), "color": "white", "fen": "8/8/8 w" })
                        .to_string(),
                ),
                422,
                "bad_fen",
            ),
            (
                "unknown seek",
                "/api/lobby/seeks/not-a-uuid/join",
                Some(guest.cookie.as_str()),
                None,
                404,
                "seek_not_found",
            ),
        ];
        for (what, path, cookie, body, status, code) in cases {
            let (got, response) = app.send("POST", path, cookie, body).await;
            assert_eq!(
                (got, response["error"]["code"].clone()),
                (status, Value::from(code)),
                "{what}: {response}"
            );
        }
        for path in [
            "/api/games/not-a-uuid",
            "/api/games/8c0ffa1e-0000-4000-8000-000000000000",
        ] {
            let (status, response) = app.get(path, None).await;
            assert_eq!(
                (status, response["error"]["code"].as_str()),
                (404, Some("game_not_found")),
                "{path}"
            );
        }
        let (status, _) = app.get("/api/games/mine", None).await;
        assert_eq!(status, 401);
        // Nothing was created by the refused requests.
        let (_, mine) = app.get("/api/games/mine", Some(&guest.cookie)).await;
        assert_eq!(mine["games"], json!([]));
    }
);

on_both_backends!(
    foreign_origin_cannot_open_a_socket,
    |app: TestApp| async move {
        let guest = app.guest().await;
        let game_id = app.create_local(&guest, correspondence()).await;
        let path = format!("/api/games/{game_id}/socket");
        let refused = app
            .try_socket(&path, Some(&guest), Some("https://evil.example"))
            .await;
        match refused {
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                assert_eq!(response.status(), 403)
            }
            other => panic!("a foreign origin was not refused: {other:?}"),
        }
        let own = format!("http://127.0.0.1:{}", app.port);
        assert!(
            app.try_socket(&path, Some(&guest), Some(&own))
                .await
                .is_ok()
        );
        let unknown = app
            .try_socket(
                "/api/games/8c0ffa1e-0000-4000-8000-000000000000/socket",
                None,
                None,
            )
            .await;
        assert!(
            matches!(unknown, Err(tokio_tungstenite::tungstenite::Error::Http(r)) if r.status() == 404)
        );
    }
);
