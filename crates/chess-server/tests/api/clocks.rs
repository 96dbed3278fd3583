//! Clocks run on the server: timeouts are flagged by the game's timer even
//! when nobody is connected. Real sleeps here: a real timer must fire.

use std::time::Duration;

use serde_json::json;

use crate::helpers::{TestApp, clock, play_moves};
use crate::on_both_backends;

/// The smallest clock the game crate allows: 15 seconds, no increment.
const FIFTEEN_SECONDS: u64 = 15_000;

on_both_backends!(
    nobody_connected_still_flags_on_time,
    |app: TestApp| async move {
        let (white_guest, black_guest) = (app.guest().await, app.guest().await);
        let game_id = app
            .online_game(&white_guest, &black_guest, clock(FIFTEEN_SECONDS, 0))
            .await;
        let (mut white, mut black) = app.seat_both(&game_id, &white_guest, &black_guest).await;
        // Both first moves are free; White's clock starts with Black's first move.
        play_moves(&mut white, &mut black, &["e2e4", "e7e5"]).await;
        white.close().await;
        black.close().await;

        // Still running a little before the flag.
        tokio::time::sleep(Duration::from_millis(FIFTEEN_SECONDS - 2_000)).await;
        let running = app.state(&game_id, None).await;
        assert_eq!(running["status"], "playing", "{running}");
        assert_eq!(running["clocks"]["running"], "white");

        tokio::time::sleep(Duration::from_millis(3_000)).await;
        let flagged = app.state(&game_id, None).await;
        assert_eq!(
            flagged["result"],
            json!({ "winner": "black", "reason": "timeout" })
        );
        assert_eq!(flagged["clocks"]["white_ms"], 0);
        assert_eq!(flagged["clocks"]["black_ms"], FIFTEEN_SECONDS);
    }
);

on_both_backends!(
    timeout_against_a_bare_king_is_a_draw,
    |app: TestApp| async move {
        let (white_guest, black_guest) = (app.guest().await, app.guest().await);
        // White has a queen, Black a bare king. 0+1: White's clock holds nothing
        // once both first moves are made, so White flags at once.
        let fen = "4k3/8/8/8/8/8/8/3QK3 w - - 0 1";
        let game_id = app
            .online_game_from(&white_guest, &black_guest, clock(0, 1_000), Some(fen))
            .await;
        let (mut white, mut black) = app.seat_both(&game_id, &white_guest, &black_guest).await;
        play_moves(&mut white, &mut black, &["d1d2", "e8f8"]).await;
        let ended = white.recv_event("ended").await;
        assert_eq!(
            ended["event"]["result"],
            json!({ "winner": null, "reason": "timeout_vs_insufficient_material" })
        );
    }
);

on_both_backends!(
    first_move_not_made_in_time_aborts,
    |app: TestApp| async move {
        let mut settings = app.settings.clone();
        settings.first_move_deadline_ms = 300;
        let db = app.db.as_ref().expect("database").url.clone();
        settings.database_url = db;
        let mut app = app.restart_with(settings).await;
        let (white_guest, black_guest) = (app.guest().await, app.guest().await);
        let game_id = app
            .online_game(&white_guest, &black_guest, clock(180_000, 0))
            .await;
        let state = app.state(&game_id, None).await;
        assert!(state["first_move_deadline"].as_u64().is_some(), "{state}");
        tokio::time::sleep(Duration::from_millis(1_000)).await;
        let aborted = app.state(&game_id, None).await;
        assert_eq!(
            aborted["result"],
            json!({ "winner": null, "reason": "aborted" })
        );
        app.stop().await;
    }
);
