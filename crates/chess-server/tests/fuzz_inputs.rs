//! Fuzzing on stable: every parser of the server that reads outside input
//! gets arbitrary text and mutations of valid input. None may panic; what
//! one refuses gets its documented code; what one accepts is consistent.
//! Covered: game socket messages (`ClientMsg::parse`), time controls (the
//! HTTP JSON shape and the `5+3` text), guest tokens and the cookie header
//! that carries them, account session tokens, usernames and passwords.
//! The HTTP bodies are fuzzed against a running server in `fuzz_http.rs`.
//!
//! CI runs proptest's default number of cases (256) per target; the long run
//! sets `PROPTEST_CASES` (see docs/reliability.md):
//!
//! ```sh
//! PROPTEST_CASES=1000000 cargo test --release -p chess-server --test fuzz_inputs
//! ```

use axum::http::{HeaderMap, HeaderValue};
use chess_game::TimeControl;
use chess_live::time_control::{TimeControlJson, to_json};
use chess_server::auth::identity::{GuestTokens, Identity};
use chess_server::auth::password::Password;
use chess_server::auth::session::{KeyRing, Sessions};
use chess_server::ws::protocol::ClientMsg;
use chess_store::accounts::Username;
use proptest::prelude::*;
use serde_json::{Value, json};
use uuid::Uuid;

const MAX_MESSAGE_BYTES: usize = 4096;

/// The documented client messages (docs/protocol.md), to mutate.
const MESSAGES: &[&str] = &[
    r#"{"type":"hello","version":null}"#,
    r#"{"type":"hello","version":12}"#,
    r#"{"type":"move","uci":"e2e4","ply":0}"#,
    r#"{"type":"move","uci":"e7e8q","ply":41}"#,
    r#"{"type":"premove","uci":"g8f6"}"#,
    r#"{"type":"cancel_premove"}"#,
    r#"{"type":"resign"}"#,
    r#"{"type":"draw_offer"}"#,
    r#"{"type":"rematch_accept"}"#,
    r#"{"type":"takeback"}"#,
    r#"{"type":"ping","t":1764421234000}"#,
];

/// Text from `seeds` with up to eight random edits: a character inserted,
/// removed or replaced, a slice repeated, the end cut off.
fn mutated(seeds: &'static [&'static str]) -> impl Strategy<Value = String> {
    (
        0..seeds.len(),
        prop::collection::vec((0u8..5, any::<usize>(), any::<char>()), 0..8),
    )
        .prop_map(move |(seed, edits)| {
            let mut chars: Vec<char> = seeds[seed].chars().collect();
            for (op, at, c) in edits {
                let at = if chars.is_empty() {
                    0
                } else {
                    at % chars.len()
                };
                match op {
                    0 => chars.insert(at, c),
                    1 if !chars.is_empty() => {
                        chars.remove(at);
                    }
                    2 if !chars.is_empty() => chars[at] = c,
                    3 => {
                        let slice: Vec<char> = chars[at..].iter().take(6).copied().collect();
                        for (i, c) in slice.into_iter().enumerate() {
                            chars.insert(at + i, c);
                        }
                    }
                    _ => chars.truncate(at),
                }
            }
            chars.into_iter().collect()
        })
}

/// Any JSON value, nested a few levels.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        any::<String>().prop_map(Value::from),
        "[a-h][1-8][a-h][1-8][qrbn]?".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::btree_map("[a-z_]{0,12}", inner, 0..6)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// A JSON object with a real message type and random fields, some with the
/// names real messages use.
fn message_like() -> impl Strategy<Value = String> {
    (
        prop::sample::select(chess_server::ws::protocol::CLIENT_TYPES),
        prop::collection::btree_map(
            prop_oneof![
                Just("uci".to_owned()),
                Just("ply".to_owned()),
                Just("version".to_owned()),
                Just("t".to_owned()),
                "[a-z_]{1,8}"
            ],
            json_value(),
            0..4,
        ),
    )
        .prop_map(|(kind, fields)| {
            let mut object: serde_json::Map<String, Value> = fields.into_iter().collect();
            object.insert("type".to_owned(), Value::from(kind));
            Value::Object(object).to_string()
        })
}

