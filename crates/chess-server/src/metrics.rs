//! Operational metrics in the Prometheus text format (OpenMetrics flavour),
//! served on their own listener (`--metrics-listen`) so a public port never
//! exposes them. `docs/operations.md` says what each metric means and what
//! to watch.
//!
//! [`Metrics`] is a cheap, cloneable handle: every recording method is a few
//! atomic operations, safe to call on the move path. The live games report
//! to it through [`chess_live::Telemetry`].

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;
use tokio::sync::watch;

use chess_live::{BatchPath, StoreError, StoreErrorKind, Telemetry};

/// The exposition's media type: Prometheus parses OpenMetrics text (counter
/// families without their `_total` suffix, a final `# EOF`).
const CONTENT_TYPE_OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Every metric of one node; clones share them.
#[derive(Clone, Debug)]
pub struct Metrics {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    registry: Registry,
    moves_committed: Counter,
    ack_latency: Histogram,
    batch_moves: Histogram,
    batch_duration: Histogram,
    batch_paths: Family<BatchPathLabels, Counter>,
    live_games: Gauge,
    game_sockets: Gauge,
    lobby_sockets: Gauge,
    notifications_sent: Counter,
    notifications_received: Counter,
    remote_changes: Family<RemoteChangeLabels, Counter>,
    store_errors: Family<StoreErrorLabels, Counter>,
    socket_closes: Family<SocketCloseLabels, Counter>,
    wal_checkpoints: Counter,
    wal_pages: Gauge,
    runtime_lag: Gauge<f64, std::sync::atomic::AtomicU64>,
    writer_queue: Gauge<f64, std::sync::atomic::AtomicU64>,
    busy: Gauge,
    busy_refusals: Family<BusyRefusalLabels, Counter>,
    reward_requests: Family<RewardStateLabels, Gauge>,
    reward_oldest_pending: Gauge<f64, std::sync::atomic::AtomicU64>,
    reward_deliveries: Family<RewardOutcomeLabels, Counter>,
}

/// The label of `chess_reward_requests`: a request's delivery state.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RewardStateLabels {
    state: &'static str,
}

/// The label of `chess_reward_deliveries_total`: what an attempt came to.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RewardOutcomeLabels {
    outcome: &'static str,
}

/// Every `outcome` of `chess_reward_deliveries_total`.
const REWARD_OUTCOMES: [&str; 3] = ["delivered", "retried", "refused"];

/// The label of `chess_busy_refusals_total`: which limit refused.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BusyRefusalLabels {
    limit: &'static str,
}

/// Every `limit` of `chess_busy_refusals_total`.
const BUSY_LIMITS: [&str; 3] = ["pressure", "creations", "sockets"];

/// Why a game socket ended, the label of `chess_game_socket_closes_total`.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum SocketClose {
    /// The client closed it (a close frame, or the connection ended cleanly).
    Client,
    /// Reading or writing failed (a reset connection, a broken pipe).
    Error,
    /// Neither a message nor a pong within the silence timeout.
    Silent,
    /// The account session it spoke for ended (signed out, password changed).
    SessionEnded,
    /// The server is stopping.
    ServerStopping,
    /// The game's owner went away under the socket (the game unloaded).
    GameGone,
}

impl SocketClose {
    const ALL: [SocketClose; 6] = [
        SocketClose::Client,
        SocketClose::Error,
        SocketClose::Silent,
        SocketClose::SessionEnded,
        SocketClose::ServerStopping,
        SocketClose::GameGone,
    ];

    fn label(self) -> &'static str {
        match self {
            SocketClose::Client => "client",
            SocketClose::Error => "error",
            SocketClose::Silent => "silent",
            SocketClose::SessionEnded => "session_ended",
            SocketClose::ServerStopping => "server_stopping",
            SocketClose::GameGone => "game_gone",
        }
    }
}

/// The label of `chess_game_socket_closes_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SocketCloseLabels {
    reason: &'static str,
}

/// The label of `chess_remote_changes_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RemoteChangeLabels {
    how: &'static str,
}

