//! Sign-in with the host platform: an OpenID Connect client for one
//! configured provider (authorization-code flow with PKCE, `state` and
//! `nonce`).
//!
//! This module speaks to the provider and judges what it says; the routes
//! that send a browser there and take it back are [`super::oidc_routes`].
//! Everything it trusts comes from the provider's discovery document
//! (`<issuer>/.well-known/openid-configuration`) and its key set (JWKS),
//! both fetched with [`crate::outbound::client`] and cached: the discovery
//! document for an hour, the keys until an ID token names a key id (`kid`)
//! they lack. Then they are fetched again, but at most once a minute, so a
//! stream of tokens with forged key ids cannot make us hammer the provider.
//!
//! An ID token passes only if its algorithm is an asymmetric one from
//! [`ALLOWED_ALGORITHMS`] (never `none`, never an HMAC whose "secret" would
//! be a public key), its key is in the provider's set (and not a symmetric
//! one), its signature verifies, its `iss` is the configured issuer, its
//! `aud` names our client id (and `azp`, if present, is us), it has not
//! expired and was not issued in the future (a minute of leeway for clocks),
//! and its `nonce` is the one this sign-in sent.

use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use reqwest::Url;
use serde::Deserialize;
use sha2::{Digest as _, Sha256};

use crate::settings::Settings;

/// Where the web client sends people to sign in with the platform.
pub const START_PATH: &str = "/auth/oidc/start";
/// The path the provider sends browsers back to, under the public URL.
pub const CALLBACK_PATH: &str = "/auth/oidc/callback";
/// Signature algorithms an ID token may use: asymmetric ones only.
pub const ALLOWED_ALGORITHMS: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];
/// Clock difference tolerated between us and the provider.
const LEEWAY_SECS: u64 = 60;
/// How long the discovery document is trusted before it is fetched again.
const DISCOVERY_LIFETIME: Duration = Duration::from_secs(60 * 60);
/// The least time between two fetches of the key set caused by unknown key ids.
const JWKS_REFETCH_EVERY: Duration = Duration::from_secs(60);
/// The largest reply read from the provider.
const MAX_REPLY_BYTES: usize = 256 * 1024;

/// Why the OpenID settings cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OidcConfigError {
    /// The issuer is set without one of the settings it needs.
    #[error("OIDC_ISSUER is set, so {0} must be set too")]
    Missing(&'static str),
    /// The issuer is not an `https://` URL (plain `http://` only on loopback).
    #[error(
        "OIDC_ISSUER {0:?} must be an https:// URL (http:// only for a provider on this machine's loopback)"
    )]
    BadIssuer(String),
    /// The public URL is not an `http(s)://` origin.
    #[error("PUBLIC_URL {0:?} must be an http:// or https:// URL with a host and no query")]
    BadPublicUrl(String),
    /// The username claim is empty.
    #[error("OIDC_USERNAME_CLAIM must name a claim")]
    EmptyClaim,
}

/// The one provider this server signs people in with. `Debug` hides the
/// client secret.
#[derive(Clone)]
pub struct OidcConfig {
    /// The issuer exactly as configured: the discovery document and every
    /// ID token must name it.
    pub issuer: String,
    pub client_id: String,
    client_secret: String,
    /// `<PUBLIC_URL>/auth/oidc/callback`.
    pub redirect_uri: String,
    /// The claim a new account's username is made from.
    pub username_claim: String,
    /// The provider's name on the sign-in button.
    pub provider_name: String,
}

impl std::fmt::Debug for OidcConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcConfig")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &"***")
            .field("redirect_uri", &self.redirect_uri)
            .field("username_claim", &self.username_claim)
            .field("provider_name", &self.provider_name)
            .finish()
    }
}

