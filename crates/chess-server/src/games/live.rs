//! One game in memory as its owner task holds it: a cache of its database
//! row, the commands that change it, what each viewer is shown, and the
//! recent broadcasts kept for clients that resume.

use std::collections::VecDeque;
use std::sync::Arc;

use chess_game::{Event, EventKind, Game, GameError, TakeBack};
use chess_rules::{ByColor, Color, UciMove};
use uuid::Uuid;

use super::view::{SharedSituation, premove_of};
use crate::clock::UnixMs;
use crate::games::model::{GameMode, GameStage, Seat};
use crate::http::time_control;
use crate::store::{GameRow, PlayerRow};
use crate::ws::protocol::{Command, EventView, MoveView, PlayerView, StateView};

/// How many recent broadcasts a game keeps for clients that resume (a
/// client further behind gets the full state, which is as correct, only
/// bigger). Each holds the situation after its change, destinations
/// included, about 1 KiB: eight cover a reconnect within four moves of
/// each side, the common case of a dropped connection, at half the memory
/// of sixteen.
pub(super) const HISTORY: usize = 8;

/// Something every socket of a game receives and renders for its seat.
#[derive(Debug)]
pub enum Outgoing {
    /// A versioned change with the situation after the command that made it.
    Event {
        version: u64,
        kind: EventKind,
        public: Option<EventView>,
        situation: Box<SharedSituation>,
    },
    /// Seats changed (a challenge was joined): every socket sends a fresh `state`.
    Resync,
    /// A rematch started: everyone goes to the new game.
    Redirect { game_id: Uuid },
    /// `color` now has a connection (a socket or an API stream) on some node,
    /// or none left anywhere. Not kept for resuming clients.
    Presence { color: Color, present: bool },
}

/// Why a command was refused; nothing changed. The socket turns it into its
/// stable wire code ([`Refusal::code`]) and message (`Display`).
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
    /// twice (a commit whose answer was lost is checked before this refusal:
    /// `Owner::outcome_of_failed_write`).
    #[error("the game could not be saved just now; send it again")]
    Unavailable,
    /// The node's writer has as many changes waiting as it may: nothing
    /// happened, the client may send the command again shortly.
    #[error("the server is saving as many changes as it can; nothing changed, try again shortly")]
    Busy,
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

/// A hosted game's state, owned by its task.
#[derive(Debug)]
pub struct Entry {
    /// The row as last written or read.
    pub row: GameRow,
    pub players: ByColor<Option<PlayerRow>>,
    pub game: Game,
    /// Recent broadcasts, for clients resuming from a version.
    pub(super) history: VecDeque<Arc<Outgoing>>,
    /// Open sockets on this node per seat colour (a local player's count under both).
    pub(super) connections: ByColor<usize>,
    /// The colours other nodes said they have connections for (Postgres);
    /// a node with none is left out.
    pub(super) remote_presence: Vec<(Uuid, ByColor<bool>)>,
}

impl Entry {
    /// A freshly loaded or created game, with no history and no sockets.
    pub fn new(row: GameRow, game: Game, players: ByColor<Option<PlayerRow>>) -> Entry {
        Entry {
            row,
            players,
            game,
            history: VecDeque::new(),
            connections: ByColor::default(),
            remote_presence: Vec::new(),
        }
    }

    /// Which colours have a connection on this node.
    pub(super) fn local_presence(&self) -> ByColor<bool> {
        ByColor::new_with(|color| *self.connections.get(color) > 0)
    }

    /// Which colours have a connection on some node (a socket or an API
    /// stream; the computer never has one).
    pub fn presence(&self) -> ByColor<bool> {
        ByColor::new_with(|color| {
            *self.connections.get(color) > 0
                || self
                    .remote_presence
                    .iter()
                    .any(|(_, present)| *present.get(color))
        })
    }

    /// Keeps `outgoing` for clients that resume.
    pub(super) fn remember(&mut self, outgoing: &Arc<Outgoing>) {
        self.history.push_back(Arc::clone(outgoing));
        if self.history.len() > HISTORY {
            self.history.pop_front();
        }
    }

    /// The colour `seat` acts for: its own, or the side to move for a local player.
    pub(super) fn acting_color(&self, seat: Seat) -> Color {
        match seat {
            Seat::White => Color::White,
            Seat::Black => Color::Black,
            Seat::Both | Seat::None => self.game.turn(),
        }
    }

    /// The acknowledgement of a move already played (a retry), if it is one.
    pub(super) fn replayed_move(&self, color: Color, uci: UciMove, ply: u32) -> Option<Applied> {
        let index = usize::try_from(ply).ok()?;
        let saved = self.game.moves().get(index)?;
        let mover = self.game.position_at(ply)?.turn();
        if saved.uci != uci.to_string() || mover != color {
            return None;
        }
        let version = self
            .history
            .iter()
            .find_map(|outgoing| match outgoing.as_ref() {
                Outgoing::Event {
                    version,
                    kind: EventKind::Move { ply: played, .. },
                    ..
                } if *played == ply => Some(*version),
                _ => None,
            })
            .unwrap_or_else(|| self.game.version());
        Some(Applied::Ack { ply, uci, version })
    }

