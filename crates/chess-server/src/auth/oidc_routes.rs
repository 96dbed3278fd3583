//! Sign-in with the host platform: `GET /auth/oidc/start` sends the browser
//! to the provider, `GET /auth/oidc/callback` takes it back signed in.
//!
//! The start records the sign-in (`state`, `nonce`, PKCE verifier, the
//! guest it started from, where to return) in the database
//! (`oidc_pending`), not in the browser: any node can finish it, and the
//! callback takes the row with one delete, so a callback replayed or
//! arriving at two nodes at once is honoured exactly once. The browser
//! holds only the `state` in a short-lived cookie, and the callback's
//! `state` must equal it: a sign-in started in another browser (an attacker
//! pasting their own callback link to sign a victim in as the attacker)
//! is refused.
//!
//! A new platform account is the provider's `sub`; its username comes from
//! the configured claim, fitted to the username rules and made unique with
//! a suffix. A guest who signs in keeps their player id, and so their games
//! and seats, as with a local sign-up.
//!
//! Every failure (consent denied, a state that does not match, a code the
//! provider refuses, a token that does not verify, a provider that cannot
//! be reached) ends on a page that says what happened, and nothing is left
//! behind: the account and the session are written in one transaction only
//! once the ID token has passed.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, LOCATION, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;
use uuid::Uuid;

use chess_live::now_ms;

use super::cookies::{cookie_value, set_cookie};
use super::oidc::{Attempt, OidcError, PlatformIdentity, Provider};
use super::rate_limit::{AddressKey, Limit, RateLimiter};
use super::routes::Accounts;
use crate::http::extract::ClientAddress;
use chess_store::accounts::{MAX_USERNAME_LEN, MIN_USERNAME_LEN, Username};
use chess_store::{PendingSignIn, PlatformSignUpError};

/// The cookie that binds a sign-in to the browser that started it.
const STATE_COOKIE: &str = "chess_oidc_state";
/// How long a sign-in may stay at the provider.
const PENDING_LIFETIME: Duration = Duration::from_secs(10 * 60);
/// Usernames tried for one new account before giving up.
const USERNAME_ATTEMPTS: u32 = 12;
/// The longest `return_to` kept.
const MAX_RETURN_TO: usize = 512;
/// Sign-ins one client address may start on one node in
/// [`PENDING_LIFETIME`]: each writes a row, so a script cannot fill the table.
pub const STARTS_PER_ADDRESS: Limit = Limit {
    max: 30,
    window: PENDING_LIFETIME,
};

/// What the platform sign-in routes need.
#[derive(Clone, Debug)]
pub struct PlatformSignIn {
    accounts: Accounts,
    provider: Arc<Provider>,
    starts: Arc<RateLimiter<AddressKey>>,
}

/// The platform sign-in routes, to merge into the server's router.
pub fn router(accounts: Accounts, provider: Arc<Provider>) -> Router {
    Router::new()
        .route(super::oidc::START_PATH, get(start))
        .route(super::oidc::CALLBACK_PATH, get(callback))
        .with_state(PlatformSignIn {
            accounts,
            provider,
            starts: Arc::new(RateLimiter::new(STARTS_PER_ADDRESS)),
        })
}

#[derive(Debug, Deserialize)]
struct StartQuery {
    return_to: Option<String>,
}

#[derive(Debug, Deserialize)]
struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

/// How a sign-in ended badly; each is a page.
#[derive(Debug)]
enum Ending {
    /// The person declined at the provider.
    Denied,
    /// The provider reported another error to the callback.
    ProviderSaid(String),
    /// No `state`, or not the one this browser's cookie holds.
    NotThisBrowser,
    /// The sign-in is unknown: used already, or too old.
    ExpiredOrUsed,
    /// Talking to the provider failed, or its token did not pass.
    Provider(OidcError),
    /// The callback lacks the code.
    NoCode,
    /// Too many sign-ins started from this address.
    TooMany,
    /// Our own failure (the database); logged.
    Internal(Box<dyn std::error::Error + Send + Sync>),
}

