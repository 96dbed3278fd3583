//! Who plays the other side of a game in the browser, as the saved game
//! and the page's messages name it.

use chess_engine::Level;
use chess_rules::Color;
use serde::{Deserialize, Serialize};

/// Who plays the other side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Opponent {
    /// Both sides are played on this screen.
    OneScreen,
    /// The computer at `level` (1 or 2) plays `color`.
    Computer { level: u8, color: Color },
}

impl Opponent {
    /// The colour the computer plays, if it plays.
    pub fn computer_color(self) -> Option<Color> {
        match self {
            Opponent::OneScreen => None,
            Opponent::Computer { color, .. } => Some(color),
        }
    }

    /// The computer's level, if it plays.
    pub fn computer_level(self) -> Option<Level> {
        match self {
            Opponent::OneScreen => None,
            Opponent::Computer { level, .. } => Level::from_number(level),
        }
    }

    /// The opponent of the next game: the computer swaps colours.
    pub(crate) fn rematch(self) -> Opponent {
        match self {
            Opponent::OneScreen => Opponent::OneScreen,
            Opponent::Computer { level, color } => Opponent::Computer {
                level,
                color: color.other(),
            },
        }
    }
}