impl OidcConfig {
    /// The provider of `settings`, or `None` when `OIDC_ISSUER` is unset
    /// (sign-in is local only).
    ///
    /// # Errors
    /// An [`OidcConfigError`] naming the missing or malformed setting.
    pub fn from_settings(settings: &Settings) -> Result<Option<OidcConfig>, OidcConfigError> {
        let set = |value: &Option<String>| {
            value
                .as_deref()
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        let Some(issuer) = set(&settings.oidc_issuer) else {
            return Ok(None);
        };
        let client_id =
            set(&settings.oidc_client_id).ok_or(OidcConfigError::Missing("OIDC_CLIENT_ID"))?;
        let client_secret = set(&settings.oidc_client_secret)
            .ok_or(OidcConfigError::Missing("OIDC_CLIENT_SECRET"))?;
        let public_url = set(&settings.public_url).ok_or(OidcConfigError::Missing("PUBLIC_URL"))?;
        let issuer_url =
            Url::parse(&issuer).map_err(|_| OidcConfigError::BadIssuer(issuer.clone()))?;
        let host = issuer_url.host_str().unwrap_or_default();
        let loopback = host == "localhost"
            || host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        let issuer_ok =
            issuer_url.scheme() == "https" || (issuer_url.scheme() == "http" && loopback);
        if !issuer_ok || issuer_url.query().is_some() || issuer_url.fragment().is_some() {
            return Err(OidcConfigError::BadIssuer(issuer));
        }
        let public = Url::parse(&public_url)
            .ok()
            .filter(|url| {
                matches!(url.scheme(), "http" | "https")
                    && url.host().is_some()
                    && url.query().is_none()
                    && url.fragment().is_none()
            })
            .ok_or_else(|| OidcConfigError::BadPublicUrl(public_url.clone()))?;
        let redirect_uri = format!("{}{CALLBACK_PATH}", public.as_str().trim_end_matches('/'));
        let username_claim = settings.oidc_username_claim.trim().to_owned();
        if username_claim.is_empty() {
            return Err(OidcConfigError::EmptyClaim);
        }
        let provider_name = set(&settings.oidc_provider_name)
            .unwrap_or_else(|| issuer_url.host_str().unwrap_or("the platform").to_owned());
        Ok(Some(OidcConfig {
            issuer,
            client_id,
            client_secret,
            redirect_uri,
            username_claim,
            provider_name,
        }))
    }
}

/// What went wrong with the provider. Each is shown to the person as a
/// page saying what happened (`oidc_routes`), none leaves a session.
#[derive(Debug, thiserror::Error)]
pub enum OidcError {
    /// The provider could not be reached, or answered with a server error.
    #[error("the sign-in provider could not be reached: {0}")]
    Unreachable(String),
    /// The provider answered something that is not OpenID Connect (a
    /// discovery document for another issuer, a key set that is not one).
    #[error("the sign-in provider answered something unusable: {0}")]
    Misbehaved(String),
    /// The token endpoint refused the code: expired, used, or not ours.
    #[error("the sign-in provider refused the code: {0}")]
    CodeRefused(String),
    /// The ID token does not pass.
    #[error("the ID token is refused: {0}")]
    IdToken(#[from] IdTokenError),
}

/// Why an ID token is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IdTokenError {
    #[error("it is not a signed JWT")]
    Malformed,
    #[error("its algorithm {0:?} is not allowed")]
    Algorithm(String),
    #[error("its key is not in the provider's key set")]
    UnknownKey,
    #[error("its key is not a usable public key")]
    BadKey,
    #[error("its signature does not verify")]
    BadSignature,
    #[error("it was issued by another issuer")]
    WrongIssuer,
    #[error("it is meant for another client")]
    WrongAudience,
    #[error("it has expired")]
    Expired,
    #[error("it was issued in the future")]
    IssuedInTheFuture,
    #[error("its nonce is not this sign-in's")]
    WrongNonce,
    #[error("it lacks the {0:?} claim")]
    MissingClaim(String),
    #[error("its {0:?} claim is invalid")]
    BadClaim(String),
}

/// What a verified ID token says about the person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlatformIdentity {
    /// The provider's stable identifier of the person.
    pub subject: String,
    /// The configured username claim's value, if it is a string.
    pub username_hint: Option<String>,
}

/// The parts of the discovery document we use.
#[derive(Clone, Debug, Deserialize)]
struct Discovery {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    jwks_uri: String,
    userinfo_endpoint: Option<String>,
}