impl Ending {
    fn into_page(self, secure: bool) -> Response {
        let (status, title, message) = match &self {
            Ending::Denied => (
                StatusCode::FORBIDDEN,
                "Sign-in cancelled",
                "You did not allow the sign-in at the platform, so you are not signed in. \
                 You can keep playing as a guest, or try again."
                    .to_owned(),
            ),
            Ending::ProviderSaid(error) => (
                StatusCode::BAD_REQUEST,
                "Sign-in failed",
                format!("The platform refused the sign-in ({error}). Please try again."),
            ),
            Ending::NotThisBrowser => (
                StatusCode::BAD_REQUEST,
                "Sign-in not started here",
                "This sign-in was not started in this browser, so it was refused. \
                 Start the sign-in again from this site."
                    .to_owned(),
            ),
            Ending::ExpiredOrUsed => (
                StatusCode::BAD_REQUEST,
                "Sign-in expired",
                "This sign-in link has expired or was already used. Start the sign-in again."
                    .to_owned(),
            ),
            Ending::NoCode => (
                StatusCode::BAD_REQUEST,
                "Sign-in failed",
                "The platform sent you back without a sign-in code. Please try again.".to_owned(),
            ),
            Ending::Provider(OidcError::Unreachable(_)) => (
                StatusCode::BAD_GATEWAY,
                "Sign-in unavailable",
                "The platform's sign-in service could not be reached. Please try again in a \
                 few minutes; you can keep playing as a guest meanwhile."
                    .to_owned(),
            ),
            Ending::Provider(OidcError::CodeRefused(_)) => (
                StatusCode::BAD_REQUEST,
                "Sign-in expired",
                "The platform did not accept this sign-in (it may have expired or been used \
                 already). Start the sign-in again."
                    .to_owned(),
            ),
            Ending::Provider(OidcError::IdToken(why)) => (
                StatusCode::BAD_GATEWAY,
                "Sign-in failed",
                format!(
                    "The platform's answer could not be verified ({why}), so you were not \
                     signed in. Please try again; if it keeps failing, tell the site's operators."
                ),
            ),
            Ending::Provider(OidcError::Misbehaved(_)) => (
                StatusCode::BAD_GATEWAY,
                "Sign-in failed",
                "The platform's answer could not be understood, so you were not signed in. \
                 Please try again; if it keeps failing, tell the site's operators."
                    .to_owned(),
            ),
            Ending::TooMany => (
                StatusCode::TOO_MANY_REQUESTS,
                "Too many sign-ins",
                "Too many sign-ins were started from your address. Please wait a few minutes \
                 and try again."
                    .to_owned(),
            ),
            Ending::Internal(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "Sign-in failed",
                "The server failed while signing you in; it has been logged. Please try again."
                    .to_owned(),
            ),
        };
        match &self {
            Ending::Internal(cause) => {
                tracing::error!(error = %cause, "platform sign-in failed");
            }
            Ending::Provider(cause) => {
                tracing::warn!(error = %cause, "platform sign-in failed");
            }
            other => tracing::info!(ending = ?other, "platform sign-in did not complete"),
        }
        let mut response = page(status, title, &message);
        response
            .headers_mut()
            .append(SET_COOKIE, state_cookie("", 0, secure));
        response
    }
}

fn internal(error: impl std::error::Error + Send + Sync + 'static) -> Ending {
    Ending::Internal(Box::new(error))
}

