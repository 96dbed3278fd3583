//! The cookies the server sets and reads (the guest token, the account
//! session, the OpenID sign-in's state): one reader and one writer, so
//! every cookie has the same attributes.

use axum::http::header::COOKIE;
use axum::http::{HeaderMap, HeaderValue};

/// The value of cookie `name` in the request's `Cookie` headers.
pub(crate) fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.to_owned())
}

/// A `Set-Cookie` value for cookie `name`, sent back only on `path`, out of
/// reach of scripts (`HttpOnly`) and of other sites' requests but for
/// top-level navigation (`SameSite=Lax`: the OpenID provider sends the
/// browser back with a top-level GET), for `max_age_secs` (0 forgets it),
/// and over HTTPS only when `secure`.
pub(crate) fn set_cookie(
    name: &str,
    value: &str,
    path: &str,
    max_age_secs: u64,
    secure: bool,
) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    let header = format!(
        "{name}={value}; Path={path}; HttpOnly; SameSite=Lax; Max-Age={max_age_secs}{secure}"
    );
    // The values set are JWTs, random base64url states or empty: always a
    // valid header value.
    HeaderValue::from_str(&header).unwrap_or_else(|_| HeaderValue::from_static(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cookie_is_found_among_others_and_headers() {
        let mut headers = HeaderMap::new();
        headers.append(
            COOKIE,
            HeaderValue::from_static("theme=dark; guest=abc.def"),
        );
        headers.append(COOKIE, HeaderValue::from_static("session=xyz"));
        assert_eq!(cookie_value(&headers, "guest").as_deref(), Some("abc.def"));
        assert_eq!(cookie_value(&headers, "session").as_deref(), Some("xyz"));
        assert_eq!(cookie_value(&headers, "gues"), None);
    }

    #[test]
    fn a_set_cookie_says_its_scope_and_lifetime() {
        let plain = set_cookie("guest", "t", "/", 60, false);
        assert_eq!(plain, "guest=t; Path=/; HttpOnly; SameSite=Lax; Max-Age=60");
        let secure = set_cookie("state", "s", "/auth/oidc", 0, true);
        assert_eq!(
            secure,
            "state=s; Path=/auth/oidc; HttpOnly; SameSite=Lax; Max-Age=0; Secure"
        );
    }
}
