//! What every handler can reach: the node's services, built once at start
//! (`crate::startup`) and handed to each request as one shared pointer.

use std::path::Path;
use std::sync::Arc;

use chess_live::Registry;

use crate::auth::identity::GuestTokens;
use crate::auth::rate_limit::{AddressKey, RateLimiter};
use crate::auth::routes::Accounts;
use crate::http::security::AllowedOrigins;
use crate::lichess::streams::Lichess;
use crate::lobby::Lobby;
use crate::metrics::Metrics;
use crate::overload::Admission;
use crate::ws::SocketLimits;
use chess_store::Store;

/// What every handler can reach: a cheap handle on the node's
/// [`Services`]. Axum clones the state for every extractor and middleware
/// of every request; one reference count to raise instead of one per
/// service was a few percent of an API move's CPU.
#[derive(Clone, Debug)]
pub struct AppState(Arc<Services>);

impl AppState {
    pub fn new(services: Services) -> AppState {
        AppState(Arc::new(services))
    }
}

impl std::ops::Deref for AppState {
    type Target = Services;

    fn deref(&self) -> &Services {
        &self.0
    }
}

/// The node's services, built once at start.
#[derive(Debug)]
pub struct Services {
    pub store: Store,
    /// Account endpoints and sessions.
    pub accounts: Accounts,
    /// Games (seeks, challenges, local and computer games) one player may
    /// create per minute.
    pub game_limits: Arc<RateLimiter<uuid::Uuid>>,
    /// Tournaments one account may create per day (on this node).
    pub tournament_limits: Arc<RateLimiter<uuid::Uuid>>,
    /// Classes of accounts created, per club leader.
    pub class_limits: Arc<RateLimiter<uuid::Uuid>>,
    /// The live games this node hosts.
    pub registry: Arc<Registry>,
    pub lobby: Arc<Lobby>,
    pub tokens: GuestTokens,
    /// Origins whose pages may open sockets and change state.
    pub allowed_origins: AllowedOrigins,
    /// Guests one address may create (first visits without a cookie).
    pub new_guest_limits: Arc<RateLimiter<AddressKey>>,
    pub socket_limits: SocketLimits,
    /// A folder to serve the web client from instead of the built-in copy.
    pub web_dir: Option<Arc<Path>>,
    pub metrics: Metrics,
    /// The lichess-compatible API's challenges and event streams.
    pub lichess: Arc<Lichess>,
    /// The node's limits on open sockets and creations in flight.
    pub admission: Admission,
}