/// `GET /auth/oidc/start?return_to=/path`: records the sign-in and sends
/// the browser to the provider's authorization endpoint.
async fn start(
    State(platform): State<PlatformSignIn>,
    ClientAddress(address): ClientAddress,
    headers: HeaderMap,
    Query(query): Query<StartQuery>,
) -> Response {
    let secure = platform.accounts.secure_cookies();
    if platform
        .starts
        .hit(AddressKey::from(address), std::time::Instant::now())
        .is_err()
    {
        return Ending::TooMany.into_page(secure);
    }
    match begin(&platform, &headers, query).await {
        Ok((location, state)) => {
            let mut response = redirect(&location);
            response.headers_mut().append(
                SET_COOKIE,
                state_cookie(&state, PENDING_LIFETIME.as_secs(), secure),
            );
            response
        }
        Err(ending) => ending.into_page(secure),
    }
}

async fn begin(
    platform: &PlatformSignIn,
    headers: &HeaderMap,
    query: StartQuery,
) -> Result<(String, String), Ending> {
    let attempt = Attempt::new();
    // The provider first: when it is down, nothing is recorded.
    let location = platform
        .provider
        .authorization_url(&attempt)
        .await
        .map_err(Ending::Provider)?;
    let now = now_ms().to_stored();
    let pending = PendingSignIn {
        state: attempt.state.clone(),
        nonce: attempt.nonce,
        code_verifier: attempt.code_verifier,
        guest_id: platform
            .accounts
            .guests()
            .from_headers(headers)
            .ok()
            .map(|guest| guest.id),
        return_to: safe_return_to(query.return_to.as_deref()),
        created_at_ms: now,
    };
    let store = platform.accounts.store();
    let mut tx = store.begin().await.map_err(internal)?;
    tx.put_pending_sign_in(&pending, now - lifetime_ms())
        .await
        .map_err(internal)?;
    tx.commit().await.map_err(internal)?;
    Ok((location, attempt.state))
}

/// `GET /auth/oidc/callback`: the provider's answer.
async fn callback(
    State(platform): State<PlatformSignIn>,
    headers: HeaderMap,
    Query(query): Query<CallbackQuery>,
) -> Response {
    let secure = platform.accounts.secure_cookies();
    match finish(&platform, &headers, query).await {
        Ok((return_to, session_cookie)) => {
            let mut response = redirect(&return_to);
            let cookies = response.headers_mut();
            cookies.append(SET_COOKIE, session_cookie);
            cookies.append(SET_COOKIE, state_cookie("", 0, secure));
            response
        }
        Err(ending) => ending.into_page(secure),
    }
}

async fn finish(
    platform: &PlatformSignIn,
    headers: &HeaderMap,
    query: CallbackQuery,
) -> Result<(String, HeaderValue), Ending> {
    let state = query
        .state
        .filter(|state| cookie_value(headers, STATE_COOKIE).is_some_and(|cookie| cookie == *state));
    let store = platform.accounts.store();
    if let Some(error) = query.error {
        // Forget the sign-in the provider ended (only this browser's own).
        if let Some(state) = &state {
            let mut tx = store.begin().await.map_err(internal)?;
            tx.take_pending_sign_in(state).await.map_err(internal)?;
            tx.commit().await.map_err(internal)?;
        }
        return Err(if error == "access_denied" {
            Ending::Denied
        } else {
            let mut said = error;
            if let Some(description) = query.error_description {
                said = format!("{said}: {description}");
            }
            said.truncate(200);
            Ending::ProviderSaid(said)
        });
    }
    let state = state.ok_or(Ending::NotThisBrowser)?;
    // Taken and committed before the code is redeemed: of two callbacks
    // with this state, whatever node each reaches, one gets the row.
    let mut tx = store.begin().await.map_err(internal)?;
    let pending = tx.take_pending_sign_in(&state).await.map_err(internal)?;
    tx.commit().await.map_err(internal)?;
    let pending = pending
        .filter(|pending| now_ms().to_stored() - pending.created_at_ms < lifetime_ms())
        .ok_or(Ending::ExpiredOrUsed)?;
    let code = query.code.ok_or(Ending::NoCode)?;
    let identity = platform
        .provider
        .redeem(
            &code,
            &pending.code_verifier,
            &pending.nonce,
            now_ms().secs(),
        )
        .await
        .map_err(Ending::Provider)?;
    let (player_id, session_id) =
        sign_in_platform_account(&platform.accounts, &identity, pending.guest_id).await?;
    let cookie = platform
        .accounts
        .session_set_cookie(player_id, session_id)
        .map_err(|error| Ending::Internal(format!("{error:?}").into()))?;
    tracing::info!(player = %player_id, "signed in with the platform");
    Ok((pending.return_to, cookie))
}