#[derive(Default)]
struct Cache {
    discovery: Option<(Discovery, Instant)>,
    jwks: Option<JwkSet>,
    jwks_fetched: Option<Instant>,
}

/// The configured provider: its settings and what it told us.
pub struct Provider {
    config: OidcConfig,
    http: reqwest::Client,
    /// One lock for both documents: fetching under it means a burst of
    /// sign-ins causes one fetch, not one each.
    cache: tokio::sync::Mutex<Cache>,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// A fresh sign-in's secrets: `state`, `nonce` and the PKCE verifier, 256
/// random bits each in base64url.
#[derive(Clone)]
pub struct Attempt {
    pub state: String,
    pub nonce: String,
    pub code_verifier: String,
}

impl std::fmt::Debug for Attempt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Attempt(***)")
    }
}

impl Attempt {
    /// New random secrets.
    pub fn new() -> Attempt {
        Attempt {
            state: random_token(),
            nonce: random_token(),
            code_verifier: random_token(),
        }
    }
}

impl Default for Attempt {
    fn default() -> Attempt {
        Attempt::new()
    }
}

fn random_token() -> String {
    let mut bytes = [0u8; 32];
    rand::fill(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// The PKCE `S256` challenge of `verifier`.
pub fn code_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

#[derive(Deserialize)]
struct TokenReply {
    id_token: Option<String>,
    access_token: Option<String>,
}

#[derive(Deserialize)]
struct TokenErrorReply {
    error: Option<String>,
    error_description: Option<String>,
}

impl Provider {
    /// A client for `config`; nothing is fetched until the first sign-in,
    /// so the server starts even while the provider is down.
    pub fn new(config: OidcConfig) -> Provider {
        Provider {
            config,
            http: crate::outbound::client(),
            cache: tokio::sync::Mutex::new(Cache::default()),
        }
    }

    /// The provider's settings.
    pub fn config(&self) -> &OidcConfig {
        &self.config
    }

    /// Where to send the browser for `attempt`.
    ///
    /// # Errors
    /// [`OidcError::Unreachable`] or [`OidcError::Misbehaved`] if the
    /// discovery document cannot be had.
    pub async fn authorization_url(&self, attempt: &Attempt) -> Result<String, OidcError> {
        let discovery = self.discovery().await?;
        let mut url = Url::parse(&discovery.authorization_endpoint)
            .map_err(|e| OidcError::Misbehaved(format!("authorization endpoint: {e}")))?;
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.config.client_id)
            .append_pair("redirect_uri", &self.config.redirect_uri)
            .append_pair("scope", "openid profile")
            .append_pair("state", &attempt.state)
            .append_pair("nonce", &attempt.nonce)
            .append_pair("code_challenge", &code_challenge(&attempt.code_verifier))
            .append_pair("code_challenge_method", "S256");
        Ok(url.into())
    }

    /// Redeems `code` (with the PKCE verifier) at the token endpoint and
    /// verifies the ID token it returns against `nonce`.
    ///
    /// # Errors
    /// [`OidcError::CodeRefused`] for a code the provider refuses,
    /// [`OidcError::IdToken`] for a token that does not pass, the others
    /// for a provider that cannot be reached or understood.
    pub async fn redeem(
        &self,
        code: &str,
        code_verifier: &str,
        nonce: &str,
        now: u64,
    ) -> Result<PlatformIdentity, OidcError> {
        let discovery = self.discovery().await?;
        let body = serde_urlencoded::to_string([
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", &self.config.redirect_uri),
            ("code_verifier", code_verifier),
        ])
        .map_err(|e| OidcError::Misbehaved(e.to_string()))?;
        // client_secret_basic: both parts form-encoded first (RFC 6749 2.3.1).
        let credentials = serde_urlencoded::to_string([
            ("a", &self.config.client_id),
            ("b", &self.config.client_secret),
        ])
        .map_err(|e| OidcError::Misbehaved(e.to_string()))?;
        let mut parts = credentials.split('&').map(|pair| &pair[2..]);
        let basic = format!(
            "{}:{}",
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default()
        );
        let reply = self
            .http
            .post(&discovery.token_endpoint)
            .header(
                reqwest::header::AUTHORIZATION,
                format!("Basic {}", STANDARD.encode(basic)),
            )
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(reqwest::header::ACCEPT, "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| OidcError::Unreachable(format!("token endpoint: {e}")))?;
        let status = reply.status();
        let bytes = read_limited(reply).await?;
        if status.is_server_error() {
            return Err(OidcError::Unreachable(format!(
                "token endpoint answered {status}"
            )));
        }
        if !status.is_success() {
            let refusal: Option<TokenErrorReply> = serde_json::from_slice(&bytes).ok();
            let what = refusal.map_or_else(
                || status.to_string(),
                |r| {
                    format!(
                        "{}: {}",
                        r.error.unwrap_or_default(),
                        r.error_description.unwrap_or_default()
                    )
                },
            );
            return Err(OidcError::CodeRefused(what));
        }
        let reply: TokenReply = serde_json::from_slice(&bytes)
            .map_err(|e| OidcError::Misbehaved(format!("token reply: {e}")))?;
        let id_token = reply
            .id_token
            .ok_or_else(|| OidcError::Misbehaved("the token reply has no id_token".into()))?;
        let mut identity = self.verify_id_token(&id_token, nonce, now).await?;
        // Many providers put profile claims in the user info only, not in
        // the ID token (oidc-provider's default among them).
        if identity.username_hint.is_none()
            && let (Some(endpoint), Some(access_token)) =
                (&discovery.userinfo_endpoint, &reply.access_token)
        {
            match self.user_info(endpoint, access_token).await {
                Ok(info) if info["sub"].as_str() == Some(identity.subject.as_str()) => {
                    identity.username_hint = info
                        .get(&self.config.username_claim)
                        .and_then(serde_json::Value::as_str)
                        .map(str::to_owned);
                }
                Ok(_) => tracing::warn!("the user info names another subject; ignored"),
                Err(error) => tracing::warn!(%error, "no user info; a default username is used"),
            }
        }
        Ok(identity)
    }

    /// The provider's user info for `access_token`.
    async fn user_info(
        &self,
        endpoint: &str,
        access_token: &str,
    ) -> Result<serde_json::Value, OidcError> {
        let reply = self
            .http
            .get(endpoint)
            .bearer_auth(access_token)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| OidcError::Unreachable(format!("user info: {e}")))?;
        if !reply.status().is_success() {
            return Err(OidcError::Misbehaved(format!(
                "user info: {}",
                reply.status()
            )));
        }
        let bytes = read_limited(reply).await?;
        serde_json::from_slice(&bytes).map_err(|e| OidcError::Misbehaved(format!("user info: {e}")))
    }

    /// Verifies `token` as an ID token of this provider for this client,
    /// carrying `nonce`, at `now` (unix seconds).
    ///
    /// # Errors
    /// The [`IdTokenError`] saying why it does not pass.
    pub async fn verify_id_token(
        &self,
        token: &str,
        nonce: &str,
        now: u64,
    ) -> Result<PlatformIdentity, OidcError> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| IdTokenError::Malformed)?;
        if !ALLOWED_ALGORITHMS.contains(&header.alg) {
            return Err(IdTokenError::Algorithm(format!("{:?}", header.alg)).into());
        }
        let key = self.key_for(header.kid.as_deref()).await?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[&self.config.client_id]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.leeway = LEEWAY_SECS;
        let claims = jsonwebtoken::decode::<serde_json::Value>(token, &key, &validation)
            .map_err(|e| match e.into_kind() {
                ErrorKind::InvalidSignature => IdTokenError::BadSignature,
                ErrorKind::ExpiredSignature => IdTokenError::Expired,
                ErrorKind::InvalidAudience => IdTokenError::WrongAudience,
                ErrorKind::InvalidIssuer => IdTokenError::WrongIssuer,
                ErrorKind::InvalidAlgorithm => IdTokenError::BadKey,
                ErrorKind::MissingRequiredClaim(claim) => IdTokenError::MissingClaim(claim),
                _ => IdTokenError::Malformed,
            })?
            .claims;
        check_claims(&claims, &self.config, nonce, now)?;
        let subject = claims["sub"]
            .as_str()
            .filter(|sub| !sub.is_empty() && sub.len() <= 255)
            .ok_or_else(|| IdTokenError::BadClaim("sub".into()))?
            .to_owned();
        Ok(PlatformIdentity {
            subject,
            username_hint: claims
                .get(&self.config.username_claim)
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned),
        })
    }

    /// The discovery document, fetched when missing or an hour old.
    async fn discovery(&self) -> Result<Discovery, OidcError> {
        let mut cache = self.cache.lock().await;
        if let Some((discovery, fetched)) = &cache.discovery
            && fetched.elapsed() < DISCOVERY_LIFETIME
        {
            return Ok(discovery.clone());
        }
        let url = format!(
            "{}/.well-known/openid-configuration",
            self.config.issuer.trim_end_matches('/')
        );
        let discovery: Discovery = self.fetch_json(&url, "discovery document").await?;
        if discovery.issuer != self.config.issuer {
            return Err(OidcError::Misbehaved(format!(
                "the discovery document names the issuer {:?}, not {:?}",
                discovery.issuer, self.config.issuer
            )));
        }
        cache.discovery = Some((discovery.clone(), Instant::now()));
        Ok(discovery)
    }

    /// The verifying key named `kid` (or the set's only key when the token
    /// names none), fetching the key set when it is missing or lacks the
    /// key and was not fetched in the last [`JWKS_REFETCH_EVERY`].
    async fn key_for(&self, kid: Option<&str>) -> Result<DecodingKey, OidcError> {
        let discovery = self.discovery().await?;
        let mut cache = self.cache.lock().await;
        let find = |jwks: &JwkSet| match kid {
            Some(kid) => jwks.find(kid).cloned(),
            None if jwks.keys.len() == 1 => jwks.keys.first().cloned(),
            None => None,
        };
        let mut jwk = cache.jwks.as_ref().and_then(find);
        let may_refetch = cache
            .jwks_fetched
            .is_none_or(|fetched| fetched.elapsed() >= JWKS_REFETCH_EVERY);
        if jwk.is_none() && (cache.jwks.is_none() || may_refetch) {
            // Counted before the fetch: a failing provider is not asked
            // again at once either.
            cache.jwks_fetched = Some(Instant::now());
            let jwks: JwkSet = self.fetch_json(&discovery.jwks_uri, "key set").await?;
            jwk = find(&jwks);
            cache.jwks = Some(jwks);
        }
        let jwk = jwk.ok_or(IdTokenError::UnknownKey)?;
        if matches!(
            jwk.algorithm,
            AlgorithmParameters::OctetKey(_) | AlgorithmParameters::Other(_)
        ) {
            return Err(IdTokenError::BadKey.into());
        }
        Ok(DecodingKey::from_jwk(&jwk).map_err(|_| IdTokenError::BadKey)?)
    }

    async fn fetch_json<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
        what: &str,
    ) -> Result<T, OidcError> {
        let reply = self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| OidcError::Unreachable(format!("{what}: {e}")))?;
        let status = reply.status();
        if !status.is_success() {
            return Err(OidcError::Unreachable(format!("{what}: {status}")));
        }
        let bytes = read_limited(reply).await?;
        serde_json::from_slice(&bytes).map_err(|e| OidcError::Misbehaved(format!("{what}: {e}")))
    }
}

