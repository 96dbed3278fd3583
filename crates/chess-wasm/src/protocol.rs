//! The game socket's messages (`docs/protocol.md`, "Game socket") for a
//! game played in the browser: the same shapes the server writes, so the
//! game page reads a local game as it reads an online one.

use chess_game::{Event, EventKind, Game, RematchState, TimeControl};
use chess_rules::{Bitboard, Color, Position, Square};
use serde::Serialize;
use serde_json::{Value, json};

use crate::opponent::Opponent;

/// One message to the page, as JSON.
pub type Message = Value;

/// A side as the page shows it.
#[derive(Clone, Debug, Serialize)]
pub struct PlayerView {
    pub name: String,
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<u8>,
    pub is_you: bool,
}

/// Both sides.
#[derive(Clone, Debug, Serialize)]
pub struct Players {
    pub white: PlayerView,
    pub black: PlayerView,
}

impl Players {
    /// The sides of a game against `opponent`: on one screen the person
    /// holds both; against the computer, the computer is named by its level
    /// as on the server ("Computer (level 2)").
    pub fn of(opponent: Opponent) -> Players {
        let person = |name: &str| PlayerView {
            name: name.to_owned(),
            kind: "guest",
            level: None,
            is_you: true,
        };
        match opponent {
            Opponent::OneScreen => Players {
                white: person("White"),
                black: person("Black"),
            },
            Opponent::Computer { level, color } => {
                let computer = PlayerView {
                    name: format!("Computer (level {level})"),
                    kind: "computer",
                    level: Some(level),
                    is_you: false,
                };
                let you = person("You");
                match color {
                    Color::White => Players {
                        white: computer,
                        black: you,
                    },
                    Color::Black => Players {
                        white: you,
                        black: computer,
                    },
                }
            }
        }
    }
}

fn mode(opponent: Opponent) -> &'static str {
    match opponent {
        Opponent::OneScreen => "local",
        Opponent::Computer { .. } => "computer",
    }
}

fn seat(opponent: Opponent) -> &'static str {
    match opponent.computer_color() {
        None => "both",
        Some(Color::White) => "black",
        Some(Color::Black) => "white",
    }
}

/// The time control as the protocol writes it.
pub fn time_control_json(tc: TimeControl) -> Value {
    match (tc.initial_ms(), tc.increment_ms()) {
        (Some(initial_ms), Some(increment_ms)) => {
            json!({ "kind": "clock", "initial_ms": initial_ms, "increment_ms": increment_ms })
        }
        _ => json!({ "kind": "correspondence" }),
    }
}

/// Destinations by origin square: `{"e2": ["e3", "e4"]}`.
fn dests(pairs: Vec<(Square, Bitboard)>) -> Value {
    let map = pairs
        .into_iter()
        .filter(|(_, to)| to.any())
        .map(|(from, to)| {
            let names: Vec<Value> = to
                .into_iter()
                .map(|square| Value::from(square.name()))
                .collect();
            (from.name().to_owned(), Value::Array(names))
        })
        .collect();
    Value::Object(map)
}

fn check_square(position: &Position) -> Option<&'static str> {
    position
        .is_check()
        .then(|| position.board().king_of(position.turn()))
        .flatten()
        .map(Square::name)
}

