//! The game socket's messages (`docs/protocol.md`): one `ClientMsg` parsed in
//! one place, one `ServerMsg` written in one place. A player's game messages
//! are the live games' own [`Command`]s; what the server sends is written
//! from the live games' views.

use chess_live::Command;
use chess_live::view::{EventView, PremoveView, SituationView, StateView};
use chess_rules::{UciError, UciMove};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// What a browser may send on a game socket: a message the connection
/// answers itself, or a [`Command`] for the game.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientMsg {
    /// Sync: full state (`version: null`) or the events after `version`.
    Hello { version: Option<u64> },
    /// RTT measuring for the client: echoed in a `pong`.
    Ping { t: serde_json::Number },
    /// A command for the game's owner.
    Command(Command),
}

/// The messages a connection answers itself (the wire form of the first
/// [`ClientMsg`] variants).
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum ConnectionMsg {
    Hello {
        #[serde(default)]
        version: Option<u64>,
    },
    Ping {
        t: serde_json::Number,
    },
}

/// Every message type the game socket understands (fuzzers draw from it).
pub const CLIENT_TYPES: &[&str] = &[
    "hello",
    "move",
    "premove",
    "cancel_premove",
    "resign",
    "abort",
    "draw_offer",
    "draw_accept",
    "draw_decline",
    "draw_withdraw",
    "rematch_offer",
    "rematch_accept",
    "rematch_decline",
    "rematch_withdraw",
    "takeback",
    "berserk",
    "ping",
];

/// The [`CLIENT_TYPES`] a connection answers itself (as [`ConnectionMsg`]).
const CONNECTION_TYPES: &[&str] = &["hello", "ping"];

/// A parsed client message and its wire `type` (named in replies to it).
#[derive(Clone, Debug, PartialEq)]
pub struct Incoming {
    pub kind: &'static str,
    pub message: ClientMsg,
}

/// Why a client frame was not read as a message. Nothing changed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("messages are limited to {limit} bytes")]
    TooLarge { limit: usize },
    #[error("too many messages: this one was ignored")]
    RateLimited,
    #[error("binary frames are not accepted: send json text")]
    Binary,
    #[error("not json: {0}")]
    NotJson(String),
    #[error("a message must be a json object")]
    NotAnObject,
    #[error("a message needs a \"type\"")]
    NoType,
    #[error("\"type\" must be a string")]
    TypeNotAString,
    #[error("unknown message type {0:?}")]
    UnknownType(String),
    /// The fields do not fit the message type (missing, extra or mistyped).
    #[error("bad {kind} message: {reason}")]
    BadFields { kind: &'static str, reason: String },
    /// `uci` is a string but not UCI move syntax.
    #[error("{error}")]
    InvalidUci { kind: &'static str, error: UciError },
}

impl ProtocolError {
    /// The stable wire code (`docs/protocol.md`).
    pub const fn code(&self) -> &'static str {
        match self {
            ProtocolError::TooLarge { .. } => "message_too_large",
            ProtocolError::RateLimited => "rate_limited",
            ProtocolError::Binary
            | ProtocolError::NotJson(_)
            | ProtocolError::NotAnObject
            | ProtocolError::BadFields { .. } => "malformed_message",
            ProtocolError::NoType
            | ProtocolError::TypeNotAString
            | ProtocolError::UnknownType(_) => "unknown_message_type",
            ProtocolError::InvalidUci { .. } => "invalid_uci",
        }
    }

    /// The message type, when it could be read.
    pub fn in_reply_to(&self) -> Option<&str> {
        match self {
            ProtocolError::UnknownType(kind) => Some(kind),
            ProtocolError::BadFields { kind, .. } | ProtocolError::InvalidUci { kind, .. } => {
                Some(kind)
            }
            _ => None,
        }
    }
}

impl ClientMsg {
    /// Parses one text frame. The one place client input is read.
    ///
    /// # Errors
    /// A [`ProtocolError`] saying exactly what is wrong.
    pub fn parse(text: &str, max_bytes: usize) -> Result<Incoming, ProtocolError> {
        if text.len() > max_bytes {
            return Err(ProtocolError::TooLarge { limit: max_bytes });
        }
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ProtocolError::NotJson(e.to_string()))?;
        let Some(object) = value.as_object() else {
            return Err(ProtocolError::NotAnObject);
        };
        let kind = match object.get("type") {
            Some(serde_json::Value::String(kind)) => kind,
            Some(_) => return Err(ProtocolError::TypeNotAString),
            None => return Err(ProtocolError::NoType),
        };
        let Some(&kind) = CLIENT_TYPES.iter().find(|known| *known == kind) else {
            return Err(ProtocolError::UnknownType(kind.clone()));
        };
        let bad_fields = |e: serde_json::Error| ProtocolError::BadFields {
            kind,
            reason: e.to_string(),
        };
        let message = if CONNECTION_TYPES.contains(&kind) {
            match ConnectionMsg::deserialize(&value).map_err(bad_fields)? {
                ConnectionMsg::Hello { version } => ClientMsg::Hello { version },
                ConnectionMsg::Ping { t } => ClientMsg::Ping { t },
            }
        } else {
            match Command::deserialize(&value) {
                Ok(command) => ClientMsg::Command(command),
                Err(error) => {
                    return Err(invalid_uci(&value, kind).unwrap_or_else(|| bad_fields(error)));
                }
            }
        };
        Ok(Incoming { kind, message })
    }
}

