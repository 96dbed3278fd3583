//! Requests the server itself makes: to the host platform's OpenID
//! provider and to its reward webhook. One client for all of them, so they
//! share connections, TLS set-up and limits.
//!
//! TLS is reqwest's rustls, checked against the system's trust store
//! (`rustls-platform-verifier`): an `https://` provider or webhook behind a
//! certificate the machine trusts works with no setting.

use std::time::Duration;

/// How long one outbound request may take in all (connect, send, read the
/// reply). A provider or webhook slower than this is treated as down, and
/// its caller retries or reports it; no request of ours waits longer.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// A client for outbound requests: timeouts set, redirects not followed (a
/// webhook or token endpoint that redirects is misconfigured, and following
/// it would resend signed bodies elsewhere), identified by user agent.
///
/// # Panics
/// Only if the TLS back end cannot start, which is a build fault.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .user_agent(concat!("chess-server/", env!("CARGO_PKG_VERSION")))
        .timeout(REQUEST_TIMEOUT)
        .connect_timeout(CONNECT_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("the outbound HTTP client builds")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_client_builds_and_refuses_to_follow_redirects() {
        // A loopback server that redirects: the client must hand back the
        // 3xx itself, not follow it.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let address = listener.local_addr().expect("address");
        let app = axum::Router::new().route(
            "/",
            axum::routing::get(|| async { axum::response::Redirect::temporary("/elsewhere") }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        let reply = client()
            .get(format!("http://{address}/"))
            .send()
            .await
            .expect("request");
        assert_eq!(reply.status(), reqwest::StatusCode::TEMPORARY_REDIRECT);
    }
}
