//! What a player asks of a live game, and what becomes of it.
//!
//! A [`Command`] is run by the game's owner for the player who sent it; it
//! is applied, committed and broadcast ([`Applied`]), or refused with a
//! [`Refusal`] and nothing changes. The game socket's messages deserialize
//! straight into commands (they share their `type` names,
//! `docs/protocol.md`); other edges (the lichess API) build them.

use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};

use chess_game::GameError;
use chess_rules::UciMove;
use serde::Deserialize;

/// One connection to a game on this node (a socket, an API stream): unique
/// among this process's connections. A premove belongs to the connection
/// that set it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConnectionId(NonZeroU64);

impl ConnectionId {
    /// A connection id never handed out before in this process.
    pub fn next() -> ConnectionId {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        ConnectionId(NonZeroU64::new(id).unwrap_or(NonZeroU64::MIN))
    }
}

/// A player's intent in a game, parsed (a move is a [`UciMove`] from here on).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Command {
    /// Play `uci` as the move with index `ply` (a resend of a move already
    /// played at that ply is acknowledged again, not played twice).
    Move {
        uci: UciMove,
        ply: u32,
    },
    /// Play `uci` in the position as it stands, whatever its ply (clients
    /// that do not count plies, such as the lichess API's).
    #[serde(skip)]
    MoveNow {
        uci: UciMove,
    },
    Premove {
        uci: UciMove,
        /// What playing the premove costs its player's clock: the round trip
        /// the connection measured. Set by the server, never read from the
        /// client.
        #[serde(skip)]
        charge_ms: u32,
        /// The connection that sets it, which the premove then belongs to:
        /// it is played only while that connection is attached to the game,
        /// by the node it is attached to. Set by the server.
        #[serde(skip)]
        connection: Option<ConnectionId>,
    },
    CancelPremove,
    Resign,
    Abort,
    DrawOffer,
    DrawAccept,
    DrawDecline,
    DrawWithdraw,
    /// Yes or no to a draw, whatever is on the table: yes offers one or
    /// accepts the opponent's, no declines the opponent's or withdraws one's
    /// own; nothing happens when there is nothing to say it to.
    #[serde(skip)]
    AnswerDraw {
        yes: bool,
    },
    RematchOffer,
    RematchAccept,
    RematchDecline,
    RematchWithdraw,
    Takeback,
    /// Halve one's own clock for the arena's extra point (before both
    /// sides have moved, in a game that allows it).
    Berserk,
}

/// Why a command was refused; nothing changed. Edges turn it into their
/// own answer with its stable code ([`Refusal::code`]) and message
/// (`Display`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The rules of the game refused it.
    #[error(transparent)]
    Rules(#[from] GameError),
    #[error("spectators cannot act in a game")]
    NotAPlayer,
    #[error("the game is waiting for its second player")]
    NotStarted,
    /// Draw offers and premoves exist only between two people.
    #[error("{feature} are for games between two people")]
    NotOnline { feature: &'static str },
    /// Settling the clock ended the game before the move could be played.
    #[error("the game ended before the move arrived")]
    MoveTooLate,
    /// Another node changed the game first; it was reloaded.
    #[error("the game changed meanwhile; it was reloaded, try again")]
    Conflict,
    /// The database could not store the change, or could not confirm it:
    /// the client sends the command again. A move is idempotent by ply, so a
    /// resend of one that was stored after all is acknowledged, not played
    /// twice (a commit whose answer was lost is checked before this refusal).
    #[error("the game could not be saved just now; send it again")]
    Unavailable,
    /// The node's writer has as many changes waiting as it may: nothing
    /// happened, the client may send the command again shortly.
    #[error("the server is saving as many changes as it can; nothing changed, try again shortly")]
    Busy,
}

impl Refusal {
    /// The stable code (`docs/protocol.md`).
    pub const fn code(&self) -> &'static str {
        match self {
            Refusal::Rules(error) => error.code(),
            Refusal::NotAPlayer => "not_a_player",
            Refusal::NotStarted => "not_started",
            Refusal::NotOnline { .. } => "not_online",
            Refusal::MoveTooLate => "game_over",
            Refusal::Conflict => "conflict",
            Refusal::Unavailable => "unavailable",
            Refusal::Busy => "busy",
        }
    }
}

/// A command's outcome for the connection that sent it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Applied {
    /// Done (events were broadcast).
    Done,
    /// A move was stored: acknowledge it.
    Ack {
        ply: u32,
        uci: UciMove,
        version: u64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_have_their_own_codes() {
        assert_eq!(
            Refusal::NotOnline {
                feature: "draw offers"
            }
            .code(),
            "not_online"
        );
        assert_eq!(
            Refusal::from(GameError::DrawOfferTooEarly).code(),
            "draw_offer_too_early"
        );
        assert_eq!(Refusal::Unavailable.code(), "unavailable");
        assert_eq!(Refusal::MoveTooLate.code(), "game_over");
    }

    #[test]
    fn moves_the_server_makes_cannot_be_sent() {
        for text in [
            r#"{"type":"move_now","uci":"e2e4"}"#,
            r#"{"type":"answer_draw","yes":true}"#,
        ] {
            assert!(serde_json::from_str::<Command>(text).is_err(), "{text}");
        }
        let sent: Command =
            serde_json::from_str(r#"{"type":"move","uci":"e2e4","ply":0}"#).expect("a move");
        assert_eq!(
            sent,
            Command::Move {
                uci: "e2e4".parse().expect("uci"),
                ply: 0
            }
        );
    }
}
