//! A club's class (`docs/protocol.md`, "Classes"): its leaders create up to
//! [`MAX_CLASS_SIZE`] member accounts at once, with generated usernames and
//! passwords shown once (the club page prints them as a sheet and a CSV),
//! and give a pupil who forgot theirs a new one. No e-mail is involved: each
//! pupil chooses their own password at the first sign-in
//! (`POST /api/account/first-password`).
//!
//! Class accounts do not count against the sign-ups one address may make
//! (a classroom is many people behind one address): they are limited per
//! leader instead ([`crate::auth::rate_limit::CLASSES_PER_ACCOUNT`]).

use std::collections::HashSet;
use std::time::Instant;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::header::CACHE_CONTROL;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use chess_live::now_ms;
use chess_store::PasswordHash;
use chess_store::accounts::Username;
use chess_store::classes::NewClassAccount;
use chess_store::clubs::ClubError;
use futures_util::{StreamExt as _, TryStreamExt as _};
use rand::Rng;
use serde::Deserialize;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::auth::password::Password;
use crate::http::archive::account_named;
use crate::http::error::{ApiError, too_many_requests};
use crate::http::extract::JsonBody;
use crate::http::signed_in::signed_in;
use crate::state::AppState;

/// The most accounts one class request creates.
pub const MAX_CLASS_SIZE: usize = 100;
/// A username prefix's length, in characters.
pub const PREFIX_CHARS: std::ops::RangeInclusive<usize> = 2..=12;
/// Where a pupil signs in (printed on the sheet).
pub const SIGN_IN_PATH: &str = "/account.html";

/// The characters of generated names and passwords: lowercase letters and
/// digits without the ones a pupil misreads from paper (i, l, o, 0, 1).
const HANDED_OUT_CHARS: &[u8] = b"abcdefghjkmnpqrstuvwxyz23456789";
/// Characters after a class's prefix (`lions-k7dp`): 31^4, about 920,000
/// names per prefix.
const NAME_SUFFIX_CHARS: usize = 4;
/// A handed-out password's groups of four (`k7dp-m3xq-9wha`): 31^12, about
/// 2^59, beyond guessing within the sign-in limits, and it only lasts until
/// the first sign-in.
const PASSWORD_GROUPS: usize = 3;
/// Tries at a class whose generated names someone took in the meantime.
const NAME_ATTEMPTS: usize = 5;
/// Handed-out passwords hashed at once: a class of 100 must not queue the
/// sign-ins of everyone else behind it.
const HASHES_IN_FLIGHT: usize = 2;

/// The class routes.
pub fn routes() -> axum::Router<AppState> {
    axum::Router::new()
        .route("/api/clubs/{id}/class", post(create))
        .route("/api/clubs/{id}/class/{username}/reset", post(reset))
}

fn bad_class(message: impl Into<String>) -> ApiError {
    ApiError::client(StatusCode::UNPROCESSABLE_ENTITY, "bad_class", message)
}

fn random_chars(rng: &mut impl Rng, len: usize) -> String {
    (0..len)
        .map(|_| char::from(HANDED_OUT_CHARS[rng.random_range(0..HANDED_OUT_CHARS.len())]))
        .collect()
}

/// A password to hand out, in groups a pupil copies from paper.
pub fn handed_out_password(rng: &mut impl Rng) -> String {
    (0..PASSWORD_GROUPS)
        .map(|_| random_chars(rng, 4))
        .collect::<Vec<_>>()
        .join("-")
}

/// A class username: the prefix, `-`, and random characters.
fn class_username(prefix: &str, rng: &mut impl Rng) -> Username {
    let name = format!("{prefix}-{}", random_chars(rng, NAME_SUFFIX_CHARS));
    Username::parse(&name).expect("a checked prefix and the generated characters form a username")
}

/// `count` different class usernames.
fn class_usernames(prefix: &str, count: usize, rng: &mut impl Rng) -> Vec<Username> {
    let mut seen = HashSet::new();
    let mut names = Vec::with_capacity(count);
    while names.len() < count {
        let name = class_username(prefix, rng);
        if seen.insert(name.key()) {
            names.push(name);
        }
    }
    names
}

/// The prefix asked for, lowercase: letters, digits, `-` and `_`, starting
/// with a letter or digit, [`PREFIX_CHARS`] long.
fn parse_prefix(raw: &str) -> Result<String, ApiError> {
    let prefix = raw.trim().to_ascii_lowercase();
    let chars = prefix.chars().count();
    if !PREFIX_CHARS.contains(&chars) {
        return Err(bad_class(format!(
            "prefix: {} to {} characters",
            PREFIX_CHARS.start(),
            PREFIX_CHARS.end()
        )));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if !prefix.chars().all(allowed) || !prefix.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err(bad_class(
            "prefix: letters, digits, - and _, starting with a letter or digit",
        ));
    }
    Ok(prefix)
}