/// The label of `chess_commit_batches_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BatchPathLabels {
    path: &'static str,
}

/// The label of `chess_store_errors_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StoreErrorLabels {
    kind: &'static str,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

impl Metrics {
    /// A fresh set of metrics, all at zero.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("chess");
        // 0.5 ms .. about 8 s, doubling: an ack is a socket round trip plus
        // one commit, from well under a millisecond to seconds under overload.
        let ack_latency = Histogram::new(exponential_buckets(0.000_5, 2.0, 15));
        // 1 .. 4096 moves per transaction, doubling.
        let batch_moves = Histogram::new(exponential_buckets(1.0, 2.0, 13));
        // 0.1 ms .. about 1.6 s, doubling: one commit, fsync included.
        let batch_duration = Histogram::new(exponential_buckets(0.000_1, 2.0, 15));
        let inner = Inner {
            moves_committed: Counter::default(),
            ack_latency,
            batch_moves,
            batch_duration,
            batch_paths: Family::default(),
            live_games: Gauge::default(),
            game_sockets: Gauge::default(),
            lobby_sockets: Gauge::default(),
            notifications_sent: Counter::default(),
            notifications_received: Counter::default(),
            remote_changes: Family::default(),
            store_errors: Family::default(),
            socket_closes: Family::default(),
            wal_checkpoints: Counter::default(),
            wal_pages: Gauge::default(),
            runtime_lag: Gauge::default(),
            writer_queue: Gauge::default(),
            busy: Gauge::default(),
            busy_refusals: Family::default(),
            reward_requests: Family::default(),
            reward_oldest_pending: Gauge::default(),
            reward_deliveries: Family::default(),
            registry: Registry::default(),
        };
        registry.register(
            "moves_committed",
            "Moves committed to the database (each one acknowledged to its player)",
            inner.moves_committed.clone(),
        );
        registry.register(
            "move_ack_seconds",
            "Time from a move's arrival on its socket to its ack, commit included",
            inner.ack_latency.clone(),
        );
        registry.register(
            "commit_batch_moves",
            "Moves committed together in one transaction",
            inner.batch_moves.clone(),
        );
        registry.register(
            "commit_batch_seconds",
            "Duration of one group-commit transaction",
            inner.batch_duration.clone(),
        );
        registry.register(
            "commit_batches",
            "Group-commit transactions, by how they were written: in one statement \
             (Postgres's chess_commit_batch) or statement by statement",
            inner.batch_paths.clone(),
        );
        registry.register(
            "live_games",
            "Games loaded in memory on this node",
            inner.live_games.clone(),
        );
        registry.register(
            "game_sockets",
            "Open game WebSockets on this node",
            inner.game_sockets.clone(),
        );
        registry.register(
            "lobby_sockets",
            "Open lobby WebSockets on this node",
            inner.lobby_sockets.clone(),
        );
        registry.register(
            "notifications_sent",
            "Change notifications this node sent to the other nodes",
            inner.notifications_sent.clone(),
        );
        registry.register(
            "notifications_received",
            "Change notifications this node received from the other nodes",
            inner.notifications_received.clone(),
        );
        registry.register(
            "remote_changes",
            "Other nodes' changes to games hosted here, by how this node caught up: \
             followed from the notice, or reread from the database",
            inner.remote_changes.clone(),
        );
        registry.register(
            "store_errors",
            "Database operations that failed, by kind",
            inner.store_errors.clone(),
        );
        registry.register(
            "game_socket_closes",
            "Game WebSockets that ended, by reason (who closed them)",
            inner.socket_closes.clone(),
        );
        registry.register(
            "wal_checkpoints",
            "Background checkpoints of SQLite's write-ahead log (none on Postgres)",
            inner.wal_checkpoints.clone(),
        );
        registry.register(
            "wal_pages",
            "Pages in SQLite's write-ahead log at the last background checkpoint: \
             it starts over from 0 once every page is copied into the database file",
            inner.wal_pages.clone(),
        );
        registry.register(
            "runtime_lag_seconds",
            "How late the node runs a task that is ready, sustained over half a second \
             (the pressure probe): the node's own lateness, which every socket feels",
            inner.runtime_lag.clone(),
        );
        registry.register(
            "writer_queue_fill",
            "How full the node's writer queue is, 0 to 1 (WRITE_QUEUE): past 1 moves are \
             refused busy; from 0.5 new games are",
            inner.writer_queue.clone(),
        );
        registry.register(
            "busy",
            "1 while the node refuses new games and seeks to keep up with the games in play \
             (sustained runtime lateness past BUSY_LAG_MS, or the writer's queue half full)",
            inner.busy.clone(),
        );
        registry.register(
            "busy_refusals",
            "Requests refused 429 busy, by the limit that refused them: pressure (new games \
             while the node is busy), creations (too many at once), sockets (the socket cap)",
            inner.busy_refusals.clone(),
        );
        registry.register(
            "reward_requests",
            "Reward requests to the host platform in the database, by delivery state \
             (pending, delivered, refused); counted only on nodes with REWARD_WEBHOOK_URL, \
             every such node counting the same rows",
            inner.reward_requests.clone(),
        );
        registry.register(
            "reward_requests_oldest_pending_seconds",
            "Age of the oldest reward request not yet delivered (0 when none is pending, \
             or no webhook is configured)",
            inner.reward_oldest_pending.clone(),
        );
        registry.register(
            "reward_deliveries",
            "Attempts this node made to deliver a reward request, by outcome: delivered (2xx), \
             retried (no answer, 408, 429, 5xx), refused (any other 4xx, for good)",
            inner.reward_deliveries.clone(),
        );
        for state in ["pending", "delivered", "refused"] {
            let _ = inner
                .reward_requests
                .get_or_create(&RewardStateLabels { state });
        }
        for outcome in REWARD_OUTCOMES {
            let _ = inner
                .reward_deliveries
                .get_or_create(&RewardOutcomeLabels { outcome });
        }
        for limit in BUSY_LIMITS {
            let _ = inner
                .busy_refusals
                .get_or_create(&BusyRefusalLabels { limit });
        }
        // Every label starts at zero, so a family is scraped before its first
        // count and `rate()` over it reads 0 rather than nothing.
        for kind in StoreErrorKind::ALL {
            let _ = inner
                .store_errors
                .get_or_create(&StoreErrorLabels { kind: kind.label() });
        }
        for path in [BatchPath::Statements, BatchPath::OneStatement] {
            let _ = inner
                .batch_paths
                .get_or_create(&BatchPathLabels { path: path.label() });
        }
        for how in ["followed", "reread"] {
            let _ = inner
                .remote_changes
                .get_or_create(&RemoteChangeLabels { how });
        }
        for close in SocketClose::ALL {
            let _ = inner.socket_closes.get_or_create(&SocketCloseLabels {
                reason: close.label(),
            });
        }
        Metrics {
            inner: Arc::new(Inner { registry, ..inner }),
        }
    }

    /// The outbox's counts as read from the database: requests pending,
    /// delivered and refused, and how long the oldest pending one has waited.
    pub fn reward_requests_counted(
        &self,
        pending: i64,
        delivered: i64,
        refused: i64,
        oldest_pending: Duration,
    ) {
        for (state, count) in [
            ("pending", pending),
            ("delivered", delivered),
            ("refused", refused),
        ] {
            self.inner
                .reward_requests
                .get_or_create(&RewardStateLabels { state })
                .set(count);
        }
        self.inner
            .reward_oldest_pending
            .set(oldest_pending.as_secs_f64());
    }

    /// One attempt to deliver a reward request came to `outcome`
    /// (`delivered`, `retried` or `refused`).
    pub fn reward_delivery(&self, outcome: &'static str) {
        self.inner
            .reward_deliveries
            .get_or_create(&RewardOutcomeLabels { outcome })
            .inc();
    }

    /// One move committed and acknowledged `ack_latency` after it arrived.
    pub fn move_committed(&self, ack_latency: Duration) {
        self.inner.moves_committed.inc();
        self.inner.ack_latency.observe(ack_latency.as_secs_f64());
    }

    /// One transaction of the group-commit writer: `moves` moves committed
    /// together in `duration`, written the way `path` says.
    pub fn batch_committed(&self, moves: usize, duration: Duration, path: BatchPath) {
        self.inner.batch_moves.observe(moves as f64);
        self.inner.batch_duration.observe(duration.as_secs_f64());
        self.inner
            .batch_paths
            .get_or_create(&BatchPathLabels { path: path.label() })
            .inc();
    }

    /// The number of games loaded in memory now.
    pub fn live_games_set(&self, games: usize) {
        self.inner
            .live_games
            .set(i64::try_from(games).unwrap_or(i64::MAX));
    }

    /// `count` change notifications sent to the other nodes.
    pub fn notifications_sent(&self, count: u64) {
        self.inner.notifications_sent.inc_by(count);
    }

    /// One change notification received from another node.
    pub fn notification_received(&self) {
        self.inner.notifications_received.inc();
    }

    /// Another node's change followed from its notice, without a read.
    pub fn remote_change_followed(&self) {
        self.remote_change("followed");
    }

    /// Another node's change (or possibly lost ones) reread from the store.
    pub fn remote_change_reread(&self) {
        self.remote_change("reread");
    }

    fn remote_change(&self, how: &'static str) {
        self.inner
            .remote_changes
            .get_or_create(&RemoteChangeLabels { how })
            .inc();
    }

    /// A background checkpoint of SQLite's log ran, and found `log_pages`
    /// pages in it.
    pub fn wal_checkpointed(&self, log_pages: i64) {
        self.inner.wal_checkpoints.inc();
        self.inner.wal_pages.set(log_pages);
    }

    /// The pressure probe's reading: the runtime's sustained lateness, how
    /// full the writer's queue is, and whether the node refuses new games.
    pub fn pressure(&self, lag: Duration, writer_queue: f64, busy: bool) {
        self.inner.runtime_lag.set(lag.as_secs_f64());
        self.inner.writer_queue.set(writer_queue);
        self.inner.busy.set(i64::from(busy));
    }

    /// A request refused `429 busy` by `limit` (one of [`BUSY_LIMITS`]).
    pub fn busy_refusal(&self, limit: &'static str) {
        self.inner
            .busy_refusals
            .get_or_create(&BusyRefusalLabels { limit })
            .inc();
    }

    /// A failed database operation, counted by what it means.
    pub fn store_error(&self, kind: StoreErrorKind) {
        self.inner
            .store_errors
            .get_or_create(&StoreErrorLabels { kind: kind.label() })
            .inc();
    }

    /// A game socket ended, for `reason`.
    pub fn game_socket_closed(&self, reason: SocketClose) {
        self.inner
            .socket_closes
            .get_or_create(&SocketCloseLabels {
                reason: reason.label(),
            })
            .inc();
    }

    /// `serve` (a game socket's whole life) counted in `chess_game_sockets`
    /// while it runs; the count drops even if the task is aborted.
    pub fn game_socket<F: Future>(&self, serve: F) -> impl Future<Output = F::Output> + use<F> {
        tracked(self.inner.game_sockets.clone(), serve)
    }

    /// `serve` (a lobby socket's whole life) counted in `chess_lobby_sockets`.
    pub fn lobby_socket<F: Future>(&self, serve: F) -> impl Future<Output = F::Output> + use<F> {
        tracked(self.inner.lobby_sockets.clone(), serve)
    }

    /// The exposition of every metric.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.inner.registry);
        text
    }
}

