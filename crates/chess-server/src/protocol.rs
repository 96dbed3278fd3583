//! The game socket's messages (`docs/protocol.md`): one `ClientMsg` parsed in
//! one place, one `ServerMsg` written in one place.

use chess_rules::{Bitboard, ByColor, Color, Square};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Serialize, Serializer};
use uuid::Uuid;

use crate::model::{GameMode, GameStatus, Seat};

/// What a browser may send on a game socket.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMsg {
    /// Sync: full state (`version: null`) or the events after `version`.
    Hello {
        #[serde(default)]
        version: Option<u64>,
    },
    /// Play `uci` as the move with index `ply`.
    Move {
        uci: String,
        ply: u32,
    },
    Premove {
        uci: String,
    },
    CancelPremove,
    Resign,
    Abort,
    DrawOffer,
    DrawAccept,
    DrawDecline,
    DrawWithdraw,
    RematchOffer,
    RematchAccept,
    RematchDecline,
    RematchWithdraw,
    Takeback,
    /// RTT measuring for the client: echoed in a `pong`.
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
    "ping",
];

/// Why a client frame is not a `ClientMsg`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolError {
    /// The stable code: `malformed_message`, `unknown_message_type` or
    /// `message_too_large`.
    pub code: &'static str,
    pub message: String,
    /// The message type, when it could be read.
    pub in_reply_to: Option<String>,
}

impl ClientMsg {
    /// Parses one text frame. The one place client input is read.
    ///
    /// # Errors
    /// A [`ProtocolError`] saying exactly what is wrong.
    pub fn parse(text: &str, max_bytes: usize) -> Result<ClientMsg, ProtocolError> {
        if text.len() > max_bytes {
            return Err(ProtocolError {
                code: "message_too_large",
                message: format!("messages are limited to {max_bytes} bytes"),
                in_reply_to: None,
            });
        }
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| ProtocolError {
            code: "malformed_message",
            message: format!("not json: {e}"),
            in_reply_to: None,
        })?;
        let Some(object) = value.as_object() else {
            return Err(ProtocolError {
                code: "malformed_message",
                message: "a message must be a json object".to_owned(),
                in_reply_to: None,
            });
        };
        let kind = match object.get("type") {
            Some(serde_json::Value::String(kind)) => kind.clone(),
            Some(_) => {
                return Err(ProtocolError {
                    code: "unknown_message_type",
                    message: "\"type\" must be a string".to_owned(),
                    in_reply_to: None,
                });
            }
            None => {
                return Err(ProtocolError {
                    code: "unknown_message_type",
                    message: "a message needs a \"type\"".to_owned(),
                    in_reply_to: None,
                });
            }
        };
        if !CLIENT_TYPES.contains(&kind.as_str()) {
            return Err(ProtocolError {
                code: "unknown_message_type",
                message: format!("unknown message type {kind:?}"),
                in_reply_to: Some(kind),
            });
        }
        serde_json::from_value(value).map_err(|e| ProtocolError {
            code: "malformed_message",
            message: format!("bad {kind} message: {e}"),
            in_reply_to: Some(kind),
        })
    }

    /// The wire `type` of this message.
    pub const fn kind(&self) -> &'static str {
        match self {
            ClientMsg::Hello { .. } => "hello",
            ClientMsg::Move { .. } => "move",
            ClientMsg::Premove { .. } => "premove",
            ClientMsg::CancelPremove => "cancel_premove",
            ClientMsg::Resign => "resign",
            ClientMsg::Abort => "abort",
            ClientMsg::DrawOffer => "draw_offer",
            ClientMsg::DrawAccept => "draw_accept",
            ClientMsg::DrawDecline => "draw_decline",
            ClientMsg::DrawWithdraw => "draw_withdraw",
            ClientMsg::RematchOffer => "rematch_offer",
            ClientMsg::RematchAccept => "rematch_accept",
            ClientMsg::RematchDecline => "rematch_decline",
            ClientMsg::RematchWithdraw => "rematch_withdraw",
            ClientMsg::Takeback => "takeback",
            ClientMsg::Ping { .. } => "ping",
        }
    }
}

/// A player as others see them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerView {
    pub id: Uuid,
    pub name: String,
    pub kind: crate::model::PlayerKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<u8>,
    pub is_you: bool,
}

/// Both clocks at server time `as_of`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClocksView {
    pub white_ms: u64,
    pub black_ms: u64,
    pub running: Option<Color>,
    pub as_of: u64,
}

/// Destinations by origin square, written `{"e2": ["e3", "e4"], "g1": ["f3", "h3"]}`.
///
/// Kept as bitboards and written straight into the message: every event
/// carries them, and strings per square were most of a broadcast's work.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dests(Vec<(Square, Bitboard)>);

impl Dests {
    /// No destinations.
    pub fn new() -> Dests {
        Dests(Vec::new())
    }

    /// The destinations of each origin square (origins with none are left out).
    pub fn from_pairs(pairs: Vec<(Square, Bitboard)>) -> Dests {
        let mut pairs = pairs;
        pairs.retain(|(_, to)| to.any());
        Dests(pairs)
    }

    /// Whether no piece has anywhere to go.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Dests {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        /// The squares of one bitboard as a list of names.
        struct Names(Bitboard);
        impl Serialize for Names {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut list = serializer.serialize_seq(Some(self.0.count() as usize))?;
                for square in self.0 {
                    list.serialize_element(square.name())?;
                }
                list.end()
            }
        }
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (from, to) in &self.0 {
            map.serialize_entry(from.name(), &Names(*to))?;
        }
        map.end()
    }
}