/// The [`ProtocolError::InvalidUci`] of a command that is well-formed but
/// for its `uci` text, which is not UCI syntax; `None` for any other fault.
/// A bad move has its own code, `invalid_uci`, and only when nothing else in
/// the message is wrong (other faults are `malformed_message`).
fn invalid_uci(value: &serde_json::Value, kind: &'static str) -> Option<ProtocolError> {
    let error = value.get("uci")?.as_str()?.parse::<UciMove>().err()?;
    let mut with_a_good_move = value.clone();
    with_a_good_move["uci"] = serde_json::Value::from("e2e4");
    Command::deserialize(&with_a_good_move)
        .is_ok()
        .then_some(ProtocolError::InvalidUci { kind, error })
}

/// Why a premove message is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PremoveReason {
    Set,
    Cancelled,
    Played,
    DroppedIllegal,
    Disconnected,
}

/// What the server sends on a game socket. An event borrows the game's
/// broadcast: each socket writes it without copying it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMsg<'a> {
    State(Box<StateView>),
    Event {
        version: u64,
        event: &'a EventView,
        #[serde(flatten)]
        situation: SituationView<'a>,
    },
    Ack {
        ply: u32,
        uci: String,
        version: u64,
    },
    Premove {
        version: u64,
        premove: Option<PremoveView>,
        reason: PremoveReason,
    },
    Redirect {
        game_id: Uuid,
        url: String,
    },
    Pong {
        t: serde_json::Number,
        server_time: u64,
        rtt_ms: Option<u64>,
    },
    Error {
        code: &'static str,
        message: String,
        in_reply_to: Option<String>,
    },
}

