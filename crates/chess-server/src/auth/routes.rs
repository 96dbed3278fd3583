//! The account endpoints: sign up, sign in, sign out, change password, the
//! signed-in account and its rewards (`docs/protocol.md`, "Accounts").
//!
//! They form their own router over [`Accounts`], which the server merges
//! into its own. Every failure is an [`ApiError`] with a stable code; sign-in
//! failures are one `401 invalid_credentials` whatever went wrong, and
//! database or hashing failures are an opaque `500` with the cause logged.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::State;
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

use chess_live::now_ms;

use super::account_limits::{AccountLimits, Refusal};
use super::cookies::{cookie_value, set_cookie};
use super::password::{Password, PasswordHasher};
use super::rate_limit::RetryAfter;
use super::session::{SESSION_COOKIE, Session, Sessions};
use super::sign_in::{SignInError, SignedIn, sign_in};
use crate::auth::identity::GuestTokens;
use crate::http::error::ApiError;
use crate::http::error::too_many_requests;
use crate::http::extract::{ClientAddress, JsonBody};
use chess_store::accounts::Username;
use chess_store::ledger::{LedgerEntry, UtcDay};
use chess_store::{AccountRow, PasswordHash, SignUpError, Store};

/// How often an open game socket re-checks its account session.
pub const SESSION_CHECK_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// How many ledger entries `GET /api/account/rewards` lists.
const REWARD_ENTRIES_SHOWN: u32 = 100;

/// What the account endpoints need.
#[derive(Clone)]
pub struct Accounts {
    store: Store,
    hasher: PasswordHasher,
    sessions: Arc<Sessions>,
    guests: GuestTokens,
    /// Failed sign-ins and sign-ups: in the store on Postgres, so that
    /// every node counts the same attempts.
    limits: Arc<AccountLimits>,
    secure_cookies: bool,
    /// Whether the rewards list says how each reward's request to the host
    /// platform went (only with a webhook: without one every request stays
    /// pending, and saying so would mislead).
    reward_deliveries: bool,
    /// Whether local (username and password) sign-up and sign-in are on.
    local_accounts: bool,
    /// The host platform's name, when people can sign in with it.
    platform: Option<Arc<str>>,
}

impl std::fmt::Debug for Accounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Accounts")
            .field("store", &self.store)
            .field("secure_cookies", &self.secure_cookies)
            .finish_non_exhaustive()
    }
}

impl Accounts {
    /// The account endpoints' state. `secure_cookies` adds `Secure` to the
    /// session cookie (set it when served over TLS).
    pub fn new(
        store: Store,
        hasher: PasswordHasher,
        sessions: Sessions,
        guests: GuestTokens,
        secure_cookies: bool,
    ) -> Accounts {
        Accounts {
            limits: Arc::new(AccountLimits::for_store(&store)),
            store,
            hasher,
            sessions: Arc::new(sessions),
            guests,
            secure_cookies,
            reward_deliveries: false,
            local_accounts: true,
            platform: None,
        }
    }

    /// Shows each reward's delivery to the host platform on the rewards
    /// list (with `REWARD_WEBHOOK_URL`).
    #[must_use]
    pub fn with_reward_deliveries(mut self, shown: bool) -> Accounts {
        self.reward_deliveries = shown;
        self
    }

    /// The same endpoints with local accounts on or off (`LOCAL_ACCOUNTS`):
    /// off, local sign-up and sign-in are refused `403 local_accounts_off`.
    #[must_use]
    pub fn with_local_accounts(mut self, on: bool) -> Accounts {
        self.local_accounts = on;
        self
    }

    /// The same endpoints, telling the web client that people can sign in
    /// with the host platform named `name`.
    #[must_use]
    pub fn with_platform(mut self, name: Option<String>) -> Accounts {
        self.platform = name.map(Arc::from);
        self
    }

    /// The database the accounts are in.
    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    /// The guest tokens, to find the guest a sign-in started from.
    pub(crate) fn guests(&self) -> &GuestTokens {
        &self.guests
    }

