//! What protects browsers and the server: security headers on every
//! response, state-changing requests only from allowed origins, `Secure`
//! cookies over HTTPS, a bound on how fast one address mints guests, and
//! client addresses taken from a trusted proxy's `X-Forwarded-For` only.

use serde_json::{Value, json};

use crate::helpers::{TestApp, clock, correspondence, header};
use crate::on_both_backends;

const FOREIGN: &str = "https://evil.example";

fn assert_security_headers(app: &TestApp, path: &str, response: &reqwest::Response) {
    let policy = header(response, "content-security-policy");
    for directive in [
        "default-src 'self'",
        // Its own scripts, and its own WebAssembly module compiled (which
        // allows no `eval` of script text).
        "script-src 'self' 'wasm-unsafe-eval';",
        "style-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    ] {
        assert!(
            policy.contains(directive),
            "{path}: {directive} in {policy:?}"
        );
    }
    // The game socket is same-origin; some browsers do not count ws: as 'self'.
    let socket_source = format!("ws://127.0.0.1:{}", app.port);
    assert!(policy.contains(&socket_source), "{path}: {policy:?}");
    let unsafe_sources: Vec<&str> = policy
        .split([' ', ';'])
        .filter(|source| source.contains("unsafe") && *source != "'wasm-unsafe-eval'")
        .collect();
    assert!(unsafe_sources.is_empty(), "{path}: {policy:?}");
    assert_eq!(
        header(response, "x-content-type-options"),
        "nosniff",
        "{path}"
    );
    assert_eq!(header(response, "x-frame-options"), "DENY", "{path}");
    // Not `no-referrer`: that policy makes browsers send `Origin: null` on
    // same-origin POSTs, which the origin check below would refuse.
    assert_eq!(header(response, "referrer-policy"), "same-origin", "{path}");
}

on_both_backends!(
    every_response_carries_strict_security_headers,
    |app: TestApp| async move {
        let guest = app.guest().await;
        let game_id = app.create_local(&guest, correspondence()).await;
        for path in [
            "/".to_owned(),
            format!("/game/{game_id}"),
            "/how-to-play.html".to_owned(),
            "/js/game.js".to_owned(),
            "/css/style.css".to_owned(),
            "/api/me".to_owned(),
            format!("/api/games/{game_id}"),
            "/api/games/not-a-game".to_owned(),
            "/no-such-file.js".to_owned(),
        ] {
            let response = app.request("GET", &path, &[], None).await;
            assert_security_headers(&app, &path, &response);
        }
        let refused = app
            .request(
                "POST",
                "/api/games/local",
                &[("origin", FOREIGN)],
                Some(json!({})),
            )
            .await;
        assert_security_headers(&app, "a refused POST", &refused);
    }
);

on_both_backends!(
    pages_need_no_inline_script_or_style,
    |app: TestApp| async move {
        for path in ["/", "/game/x", "/how-to-play.html", "/account.html"] {
            let (status, page) = app.get_text(path).await;
            assert_eq!(status, 200, "{path}");
            let lowered = page.to_lowercase();
            for (index, _) in lowered.match_indices("<script") {
                let tag = &lowered[index..index + lowered[index..].find('>').expect("a tag")];
                assert!(tag.contains(" src="), "{path}: inline script {tag}");
            }
            assert!(!lowered.contains("<style"), "{path}: a <style> element");
            assert!(!lowered.contains(" style="), "{path}: a style attribute");
            assert!(!lowered.contains(" onclick="), "{path}: an inline handler");
        }
    }
);

