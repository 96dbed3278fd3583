//! Protections every route shares: strict security headers on each response,
//! and no state change from a page of another origin.
//!
//! Browsers attach cookies to requests a foreign page makes (`SameSite=Lax`
//! stops only some of them), so a request that changes something (any method
//! but GET, HEAD, OPTIONS and TRACE) must come from an allowed origin: the
//! same allow-list that guards the WebSocket upgrades. A request without an
//! `Origin` header is not made by a browser page on another site (browsers
//! send one with every cross-origin request and every POST); curl and scripts
//! send none, and they carry only the cookies they were given.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::header::{
    CONTENT_SECURITY_POLICY, ORIGIN, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use tower_http::set_header::SetResponseHeaderLayer;

use crate::http::error::ApiError;

/// The origins (`scheme://host:port`) whose pages may open sockets and
/// change state.
#[derive(Clone, Debug)]
pub struct AllowedOrigins(Arc<[String]>);

impl AllowedOrigins {
    /// Exactly these origins, compared as written (browsers send
    /// `scheme://host[:port]`, lowercase, no trailing slash).
    pub fn new(origins: Vec<String>) -> AllowedOrigins {
        AllowedOrigins(origins.into())
    }

    /// Whether a request with these headers may act: it carries no `Origin`,
    /// or one in the list.
    ///
    /// # Errors
    /// `403 forbidden_origin` for any other origin, `null` included (sent by
    /// sandboxed frames and redirected requests).
    pub fn check(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let Some(origin) = headers.get(ORIGIN) else {
            return Ok(());
        };
        let allowed = origin
            .to_str()
            .is_ok_and(|origin| self.0.iter().any(|allowed| allowed == origin));
        if allowed {
            Ok(())
        } else {
            Err(ApiError::client(
                StatusCode::FORBIDDEN,
                "forbidden_origin",
                "requests from this origin are not allowed",
            ))
        }
    }

    /// The WebSocket sources of the allowed origins, for `connect-src`:
    /// browsers that do not count `ws:` as `'self'` need them spelled out.
    fn socket_sources(&self) -> impl Iterator<Item = String> + '_ {
        self.0
            .iter()
            // A character that could end a directive is a misconfiguration,
            // never part of an origin: leave that entry out of the policy.
            .filter(|origin| !origin.contains([';', ',', ' ', '\'']))
            .filter_map(|origin| {
                origin
                    .strip_prefix("https://")
                    .map(|rest| format!("wss://{rest}"))
                    .or_else(|| {
                        origin
                            .strip_prefix("http://")
                            .map(|rest| format!("ws://{rest}"))
                    })
            })
    }

    /// The `Content-Security-Policy` for the web client: its own scripts
    /// (ES modules, nothing inline, no `eval`; its own WebAssembly module may
    /// be compiled, `'wasm-unsafe-eval'`, which allows nothing else), styles and images (plus the
    /// `data:` favicon), sockets to the allowed origins, and no framing,
    /// plugins or `<base>` tricks.
    pub fn content_security_policy(&self) -> String {
        let mut connect = vec!["'self'".to_owned()];
        connect.extend(self.socket_sources());
        [
            "default-src 'self'".to_owned(),
            "script-src 'self' 'wasm-unsafe-eval'".to_owned(),
            "style-src 'self'".to_owned(),
            "img-src 'self' data:".to_owned(),
            "font-src 'self'".to_owned(),
            format!("connect-src {}", connect.join(" ")),
            "object-src 'none'".to_owned(),
            "base-uri 'none'".to_owned(),
            "form-action 'self'".to_owned(),
            "frame-ancestors 'none'".to_owned(),
        ]
        .join("; ")
    }
}

/// `router` with the origin rule on every state-changing request and the
/// security headers on every response (errors and static files included).
pub fn protect(router: Router, origins: AllowedOrigins) -> Router {
    let policy = HeaderValue::from_str(&origins.content_security_policy())
        .unwrap_or_else(|_| HeaderValue::from_static("default-src 'self'; frame-ancestors 'none'"));
    router
        .layer(middleware::from_fn_with_state(
            origins,
            refuse_foreign_state_changes,
        ))
        .layer(SetResponseHeaderLayer::overriding(
            CONTENT_SECURITY_POLICY,
            policy,
        ))
        .layer(SetResponseHeaderLayer::overriding(
            X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        // For browsers without `frame-ancestors`.
        .layer(SetResponseHeaderLayer::overriding(
            X_FRAME_OPTIONS,
            HeaderValue::from_static("DENY"),
        ))
        // Game links are invitations: other sites must not learn them from
        // the `Referer`. Not `no-referrer`: under it browsers send
        // `Origin: null` with same-origin POSTs, which the origin rule refuses.
        .layer(SetResponseHeaderLayer::overriding(
            REFERRER_POLICY,
            HeaderValue::from_static("same-origin"),
        ))
}

async fn refuse_foreign_state_changes(
    State(origins): State<AllowedOrigins>,
    request: Request,
    next: Next,
) -> Response {
    if !request.method().is_safe()
        && let Err(refused) = origins.check(request.headers())
    {
        return refused.into_response();
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origins() -> AllowedOrigins {
        AllowedOrigins::new(vec![
            "http://127.0.0.1:8080".to_owned(),
            "https://chess.example.org".to_owned(),
        ])
    }

    fn with_origin(origin: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(ORIGIN, HeaderValue::from_static(origin));
        headers
    }

    #[test]
    fn listed_origins_and_no_origin_pass_others_do_not() {
        let origins = origins();
        assert!(origins.check(&HeaderMap::new()).is_ok());
        assert!(
            origins
                .check(&with_origin("https://chess.example.org"))
                .is_ok()
        );
        for foreign in [
            "https://evil.example",
            "null",
            "http://chess.example.org",
            "https://chess.example.org.evil.example",
        ] {
            assert!(origins.check(&with_origin(foreign)).is_err(), "{foreign}");
        }
    }

    #[test]
    fn the_policy_allows_sockets_to_the_allowed_origins_only() {
        let mut with_bad_entry = origins().0.to_vec();
        with_bad_entry.push("https://x.example; script-src *".to_owned());
        let policy = AllowedOrigins::new(with_bad_entry).content_security_policy();
        assert!(
            policy.contains("connect-src 'self' ws://127.0.0.1:8080 wss://chess.example.org;"),
            "{policy}"
        );
        assert!(!policy.contains("script-src *"), "{policy}");
    }
}