    /// Whether cookies are marked `Secure`.
    pub(crate) fn secure_cookies(&self) -> bool {
        self.secure_cookies
    }

    /// The `Set-Cookie` of a fresh session token for `player_id`'s sign-in
    /// `session_id` (recorded with `Transaction::start_session`).
    ///
    /// # Errors
    /// Only if signing fails.
    pub(crate) fn session_set_cookie(
        &self,
        player_id: Uuid,
        session_id: Uuid,
    ) -> Result<HeaderValue, ApiError> {
        let token = self
            .sessions
            .issue_for(player_id, session_id, now_ms().secs())
            .map_err(internal)?;
        Ok(self.session_cookie(&token, self.sessions.lifetime().as_secs()))
    }

    /// The password hasher (class accounts hash their handed-out passwords).
    pub(crate) fn hasher(&self) -> &PasswordHasher {
        &self.hasher
    }

    /// Refuses local sign-up and sign-in (and class accounts, which sign in
    /// locally) when local accounts are off.
    pub(crate) fn local_accounts_on(&self) -> Result<(), ApiError> {
        if self.local_accounts {
            return Ok(());
        }
        let message = match &self.platform {
            Some(name) => {
                format!("this server has no local accounts: sign in with {name} instead")
            }
            None => "this server has no local accounts".to_owned(),
        };
        Err(ApiError::client(
            StatusCode::FORBIDDEN,
            "local_accounts_off",
            message,
        ))
    }

    /// The verified, still active session of a request, if any.
    ///
    /// # Errors
    /// An internal [`ApiError`] if the database fails.
    pub async fn session_of(&self, headers: &HeaderMap) -> Result<Option<Session>, ApiError> {
        match cookie_value(headers, SESSION_COOKIE) {
            Some(token) => self.session_of_token(&token).await,
            None => Ok(None),
        }
    }

    /// The verified, still active session whose cookie token is `token`.
    async fn session_of_token(&self, token: &str) -> Result<Option<Session>, ApiError> {
        let Ok(session) = self.sessions.verify(token, now_ms().secs()) else {
            return Ok(None);
        };
        let active = self
            .store
            .session_is_active(session.session_id, session.account_id)
            .await
            .map_err(internal)?;
        Ok(active.then_some(session))
    }

    /// A future that completes when the account session the socket of
    /// `viewer` acts for ends (signed out, password changed elsewhere, or
    /// expired), checked at once and then every [`SESSION_CHECK_EVERY`]; it
    /// never completes for a socket that acts for no session (guests,
    /// spectators). Game and lobby sockets close on it.
    pub fn session_watch(
        &self,
        headers: &HeaderMap,
        viewer: Option<Uuid>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        // Only the token, copied out: the watch lives as long as the socket,
        // and a clone of the headers would keep alive, through the `Bytes`
        // its values share, the whole read buffer of the connection's HTTP
        // request (8 KiB or more per socket).
        // Whether the viewer was resolved from this very session is decided
        // here, not by the first check, so that a sign-out landing before
        // that check still closes the socket.
        let Some(token) = cookie_value(headers, SESSION_COOKIE).filter(|token| {
            self.sessions
                .verify(token, now_ms().secs())
                .is_ok_and(|session| Some(session.account_id) == viewer)
        }) else {
            return Box::pin(std::future::pending());
        };
        let accounts = self.clone();
        Box::pin(async move {
            let mut check = tokio::time::interval(SESSION_CHECK_EVERY);
            loop {
                check.tick().await;
                // A database hiccup is not a sign-out: keep the socket.
                if let Ok(None) = accounts.session_of_token(&token).await {
                    return;
                }
            }
        })
    }

    /// The account a live session belongs to (not signed in if it is gone).
    async fn account_of(&self, session: &Session) -> Result<AccountRow, Failure> {
        self.store
            .account_by_id(session.account_id)
            .await
            .map_err(internal)?
            .ok_or_else(not_signed_in)
    }