on_both_backends!(
    state_changes_from_a_foreign_origin_are_refused,
    |app: TestApp| async move {
        let guest = app.guest().await;
        let own = format!("http://127.0.0.1:{}", app.port);
        let body = json!({ "time_control": correspondence() });
        let cookie = ("cookie", guest.cookie.as_str());

        let refused = app
            .request(
                "POST",
                "/api/games/local",
                &[cookie, ("origin", FOREIGN)],
                Some(body.clone()),
            )
            .await;
        assert_eq!(refused.status(), 403);
        let error: Value = refused.json().await.expect("json");
        assert_eq!(error["error"]["code"], "forbidden_origin");
        let (_, mine) = app.get("/api/games/mine", Some(&guest.cookie)).await;
        assert_eq!(mine["games"], json!([]), "nothing was created");

        // The browser's own origin, and scripts that send no Origin at all.
        for headers in [vec![cookie, ("origin", own.as_str())], vec![cookie]] {
            let created = app
                .request("POST", "/api/games/local", &headers, Some(body.clone()))
                .await;
            assert_eq!(created.status(), 201, "{headers:?}");
        }

        // DELETE too: a foreign page cannot cancel a seek.
        let (status, seek) = app
            .post(
                "/api/lobby/seeks",
                &guest,
                json!({ "time_control": clock(300_000, 0), "color": "random" }),
            )
            .await;
        assert_eq!(status, 201, "{seek}");
        let seek_path = format!(
            "/api/lobby/seeks/{}",
            seek["seek"]["id"].as_str().expect("id")
        );
        let cancel = app
            .request("DELETE", &seek_path, &[cookie, ("origin", FOREIGN)], None)
            .await;
        assert_eq!(cancel.status(), 403);
        let (_, seeks) = app.get("/api/lobby/seeks", None).await;
        assert_eq!(seeks["seeks"].as_array().map(Vec::len), Some(1));

        // The account endpoints share the rule.
        let sign_up = app
            .request(
                "POST",
                "/api/account/sign-up",
                &[cookie, ("origin", "null")],
                Some(json!({ "username": "Mallory", "password": "correct horse" })),
            )
            .await;
        assert_eq!(sign_up.status(), 403);

        // Reading is not a state change: a foreign origin may GET.
        let read = app
            .request("GET", "/api/lobby/seeks", &[("origin", FOREIGN)], None)
            .await;
        assert_eq!(read.status(), 200);
    }
);

on_both_backends!(
    the_guest_cookie_is_secure_with_secure_cookies,
    |app: TestApp| async move {
        let plain = app.request("GET", "/api/me", &[], None).await;
        assert!(!header(&plain, "set-cookie").contains("Secure"));

        let mut settings = app.settings.clone();
        settings.secure_cookies = true;
        let app = app.restart_with(settings).await;
        let secure = app.request("GET", "/api/me", &[], None).await;
        let cookie = header(&secure, "set-cookie");
        assert!(cookie.starts_with("chess_guest="), "{cookie}");
        assert!(cookie.contains("; Secure"), "{cookie}");
    }
);

on_both_backends!(
    one_address_cannot_mint_guests_without_limit,
    |app: TestApp| async move {
        let limit = app.settings.new_guests_per_address_per_hour;
        let existing = app.guest().await;
        let mut minted = 1;
        let mut refused = None;
        for _ in 0..limit + 5 {
            let response = app.request("GET", "/api/me", &[], None).await;
            match response.status().as_u16() {
                200 => minted += 1,
                429 => {
                    refused = Some(response);
                    break;
                }
                other => panic!("GET /api/me answered {other}"),
            }
        }
        assert_eq!(minted, limit, "guests minted before the limit");
        let refused = refused.expect("a refusal past the limit");
        assert!(!header(&refused, "retry-after").is_empty());
        assert!(header(&refused, "set-cookie").is_empty());
        let error: Value = refused.json().await.expect("json");
        assert_eq!(error["error"]["code"], "too_many_requests");

        // A browser that already has its guest is not affected.
        let (status, me) = app.get("/api/me", Some(&existing.cookie)).await;
        assert_eq!(
            (status, me["id"].as_str()),
            (200, Some(existing.id.as_str()))
        );
    }
);

