//! Building the application: settings → store → hub → router → listener, and
//! running it until a shutdown signal.

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

use crate::accounts::http::Accounts;
use crate::accounts::password::{HashingError, PasswordHasher};
use crate::accounts::rate_limit::{GAMES_PER_PLAYER, RateLimiter};
use crate::accounts::session::{KeyRing, KeyRingError, Mode, Sessions, check_strength};
use crate::games::{Hub, SocketLimits};
use crate::identity::GuestTokens;
use crate::lobby::Lobby;
use crate::metrics::{self, Metrics};
use crate::settings::{Secret, Settings};
use crate::store::{self, Store, StoreError};

/// Argon2 hashes computed at once (each takes 19 MiB): one per core.
const MAX_CONCURRENT_HASHES: usize = 2;

/// Largest JSON body the API accepts.
const MAX_BODY_BYTES: usize = 16 * 1024;
/// Longest an HTTP request may take (a WebSocket's life is not a request:
/// the upgrade answers at once).
const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

/// What every handler can reach.
#[derive(Clone, Debug)]
pub struct AppState {
    pub store: Store,
    /// Account endpoints and sessions (issue 5).
    pub accounts: Accounts,
    /// Games (seeks, challenges, local and computer games) one player may
    /// create per minute.
    pub game_limits: Arc<RateLimiter<uuid::Uuid>>,
    pub hub: Arc<Hub>,
    pub lobby: Arc<Lobby>,
    pub tokens: GuestTokens,
    pub allowed_origins: Arc<Vec<String>>,
    pub socket_limits: SocketLimits,
    pub web_dir: Arc<PathBuf>,
    pub metrics: Metrics,
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error("database: {0}")]
    Store(#[from] StoreError),
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
    recovered: usize,
    metrics: Metrics,
    metrics_endpoint: Option<metrics::Endpoint>,
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
        let store = store::connect(&settings.database_url).await?;
        let metrics = Metrics::new();
        let metrics_endpoint = match settings.metrics_listen {
            Some(address) => Some(
                metrics::Endpoint::bind(address)
                    .await
                    .map_err(|source| StartupError::MetricsListen { address, source })?,
            ),
            None => None,
        };
        let (shutdown, shutdown_rx) = watch::channel(false);
        let hub = Hub::new(store.clone(), settings.first_move_deadline_ms, shutdown_rx);
        hub.ensure_computer_players().await?;
        let recovered = hub.recover().await?;

        let address = SocketAddr::new(settings.host, settings.port);
        let listener = TcpListener::bind(address)
            .await
            .map_err(|source| StartupError::Listen { address, source })?;
        let port = listener
            .local_addr()
            .map_err(|source| StartupError::Listen { address, source })?
            .port();
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
        // Without SESSION_KEYS the server secret signs sessions too; it
        // already passed its own length rule (or was generated), so the
        // strength checks meant for hand-written keys are relaxed.
        let ring = match settings.session_keys.as_deref() {
            Some(keys) => KeyRing::from_config(Some(keys), mode)?,
            None => KeyRing::single("main", secret.expose())?,
        };
        let tokens = GuestTokens::new(&secret)?;
        let accounts = Accounts::new(
            store.accounts_db(),
            PasswordHasher::owasp(MAX_CONCURRENT_HASHES)?,
            Sessions::new(ring),
            tokens.clone(),
            settings.secure_cookies,
        );
        let state = AppState {
            store: store.clone(),
            accounts: accounts.clone(),
            game_limits: Arc::new(RateLimiter::new(GAMES_PER_PLAYER)),
            lobby: Arc::new(Lobby::new(Arc::clone(&hub))),
            hub,
            tokens,
            allowed_origins: Arc::new(allowed_origins),
            socket_limits: SocketLimits {
                max_message_bytes: settings.ws_max_message_bytes,
                rate_per_second: settings.ws_rate_per_second,
                burst: settings.ws_rate_burst,
            },
            web_dir: Arc::new(settings.web_dir.clone()),
            metrics: metrics.clone(),
        };
        let router = crate::routes::router(state)
            .merge(crate::accounts::http::router(accounts))
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
            recovered,
            metrics,
            metrics_endpoint,
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

    /// How many unfinished games were loaded on start.
    pub fn recovered_games(&self) -> usize {
        self.recovered
    }

    /// Serves until `signal` completes, then closes every socket (a command
    /// being processed finishes first), waits for requests in flight and
    /// closes the database.
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
            metrics,
            metrics_endpoint,
            ..
        } = self;
        if let Some(endpoint) = metrics_endpoint {
            endpoint.spawn(metrics, shutdown.subscribe());
        }
        tracing::info!(recovered_games = self.recovered, "serving");
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
        store.close().await;
        result
    }
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