proptest! {
    #[test]
    fn socket_messages_never_panic_and_refusals_carry_a_documented_code(
        text in prop_oneof![
            any::<String>(),
            mutated(MESSAGES),
            message_like(),
            json_value().prop_map(|v| v.to_string()),
            (prop::sample::select(MESSAGES), 4000usize..4200).prop_map(|(m, n)| format!("{m}{}", " ".repeat(n))),
        ]
    ) {
        match ClientMsg::parse(&text, MAX_MESSAGE_BYTES) {
            Ok(incoming) => {
                prop_assert!(text.len() <= MAX_MESSAGE_BYTES);
                let value: Value = serde_json::from_str(&text).expect("accepted text is json");
                prop_assert_eq!(value["type"].as_str(), Some(incoming.kind), "{}", text);
            }
            Err(error) => {
                prop_assert!(
                    ["malformed_message", "unknown_message_type", "message_too_large", "invalid_uci"]
                        .contains(&error.code()),
                    "{text:?}: {error:?}"
                );
                prop_assert_eq!(error.code() == "message_too_large", text.len() > MAX_MESSAGE_BYTES, "{:?}", text);
                prop_assert!(!error.to_string().is_empty());
            }
        }
    }

    #[test]
    fn time_controls_as_json_never_panic_and_accepted_ones_round_trip(
        value in prop_oneof![
            json_value(),
            (prop::sample::select(&["clock", "correspondence", "Clock", ""][..]), any::<u64>(), any::<u64>())
                .prop_map(|(kind, i, n)| json!({ "kind": kind, "initial_ms": i, "increment_ms": n })),
            (0u64..200, 0u64..200)
                .prop_map(|(i, n)| json!({ "kind": "clock", "initial_ms": i * 7_500, "increment_ms": n * 500 })),
        ]
    ) {
        let Ok(parsed) = serde_json::from_value::<TimeControlJson>(value.clone()) else {
            return Ok(());
        };
        if let Ok(tc) = parsed.parse() {
            // The documented bounds: quarter minutes up to 3 h, whole
            // seconds of increment up to 180 s, not both zero.
            if let (Some(initial), Some(increment)) = (tc.initial_ms(), tc.increment_ms()) {
                prop_assert!(initial % 15_000 == 0 && initial <= 10_800_000, "{value}");
                prop_assert!(increment % 1_000 == 0 && increment <= 180_000, "{value}");
                prop_assert!(initial + increment > 0, "{value}");
            }
            let written = to_json(tc);
            let again = serde_json::from_value::<TimeControlJson>(written.clone()).map(TimeControlJson::parse);
            prop_assert_eq!(again.ok().and_then(Result::ok), Some(tc), "{}", written);
        }
    }

    #[test]
    fn time_controls_as_text_never_panic_and_accepted_ones_round_trip(
        text in prop_oneof![any::<String>(), "[0-9.+ a-z]{0,12}", mutated(&["5+3", "0.5+0", "0.25+1", "180+180", "correspondence"])]
    ) {
        if let Ok(tc) = text.parse::<TimeControl>() {
            prop_assert_eq!(tc.to_string().parse::<TimeControl>().ok(), Some(tc), "{}", text);
        }
    }

    #[test]
    fn usernames_and_passwords_never_panic_and_accepted_ones_obey_the_rules(
        text in prop_oneof![any::<String>(), "[a-zA-Z0-9_ -]{0,24}", mutated(&["Magnus", "correct horse"])]
    ) {
        if let Ok(username) = Username::parse(&text) {
            let len = text.chars().count();
            prop_assert!((3..=20).contains(&len), "{text:?}");
            prop_assert!(text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'), "{text:?}");
            prop_assert!(text.starts_with(|c: char| c.is_ascii_alphanumeric()), "{text:?}");
            prop_assert_eq!(username.as_str(), text.as_str());
        }
        let accepted = Password::parse(text.clone()).is_ok();
        prop_assert_eq!(accepted, (8..=128).contains(&text.chars().count()), "{:?}", text);
    }
}

/// A guest token and the identity it was issued for.
fn guest_token() -> (GuestTokens, Identity, String) {
    let secret = "fuzz-secret-0123456789abcdefghijklmnopqrstuv"
        .parse()
        .expect("long enough");
    let tokens = GuestTokens::new(&secret).expect("keys");
    let identity = Identity {
        id: Uuid::from_u128(42),
        name: "brave-otter-42".to_owned(),
        stored: None,
    };
    let token = tokens.issue(&identity).expect("a token");
    (tokens, identity, token)
}

/// `token` with up to six random edits of its characters.
fn edited(token: &str, edits: &[(u8, usize, char)]) -> String {
    let mut chars: Vec<char> = token.chars().collect();
    for &(op, at, c) in edits {
        let at = at % chars.len().max(1);
        match op {
            0 => chars.insert(at, c),
            1 if !chars.is_empty() => {
                chars.remove(at);
            }
            _ if !chars.is_empty() => chars[at] = c,
            _ => {}
        }
    }
    chars.into_iter().collect()
}

proptest! {
    #[test]
    fn guest_tokens_and_cookie_headers_never_panic_and_never_forge_an_identity(
        edits in prop::collection::vec((0u8..3, any::<usize>(), prop_oneof![any::<char>(), "[A-Za-z0-9_.=-]".prop_map(|s| s.chars().next().unwrap_or('a'))]), 0..6),
        garbage in any::<String>(),
        prefix in "[ -~]{0,20}",
    ) {
        let (tokens, identity, token) = guest_token();
        let forged = edited(&token, &edits);
        match tokens.verify(&forged) {
            Ok(found) => prop_assert_eq!(found, identity.clone(), "{}", forged),
            Err(_) => prop_assert_ne!(&forged, &token),
        }
        prop_assert!(tokens.verify(&garbage).is_err());
        // The cookie header as a browser might send it, with other cookies
        // and noise around it.
        let header = format!("{prefix}; chess_guest={forged}; {garbage}");
        if let Ok(value) = HeaderValue::from_str(&header) {
            let mut headers = HeaderMap::new();
            headers.insert("cookie", value);
            if let Ok(found) = tokens.from_headers(&headers) {
                prop_assert_eq!(found, identity, "{}", header);
            }
        }
    }

    #[test]
    fn session_tokens_never_panic_and_never_forge_an_account(
        edits in prop::collection::vec((0u8..3, any::<usize>(), any::<char>()), 0..6),
        garbage in any::<String>(),
        now_offset in 0u64..100_000,
    ) {
        let sessions = Sessions::new(KeyRing::generated());
        let account = Uuid::from_u128(7);
        let issued_at = 1_800_000_000;
        let token = sessions.issue(account, issued_at).expect("a token");
        let forged = edited(&token, &edits);
        let now = issued_at + now_offset;
        if let Ok(session) = sessions.verify(&forged, now) {
            prop_assert_eq!(session.account_id, account, "{}", forged);
            prop_assert!(now < session.expires_at);
        }
        prop_assert!(sessions.verify(&garbage, now).is_err());
    }
}
