//! A game played in the browser: two people on one screen, or a person
//! against the computer (the engine runs beside it, in a worker).
//!
//! It is the game crate's [`Game`], the very rules the server enforces, fed
//! with the page's clock. It speaks the game socket's language
//! (`docs/protocol.md`, "Game socket"): it takes the messages the game page
//! sends a server and answers with the messages a server would send, so the
//! page plays a local game with the same code that plays an online one.

use chess_engine::Level;
use chess_game::{
    Event, Game, GameError, GameSettings, GameSpec, SavedGame, TakeBack, TimeControl,
};
use chess_rules::Color;
use chess_rules::pgn::{PgnGame, PgnResult};
use serde::{Deserialize, Serialize};

use crate::opponent::Opponent;
use crate::protocol::{self, Message, Players};

/// Why a local game could not be made or read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LocalError {
    /// The computer's level is not 1 or 2.
    BadLevel(u8),
    /// The time control text does not parse (`3+2`, `correspondence`).
    BadTimeControl(String),
    /// The saved text is not a saved local game.
    BadSave(String),
    /// The saved game does not replay.
    Corrupt(String),
}

impl std::fmt::Display for LocalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LocalError::BadLevel(level) => write!(f, "the computer's level is 1 or 2, not {level}"),
            LocalError::BadTimeControl(reason) => write!(f, "bad time control: {reason}"),
            LocalError::BadSave(reason) => write!(f, "not a saved game: {reason}"),
            LocalError::Corrupt(reason) => write!(f, "the saved game does not replay: {reason}"),
        }
    }
}

impl std::error::Error for LocalError {}

/// A command the page sends, in the game socket's shape.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Command {
    /// Asks for the whole state (the page's first message, and after a reload).
    Hello,
    Ping {
        #[serde(default)]
        t: Option<f64>,
    },
    Move {
        uci: String,
        #[serde(default)]
        ply: Option<u32>,
    },
    Resign,
    Abort,
    Takeback,
    /// A new game: on one screen the same sides, against the computer with
    /// the colours swapped.
    RematchOffer,
    /// Anything else the online page may send (premoves, draw offers):
    /// refused with a clear error, since nobody across the network answers.
    #[serde(other)]
    Unsupported,
}

/// The stored form of a local game, as this browser keeps it.
#[derive(Debug, Serialize, Deserialize)]
struct SavedLocal {
    id: String,
    opponent: Opponent,
    game: SavedGame,
}

/// A game on one screen or against the computer.
#[derive(Debug)]
pub struct LocalGame {
    id: String,
    opponent: Opponent,
    game: Game,
    /// Set once the rematch has been made, to the new game.
    rematch: Option<Box<LocalGame>>,
}

impl LocalGame {
    /// A new game `id` against `opponent` on `time_control` (`3+2`,
    /// `correspondence`), created at `now_ms`.
    ///
    /// # Errors
    /// A computer level other than 1 or 2, or a time control that does not parse.
    pub fn new(
        id: String,
        opponent: Opponent,
        time_control: &str,
        now_ms: u64,
    ) -> Result<LocalGame, LocalError> {
        if let Opponent::Computer { level, .. } = opponent
            && Level::from_number(level).is_none()
        {
            return Err(LocalError::BadLevel(level));
        }
        let time_control: TimeControl =
            time_control
                .parse()
                .map_err(|err: chess_game::TimeControlError| {
                    LocalError::BadTimeControl(err.to_string())
                })?;
        Ok(LocalGame::start(id, opponent, time_control, now_ms))
    }

    fn start(id: String, opponent: Opponent, time_control: TimeControl, now_ms: u64) -> LocalGame {
        let spec = GameSpec::standard(time_control).with_takeback(true);
        LocalGame {
            id,
            opponent,
            game: Game::new(spec, local_settings(), now_ms),
            rematch: None,
        }
    }