/// A premove as its owner sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PremoveView {
    pub uci: String,
}

/// Open offers: the colour that made each, if any.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffersView {
    pub draw: Option<Color>,
    pub rematch: Option<Color>,
}

/// A result as the wire writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultView {
    pub winner: Option<Color>,
    pub reason: &'static str,
}

/// One move in the move list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveView {
    pub uci: String,
    pub san: String,
}

/// A versioned event's payload (`event` field).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventView {
    Move {
        ply: u32,
        uci: String,
        san: String,
        color: Color,
        premove: bool,
    },
    PlayerJoined {
        color: Color,
        player: PlayerView,
    },
    DrawOffered {
        color: Color,
    },
    DrawDeclined {
        color: Color,
        by_move: bool,
    },
    DrawWithdrawn {
        color: Color,
    },
    DrawAccepted {
        color: Color,
    },
    RematchOffered {
        color: Color,
    },
    RematchDeclined {
        color: Color,
    },
    RematchWithdrawn {
        color: Color,
    },
    RematchStarted {
        game_id: Uuid,
    },
    Takeback {
        moves: u32,
    },
    Ended {
        result: ResultView,
    },
}

/// The situation after an event, as every event message carries it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SituationView {
    pub fen: String,
    pub turn: Color,
    pub check: Option<Square>,
    pub status: GameStatus,
    pub clocks: Option<ClocksView>,
    pub first_move_deadline: Option<u64>,
    pub dests: Dests,
    pub premove_dests: Dests,
    pub offers: OffersView,
    pub result: Option<ResultView>,
}

/// The full snapshot of a game for one viewer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StateView {
    pub game_id: Uuid,
    pub version: u64,
    pub mode: GameMode,
    pub players: ByColor<Option<PlayerView>>,
    pub seat: Seat,
    pub time_control: serde_json::Value,
    pub initial_fen: String,
    pub moves: Vec<MoveView>,
    #[serde(flatten)]
    pub situation: SituationView,
    pub premove: Option<PremoveView>,
    pub rematch_game_id: Option<Uuid>,
    pub server_time: u64,
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

/// What the server sends on a game socket.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMsg {
    State(Box<StateView>),
    Event {
        version: u64,
        event: EventView,
        #[serde(flatten)]
        situation: Box<SituationView>,
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

impl ServerMsg {
    /// The JSON text of this message.
    pub fn to_json(&self) -> String {
        // Serialising these plain structures cannot fail (string keys only).
        serde_json::to_string(self).unwrap_or_else(|_| {
            r#"{"type":"error","code":"internal","message":"cannot encode","in_reply_to":null}"#
                .to_owned()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: usize = 4096;

    #[test]
    fn every_documented_message_parses() {
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
                ClientMsg::Move {
                    uci: "e2e4".to_owned(),
                    ply: 0,
                },
            ),
            (
                r#"{"type":"premove","uci":"g8f6"}"#,
                ClientMsg::Premove {
                    uci: "g8f6".to_owned(),
                },
            ),
            (r#"{"type":"cancel_premove"}"#, ClientMsg::CancelPremove),
            (r#"{"type":"resign"}"#, ClientMsg::Resign),
            (r#"{"type":"abort"}"#, ClientMsg::Abort),
            (r#"{"type":"draw_offer"}"#, ClientMsg::DrawOffer),
            (r#"{"type":"draw_accept"}"#, ClientMsg::DrawAccept),
            (r#"{"type":"draw_decline"}"#, ClientMsg::DrawDecline),
            (r#"{"type":"draw_withdraw"}"#, ClientMsg::DrawWithdraw),
            (r#"{"type":"rematch_offer"}"#, ClientMsg::RematchOffer),
            (r#"{"type":"rematch_accept"}"#, ClientMsg::RematchAccept),
            (r#"{"type":"rematch_decline"}"#, ClientMsg::RematchDecline),
            (r#"{"type":"rematch_withdraw"}"#, ClientMsg::RematchWithdraw),
            (r#"{"type":"takeback"}"#, ClientMsg::Takeback),
        ];
        for (text, expected) in cases {
            let parsed = ClientMsg::parse(text, LIMIT).expect(text);
            assert_eq!(parsed, expected, "{text}");
            assert!(text.contains(parsed.kind()), "{text}");
        }
        assert!(matches!(
            ClientMsg::parse(r#"{"type":"ping","t":1764421234000}"#, LIMIT),
            Ok(ClientMsg::Ping { .. })
        ));
    }

    #[test]
    fn bad_frames_get_exact_codes() {
        let cases = [
            ("not json", "malformed_message"),
            ("[1,2]", "malformed_message"),
            (r#"{"uci":"e2e4"}"#, "unknown_message_type"),
            (r#"{"type":7}"#, "unknown_message_type"),
            (r#"{"type":"teleport"}"#, "unknown_message_type"),
            (r#"{"type":"move","uci":"e2e4"}"#, "malformed_message"),
            (
                r#"{"type":"move","uci":"e2e4","ply":-1}"#,
                "malformed_message",
            ),
            (r#"{"type":"move","uci":5,"ply":0}"#, "malformed_message"),
        ];
        for (text, code) in cases {
            let error = ClientMsg::parse(text, LIMIT).expect_err(text);
            assert_eq!(error.code, code, "{text}: {}", error.message);
        }
        let huge = format!(r#"{{"type":"premove","uci":"{}"}}"#, "a".repeat(LIMIT));
        assert_eq!(
            ClientMsg::parse(&huge, LIMIT).expect_err("too big").code,
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