impl ServerMsg<'_> {
    /// The JSON text of this message.
    pub fn to_json(&self) -> String {
        // An event or a state is about a kilobyte: written into a buffer of
        // that size rather than one grown from 128 bytes, reallocated and
        // copied three or four times for every socket at every move.
        let capacity = match self {
            ServerMsg::State(_) | ServerMsg::Event { .. } => 1024,
            _ => 128,
        };
        let mut json = Vec::with_capacity(capacity);
        // Serialising these plain structures cannot fail (string keys only),
        // and serde_json writes UTF-8.
        match serde_json::to_writer(&mut json, self).map(|()| String::from_utf8(json)) {
            Ok(Ok(text)) => text,
            _ => {
                r#"{"type":"error","code":"internal","message":"cannot encode","in_reply_to":null}"#
                    .to_owned()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: usize = 4096;

    fn uci(text: &str) -> UciMove {
        text.parse().expect(text)
    }

    #[test]
    fn every_documented_message_parses() {
        let command = ClientMsg::Command;
        let cases = [
            (
                r#"{"type":"hello","version":null}"#,
                ClientMsg::Hello { version: None },
            ),
            (r#"{"type":"hello"}"#, ClientMsg::Hello { version: None }),
            (
                r#"{"type":"hello","version":12}"#,
                ClientMsg::Hello { version: Some(12) },
            ),
            (
                r#"{"type":"move","uci":"e2e4","ply":0}"#,
                command(Command::Move {
                    uci: uci("e2e4"),
                    ply: 0,
                }),
            ),
            (
                r#"{"type":"move","uci":"e7e8q","ply":41}"#,
                command(Command::Move {
                    uci: uci("e7e8q"),
                    ply: 41,
                }),
            ),
            (
                r#"{"type":"premove","uci":"g8f6"}"#,
                command(Command::Premove {
                    uci: uci("g8f6"),
                    charge_ms: 0,
                    connection: None,
                }),
            ),
            (
                r#"{"type":"cancel_premove"}"#,
                command(Command::CancelPremove),
            ),
            (r#"{"type":"resign"}"#, command(Command::Resign)),
            (r#"{"type":"abort"}"#, command(Command::Abort)),
            (r#"{"type":"draw_offer"}"#, command(Command::DrawOffer)),
            (r#"{"type":"draw_accept"}"#, command(Command::DrawAccept)),
            (r#"{"type":"draw_decline"}"#, command(Command::DrawDecline)),
            (
                r#"{"type":"draw_withdraw"}"#,
                command(Command::DrawWithdraw),
            ),
            (
                r#"{"type":"rematch_offer"}"#,
                command(Command::RematchOffer),
            ),
            (
                r#"{"type":"rematch_accept"}"#,
                command(Command::RematchAccept),
            ),
            (
                r#"{"type":"rematch_decline"}"#,
                command(Command::RematchDecline),
            ),
            (
                r#"{"type":"rematch_withdraw"}"#,
                command(Command::RematchWithdraw),
            ),
            (r#"{"type":"takeback"}"#, command(Command::Takeback)),
            (r#"{"type":"berserk"}"#, command(Command::Berserk)),
        ];
        for (text, expected) in cases {
            let parsed = ClientMsg::parse(text, LIMIT).expect(text);
            assert_eq!(parsed.message, expected, "{text}");
            assert!(text.contains(parsed.kind), "{text}");
        }
        let ping = ClientMsg::parse(r#"{"type":"ping","t":1764421234000}"#, LIMIT).expect("ping");
        assert!(matches!(ping.message, ClientMsg::Ping { .. }));
        assert_eq!(ping.kind, "ping");
    }

    #[test]
    fn every_listed_type_is_a_message() {
        // The smallest well-formed message of each listed type parses, so the
        // list and the enums name the same messages.
        for kind in CLIENT_TYPES {
            let text = match *kind {
                "move" => r#"{"type":"move","uci":"e2e4","ply":0}"#.to_owned(),
                "premove" => r#"{"type":"premove","uci":"e2e4"}"#.to_owned(),
                "ping" => r#"{"type":"ping","t":1}"#.to_owned(),
                other => format!(r#"{{"type":"{other}"}}"#),
            };
            let parsed = ClientMsg::parse(&text, LIMIT).expect(&text);
            assert_eq!(parsed.kind, *kind);
        }
    }

    #[test]
    fn every_command_is_listed() {
        // serde names every variant it knows when it meets an unknown one.
        let unknown = serde_json::json!({ "type": "?" });
        let error = Command::deserialize(&unknown)
            .expect_err("no such command")
            .to_string();
        let (_, expected) = error.split_once("expected one of").expect(&error);
        let names: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
        assert_eq!(names.len(), CLIENT_TYPES.len() - CONNECTION_TYPES.len());
        for name in names {
            assert!(
                CLIENT_TYPES.contains(&name),
                "{name} is not in CLIENT_TYPES"
            );
            assert!(!CONNECTION_TYPES.contains(&name), "{name}");
        }
    }

    #[test]
    fn a_premove_charge_is_never_read_from_the_client() {
        let error = ClientMsg::parse(r#"{"type":"premove","uci":"e2e4","charge_ms":0}"#, LIMIT)
            .expect_err("charge_ms is not a wire field");
        assert_eq!(error.code(), "malformed_message");
    }

    #[test]
    fn bad_frames_get_exact_codes() {
        let cases = [
            ("not json", "malformed_message", None),
            ("[1,2]", "malformed_message", None),
            (r#"{"uci":"e2e4"}"#, "unknown_message_type", None),
            (r#"{"type":7}"#, "unknown_message_type", None),
            (
                r#"{"type":"teleport"}"#,
                "unknown_message_type",
                Some("teleport"),
            ),
            (
                r#"{"type":"move","uci":"e2e4"}"#,
                "malformed_message",
                Some("move"),
            ),
            (
                r#"{"type":"move","uci":"e2e4","ply":-1}"#,
                "malformed_message",
                Some("move"),
            ),
            (
                r#"{"type":"move","uci":5,"ply":0}"#,
                "malformed_message",
                Some("move"),
            ),
            (
                r#"{"type":"move","uci":"zz99","ply":0}"#,
                "invalid_uci",
                Some("move"),
            ),
            (
                r#"{"type":"move","uci":"e7e8k","ply":0}"#,
                "invalid_uci",
                Some("move"),
            ),
            (
                r#"{"type":"premove","uci":"e2"}"#,
                "invalid_uci",
                Some("premove"),
            ),
            // A bad move in a message that is wrong anyway is just malformed.
            (
                r#"{"type":"move","uci":"zz99"}"#,
                "malformed_message",
                Some("move"),
            ),
            (
                r#"{"type":"move","uci":"zz99","ply":0,"from":"e2"}"#,
                "malformed_message",
                Some("move"),
            ),
            (
                r#"{"type":"hello","uci":"zz99"}"#,
                "malformed_message",
                Some("hello"),
            ),
        ];
        for (text, code, in_reply_to) in cases {
            let error = ClientMsg::parse(text, LIMIT).expect_err(text);
            assert_eq!(error.code(), code, "{text}: {error}");
            assert_eq!(error.in_reply_to(), in_reply_to, "{text}");
            assert!(!error.to_string().is_empty(), "{text}");
        }
        let huge = format!(r#"{{"type":"premove","uci":"{}"}}"#, "a".repeat(LIMIT));
        assert_eq!(
            ClientMsg::parse(&huge, LIMIT).expect_err("too big").code(),
            "message_too_large"
        );
    }

    #[test]
    fn server_messages_carry_their_type_tag() {
        let error = ServerMsg::Error {
            code: "not_your_turn",
            message: "it is black's turn".to_owned(),
            in_reply_to: Some("move".to_owned()),
        };
        let json: serde_json::Value = serde_json::from_str(&error.to_json()).expect("json");
        assert_eq!(json["type"], "error");
        assert_eq!(json["code"], "not_your_turn");
        assert_eq!(json["in_reply_to"], "move");
    }
}
