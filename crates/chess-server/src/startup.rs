//! Building the application: settings → store → live games' registry →
//! router → listener, and running it until a shutdown signal.

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath};
use axum::http::Request;
use axum::serve::ListenerExt;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::{DefaultOnResponse, TraceLayer};

use chess_live::{Registry, RegistrySettings, WriterSettings};

use crate::auth::identity::GuestTokens;
use crate::auth::password::{HashingError, PasswordHasher};
use crate::auth::rate_limit::{
    CLASSES_PER_ACCOUNT, GAMES_PER_PLAYER, Limit, RateLimiter, TOURNAMENTS_PER_ACCOUNT,
};
use crate::auth::routes::Accounts;
use crate::auth::session::{KeyRing, KeyRingError, Mode, Sessions, check_strength};
use crate::cluster::NodeNotices;
use crate::http::forwarded::TrustedProxies;
use crate::http::security::AllowedOrigins;
use crate::lichess::streams::Lichess;
use crate::lobby::Lobby;
use crate::metrics::{self, Metrics};
use crate::overload::{Admission, Pressure};
use crate::settings::{Secret, Settings};
use crate::state::{AppState, Services};
use crate::ws::SocketLimits;
use chess_store::{Store, StoreError};

/// Argon2 hashes computed at once (each takes 19 MiB): one per core.
const MAX_CONCURRENT_HASHES: usize = 2;