/// Finds or creates the account of `identity` and starts a session of it,
/// in one transaction: the player id and the session id.
async fn sign_in_platform_account(
    accounts: &Accounts,
    identity: &PlatformIdentity,
    guest_id: Option<Uuid>,
) -> Result<(Uuid, Uuid), Ending> {
    let store = accounts.store();
    let base = username_base(identity.username_hint.as_deref());
    let mut guest = guest_id;
    let mut attempt = 0;
    while attempt < USERNAME_ATTEMPTS {
        let session_id = Uuid::new_v4();
        let now = now_ms().to_stored();
        if let Some(account) = store
            .account_by_platform_subject(&identity.subject)
            .await
            .map_err(internal)?
        {
            let mut tx = store.begin().await.map_err(internal)?;
            tx.start_session(session_id, account.player_id, now)
                .await
                .map_err(internal)?;
            tx.commit().await.map_err(internal)?;
            return Ok((account.player_id, session_id));
        }
        let username = candidate(&base, attempt);
        let player_id = guest.unwrap_or_else(Uuid::new_v4);
        let mut tx = store.begin().await.map_err(internal)?;
        match tx
            .sign_up_platform(player_id, &username, &identity.subject, now)
            .await
        {
            Ok(()) => {
                tx.start_session(session_id, player_id, now)
                    .await
                    .map_err(internal)?;
                tx.commit().await.map_err(internal)?;
                return Ok((player_id, session_id));
            }
            // The name is taken, or another sign-in of this subject won a
            // race: look again, with the next name.
            Err(PlatformSignUpError::Taken) => attempt += 1,
            // The browser's guest is already an account (a local one, whose
            // guest cookie still names it): the platform account is a new player.
            Err(PlatformSignUpError::AlreadyAnAccount) => guest = None,
            Err(PlatformSignUpError::Database(error)) => return Err(internal(error)),
        }
        tx.rollback().await.map_err(internal)?;
    }
    Err(Ending::Internal(
        format!("no free username found from {base:?}").into(),
    ))
}

/// The username a claim's value suggests: letters, digits, `_` and `-`
/// kept, spaces and dots made `_`, an e-mail address cut at its `@`, other
/// characters dropped, at most [`MAX_USERNAME_LEN`]; `player` when too
/// little is left.
fn username_base(hint: Option<&str>) -> String {
    let hint = hint.unwrap_or_default();
    let hint = hint.split('@').next().unwrap_or_default();
    let kept: String = hint
        .chars()
        .filter_map(|c| match c {
            c if c.is_ascii_alphanumeric() || c == '_' || c == '-' => Some(c),
            ' ' | '.' => Some('_'),
            _ => None,
        })
        .collect();
    let kept: String = kept
        .trim_start_matches(['_', '-'])
        .chars()
        .take(MAX_USERNAME_LEN)
        .collect();
    if kept.chars().count() < MIN_USERNAME_LEN || Username::parse(&kept).is_err() {
        "player".to_owned()
    } else {
        kept
    }
}