    fn session_cookie(&self, token: &str, max_age_secs: u64) -> HeaderValue {
        set_cookie(
            SESSION_COOKIE,
            token,
            "/",
            max_age_secs,
            self.secure_cookies,
        )
    }

    fn signed_in_response(
        &self,
        status: StatusCode,
        account: &AccountRow,
        token: &str,
    ) -> Response {
        let mut response = (status, Json(account_json(account))).into_response();
        let cookie = self.session_cookie(token, self.sessions.lifetime().as_secs());
        response.headers_mut().append(SET_COOKIE, cookie);
        response
    }
}

/// The account routes, to merge into the server's router.
pub fn router(accounts: Accounts) -> Router {
    Router::new()
        .route("/api/account", get(current_account))
        .route("/api/account/sign-up", post(sign_up))
        .route("/api/account/sign-in", post(sign_in_route))
        .route("/api/account/sign-out", post(sign_out))
        .route("/api/account/password", post(change_password))
        .route("/api/account/first-password", post(first_password))
        .route("/api/account/rewards", get(rewards))
        .route("/api/account/sign-in-options", get(sign_in_options))
        .with_state(accounts)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Credentials {
    username: String,
    password: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PasswordChange {
    current_password: String,
    new_password: String,
}

/// A failure of an account endpoint.
#[derive(Debug)]
enum Failure {
    Api(ApiError),
    TooMany(RetryAfter),
}

impl From<ApiError> for Failure {
    fn from(error: ApiError) -> Failure {
        Failure::Api(error)
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        match self {
            Failure::Api(error) => error.into_response(),
            Failure::TooMany(retry) => too_many_requests(retry),
        }
    }
}

fn internal(error: impl std::error::Error + Send + Sync + 'static) -> ApiError {
    ApiError::Internal(Box::new(error))
}

fn invalid_credentials() -> Failure {
    Failure::Api(ApiError::client(
        StatusCode::UNAUTHORIZED,
        "invalid_credentials",
        "wrong username or password",
    ))
}

fn not_signed_in() -> Failure {
    Failure::Api(ApiError::client(
        StatusCode::UNAUTHORIZED,
        "not_signed_in",
        "sign in to an account first",
    ))
}

/// `POST /api/account/sign-up`: makes the visitor (their guest identity, if
/// they have one, so they keep their games) an account, and signs it in.
async fn sign_up(
    State(accounts): State<Accounts>,
    ClientAddress(address): ClientAddress,
    headers: HeaderMap,
    JsonBody(credentials): JsonBody<Credentials>,
) -> Result<Response, Failure> {
    accounts.local_accounts_on()?;
    let username = Username::parse(&credentials.username).map_err(|error| {
        ApiError::client(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_username",
            error.to_string(),
        )
    })?;
    let password = Password::parse(credentials.password).map_err(|error| {
        ApiError::client(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_password",
            error.to_string(),
        )
    })?;
    accounts
        .limits
        .sign_up(address, Instant::now())
        .await
        .map_err(|refusal| match refusal {
            Refusal::TooMany(retry) => Failure::TooMany(retry),
            Refusal::Store(error) => internal(error).into(),
        })?;
    let player_id = accounts
        .guests
        .from_headers(&headers)
        .map_or_else(|_| Uuid::new_v4(), |guest| guest.id);
    let hash = accounts.hasher.hash(&password).await.map_err(internal)?;
    let now = now_ms();
    let now_ms = now.to_stored();
    let session_id = Uuid::new_v4();
    let mut tx = accounts.store.begin().await.map_err(internal)?;
    match tx.sign_up(player_id, &username, &hash, now_ms).await {
        Ok(()) => {}
        Err(SignUpError::UsernameTaken) => {
            return Err(ApiError::client(
                StatusCode::CONFLICT,
                "username_taken",
                "that username is taken",
            )
            .into());
        }
        Err(SignUpError::AlreadyAnAccount) => {
            return Err(ApiError::client(
                StatusCode::CONFLICT,
                "already_an_account",
                "you are already signed up; sign in instead",
            )
            .into());
        }
        Err(SignUpError::Database(error)) => return Err(internal(error).into()),
    }
    tx.start_session(session_id, player_id, now_ms)
        .await
        .map_err(internal)?;
    tx.commit().await.map_err(internal)?;
    let token = accounts
        .sessions
        .issue_for(player_id, session_id, now.secs())
        .map_err(internal)?;
    let account = AccountRow {
        player_id,
        username: username.as_str().to_owned(),
        password_hash: hash,
        must_change_password: false,
    };
    Ok(accounts.signed_in_response(StatusCode::CREATED, &account, &token))
}

/// Checks a local sign-in's username and password (the limits, the
/// verification, the same answer for an unknown name as for a wrong
/// password): the account they open.
async fn checked_credentials(
    accounts: &Accounts,
    address: std::net::IpAddr,
    username: &str,
    password: &str,
) -> Result<(AccountRow, SignedIn), Failure> {
    let (Ok(username), Ok(password)) = (
        Username::parse(username),
        Password::parse(password.to_owned()),
    ) else {
        // No account can have a malformed name or password; still spend a
        // verification so the answer takes the usual time.
        let filler = Password::parse("x".repeat(16)).map_err(internal)?;
        accounts
            .hasher
            .verify(&filler, None)
            .await
            .map_err(internal)?;
        return Err(invalid_credentials());
    };
    let account = accounts
        .store
        .account_by_username(&username)
        .await
        .map_err(internal)?;
    let signed_in = match sign_in(
        &accounts.hasher,
        &accounts.limits,
        &username,
        &password,
        account.as_ref(),
        address,
        Instant::now(),
    )
    .await
    {
        Ok(signed_in) => signed_in,
        Err(SignInError::InvalidCredentials) => return Err(invalid_credentials()),
        Err(SignInError::TooManyAttempts(retry)) => return Err(Failure::TooMany(retry)),
        Err(SignInError::Hashing(error)) => return Err(internal(error).into()),
        Err(SignInError::Store(error)) => return Err(internal(error).into()),
    };
    let account = account.ok_or_else(invalid_credentials)?;
    Ok((account, signed_in))
}

/// Starts a session of `account` (storing `new_hash` first, when there is
/// one: an upgraded or a chosen password) and answers with its cookie.
async fn start_session(
    accounts: &Accounts,
    mut account: AccountRow,
    new_hash: Option<PasswordHash>,
) -> Result<Response, Failure> {
    let now = now_ms();
    let now_ms = now.to_stored();
    let session_id = Uuid::new_v4();
    let mut tx = accounts.store.begin().await.map_err(internal)?;
    if let Some(hash) = new_hash {
        tx.set_password_hash(account.player_id, &hash, now_ms)
            .await
            .map_err(internal)?;
        account.password_hash = hash;
        account.must_change_password = false;
    }
    tx.start_session(session_id, account.player_id, now_ms)
        .await
        .map_err(internal)?;
    tx.commit().await.map_err(internal)?;
    let token = accounts
        .sessions
        .issue_for(account.player_id, session_id, now.secs())
        .map_err(internal)?;
    Ok(accounts.signed_in_response(StatusCode::OK, &account, &token))
}

/// `POST /api/account/sign-in`. A class account still on its handed-out
/// password is refused with `password_change_required` (after the password
/// was found right): it signs in through `first-password`.
async fn sign_in_route(
    State(accounts): State<Accounts>,
    ClientAddress(address): ClientAddress,
    JsonBody(credentials): JsonBody<Credentials>,
) -> Result<Response, Failure> {
    accounts.local_accounts_on()?;
    let (account, signed_in) = checked_credentials(
        &accounts,
        address,
        &credentials.username,
        &credentials.password,
    )
    .await?;
    if account.must_change_password {
        return Err(ApiError::client(
            StatusCode::FORBIDDEN,
            "password_change_required",
            "choose your own password to sign in for the first time",
        )
        .into());
    }
    start_session(&accounts, account, signed_in.upgraded_hash).await
}

/// What a class account sends to sign in for the first time.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FirstPassword {
    username: String,
    /// The password its club's leader handed out.
    password: String,
    /// The account's own password from now on.
    new_password: String,
}

/// `POST /api/account/first-password`: a class account replaces the
/// password its leader handed out with its own, and is signed in. The
/// handed-out password is checked as any sign-in (same limits, same answer
/// for a wrong one).
async fn first_password(
    State(accounts): State<Accounts>,
    ClientAddress(address): ClientAddress,
    JsonBody(change): JsonBody<FirstPassword>,
) -> Result<Response, Failure> {
    accounts.local_accounts_on()?;
    // A new password that cannot be stored costs no attempt.
    let new_password = Password::parse(change.new_password.clone()).map_err(|error| {
        ApiError::client(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_password",
            error.to_string(),
        )
    })?;
    if change.new_password == change.password {
        return Err(ApiError::client(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_password",
            "choose a password other than the one you were given",
        )
        .into());
    }
    let (account, _) =
        checked_credentials(&accounts, address, &change.username, &change.password).await?;
    if !account.must_change_password {
        return Err(ApiError::client(
            StatusCode::CONFLICT,
            "password_already_chosen",
            "this account has its own password already: sign in with it",
        )
        .into());
    }
    let hash = accounts
        .hasher
        .hash(&new_password)
        .await
        .map_err(internal)?;
    start_session(&accounts, account, Some(hash)).await
}

/// `POST /api/account/sign-out`: ends the session (its token stops working
/// everywhere) and clears the cookie. Always `204`, signed in or not.
async fn sign_out(
    State(accounts): State<Accounts>,
    headers: HeaderMap,
) -> Result<Response, Failure> {
    if let Some(session) = accounts.session_of(&headers).await? {
        let now = now_ms();
        let now_ms = now.to_stored();
        let mut tx = accounts.store.begin().await.map_err(internal)?;
        tx.end_session(session.session_id, now_ms)
            .await
            .map_err(internal)?;
        tx.commit().await.map_err(internal)?;
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    headers.append(SET_COOKIE, accounts.session_cookie("", 0));
    // The guest cookie names the same player as the account (a guest who
    // signed up): drop it too, the browser becomes a new guest.
    headers.append(SET_COOKIE, accounts.guests.clearing_cookie());
    Ok(response)
}

/// `POST /api/account/password`: needs the current password; ends every
/// other session of the account.
async fn change_password(
    State(accounts): State<Accounts>,
    ClientAddress(address): ClientAddress,
    headers: HeaderMap,
    JsonBody(change): JsonBody<PasswordChange>,
) -> Result<Response, Failure> {
    let session = accounts
        .session_of(&headers)
        .await?
        .ok_or_else(not_signed_in)?;
    let new_password = Password::parse(change.new_password).map_err(|error| {
        ApiError::client(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_password",
            error.to_string(),
        )
    })?;
    let account = accounts.account_of(&session).await?;
    let username = Username::parse(&account.username).map_err(internal)?;
    let current = Password::parse(change.current_password).map_err(|_| invalid_credentials())?;
    match sign_in(
        &accounts.hasher,
        &accounts.limits,
        &username,
        &current,
        Some(&account),
        address,
        Instant::now(),
    )
    .await
    {
        Ok(_) => {}
        Err(SignInError::InvalidCredentials) => return Err(invalid_credentials()),
        Err(SignInError::TooManyAttempts(retry)) => return Err(Failure::TooMany(retry)),
        Err(SignInError::Hashing(error)) => return Err(internal(error).into()),
        Err(SignInError::Store(error)) => return Err(internal(error).into()),
    }
    let hash = accounts
        .hasher
        .hash(&new_password)
        .await
        .map_err(internal)?;
    let now = now_ms();
    let now_ms = now.to_stored();
    let mut tx = accounts.store.begin().await.map_err(internal)?;
    tx.set_password_hash(session.account_id, &hash, now_ms)
        .await
        .map_err(internal)?;
    tx.end_other_sessions(session.account_id, Some(session.session_id), now_ms)
        .await
        .map_err(internal)?;
    tx.commit().await.map_err(internal)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `GET /api/account`: the signed-in account; renews the session cookie
/// once the token is past half its life.
async fn current_account(
    State(accounts): State<Accounts>,
    headers: HeaderMap,
) -> Result<Response, Failure> {
    let session = accounts
        .session_of(&headers)
        .await?
        .ok_or_else(not_signed_in)?;
    let account = accounts.account_of(&session).await?;
    let now = now_ms().secs();
    if session.needs_renewal(now)
        && let Some(token) = accounts.sessions.renew(&session, now).map_err(internal)?
    {
        return Ok(accounts.signed_in_response(StatusCode::OK, &account, &token));
    }
    Ok(Json(account_json(&account)).into_response())
}

/// The signed-in account as the account endpoints answer it. `has_password`
/// is false for an account of the host platform (it signs in there), so the
/// web client offers no password change.
fn account_json(account: &AccountRow) -> serde_json::Value {
    json!({
        "id": account.player_id,
        "username": account.username,
        "kind": "account",
        "has_password": !account.password_hash.is_unusable(),
    })
}

/// `GET /api/account/sign-in-options`: how people sign in here: local
/// accounts (on or off) and the host platform (its name and where sign-in
/// starts), for the web client to show the right forms and buttons.
async fn sign_in_options(State(accounts): State<Accounts>) -> Response {
    let platform = accounts
        .platform
        .as_deref()
        .map(|name| json!({ "name": name, "start": crate::auth::oidc::START_PATH }));
    Json(json!({ "local": accounts.local_accounts, "platform": platform })).into_response()
}

/// `GET /api/account/rewards`: today's (UTC) total against the cap, and the
/// newest entries.
async fn rewards(
    State(accounts): State<Accounts>,
    headers: HeaderMap,
) -> Result<Response, Failure> {
    let session = accounts
        .session_of(&headers)
        .await?
        .ok_or_else(not_signed_in)?;
    let today = UtcDay::from_unix_ms(now_ms().to_stored());
    let total = accounts
        .store
        .reward_total(session.account_id, today)
        .await
        .map_err(internal)?;
    let entries = accounts
        .store
        .reward_entries(session.account_id, REWARD_ENTRIES_SHOWN)
        .await
        .map_err(internal)?;
    let deliveries = if accounts.reward_deliveries {
        Some(
            accounts
                .store
                .account_reward_deliveries(session.account_id, REWARD_ENTRIES_SHOWN)
                .await
                .map_err(internal)?,
        )
    } else {
        None
    };
    let entries: Vec<_> = entries
        .iter()
        .map(|entry| {
            let mut json = entry_json(entry);
            if let Some(deliveries) = &deliveries {
                // Over-cap entries owe nothing and have no request.
                json["delivery"] = deliveries
                    .iter()
                    .find(|delivery| delivery.game_id == entry.game_id)
                    .map_or(serde_json::Value::Null, |delivery| {
                        json!({ "state": delivery.state.code(), "reason": delivery.last_error })
                    });
            }
            json
        })
        .collect();
    Ok(Json(json!({
        "day": total.day.to_string(),
        "total_cents": total.total_cents,
        "cap_cents": total.cap_cents,
        "entries": entries,
    }))
    .into_response())
}

fn entry_json(entry: &LedgerEntry) -> serde_json::Value {
    json!({
        "game_id": entry.game_id,
        "amount_cents": entry.amount_cents,
        "day": entry.day.to_string(),
        "status": entry.status.code(),
        "created_at": entry.created_at_ms,
    })
}
