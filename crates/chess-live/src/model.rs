//! The live games' small vocabulary: who a player is, how a game's seats
//! are held, where it stands and which seats a connection holds. The first
//! three are stored as lowercase strings ([`PlayerKind::as_str`] and
//! `FromStr`).

use std::fmt;
use std::str::FromStr;

use chess_rules::Color;
use serde::{Deserialize, Serialize};

/// Generates `as_str`, `Display` and `FromStr` for a fieldless enum whose
/// stored form is given per variant.
macro_rules! string_enum {
    ($name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        impl $name {
            /// The stored and wire form.
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl FromStr for $name {
            type Err = UnknownValue;
            fn from_str(text: &str) -> Result<$name, UnknownValue> {
                match text {
                    $($text => Ok($name::$variant),)+
                    _ => Err(UnknownValue(text.to_owned())),
                }
            }
        }
    };
}

/// A stored string that names no known value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown value {0:?}")]
pub struct UnknownValue(pub String);

/// Who a player is: a guest (cookie only), an account (username and password) or the computer.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlayerKind {
    Guest,
    Account,
    Computer,
}
string_enum!(PlayerKind { Guest => "guest", Account => "account", Computer => "computer" });

/// How the seats of a game are held.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GameMode {
    /// Two people, each in their own browser.
    Online,
    /// One person holds both seats (two players on one screen).
    Local,
    /// The server's engine holds one seat.
    Computer,
}
string_enum!(GameMode { Online => "online", Local => "local", Computer => "computer" });

/// Where a hosted game stands, as stored and listed (the wire's `status`):
/// waiting for a second player, being played, or over. Not to be confused
/// with `chess_game::GameStatus`, which tells the rules' phase of a game
/// that both players joined.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GameStage {
    /// A challenge whose second seat is still empty.
    Open,
    /// Both seats taken, no result yet.
    Playing,
    /// Over (including aborted).
    Finished,
}
string_enum!(GameStage { Open => "open", Playing => "playing", Finished => "finished" });

/// The seats a connection holds in one game.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Seat {
    White,
    Black,
    /// Both seats: a one-person (local) game.
    Both,
    /// A spectator.
    None,
}

impl Seat {
    /// Whether this seat may act for `color`.
    pub const fn holds(self, color: Color) -> bool {
        matches!(
            (self, color),
            (Seat::Both, _) | (Seat::White, Color::White) | (Seat::Black, Color::Black)
        )
    }

    /// The seat holding exactly one colour.
    pub const fn of(color: Color) -> Seat {
        match color {
            Color::White => Seat::White,
            Color::Black => Seat::Black,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_forms_round_trip() {
        for mode in [GameMode::Online, GameMode::Local, GameMode::Computer] {
            assert_eq!(mode.as_str().parse::<GameMode>(), Ok(mode));
        }
        for status in [GameStage::Open, GameStage::Playing, GameStage::Finished] {
            assert_eq!(status.as_str().parse::<GameStage>(), Ok(status));
        }
        assert!("Online".parse::<GameMode>().is_err());
    }

    #[test]
    fn seats_hold_their_colours() {
        assert!(Seat::Both.holds(Color::Black));
        assert!(Seat::White.holds(Color::White));
        assert!(!Seat::White.holds(Color::Black));
        assert!(!Seat::None.holds(Color::White));
    }
}