/// The `attempt`-th username to try: the base, then `base-2`, `base-3`, …,
/// and past a few, a random four-digit suffix (cut to fit the length).
fn candidate(base: &str, attempt: u32) -> Username {
    let suffix = match attempt {
        0 => String::new(),
        1..=4 => format!("-{}", attempt + 1),
        _ => format!("-{}", rand::random_range(1000..10_000u32)),
    };
    let room = MAX_USERNAME_LEN - suffix.len();
    let name: String = base.chars().take(room).collect();
    let name = format!("{name}{suffix}");
    Username::parse(&name).unwrap_or_else(|_| {
        Username::parse("player").unwrap_or_else(|_| unreachable!("player is a valid username"))
    })
}

/// `raw` if it is a path on this site, else `/`: never another site.
fn safe_return_to(raw: Option<&str>) -> String {
    match raw {
        Some(path)
            if path.starts_with('/')
                && !path.starts_with("//")
                && !path.contains('\\')
                && path.len() <= MAX_RETURN_TO
                && path.chars().all(|c| c.is_ascii_graphic()) =>
        {
            path.to_owned()
        }
        _ => "/".to_owned(),
    }
}

fn redirect(location: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(location) {
        headers.insert(LOCATION, value);
    }
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The sign-in's state, sent back only to `/auth/oidc` (only the callback
/// needs it; the provider's redirect is a top-level GET, which carries
/// `SameSite=Lax` cookies).
fn state_cookie(state: &str, max_age_secs: u64, secure: bool) -> HeaderValue {
    set_cookie(STATE_COOKIE, state, "/auth/oidc", max_age_secs, secure)
}

/// A page telling the person how the sign-in ended.
fn page(status: StatusCode, title: &str, message: &str) -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title} · Chess</title>\n<link rel=\"stylesheet\" href=\"/css/style.css\">\n\
         </head>\n<body>\n<main class=\"account\">\n<h1 class=\"page-title\" id=\"sign-in-ending\">{title}</h1>\n\
         <p class=\"notice\" role=\"alert\">{message}</p>\n\
         <p><a href=\"/account.html\">Back to sign-in</a> · <a href=\"/\">Play as a guest</a></p>\n\
         </main>\n</body>\n</html>\n",
        title = escape(title),
        message = escape(message),
    );
    let mut response = (status, html).into_response();
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn lifetime_ms() -> i64 {
    i64::try_from(PENDING_LIFETIME.as_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_from_claims_fit_the_rules() {
        let cases = [
            (Some("alice"), "alice"),
            (Some("Jane Doe"), "Jane_Doe"),
            (Some("jane.doe@example.org"), "jane_doe"),
            (Some("_-bob"), "bob"),
            (Some("Jöhn"), "Jhn"),
            (Some("名前"), "player"),
            (Some("ab"), "player"),
            (None, "player"),
            (
                Some("a-very-long-name-indeed-longer"),
                "a-very-long-name-ind",
            ),
        ];
        for (hint, expected) in cases {
            let base = username_base(hint);
            assert_eq!(base, expected, "{hint:?}");
            assert!(Username::parse(&base).is_ok(), "{base}");
        }
    }

    #[test]
    fn candidates_are_valid_and_distinct() {
        let base = "a-very-long-name-ind";
        let names: Vec<String> = (0..5)
            .map(|n| candidate(base, n).as_str().to_owned())
            .collect();
        assert_eq!(
            names,
            [
                "a-very-long-name-ind",
                "a-very-long-name-i-2",
                "a-very-long-name-i-3",
                "a-very-long-name-i-4",
                "a-very-long-name-i-5"
            ]
        );
        assert_eq!(candidate(base, 9).as_str().len(), MAX_USERNAME_LEN);
    }

    #[test]
    fn return_to_stays_on_this_site() {
        for (raw, expected) in [
            (Some("/game.html?id=abc"), "/game.html?id=abc"),
            (Some("//evil.example/"), "/"),
            (Some("https://evil.example/"), "/"),
            (Some("/\\evil.example"), "/"),
            (Some("/a b"), "/"),
            (None, "/"),
        ] {
            assert_eq!(safe_return_to(raw), expected, "{raw:?}");
        }
    }
}