/// What every state and event carries about the situation of `game` at `now_ms`.
fn situation(game: &Game, now_ms: u64) -> serde_json::Map<String, Value> {
    let position = game.position();
    let over = game.is_over();
    let status = if over { "finished" } else { "playing" };
    let clocks = game.remaining_ms(now_ms).map(|remaining| {
        json!({
            "white_ms": remaining.white,
            "black_ms": remaining.black,
            "running": game.running_clock(),
            "as_of": now_ms,
        })
    });
    let result = game
        .result()
        .map(|result| json!({ "winner": result.winner, "reason": result.reason.code() }));
    let rematch = match game.rematch() {
        RematchState::Offered(color) => Some(color),
        RematchState::None | RematchState::Accepted => None,
    };
    let value = json!({
        "fen": position.fen(),
        "turn": position.turn(),
        "check": check_square(position),
        "status": status,
        "clocks": clocks,
        "first_move_deadline": Value::Null,
        "dests": if over { json!({}) } else { dests(position.legal_destinations()) },
        "premove_dests": {},
        "offers": { "draw": game.draw_offer(), "rematch": rematch },
        "result": result,
    });
    match value {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

/// The `state` message: everything the page starts from.
pub fn state(game: &Game, id: &str, opponent: Opponent, players: &Players, now_ms: u64) -> Message {
    let moves: Vec<Value> = game
        .moves()
        .iter()
        .map(|saved| json!({ "uci": saved.uci, "san": saved.san }))
        .collect();
    let mut message = json!({
        "type": "state",
        "game_id": id,
        "version": game.version(),
        "mode": mode(opponent),
        "rated": false,
        "players": players,
        "seat": seat(opponent),
        "time_control": time_control_json(game.time_control()),
        "mandatory": false,
        "berserk": Value::Null,
        "initial_fen": game.spec().initial_position().fen(),
        "moves": moves,
        "premove": Value::Null,
        "rematch_game_id": Value::Null,
        "server_time": now_ms,
    });
    if let Value::Object(map) = &mut message {
        map.extend(situation(game, now_ms));
    }
    message
}

/// The `event` message of `event`, with the situation after it; `None` for
/// events the page is not shown (premoves, which a local game has none of).
pub fn event(game: &Game, event: &Event, now_ms: u64) -> Option<Message> {
    let payload = match &event.kind {
        EventKind::Move {
            ply,
            color,
            uci,
            san,
            premove,
            ..
        } => {
            json!({ "kind": "move", "ply": ply, "uci": uci, "san": san, "color": color, "premove": premove })
        }
        EventKind::TakeBack { ply, .. } => json!({ "kind": "takeback", "moves": ply }),
        EventKind::GameEnded { winner, reason, .. } => {
            json!({ "kind": "ended", "result": { "winner": winner, "reason": reason.code() } })
        }
        EventKind::DrawOffered { color } => json!({ "kind": "draw_offered", "color": color }),
        EventKind::DrawDeclined { color, by_move } => {
            json!({ "kind": "draw_declined", "color": color, "by_move": by_move })
        }
        EventKind::DrawWithdrawn { color } => json!({ "kind": "draw_withdrawn", "color": color }),
        EventKind::DrawAccepted { color } => json!({ "kind": "draw_accepted", "color": color }),
        EventKind::Berserk { color, .. } => json!({ "kind": "berserk", "color": color }),
        EventKind::PremoveSet { .. }
        | EventKind::PremoveCancelled { .. }
        | EventKind::PremoveDropped { .. }
        | EventKind::RematchOffered { .. }
        | EventKind::RematchDeclined { .. }
        | EventKind::RematchWithdrawn { .. }
        | EventKind::RematchAccepted { .. } => return None,
    };
    let mut message = json!({ "type": "event", "version": event.version, "event": payload });
    if let Value::Object(map) = &mut message {
        map.extend(situation(game, now_ms));
    }
    Some(message)
}

/// The answer to a move the game accepted.
pub fn ack(ply: u32, uci: &str, version: u64) -> Message {
    json!({ "type": "ack", "ply": ply, "uci": uci, "version": version })
}

/// A refused command.
pub fn error(code: &str, message: &str) -> Message {
    json!({ "type": "error", "code": code, "message": message })
}

/// The answer to a ping.
pub fn pong(t: Option<f64>, now_ms: u64) -> Message {
    json!({ "type": "pong", "t": t, "server_time": now_ms, "rtt_ms": 0 })
}

/// Go to another game (a rematch).
pub fn redirect(url: &str) -> Message {
    json!({ "type": "redirect", "url": url })
}