/// The prefix of a class when none is asked for: the club's id, cut to
/// [`PREFIX_CHARS`] (club ids are lowercase letters, digits and `-`).
fn default_prefix(club_id: &str) -> String {
    let cut: String = club_id.chars().take(*PREFIX_CHARS.end()).collect();
    let cut = cut.trim_end_matches('-');
    if PREFIX_CHARS.contains(&cut.chars().count()) && parse_prefix(cut).is_ok() {
        cut.to_owned()
    } else {
        "pupil".to_owned()
    }
}

/// Refuses anyone but a leader of club `id`, before any password is hashed
/// (the store checks again in the statement that writes).
async fn require_leader(state: &AppState, id: &str, player: Uuid) -> Result<(), ApiError> {
    // An unknown club answers as the clubs do: `404 club_not_found`.
    state.store.club(id).await?.ok_or(ClubError::NoSuchClub)?;
    let members = state.store.club_members(id).await?;
    if members
        .iter()
        .any(|member| member.player_id == player && member.leader)
    {
        Ok(())
    } else {
        Err(ClubError::NotALeader.into())
    }
}

async fn hash(state: &AppState, password: &str) -> Result<PasswordHash, ApiError> {
    let password = Password::parse(password.to_owned())
        .expect("a handed-out password is within the length bounds");
    state
        .accounts
        .hasher()
        .hash(&password)
        .await
        .map_err(|error| ApiError::Internal(Box::new(error)))
}

/// An answer holding passwords: never kept by a cache.
fn not_stored(status: StatusCode, body: Value) -> Response {
    let mut response = (status, Json(body)).into_response();
    response
        .headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// What a class is asked to be.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewClass {
    /// How many accounts, 1 to [`MAX_CLASS_SIZE`].
    count: usize,
    /// The usernames' common start; the club's id when absent.
    #[serde(default)]
    prefix: Option<String>,
}

/// `POST /api/clubs/{id}/class`: a leader creates `count` member accounts.
/// The answer is the only place their passwords are ever shown.
async fn create(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    JsonBody(class): JsonBody<NewClass>,
) -> Result<Response, ApiError> {
    let leader = signed_in(&state, &headers, "sign in to create class accounts").await?;
    state.accounts.local_accounts_on()?;
    if !(1..=MAX_CLASS_SIZE).contains(&class.count) {
        return Err(bad_class(format!(
            "count: 1 to {MAX_CLASS_SIZE} accounts at once"
        )));
    }
    let prefix = match &class.prefix {
        Some(prefix) => parse_prefix(prefix)?,
        None => default_prefix(&id),
    };
    require_leader(&state, &id, leader).await?;
    if let Err(retry) = state.class_limits.hit(leader, Instant::now()) {
        return Ok(too_many_requests(retry));
    }
    let (passwords, mut names) = {
        let mut rng = rand::rng();
        let passwords: Vec<String> = (0..class.count)
            .map(|_| handed_out_password(&mut rng))
            .collect();
        (passwords, class_usernames(&prefix, class.count, &mut rng))
    };
    let hashes: Vec<PasswordHash> = futures_util::stream::iter(passwords.clone())
        .map(|password| {
            let state = state.clone();
            async move { hash(&state, &password).await }
        })
        .buffered(HASHES_IN_FLIGHT)
        .try_collect()
        .await?;
    let player_ids: Vec<Uuid> = (0..class.count).map(|_| Uuid::new_v4()).collect();
    let now = now_ms().to_stored();
    for attempt in 1..=NAME_ATTEMPTS {
        let accounts: Vec<NewClassAccount> = names
            .iter()
            .zip(&hashes)
            .zip(&player_ids)
            .map(|((username, hash), player_id)| NewClassAccount {
                player_id: *player_id,
                username: username.clone(),
                password_hash: hash.clone(),
            })
            .collect();
        match state
            .store
            .create_class_accounts(&id, leader, &accounts, now)
            .await
        {
            Ok(()) => break,
            Err(ClubError::UsernameTaken(taken)) if attempt < NAME_ATTEMPTS => {
                // Someone has that name: draw another for that pupil only.
                let mut rng = rand::rng();
                let keys: HashSet<String> = names.iter().map(Username::key).collect();
                let index = names
                    .iter()
                    .position(|name| name.as_str() == taken)
                    .expect("the taken name is one of the class");
                names[index] = loop {
                    let name = class_username(&prefix, &mut rng);
                    if !keys.contains(&name.key()) {
                        break name;
                    }
                };
            }
            Err(error) => return Err(error.into()),
        }
    }
    tracing::info!(club = id, count = class.count, "class accounts created");
    let accounts: Vec<Value> = names
        .iter()
        .zip(&passwords)
        .map(|(username, password)| json!({ "username": username.as_str(), "password": password }))
        .collect();
    Ok(not_stored(
        StatusCode::CREATED,
        json!({ "club": id, "sign_in_url": SIGN_IN_PATH, "accounts": accounts }),
    ))
}