/// What the live games report, recorded.
impl Telemetry for Metrics {
    fn move_committed(&self, latency: Duration) {
        Metrics::move_committed(self, latency);
    }

    fn batch_committed(&self, writes: usize, duration: Duration, path: BatchPath) {
        Metrics::batch_committed(self, writes, duration, path);
    }

    fn notices_sent(&self, count: usize) {
        self.notifications_sent(u64::try_from(count).unwrap_or(u64::MAX));
    }

    fn remote_change(&self, followed: bool) {
        if followed {
            self.remote_change_followed();
        } else {
            self.remote_change_reread();
        }
    }

    fn store_error(&self, error: &StoreError) {
        Metrics::store_error(self, error.kind());
    }

    fn live_games(&self, count: usize) {
        self.live_games_set(count);
    }
}

/// Runs `work` with `gauge` one higher; lowered again when it ends or is dropped.
async fn tracked<F: Future>(gauge: Gauge, work: F) -> F::Output {
    struct Open(Gauge);
    impl Drop for Open {
        fn drop(&mut self) {
            self.0.dec();
        }
    }
    gauge.inc();
    let _open = Open(gauge);
    work.await
}

/// The router of the metrics listener: `GET /metrics`.
pub fn router(metrics: Metrics) -> Router {
    Router::new()
        .route("/metrics", get(exposition))
        .with_state(metrics)
}