/// The claims `jsonwebtoken` does not check: `iat`, `nonce`, `azp`.
fn check_claims(
    claims: &serde_json::Value,
    config: &OidcConfig,
    nonce: &str,
    now: u64,
) -> Result<(), IdTokenError> {
    let iat = claims
        .get("iat")
        .ok_or_else(|| IdTokenError::MissingClaim("iat".into()))?
        .as_u64()
        .ok_or_else(|| IdTokenError::BadClaim("iat".into()))?;
    if iat > now + LEEWAY_SECS {
        return Err(IdTokenError::IssuedInTheFuture);
    }
    match claims.get("nonce").and_then(serde_json::Value::as_str) {
        Some(found) if found == nonce => {}
        Some(_) => return Err(IdTokenError::WrongNonce),
        None => return Err(IdTokenError::MissingClaim("nonce".into())),
    }
    // Several audiences: the token must say it was issued to us.
    let several = claims["aud"].as_array().is_some_and(|aud| aud.len() > 1);
    match claims.get("azp") {
        Some(azp) if azp.as_str() != Some(config.client_id.as_str()) => {
            Err(IdTokenError::WrongAudience)
        }
        None if several => Err(IdTokenError::MissingClaim("azp".into())),
        _ => Ok(()),
    }
}

async fn read_limited(reply: reqwest::Response) -> Result<Vec<u8>, OidcError> {
    if reply
        .content_length()
        .is_some_and(|len| len > MAX_REPLY_BYTES as u64)
    {
        return Err(OidcError::Misbehaved("the reply is too large".into()));
    }
    let bytes = reply
        .bytes()
        .await
        .map_err(|e| OidcError::Unreachable(format!("reading the reply: {e}")))?;
    if bytes.len() > MAX_REPLY_BYTES {
        return Err(OidcError::Misbehaved("the reply is too large".into()));
    }
    Ok(bytes.to_vec())
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;

    fn settings(args: &[&str]) -> Settings {
        let mut all = vec!["chess-server"];
        all.extend_from_slice(args);
        Settings::parse_from(all)
    }

    #[test]
    fn without_an_issuer_sign_in_is_local() {
        assert!(
            OidcConfig::from_settings(&Settings::defaults())
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn an_issuer_without_what_it_needs_stops_the_start_naming_the_setting() {
        let full = [
            "--oidc-issuer",
            "https://id.example.org",
            "--oidc-client-id",
            "chess",
            "--oidc-client-secret",
            "s3cret",
            "--public-url",
            "https://chess.example.org/",
        ];
        let config = OidcConfig::from_settings(&settings(&full))
            .unwrap()
            .unwrap();
        assert_eq!(
            config.redirect_uri,
            "https://chess.example.org/auth/oidc/callback"
        );
        assert_eq!(config.provider_name, "id.example.org");
        assert!(!format!("{config:?}").contains("s3cret"));
        for (drop, missing) in [
            (2, "OIDC_CLIENT_ID"),
            (4, "OIDC_CLIENT_SECRET"),
            (6, "PUBLIC_URL"),
        ] {
            let mut args = full.to_vec();
            args.drain(drop..drop + 2);
            let error = OidcConfig::from_settings(&settings(&args)).unwrap_err();
            assert_eq!(error, OidcConfigError::Missing(missing));
            assert!(error.to_string().contains(missing), "{error}");
        }
        let mut plain = full.to_vec();
        plain[1] = "http://id.example.org";
        assert!(matches!(
            OidcConfig::from_settings(&settings(&plain)),
            Err(OidcConfigError::BadIssuer(_))
        ));
        plain[1] = "http://127.0.0.1:9000";
        assert!(OidcConfig::from_settings(&settings(&plain)).is_ok());
        let mut bad_public = full.to_vec();
        bad_public[7] = "chess.example.org";
        assert!(matches!(
            OidcConfig::from_settings(&settings(&bad_public)),
            Err(OidcConfigError::BadPublicUrl(_))
        ));
    }

    #[test]
    fn the_pkce_challenge_is_base64url_sha256_without_padding() {
        // Computed independently: Python's hashlib and urlsafe_b64encode.
        assert_eq!(
            code_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r7wW1gFWFOEjXk"),
            "bwWFMyPfdG9qreDhH2lmftFx_dFeLDalzcT1gb_j68g"
        );
    }

    /// A provider on loopback serving a discovery document and a key set
    /// (an RSA key `k1` and a symmetric key `sym`), counting key set fetches.
    async fn counting_provider() -> (Provider, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let fetches = Arc::new(AtomicUsize::new(0));
        let discovery = serde_json::json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/auth"),
            "token_endpoint": format!("{issuer}/token"),
            "jwks_uri": format!("{issuer}/jwks"),
        });
        let counted = Arc::clone(&fetches);
        let app = axum::Router::new()
            .route(
                "/.well-known/openid-configuration",
                axum::routing::get(move || async move { axum::Json(discovery) }),
            )
            .route(
                "/jwks",
                axum::routing::get(move || async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    axum::Json(serde_json::json!({ "keys": [
                        { "kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig", "e": "AQAB",
                          "n": "sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw" },
                        { "kty": "oct", "kid": "sym", "k": "c2VjcmV0LXRoYXQtaXMtYS1wdWJsaWMta2V5" },
                    ] }))
                }),
            );
        tokio::spawn(async move { axum::serve(listener, app).await });
        let settings = settings(&[
            "--oidc-issuer",
            &issuer,
            "--oidc-client-id",
            "chess",
            "--oidc-client-secret",
            "s3cret",
            "--public-url",
            "http://127.0.0.1:1",
        ]);
        let config = OidcConfig::from_settings(&settings).unwrap().unwrap();
        (Provider::new(config), fetches)
    }

    /// A token with `header`, any claims and a signature nobody made.
    fn unsigned_token(header: &serde_json::Value) -> String {
        let part = |value: &serde_json::Value| URL_SAFE_NO_PAD.encode(value.to_string());
        format!(
            "{}.{}.{}",
            part(header),
            part(&serde_json::json!({ "sub": "x" })),
            URL_SAFE_NO_PAD.encode([7u8; 256])
        )
    }

    fn refusal(result: Result<PlatformIdentity, OidcError>) -> IdTokenError {
        match result {
            Err(OidcError::IdToken(error)) => error,
            other => panic!("not an ID token refusal: {other:?}"),
        }
    }

    #[tokio::test]
    async fn unknown_key_ids_refetch_the_key_set_at_most_once_a_minute() {
        use std::sync::atomic::Ordering;
        let (provider, fetches) = counting_provider().await;
        for kid in ["forged-1", "forged-2", "forged-3"] {
            let token = unsigned_token(&serde_json::json!({ "alg": "RS256", "kid": kid }));
            let error = refusal(provider.verify_id_token(&token, "n", 0).await);
            assert_eq!(error, IdTokenError::UnknownKey, "{kid}");
        }
        // The first fetch, then none: the forged ids came within the minute.
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
        // A known key id is found in the cache: its forged signature fails.
        let token = unsigned_token(&serde_json::json!({ "alg": "RS256", "kid": "k1" }));
        let error = refusal(provider.verify_id_token(&token, "n", 0).await);
        assert_eq!(error, IdTokenError::BadSignature);
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn none_hmac_and_symmetric_keys_are_refused_before_any_signature_check() {
        let (provider, _) = counting_provider().await;
        let none = format!(
            "{}.{}.",
            URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#),
            URL_SAFE_NO_PAD.encode(r#"{"sub":"x"}"#)
        );
        let error = refusal(provider.verify_id_token(&none, "n", 0).await);
        assert_eq!(error, IdTokenError::Malformed);
        for alg in ["HS256", "HS512"] {
            let token = unsigned_token(&serde_json::json!({ "alg": alg, "kid": "sym" }));
            let error = refusal(provider.verify_id_token(&token, "n", 0).await);
            assert!(
                matches!(error, IdTokenError::Algorithm(_)),
                "{alg}: {error:?}"
            );
        }
        // An allowed algorithm naming a symmetric key of the set.
        let token = unsigned_token(&serde_json::json!({ "alg": "RS256", "kid": "sym" }));
        let error = refusal(provider.verify_id_token(&token, "n", 0).await);
        assert_eq!(error, IdTokenError::BadKey);
    }

    #[test]
    fn attempts_are_random_and_long() {
        let (a, b) = (Attempt::new(), Attempt::new());
        assert_ne!(a.state, b.state);
        assert_ne!(a.nonce, a.code_verifier);
        assert_eq!(a.code_verifier.len(), 43);
    }
}