/// How long shutdown waits for games and the writer to finish their work.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Largest JSON body the API accepts.
const MAX_BODY_BYTES: usize = 16 * 1024;
/// Longest an HTTP request may take (a WebSocket's life is not a request:
/// the upgrade answers at once).
const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error("database: {0}")]
    Store(#[from] StoreError),
    #[error("database: {0}")]
    Games(#[from] chess_live::StoreError),
    #[error("cannot listen for metrics on {address}: {source}")]
    MetricsListen {
        address: SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot listen on {address}: {source}")]
    Listen {
        address: SocketAddr,
        source: std::io::Error,
    },
    #[error("signing key: {0}")]
    Key(#[from] jsonwebtoken::errors::Error),
    #[error("session keys: {0}")]
    SessionKeys(#[from] KeyRingError),
    #[error("password hashing: {0}")]
    Hashing(#[from] HashingError),
    #[error("reward webhook: {0}")]
    RewardWebhook(&'static str),
    #[error("sign-in with the platform: {0}")]
    Oidc(#[from] crate::auth::oidc::OidcConfigError),
    #[error("secret file {path}: {source}")]
    Secret {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A built server, bound to its port, ready to run.
#[derive(Debug)]
pub struct Application {
    listener: TcpListener,
    router: Router,
    port: u16,
    host: std::net::IpAddr,
    store: Store,
    shutdown: watch::Sender<bool>,
    registry: Arc<Registry>,
    writer: tokio::task::JoinHandle<()>,
    /// On Postgres, the listener for other nodes' notices.
    listener_task: Option<tokio::task::JoinHandle<()>>,
    metrics: Metrics,
    metrics_endpoint: Option<metrics::Endpoint>,
    /// Held until the server has stopped using its SQLite file.
    sqlite_claim: Option<chess_store::SqliteClaim>,
    /// With `REWARD_WEBHOOK_URL`, the deliverer of reward requests.
    deliverer: Option<tokio::task::JoinHandle<()>>,
    /// The tournament director, which runs the tournaments this node holds.
    director: tokio::task::JoinHandle<()>,
}

impl Application {
    /// Connects the database (migrating it), recovers unfinished games, binds
    /// the listener.
    ///
    /// # Errors
    /// A [`StartupError`] saying what failed.
    pub async fn build(settings: Settings) -> Result<Application, StartupError> {
        let mode = if settings.development {
            Mode::Development
        } else {
            Mode::Production
        };
        // Settings that cannot work stop the start before anything is touched.
        let oidc = crate::auth::oidc::OidcConfig::from_settings(&settings)?;
        let secret = match settings.secret.clone() {
            Some(secret) => {
                // A hand-written secret must not be a placeholder such as
                // "changeme…" unless the server is told it runs in development.
                if mode == Mode::Production {
                    check_strength("CHESS_SECRET", secret.expose())?;
                }
                secret
            }
            None => load_or_create_secret(&settings.data_dir)?,
        };
        let delivery = delivery_settings(&settings)?;
        // Before the database is touched: a second server on an SQLite
        // file is refused without migrating or writing anything.
        let sqlite_claim = chess_store::claim_sqlite_file(&settings.database_url)?;
        let store = chess_store::connect(&settings.database_url)
            .await?
            .with_platform_accounts_only(!settings.local_accounts);
        let metrics = Metrics::new();
        let metrics_endpoint = match settings.metrics_listen {
            Some(address) => Some(
                metrics::Endpoint::bind(address)
                    .await
                    .map_err(|source| StartupError::MetricsListen { address, source })?,
            ),
            None => None,
        };
        let address = SocketAddr::new(settings.host, settings.port);
        let listener = TcpListener::bind(address)
            .await
            .map_err(|source| StartupError::Listen { address, source })?;
        let port = listener
            .local_addr()
            .map_err(|source| StartupError::Listen { address, source })?
            .port();
        let node_name = settings
            .node_name
            .clone()
            .unwrap_or_else(|| default_node_name(port));
        let (shutdown, shutdown_rx) = watch::channel(false);
        let max_sockets = settings
            .max_sockets
            .unwrap_or_else(crate::overload::default_max_sockets);
        let checkpoint_metrics = metrics.clone();
        store.start_checkpoints(move |checkpoint| {
            checkpoint_metrics.wal_checkpointed(checkpoint.log_pages);
        });
        let (registry, writer) = Registry::new(
            Arc::new(store.clone()),
            RegistrySettings {
                node_name,
                first_move_deadline_ms: settings.first_move_deadline_ms,
                writer: WriterSettings {
                    queue: settings.write_queue.unwrap_or(max_sockets),
                    linger: std::time::Duration::from_micros(settings.commit_linger_us),
                },
            },
            Arc::new(metrics.clone()),
            shutdown_rx.clone(),
        );
        registry.ensure_computer_players().await?;
        // Games whose clock ran out while no node ran are flagged by the
        // sweeper this starts; the others load when someone opens them.
        registry.start().await?;
        // Other nodes' notices, on Postgres: game changes and presence for
        // the registry, lobby and API notices for their followers here.
        let node_notices = NodeNotices::default();
        let listener_task = store.is_postgres().then(|| {
            tokio::spawn(crate::cluster::listen(
                store.clone(),
                Arc::clone(&registry),
                node_notices.clone(),
                metrics.clone(),
                shutdown_rx,
            ))
        });
        let allowed_origins = if settings.allowed_origins.is_empty() {
            let mut origins = vec![
                format!("http://127.0.0.1:{port}"),
                format!("http://localhost:{port}"),
            ];
            let own = format!("http://{}:{port}", settings.host);
            if !origins.contains(&own) {
                origins.push(own);
            }
            origins
        } else {
            settings.allowed_origins.clone()
        };
        let allowed_origins = AllowedOrigins::new(allowed_origins);
        // Without SESSION_KEYS the server secret signs sessions too; it
        // already passed its own length rule (or was generated), so the
        // strength checks meant for hand-written keys are relaxed.
        let ring = match settings.session_keys.as_deref() {
            Some(keys) => KeyRing::from_config(Some(keys), mode)?,
            None => KeyRing::single("main", secret.expose())?,
        };
        let tokens = GuestTokens::new(&secret)?.with_secure_cookies(settings.secure_cookies);
        let accounts = Accounts::new(
            store.clone(),
            PasswordHasher::owasp(MAX_CONCURRENT_HASHES)?,
            Sessions::new(ring),
            tokens.clone(),
            settings.secure_cookies,
        )
        .with_reward_deliveries(settings.reward_webhook_url.is_some())
        .with_local_accounts(settings.local_accounts)
        .with_platform(oidc.as_ref().map(|config| config.provider_name.clone()));
        let platform_sign_in = oidc.map(|config| {
            crate::auth::oidc_routes::router(
                accounts.clone(),
                Arc::new(crate::auth::oidc::Provider::new(config)),
            )
        });
        let lobby = Arc::new(
            Lobby::new(Arc::clone(&registry), store.clone()).with_turns(node_notices.turns()),
        );
        store.observe_commits(Arc::new(node_notices.turns()));
        lobby.start(&node_notices);
        let lichess = Arc::new(Lichess::new());
        let state = AppState::new(Services {
            store: store.clone(),
            accounts: accounts.clone(),
            game_limits: Arc::new(RateLimiter::new(GAMES_PER_PLAYER)),
            tournament_limits: Arc::new(RateLimiter::new(TOURNAMENTS_PER_ACCOUNT)),
            class_limits: Arc::new(RateLimiter::new(CLASSES_PER_ACCOUNT)),
            lobby,
            registry: Arc::clone(&registry),
            tokens,
            allowed_origins: allowed_origins.clone(),
            new_guest_limits: Arc::new(RateLimiter::new(Limit {
                max: settings.new_guests_per_address_per_hour,
                window: std::time::Duration::from_secs(60 * 60),
            })),
            socket_limits: SocketLimits {
                max_message_bytes: settings.ws_max_message_bytes,
                rate_per_second: settings.ws_rate_per_second,
                burst: settings.ws_rate_burst,
                silence_timeout: std::time::Duration::from_millis(settings.ws_silence_timeout_ms),
            },
            web_dir: settings.web_dir.as_deref().map(Arc::from),
            metrics: metrics.clone(),
            lichess,
            admission: Admission::new(
                max_sockets,
                settings.max_concurrent_creations,
                Pressure::start(
                    std::time::Duration::from_millis(settings.busy_lag_ms),
                    Some(Arc::clone(&registry)),
                    metrics.clone(),
                    shutdown.subscribe(),
                ),
                metrics.clone(),
            ),
        });
        crate::lichess::relay::start(&state, &node_notices);
        // Reward requests reach the platform from the outbox the ledger
        // fills (docs/rewards.md); without a webhook they are only kept.
        let deliverer = delivery.map(|delivery| {
            crate::outbox::start(
                store.clone(),
                delivery,
                metrics.clone(),
                shutdown.subscribe(),
            )
        });
        let director = crate::tournament::director::start(state.clone(), shutdown.subscribe());
        let router = crate::http::routes::router(state.clone())
            .merge(crate::auth::routes::router(accounts))
            .merge(crate::lichess::routes::router(state.clone()))
            .merge(crate::outbox::routes::router(
                store.clone(),
                settings.reward_webhook_secret.clone(),
            ))
            .merge(platform_sign_in.unwrap_or_default())
            .layer(axum::middleware::from_fn_with_state(
                state,
                crate::lichess::account::bearer_account,
            ));
        // Every request carries the rule that finds its client's address
        // (`ClientAddress`), whichever router serves it.
        let trusted_proxies = TrustedProxies::new(
            settings.trusted_proxies.clone(),
            settings.client_address_header,
        );
        let router = crate::http::security::protect(router, allowed_origins)
            .layer(axum::Extension(trusted_proxies))
            .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
            .layer(TimeoutLayer::with_status_code(
                axum::http::StatusCode::REQUEST_TIMEOUT,
                REQUEST_TIMEOUT,
            ))
            .layer(
                TraceLayer::new_for_http()
                    .make_span_with(|request: &Request<_>| {
                        // The matched route, not the raw URI: ids stay out of span names.
                        let route = request
                            .extensions()
                            .get::<MatchedPath>()
                            .map_or("static", MatchedPath::as_str);
                        tracing::info_span!("request", method = %request.method(), route)
                    })
                    .on_response(DefaultOnResponse::new().level(tracing::Level::INFO)),
            );
        Ok(Application {
            listener,
            router,
            port,
            host: settings.host,
            store,
            shutdown,
            registry,
            writer,
            listener_task,
            metrics,
            metrics_endpoint,
            sqlite_claim,
            deliverer,
            director,
        })
    }

    /// The metrics of this node, to record into.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Where `/metrics` is served, when `--metrics-listen` was given.
    pub fn metrics_address(&self) -> Option<SocketAddr> {
        self.metrics_endpoint
            .as_ref()
            .map(metrics::Endpoint::address)
    }

    /// The port it listens on (the real one when 0 was asked for).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL to open in a browser.
    pub fn url(&self) -> String {
        let host = if self.host.is_unspecified() {
            "127.0.0.1".to_owned()
        } else {
            self.host.to_string()
        };
        format!("http://{host}:{}/", self.port)
    }

    /// The HTTP routes with every layer the listener serves them with (body
    /// limit, timeout, origin checks, the trusted proxies), to drive
    /// in-process without TCP, as the HTTP fuzzer does. A handler that
    /// rate-limits by address reads `ConnectInfo<SocketAddr>` from the
    /// request's extensions, which the listener adds and a caller of this
    /// router must add itself.
    pub fn router(&self) -> Router {
        self.router.clone()
    }

    /// The node's database.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The live games of this node.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// Serves until `signal` completes, then closes every socket, lets every
    /// game finish the command it is on (committed and answered), waits for
    /// requests in flight, stops the writer and only then closes the database.
    ///
    /// # Errors
    /// An IO error of the listener.
    pub async fn run_until_stopped(
        self,
        signal: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let Application {
            listener,
            router,
            store,
            shutdown,
            registry,
            writer,
            listener_task,
            metrics,
            metrics_endpoint,
            sqlite_claim,
            deliverer,
            director,
            ..
        } = self;
        if let Some(endpoint) = metrics_endpoint {
            endpoint.spawn(metrics, shutdown.subscribe());
        }
        tracing::info!(node = %registry.node_id(), "serving");
        // Connect info gives handlers the client address for rate limits.
        let service = router.into_make_service_with_connect_info::<SocketAddr>();
        // Game messages are small writes: with Nagle's algorithm on, a move's
        // broadcast waits for the delayed ACK of the previous one (about 30 ms
        // more than its ack in the load tool). Latency matters more here than
        // packet count.
        let listener = listener.tap_io(|stream| {
            if let Err(error) = stream.set_nodelay(true) {
                tracing::debug!(%error, "cannot set TCP_NODELAY on a connection");
            }
        });
        let result = axum::serve(listener, service)
            .with_graceful_shutdown(async move {
                signal.await;
                tracing::info!("shutting down");
                let _ = shutdown.send(true);
            })
            .await;
        // The owners stop after their current command; then the writer
        // commits what they queued; then nothing uses the pool any more.
        if let Some(listener) = listener_task {
            let _ = tokio::time::timeout(SHUTDOWN_GRACE, listener).await;
        }
        // The director gives its tournaments back, so that another node
        // runs them at once rather than when the leases run out.
        if tokio::time::timeout(SHUTDOWN_GRACE, director)
            .await
            .is_err()
        {
            tracing::warn!("the tournament director did not stop in time; its leases will run out");
        }
        registry.stop(SHUTDOWN_GRACE).await;
        if tokio::time::timeout(SHUTDOWN_GRACE, writer).await.is_err() {
            tracing::warn!("the writer did not stop in time");
        }
        // The deliverer gives back the requests it was sending (their next
        // attempt is any node's) before the database closes.
        if let Some(deliverer) = deliverer
            && tokio::time::timeout(SHUTDOWN_GRACE, deliverer)
                .await
                .is_err()
        {
            tracing::warn!(
                "the reward deliverer did not stop in time; its claims' leases will run out"
            );
        }
        drop(registry);
        store.close().await;
        drop(sqlite_claim);
        result
    }
}

/// The deliverer's settings when `REWARD_WEBHOOK_URL` is set; refuses a URL
/// without a secret (requests nobody could check) or of another scheme than
/// http(s).
fn delivery_settings(
    settings: &Settings,
) -> Result<Option<crate::outbox::DeliverySettings>, StartupError> {
    use std::time::Duration;
    let Some(url) = settings.reward_webhook_url.clone() else {
        return Ok(None);
    };
    if !matches!(url.scheme(), "http" | "https") {
        return Err(StartupError::RewardWebhook(
            "REWARD_WEBHOOK_URL must be an http:// or https:// URL",
        ));
    }
    let Some(secret) = settings.reward_webhook_secret.clone() else {
        return Err(StartupError::RewardWebhook(
            "REWARD_WEBHOOK_URL is set but REWARD_WEBHOOK_SECRET is not: \
             requests would go unsigned",
        ));
    };
    let timeout = Duration::from_millis(settings.reward_webhook_timeout_ms.max(1));
    Ok(Some(crate::outbox::DeliverySettings {
        url,
        secret,
        retry: crate::outbox::RetrySchedule {
            first: Duration::from_millis(settings.reward_retry_first_ms.max(1)),
            max: Duration::from_millis(
                settings
                    .reward_retry_max_ms
                    .max(settings.reward_retry_first_ms),
            ),
        },
        timeout,
        lease: timeout + Duration::from_secs(5),
        poll: Duration::from_millis(settings.reward_poll_ms.max(1)),
    }))
}

/// This machine's host name and the port: unique per node as long as two
/// nodes on one host listen on different ports (containers have their own
/// host names).
fn default_node_name(port: u16) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".to_owned());
    format!("{host}:{port}")
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}

/// The secret kept in `<data_dir>/secret`, generated on first start so the
/// embedded default needs no set-up.
fn load_or_create_secret(data_dir: &Path) -> Result<Secret, StartupError> {
    let path = data_dir.join("secret");
    let error = |source| StartupError::Secret {
        path: path.clone(),
        source,
    };
    if let Ok(text) = std::fs::read_to_string(&path)
        && let Ok(secret) = text.trim().parse::<Secret>()
    {
        return Ok(secret);
    }
    std::fs::create_dir_all(data_dir).map_err(error)?;
    let bytes: [u8; 32] = rand::random();
    let text: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    write_private(&path, &text).map_err(error)?;
    text.parse::<Secret>()
        .map_err(|message| error(std::io::Error::other(message)))
}

/// Writes `text` to a new file only its owner can read.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(text.as_bytes())
}
