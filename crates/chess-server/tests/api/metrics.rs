//! `/metrics`: served on its own listener only, in the Prometheus text format.

use std::time::Duration;

use chess_server::startup::{Application, StartupError};

use crate::helpers::{Relay, TestApp, correspondence, sample};
use crate::on_both_backends;

/// Every metric family the endpoint promises (`docs/performance.md`).
const FAMILIES: [&str; 11] = [
    "chess_moves_committed",
    "chess_move_ack_seconds",
    "chess_commit_batch_moves",
    "chess_commit_batch_seconds",
    "chess_live_games",
    "chess_game_sockets",
    "chess_lobby_sockets",
    "chess_notifications_sent",
    "chess_notifications_received",
    "chess_store_errors",
    "chess_game_socket_closes",
];

/// Restarts `app` with a metrics listener on a free loopback port.
async fn with_metrics(app: TestApp) -> TestApp {
    let mut settings = app.settings.clone();
    settings.metrics_listen = Some("127.0.0.1:0".parse().expect("an address"));
    app.restart_with(settings).await
}

/// Scrapes until `name` reads `value`; fails after ten seconds.
async fn wait_for_gauge(app: &TestApp, name: &str, value: f64) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (_, text) = app.scrape_metrics().await;
        if sample(&text, name) == Some(value) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{name} never read {value}:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

on_both_backends!(
    metrics_are_served_on_their_own_listener,
    |app: TestApp| async move {
        let app = with_metrics(app).await;
        let (content_type, text) = app.scrape_metrics().await;
        assert!(
            content_type.starts_with("application/openmetrics-text"),
            "{content_type}"
        );
        for family in FAMILIES {
            assert!(
                text.contains(&format!("# TYPE {family} ")),
                "{family} is missing:\n{text}"
            );
        }
        // The public port does not expose them.
        let (_, public) = app.get_text("/metrics").await;
        assert!(!public.contains("chess_moves_committed"), "{public}");
    }
);

on_both_backends!(
    open_sockets_are_counted_while_they_are_open,
    |app: TestApp| async move {
        let app = with_metrics(app).await;
        let (white, black) = (app.guest().await, app.guest().await);
        let game_id = app.online_game(&white, &black, correspondence()).await;
        let mut player = app.socket(&game_id, Some(&white)).await;
        player.hello().await;
        let mut spectator = app.socket(&game_id, None).await;
        spectator.hello().await;
        let lobby = app
            .try_socket("/api/lobby/socket", None, None)
            .await
            .expect("lobby socket");
        wait_for_gauge(&app, "chess_game_sockets", 2.0).await;
        wait_for_gauge(&app, "chess_lobby_sockets", 1.0).await;

        spectator.close().await;
        lobby.close().await;
        wait_for_gauge(&app, "chess_game_sockets", 1.0).await;
        wait_for_gauge(&app, "chess_lobby_sockets", 0.0).await;
        player.close().await;
        wait_for_gauge(&app, "chess_game_sockets", 0.0).await;
    }
);

on_both_backends!(
    closed_sockets_are_counted_by_who_closed_them,
    |app: TestApp| async move {
        let mut settings = app.settings.clone();
        settings.metrics_listen = Some("127.0.0.1:0".parse().expect("an address"));
        settings.ws_silence_timeout_ms = 1_500;
        let app = app.restart_with(settings).await;
        let closes =
            |reason: &str| format!("chess_game_socket_closes_total{{reason=\"{reason}\"}}");
        let (_, text) = app.scrape_metrics().await;
        for reason in ["client", "silent", "error", "server_stopping"] {
            assert_eq!(
                sample(&text, &closes(reason)),
                Some(0.0),
                "{reason}:\n{text}"
            );
        }

        let (white, black) = (app.guest().await, app.guest().await);
        let game_id = app.online_game(&white, &black, correspondence()).await;
        let mut spectator = app.socket(&game_id, None).await;
        spectator.hello().await;
        spectator.close().await;
        wait_for_gauge(&app, &closes("client"), 1.0).await;

        // A connection that goes quiet without a close: the server's doing.
        let relay = Relay::start(app.port).await;
        let mut lost = app.socket_through(&relay, &game_id, &black).await;
        lost.hello().await;
        relay.go_silent();
        wait_for_gauge(&app, &closes("silent"), 1.0).await;
        let (_, text) = app.scrape_metrics().await;
        assert_eq!(sample(&text, &closes("client")), Some(1.0), "{text}");

        // A client that still hears the server but is no longer heard (its
        // pongs are lost) is told why: close code 4002.
        let uplink = Relay::start(app.port).await;
        let mut unheard = app.socket_through(&uplink, &game_id, &white).await;
        unheard.hello().await;
        uplink.cut_uplink();
        assert_eq!(
            unheard
                .close_code_within(std::time::Duration::from_secs(10))
                .await,
            Some(4002)
        );
        wait_for_gauge(&app, &closes("silent"), 2.0).await;
    }
);

/// A metrics address that is already taken stops the start with a clear
/// error instead of running without the endpoint.
#[tokio::test]
async fn a_taken_metrics_address_fails_the_start() {
    let Some(db) = crate::helpers::fresh_database(crate::helpers::Backend::Sqlite).await else {
        return;
    };
    let taken = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let address = taken.local_addr().expect("its address");
    let mut settings = crate::helpers::test_settings(&db.url);
    settings.metrics_listen = Some(address);
    let refused = Application::build(settings).await;
    assert!(
        matches!(&refused, Err(StartupError::MetricsListen { address: a, .. }) if *a == address),
        "{:?}",
        refused.err()
    );
    let message = refused
        .err()
        .map(|error| error.to_string())
        .unwrap_or_default();
    assert!(message.contains("metrics"), "{message}");
}