/// `POST /api/clubs/{id}/class/{username}/reset`: a leader gives a pupil of
/// the class a new handed-out password; their sessions end, and they choose
/// their own again at the next sign-in.
async fn reset(
    State(state): State<AppState>,
    Path((id, username)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let leader = signed_in(&state, &headers, "sign in to manage a class").await?;
    state.accounts.local_accounts_on()?;
    require_leader(&state, &id, leader).await?;
    let pupil = account_named(&state, &username).await?;
    let password = handed_out_password(&mut rand::rng());
    let hash = hash(&state, &password).await?;
    state
        .store
        .reset_class_password(&id, leader, pupil, &hash, now_ms().to_stored())
        .await?;
    tracing::info!(club = id, "class password handed out again");
    // The name as the account spells it, whatever case the path used.
    let username = state
        .store
        .account_by_id(pupil)
        .await?
        .map_or(username, |account| account.username);
    Ok(not_stored(
        StatusCode::OK,
        json!({ "username": username, "password": password, "sign_in_url": SIGN_IN_PATH }),
    ))
}

/// The class accounts of club `id`, as its leaders see them on its page.
///
/// # Errors
/// The database error.
pub async fn roster(state: &AppState, id: &str) -> Result<Value, ApiError> {
    Ok(state
        .store
        .class_accounts(id)
        .await?
        .iter()
        .map(|account| {
            json!({
                "username": account.username,
                "signed_in": !account.must_change_password,
                "created_at": account.created_at,
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng as _;
    use rand::rngs::StdRng;

    use super::*;

    #[test]
    fn handed_out_passwords_are_three_groups_of_unmistakable_characters() {
        let mut rng = StdRng::seed_from_u64(7);
        for _ in 0..1_000 {
            let password = handed_out_password(&mut rng);
            let groups: Vec<&str> = password.split('-').collect();
            assert_eq!(groups.len(), PASSWORD_GROUPS, "{password}");
            assert!(groups.iter().all(|group| group.len() == 4), "{password}");
            assert!(
                password
                    .bytes()
                    .all(|b| b == b'-' || HANDED_OUT_CHARS.contains(&b)),
                "{password}"
            );
            assert!(!password.contains(['i', 'l', 'o', '0', '1']), "{password}");
            assert!(Password::parse(password).is_ok());
        }
    }

    #[test]
    fn a_class_has_different_valid_names_with_its_prefix() {
        let mut rng = StdRng::seed_from_u64(3);
        let names = class_usernames("lions", MAX_CLASS_SIZE, &mut rng);
        let keys: HashSet<String> = names.iter().map(Username::key).collect();
        assert_eq!(keys.len(), MAX_CLASS_SIZE);
        for name in &names {
            let (prefix, suffix) = name.as_str().split_once('-').expect("a dash");
            assert_eq!(prefix, "lions");
            assert_eq!(suffix.len(), NAME_SUFFIX_CHARS);
        }
        // The longest prefix still makes a valid username.
        let longest = "a".repeat(*PREFIX_CHARS.end());
        assert!(Username::parse(class_username(&longest, &mut rng).as_str()).is_ok());
    }

    #[test]
    fn prefixes_are_checked_and_lowercased() {
        assert_eq!(parse_prefix(" Lions7B ").unwrap(), "lions7b");
        assert_eq!(parse_prefix("7b_chess").unwrap(), "7b_chess");
        for bad in ["", "a", "-lions", "lions!", "thirteen-char", "élan"] {
            assert!(parse_prefix(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_default_prefix_is_the_club_id_cut_to_fit() {
        assert_eq!(default_prefix("hastings"), "hastings");
        assert_eq!(default_prefix("chess-club-7b-tuesdays"), "chess-club-7");
        assert_eq!(default_prefix("chess-club-"), "chess-club");
        assert_eq!(default_prefix("x"), "pupil");
    }
}