async fn exposition(State(metrics): State<Metrics>) -> Response {
    (
        StatusCode::OK,
        [(CONTENT_TYPE, CONTENT_TYPE_OPENMETRICS)],
        metrics.encode(),
    )
        .into_response()
}

/// The metrics listener, bound at start-up so a taken port fails the start.
#[derive(Debug)]
pub struct Endpoint {
    listener: TcpListener,
    address: SocketAddr,
}

impl Endpoint {
    /// Binds `address` (port 0 picks a free one).
    ///
    /// # Errors
    /// The IO error of the bind.
    pub async fn bind(address: SocketAddr) -> std::io::Result<Endpoint> {
        let listener = TcpListener::bind(address).await?;
        let address = listener.local_addr()?;
        Ok(Endpoint { listener, address })
    }

    /// The address it listens on (the real port when 0 was asked for).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Serves `/metrics` in a task until `shutdown` turns true.
    pub fn spawn(self, metrics: Metrics, mut shutdown: watch::Receiver<bool>) {
        tokio::spawn(async move {
            let stopped = async move {
                let _ = shutdown.wait_for(|stop| *stop).await;
            };
            let served = axum::serve(self.listener, router(metrics))
                .with_graceful_shutdown(stopped)
                .await;
            if let Err(error) = served {
                tracing::error!(%error, "the metrics listener failed");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of the sample line starting with `name` (labels included).
    fn sample(text: &str, name: &str) -> Option<f64> {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
            .and_then(|value| value.parse().ok())
    }

    #[test]
    fn a_committed_move_counts_once_and_lands_in_its_latency_bucket() {
        let metrics = Metrics::new();
        metrics.move_committed(Duration::from_millis(3));
        metrics.move_committed(Duration::from_millis(40));
        let text = metrics.encode();
        assert_eq!(sample(&text, "chess_moves_committed_total"), Some(2.0));
        assert_eq!(sample(&text, "chess_move_ack_seconds_count"), Some(2.0));
        // 3 ms is above the 2 ms bucket and within the 4 ms one.
        assert_eq!(
            sample(&text, "chess_move_ack_seconds_bucket{le=\"0.002\"}"),
            Some(0.0)
        );
        assert_eq!(
            sample(&text, "chess_move_ack_seconds_bucket{le=\"0.004\"}"),
            Some(1.0)
        );
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    #[test]
    fn batches_record_their_size_duration_and_path() {
        let metrics = Metrics::new();
        metrics.batch_committed(50, Duration::from_millis(2), BatchPath::OneStatement);
        let text = metrics.encode();
        assert_eq!(sample(&text, "chess_commit_batch_moves_sum"), Some(50.0));
        assert_eq!(sample(&text, "chess_commit_batch_seconds_count"), Some(1.0));
        assert_eq!(
            sample(&text, "chess_commit_batches_total{path=\"one_statement\"}"),
            Some(1.0)
        );
        assert_eq!(
            sample(&text, "chess_commit_batches_total{path=\"statements\"}"),
            Some(0.0)
        );
    }

    #[tokio::test]
    async fn a_socket_is_counted_while_it_runs_and_not_after() {
        let metrics = Metrics::new();
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let socket = tokio::spawn(metrics.game_socket(async move {
            let _ = released.await;
        }));
        // The gauge goes up once the task runs.
        while sample(&metrics.encode(), "chess_game_sockets") != Some(1.0) {
            tokio::task::yield_now().await;
        }
        assert_eq!(sample(&metrics.encode(), "chess_lobby_sockets"), Some(0.0));
        release.send(()).expect("the socket task waits");
        socket.await.expect("the socket task ends");
        assert_eq!(sample(&metrics.encode(), "chess_game_sockets"), Some(0.0));
    }

    #[tokio::test]
    async fn an_aborted_socket_task_is_no_longer_counted() {
        let metrics = Metrics::new();
        let socket = tokio::spawn(metrics.lobby_socket(std::future::pending::<()>()));
        while sample(&metrics.encode(), "chess_lobby_sockets") != Some(1.0) {
            tokio::task::yield_now().await;
        }
        socket.abort();
        let _ = socket.await;
        assert_eq!(sample(&metrics.encode(), "chess_lobby_sockets"), Some(0.0));
    }

    #[test]
    fn store_errors_are_counted_by_kind() {
        let metrics = Metrics::new();
        let telemetry: &dyn Telemetry = &metrics;
        telemetry.store_error(&StoreError::new(StoreErrorKind::InDoubt, "reset"));
        telemetry.store_error(&StoreError::new(StoreErrorKind::InDoubt, "reset"));
        telemetry.store_error(&StoreError::corrupt("not a uuid"));
        let text = metrics.encode();
        let count = |kind: &str| {
            sample(
                &text,
                &format!("chess_store_errors_total{{kind=\"{kind}\"}}"),
            )
        };
        assert_eq!(count("in_doubt"), Some(2.0));
        assert_eq!(count("corrupt"), Some(1.0));
        // The other kinds are there from the start, at zero.
        for kind in StoreErrorKind::ALL {
            assert!(count(kind.label()).is_some(), "{kind:?} is exposed");
        }
        assert_eq!(count("unreachable"), Some(0.0));
    }

    #[test]
    fn remote_changes_are_counted_by_how_they_were_caught_up() {
        let metrics = Metrics::new();
        let count = |how: &str| {
            sample(
                &metrics.encode(),
                &format!("chess_remote_changes_total{{how=\"{how}\"}}"),
            )
        };
        assert_eq!((count("followed"), count("reread")), (Some(0.0), Some(0.0)));
        metrics.remote_change_followed();
        metrics.remote_change_followed();
        metrics.remote_change_reread();
        assert_eq!((count("followed"), count("reread")), (Some(2.0), Some(1.0)));
    }

    #[test]
    fn gauges_and_notification_counters_show_what_was_set() {
        let metrics = Metrics::new();
        metrics.live_games_set(7);
        metrics.notifications_sent(3);
        metrics.notification_received();
        let text = metrics.encode();
        assert_eq!(sample(&text, "chess_live_games"), Some(7.0));
        assert_eq!(sample(&text, "chess_notifications_sent_total"), Some(3.0));
        assert_eq!(
            sample(&text, "chess_notifications_received_total"),
            Some(1.0)
        );
    }

    #[test]
    fn checkpoints_count_and_show_the_last_log_size() {
        let metrics = Metrics::new();
        assert_eq!(
            sample(&metrics.encode(), "chess_wal_checkpoints_total"),
            Some(0.0)
        );
        metrics.wal_checkpointed(1200);
        metrics.wal_checkpointed(35);
        let text = metrics.encode();
        assert_eq!(sample(&text, "chess_wal_checkpoints_total"), Some(2.0));
        assert_eq!(sample(&text, "chess_wal_pages"), Some(35.0));
    }
}