    /// The broadcasts after `version`, or `None` when they are not all kept
    /// (the client then gets the full state).
    pub fn events_after(&self, version: u64) -> Option<Vec<Arc<Outgoing>>> {
        let current = self.game.version();
        if version == current {
            return Some(Vec::new());
        }
        if version > current {
            return None;
        }
        let oldest = self
            .history
            .iter()
            .find_map(|outgoing| match outgoing.as_ref() {
                Outgoing::Event { version, .. } => Some(*version),
                _ => None,
            })?;
        if oldest > version + 1 {
            return None;
        }
        Some(
            self.history
                .iter()
                .filter(|outgoing| matches!(outgoing.as_ref(), Outgoing::Event { version: v, .. } if *v > version))
                .cloned()
                .collect(),
        )
    }

    /// The seat `player` holds in this game.
    pub fn seat_of(&self, player: Option<Uuid>) -> Seat {
        let Some(player) = player else {
            return Seat::None;
        };
        let holds = |color: Color| {
            self.players
                .get(color)
                .as_ref()
                .is_some_and(|p| p.id == player)
        };
        match (holds(Color::White), holds(Color::Black)) {
            (true, true) => Seat::Both,
            (true, false) => Seat::White,
            (false, true) => Seat::Black,
            (false, false) => Seat::None,
        }
    }

    /// The player of `color` as `viewer` sees them.
    pub fn player_view(&self, color: Color, viewer: Option<Uuid>) -> Option<PlayerView> {
        self.players.get(color).as_ref().map(|player| PlayerView {
            id: player.id,
            name: player.name.clone(),
            kind: player.kind,
            level: if player.kind == crate::games::model::PlayerKind::Computer {
                self.row
                    .computer_level
                    .and_then(|level| u8::try_from(level).ok())
            } else {
                None
            },
            is_you: viewer == Some(player.id),
        })
    }

    /// The full state for `viewer` at server time `now`.
    pub fn state_for(&self, viewer: Option<Uuid>, now: UnixMs) -> StateView {
        let seat = self.seat_of(viewer);
        let situation = SharedSituation::of(&self.game, self.row.mode, self.row.status, now);
        // Only the holder of a single seat has premoves (a local player never does).
        let premove = match seat {
            Seat::White => premove_of(&self.game, Color::White),
            Seat::Black => premove_of(&self.game, Color::Black),
            Seat::Both | Seat::None => None,
        };
        StateView {
            game_id: self.row.id,
            version: self.game.version(),
            mode: self.row.mode,
            players: ByColor::new_with(|color| self.player_view(color, viewer)),
            seat,
            time_control: time_control::to_json(self.game.time_control()),
            initial_fen: self.game.spec().initial_position().fen(),
            moves: self
                .game
                .moves()
                .iter()
                .map(|mv| MoveView {
                    uci: mv.uci.clone(),
                    san: mv.san.clone(),
                })
                .collect(),
            situation: situation.for_seat(seat),
            premove,
            rematch_game_id: self.row.rematch_id,
            server_time: now.millis(),
        }
    }

    /// Whether the game is being played (not open, not over).
    pub fn is_playing(&self) -> bool {
        self.row.status == GameStage::Playing && !self.game.is_over()
    }
}

pub(super) fn version_i64(version: u64) -> i64 {
    i64::try_from(version).unwrap_or(i64::MAX)
}

/// Runs one command on `game` for `color`.
pub(super) fn run(
    game: &mut Game,
    mode: GameMode,
    color: Color,
    command: &Command,
    now: UnixMs,
) -> Result<Vec<Event>, Refusal> {
    // The game counts in plain milliseconds.
    let now = now.millis();
    let events = match command {
        Command::Move { uci, ply } => game.play(color, *uci, Some(*ply), now)?,
        Command::Premove { uci, charge_ms } => {
            if mode != GameMode::Online {
                return Err(Refusal::NotOnline {
                    feature: "premoves",
                });
            }
            game.set_premove(
                color,
                uci.from(),
                uci.to(),
                uci.promotion(),
                *charge_ms,
                now,
            )?
        }
        Command::CancelPremove => game.cancel_premove(color, now)?,
        Command::Resign => game.resign(color, now)?,
        Command::Abort => game.abort(now)?,
        Command::DrawOffer | Command::DrawAccept | Command::DrawDecline | Command::DrawWithdraw
            if mode != GameMode::Online =>
        {
            return Err(Refusal::NotOnline {
                feature: "draw offers",
            });
        }
        Command::DrawOffer => game.offer_draw(color, now)?,
        Command::DrawAccept => game.accept_draw(color, now)?,
        Command::DrawDecline => game.decline_draw(color, now)?,
        Command::DrawWithdraw => game.withdraw_draw(color, now)?,
        Command::RematchOffer => {
            let mut events = game.offer_rematch(color, now)?;
            // One person holds both seats, or the other seat is the computer,
            // which always agrees: the offer is accepted at once.
            if mode != GameMode::Online && game.rematch_spec().is_none() {
                events.extend(game.accept_rematch(color.other(), now)?);
            }
            events
        }
        Command::RematchAccept => game.accept_rematch(color, now)?,
        Command::RematchDecline => game.decline_rematch(color, now)?,
        Command::RematchWithdraw => game.withdraw_rematch(color, now)?,
        Command::Takeback => {
            let which = match mode {
                GameMode::Computer => TakeBack::ToTurnOf(color),
                GameMode::Local | GameMode::Online => TakeBack::LastMove,
            };
            game.take_back(which, now)?
        }
    };
    Ok(events)
}