/// `app` restarted with 127.0.0.1 (where the test's requests come from)
/// as a trusted proxy, or not, and two new guests per address an hour.
async fn behind_a_proxy(app: TestApp, trusted: bool) -> TestApp {
    let mut settings = app.settings.clone();
    settings.new_guests_per_address_per_hour = 2;
    settings.trusted_proxies = if trusted {
        vec!["127.0.0.1".parse().expect("an address")]
    } else {
        Vec::new()
    };
    app.restart_with(settings).await
}

/// `GET /api/me` without a cookie, with `X-Forwarded-For: forwarded`
/// (none when empty): the status.
async fn new_guest_from(app: &TestApp, forwarded: &str) -> u16 {
    let headers: &[(&str, &str)] = if forwarded.is_empty() {
        &[]
    } else {
        &[("x-forwarded-for", forwarded)]
    };
    app.request("GET", "/api/me", headers, None)
        .await
        .status()
        .as_u16()
}

on_both_backends!(
    a_trusted_proxys_forwarded_address_is_the_client,
    |app: TestApp| async move {
        let app = behind_a_proxy(app, true).await;
        // Each client behind the proxy has a budget of its own...
        for client in ["203.0.113.1", "203.0.113.2"] {
            for _ in 0..2 {
                assert_eq!(new_guest_from(&app, client).await, 200, "{client}");
            }
        }
        assert_eq!(new_guest_from(&app, "203.0.113.1").await, 429);
        // ...which entries it prepends itself do not change: the walk takes
        // the rightmost address that is not a trusted proxy.
        for spoofed in [
            "198.51.100.7, 203.0.113.1",
            "127.0.0.1, 203.0.113.1",
            "junk, 203.0.113.1",
        ] {
            assert_eq!(new_guest_from(&app, spoofed).await, 429, "{spoofed}");
        }
        // A chain of trusted proxies reaches the client behind them.
        assert_eq!(new_guest_from(&app, "203.0.113.1, 127.0.0.1").await, 429);
        // The proxy's own requests (no header) are its own.
        assert_eq!(new_guest_from(&app, "").await, 200);

        // Sign-in: a guesser behind the proxy is locked out of the account
        // from their address, not everyone behind the proxy.
        let owner = app.guest().await;
        app.sign_up(&owner, "Magnus").await;
        let sign_in = |password: &'static str, client: &'static str| {
            let app = &app;
            async move {
                let body = json!({ "username": "Magnus", "password": password });
                app.request(
                    "POST",
                    "/api/account/sign-in",
                    &[("x-forwarded-for", client)],
                    Some(body),
                )
                .await
                .status()
                .as_u16()
            }
        };
        for _ in 0..5 {
            assert_eq!(sign_in("wrong horse", "203.0.113.66").await, 401);
        }
        assert_eq!(sign_in("correct horse", "203.0.113.66").await, 429);
        assert_eq!(sign_in("correct horse", "203.0.113.1").await, 200);

        // The lichess API's bad tokens are counted per client too.
        let bad_token = |client: &'static str| {
            let app = &app;
            async move {
                app.request(
                    "GET",
                    "/api/account",
                    &[
                        ("authorization", "Bearer lip_wrong"),
                        ("x-forwarded-for", client),
                    ],
                    None,
                )
                .await
                .status()
                .as_u16()
            }
        };
        for _ in 0..20 {
            assert_eq!(bad_token("203.0.113.99").await, 401);
        }
        assert_eq!(bad_token("203.0.113.99").await, 429);
        assert_eq!(bad_token("203.0.113.98").await, 401);
    }
);

on_both_backends!(
    an_untrusted_peers_forwarded_address_is_ignored,
    |app: TestApp| async move {
        let app = behind_a_proxy(app, false).await;
        // Every request comes from 127.0.0.1, whatever it claims.
        assert_eq!(new_guest_from(&app, "203.0.113.1").await, 200);
        assert_eq!(new_guest_from(&app, "203.0.113.2").await, 200);
        assert_eq!(new_guest_from(&app, "203.0.113.3").await, 429);
        let forwarded = app
            .request("GET", "/api/me", &[("forwarded", "for=203.0.113.4")], None)
            .await;
        assert_eq!(forwarded.status(), 429);
    }
);