    /// The game saved by [`LocalGame::save`].
    ///
    /// # Errors
    /// Text that is not a saved game, or a saved game that does not replay
    /// (edited by hand, or from an incompatible version).
    pub fn restore(text: &str) -> Result<LocalGame, LocalError> {
        let saved: SavedLocal =
            serde_json::from_str(text).map_err(|err| LocalError::BadSave(err.to_string()))?;
        if let Some(level) = match saved.opponent {
            Opponent::Computer { level, .. } => Some(level),
            Opponent::OneScreen => None,
        } && Level::from_number(level).is_none()
        {
            return Err(LocalError::BadLevel(level));
        }
        let game = Game::restore(saved.game).map_err(|err| LocalError::Corrupt(err.to_string()))?;
        Ok(LocalGame {
            id: saved.id,
            opponent: saved.opponent,
            game,
            rematch: None,
        })
    }

    /// The game as text to keep (JSON), read back by [`LocalGame::restore`].
    pub fn save(&self) -> String {
        let saved = SavedLocal {
            id: self.id.clone(),
            opponent: self.opponent,
            game: self.game.saved().clone(),
        };
        serde_json::to_string(&saved).unwrap_or_default()
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn opponent(&self) -> Opponent {
        self.opponent
    }

    pub fn game(&self) -> &Game {
        &self.game
    }

    /// The rematch made by the last [`Command::RematchOffer`], to be saved
    /// and opened by the page.
    pub fn take_rematch(&mut self) -> Option<LocalGame> {
        self.rematch.take().map(|game| *game)
    }

    /// The whole state, as the socket's `state` message.
    pub fn state(&self, now_ms: u64) -> Message {
        protocol::state(&self.game, &self.id, self.opponent, &self.players(), now_ms)
    }

    /// Plays `command` from the page at `now_ms`: the messages to show.
    /// A command the game refuses answers an `error` message, as a server
    /// does, and changes nothing.
    pub fn command(
        &mut self,
        command: &Command,
        now_ms: u64,
        new_id: impl FnOnce() -> String,
    ) -> Vec<Message> {
        let result = match command {
            Command::Hello => return vec![self.state(now_ms)],
            Command::Ping { t } => return vec![protocol::pong(*t, now_ms)],
            Command::Move { uci, ply } => self.play_person(uci, *ply, now_ms),
            Command::Resign => self.game.resign(self.resigner(), now_ms),
            Command::Abort => self.game.abort(now_ms),
            Command::Takeback => self.game.take_back(self.takeback_kind(), now_ms),
            Command::RematchOffer => return self.make_rematch(now_ms, new_id()),
            Command::Unsupported => {
                return vec![protocol::error(
                    "unsupported",
                    "this command needs an opponent across the network; a local game has none",
                )];
            }
        };
        match result {
            Ok(events) => {
                let mut messages = self.events(&events, now_ms);
                if let Command::Move {
                    uci,
                    ply: Some(ply),
                } = command
                {
                    messages.insert(0, protocol::ack(*ply, uci, self.game.version()));
                }
                messages
            }
            Err(err) => vec![protocol::error(err.code(), &err.to_string())],
        }
    }

    /// The computer's move `uci`, found by the engine for the position after
    /// `ply` moves (a move for an older position is stale and dropped).
    pub fn computer_move(&mut self, uci: &str, ply: u32, now_ms: u64) -> Vec<Message> {
        let Some(color) = self.opponent.computer_color() else {
            return vec![protocol::error(
                "no_computer",
                "nobody plays the computer in this game",
            )];
        };
        if ply != self.game.ply() || self.game.is_over() || self.game.turn() != color {
            return Vec::new();
        }
        match self.game.play_uci(color, uci, Some(ply), now_ms) {
            Ok(events) => self.events(&events, now_ms),
            Err(err) => vec![protocol::error(err.code(), &err.to_string())],
        }
    }

    /// The engine's search for the computer's move now, as the worker takes
    /// it (JSON of a [`crate::SearchRequest`]); `None` unless it is the
    /// computer's turn.
    pub fn computer_search(&self, now_ms: u64) -> Option<serde_json::Value> {
        let Opponent::Computer { level, color } = self.opponent else {
            return None;
        };
        if !self.computer_to_move() {
            return None;
        }
        let remaining_ms = self
            .game
            .remaining_ms(now_ms)
            .map(|clocks| *clocks.get(color));
        let moves: Vec<&str> = self
            .game
            .moves()
            .iter()
            .map(|saved| saved.uci.as_str())
            .collect();
        Some(serde_json::json!({
            "initial_fen": self.game.spec().initial_position().fen(),
            "moves": moves,
            "level": level,
            "limit": {
                "kind": "move",
                "remaining_ms": remaining_ms,
                "increment_ms": self.game.time_control().increment_ms().unwrap_or(0),
            },
        }))
    }

    /// Flags a fallen clock: the messages of the game's end, if it ended.
    pub fn check_time(&mut self, now_ms: u64) -> Vec<Message> {
        let events = self.game.check_time(now_ms);
        self.events(&events, now_ms)
    }

    /// Whether the computer is to move now.
    pub fn computer_to_move(&self) -> bool {
        !self.game.is_over() && self.opponent.computer_color() == Some(self.game.turn())
    }

    /// The game's PGN, as the server exports a game.
    pub fn pgn(&self, date: &str) -> String {
        let game = &self.game;
        let mut pgn = PgnGame::new(game.spec().initial_position().clone());
        let players = self.players();
        pgn.set_tag("Event", "Casual game");
        pgn.set_tag("Site", format!("/local/{}", self.id));
        pgn.set_tag("Date", date);
        pgn.set_tag("White", players.white.name.clone());
        pgn.set_tag("Black", players.black.name.clone());
        pgn.set_tag(
            "TimeControl",
            chess_game::pgn::time_control_tag(game.time_control()),
        );
        // The game's moves were legal when played: they replay.
        let _ = chess_game::pgn::push_moves(&mut pgn, game.moves());
        match game.result() {
            Some(result) => {
                pgn.result = if result.reason == chess_game::EndReason::Aborted {
                    PgnResult::Unknown
                } else {
                    PgnResult::from_winner(result.winner)
                };
                pgn.set_tag("Termination", result.reason.code());
            }
            None => pgn.result = PgnResult::Unknown,
        }
        pgn.to_pgn()
    }

    fn players(&self) -> Players {
        Players::of(self.opponent)
    }

    /// Who resigns: on one screen the side to move (the player whose turn it
    /// is gives up), against the computer the person.
    fn resigner(&self) -> Color {
        match self.opponent {
            Opponent::OneScreen => self.game.turn(),
            Opponent::Computer { color, .. } => color.other(),
        }
    }

    fn play_person(
        &mut self,
        uci: &str,
        ply: Option<u32>,
        now_ms: u64,
    ) -> Result<Vec<Event>, GameError> {
        let turn = self.game.turn();
        if self.opponent.computer_color() == Some(turn) {
            return Err(GameError::NotYourTurn);
        }
        self.game.play_uci(turn, uci, ply, now_ms)
    }

    /// On one screen a take-back undoes the last move; against the computer
    /// it gives the person their turn back (their move and the reply).
    fn takeback_kind(&self) -> TakeBack {
        match self.opponent {
            Opponent::OneScreen => TakeBack::LastMove,
            Opponent::Computer { color, .. } => TakeBack::ToTurnOf(color.other()),
        }
    }

    fn make_rematch(&mut self, now_ms: u64, id: String) -> Vec<Message> {
        if !self.game.is_over() {
            return vec![protocol::error(
                GameError::GameNotOver.code(),
                &GameError::GameNotOver.to_string(),
            )];
        }
        let next = LocalGame::start(
            id,
            self.opponent.rematch(),
            self.game.time_control(),
            now_ms,
        );
        let url = format!("/local/{}", next.id);
        self.rematch = Some(Box::new(next));
        vec![protocol::redirect(&url)]
    }

    fn events(&self, events: &[Event], now_ms: u64) -> Vec<Message> {
        events
            .iter()
            .filter_map(|event| protocol::event(&self.game, event, now_ms))
            .collect()
    }
}

/// No first-move deadline: nobody waits across a network, as the server's
/// own local and computer games.
fn local_settings() -> GameSettings {
    let mut settings = GameSettings::default();
    let none = &mut settings.first_move_deadline_ms;
    none.ultra_bullet = None;
    none.bullet = None;
    none.blitz = None;
    none.rapid = None;
    none.classical = None;
    none.correspondence = None;
    settings
}
