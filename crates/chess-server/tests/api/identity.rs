//! Guest identities: created on the first visit, kept by the cookie.

use serde_json::json;

use crate::helpers::{TestApp, correspondence};
use crate::on_both_backends;

on_both_backends!(
    first_visit_creates_a_guest_that_comes_back,
    |app: TestApp| async move {
        let guest = app.guest().await;
        assert_eq!(guest.name.split('-').count(), 3, "{}", guest.name);
        let (status, me) = app.get("/api/me", Some(&guest.cookie)).await;
        assert_eq!(status, 200);
        assert_eq!(
            me,
            json!({ "id": guest.id, "name": guest.name, "kind": "guest" })
        );
        // The same browser finds its game again.
        let game_id = app.create_local(&guest, correspondence()).await;
        let (_, mine) = app.get("/api/games/mine", Some(&guest.cookie)).await;
        assert_eq!(mine["games"][0]["game_id"], game_id.as_str());
        assert_eq!(mine["games"][0]["your_color"], "both");
    }
);

on_both_backends!(
    nobody_acts_for_a_seat_that_is_not_theirs,
    |app: TestApp| async move {
        let (white_guest, black_guest, stranger) =
            (app.guest().await, app.guest().await, app.guest().await);
        let game_id = app
            .online_game(&white_guest, &black_guest, correspondence())
            .await;
        let mut socket = app.socket(&game_id, Some(&stranger)).await;
        assert_eq!(socket.hello().await["seat"], "none");
        let error = socket
            .expect_error(json!({ "type": "move", "uci": "e2e4", "ply": 0 }))
            .await;
        assert_eq!(error["code"], "not_a_player");
        let (status, body) = app.join_game(&stranger, &game_id).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (409, Some("seat_taken"))
        );
        assert_eq!(app.state(&game_id, None).await["moves"], json!([]));
    }
);

/// A hand-written placeholder secret would let anyone forge identities: the
/// server refuses to start with one unless told it runs in development.
#[tokio::test]
async fn a_placeholder_secret_is_refused_outside_development() {
    use chess_server::startup::{Application, StartupError};

    let Some(db) = crate::helpers::fresh_database(crate::helpers::Backend::Sqlite).await else {
        return;
    };
    let mut settings = crate::helpers::test_settings(&db.url);
    settings.secret = Some("changeme-changeme-changeme-changeme".parse().expect("long"));

    settings.development = false;
    let refused = Application::build(settings.clone()).await;
    assert!(
        matches!(refused, Err(StartupError::SessionKeys(_))),
        "{refused:?}"
    );

    settings.development = true;
    let started = Application::build(settings).await;
    assert!(started.is_ok(), "{:?}", started.err());
}
