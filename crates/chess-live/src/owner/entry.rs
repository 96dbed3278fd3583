//! One game in memory as its owner task holds it: a cache of its database
//! row, who is connected to it, what each viewer is shown, and the recent
//! broadcasts kept for clients that resume.

use std::collections::VecDeque;
use std::sync::Arc;

use chess_game::{EventKind, Game, Premove};
use chess_rules::{ByColor, Color, UciMove};
use uuid::Uuid;

use crate::clock::UnixMs;
use crate::command::{Applied, ConnectionId};
use crate::model::{GameStage, Seat};
use crate::rows::{GameRow, PlayerRow};
use crate::store::{GameStore, StoreResult};
use crate::stored;
use crate::time_control;
use crate::view::{
    GameSnapshot, MoveView, Outgoing, PlayerView, SeatedSituation, SharedSituation, StateView,
    premove_of, public_situation, seat_of, status_of,
};

/// How many recent broadcasts a game keeps for clients that resume (a
/// client further behind gets the full state, which is as correct, only
/// bigger). Each holds the situation after its change, destinations
/// included, about 1 KiB: eight cover a reconnect within four moves of
/// each side, the common case of a dropped connection, at half the memory
/// of sixteen.
pub(crate) const HISTORY: usize = 8;

/// A hosted game's state, owned by its task.
#[derive(Debug)]
pub(crate) struct Entry {
    /// The row as last written or read.
    pub row: GameRow,
    pub players: ByColor<Option<PlayerRow>>,
    pub game: Game,
    /// Recent broadcasts, for clients resuming from a version.
    pub history: VecDeque<Arc<Outgoing>>,
    /// The connections open on this node, each with the seat it holds.
    pub connections: Vec<(ConnectionId, Seat)>,
    /// The connection on this node that set each side's stored premove, and
    /// the premove it set: a premove is played here only while it is still
    /// the one stored and its connection is still attached.
    pub premove_owners: ByColor<Option<(ConnectionId, Premove)>>,
    /// The colours other nodes said they have connections for (shared
    /// stores); a node with none is left out.
    pub remote_presence: Vec<(Uuid, ByColor<bool>)>,
}

impl Entry {
    /// A freshly loaded or created game, with no history and no connections.
    pub fn new(row: GameRow, game: Game, players: ByColor<Option<PlayerRow>>) -> Entry {
        Entry {
            row,
            players,
            game,
            history: VecDeque::new(),
            connections: Vec::new(),
            premove_owners: ByColor::default(),
            remote_presence: Vec::new(),
        }
    }

    /// Reads game `id` with its moves and players from `store`; `None` if
    /// there is no such game.
    ///
    /// # Errors
    /// The store's failure, or a corrupt game.
    pub async fn load(store: &dyn GameStore, id: Uuid) -> StoreResult<Option<Entry>> {
        let Some(row) = store.game(id).await? else {
            return Ok(None);
        };
        let moves = store.moves_from(id, 0).await?;
        let game = stored::restore(&row.state, &moves)?;
        let mut players = ByColor::<Option<PlayerRow>>::default();
        for (color, player) in [(Color::White, row.white_id), (Color::Black, row.black_id)] {
            if let Some(player) = player {
                *players.get_mut(color) = store.player(player).await?;
            }
        }
        Ok(Some(Entry::new(row, game, players)))
    }

    /// Which colours have a connection on this node.
    pub fn local_presence(&self) -> ByColor<bool> {
        ByColor::new_with(|color| self.connections.iter().any(|(_, seat)| seat.holds(color)))
    }

    /// Whether the premove stored for `color` was set by a connection still
    /// attached here: only then is it this node's to play.
    pub fn owns_premove(&self, color: Color) -> bool {
        let Some((connection, premove)) = *self.premove_owners.get(color) else {
            return false;
        };
        self.game.premove(color) == Some(premove)
            && self.connections.iter().any(|(open, _)| *open == connection)
    }

    /// Which colours have a connection on some node (a socket or an API
    /// stream; the computer never has one).
    pub fn presence(&self) -> ByColor<bool> {
        let local = self.local_presence();
        ByColor::new_with(|color| {
            *local.get(color)
                || self
                    .remote_presence
                    .iter()
                    .any(|(_, present)| *present.get(color))
        })
    }

    /// Keeps `outgoing` for clients that resume.
    pub fn remember(&mut self, outgoing: &Arc<Outgoing>) {
        self.history.push_back(Arc::clone(outgoing));
        if self.history.len() > HISTORY {
            self.history.pop_front();
        }
    }

    /// The colour `seat` acts for: its own, or the side to move for a local player.
    pub fn acting_color(&self, seat: Seat) -> Color {
        match seat {
            Seat::White => Color::White,
            Seat::Black => Color::Black,
            Seat::Both | Seat::None => self.game.turn(),
        }
    }

    /// The acknowledgement of a move already played (a retry), if it is one.
    pub fn replayed_move(&self, color: Color, uci: UciMove, ply: u32) -> Option<Applied> {
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
        seat_of(&self.players, player)
    }

    /// The computer's level, in a game against it.
    fn computer_level(&self) -> Option<u8> {
        self.row
            .computer_level
            .and_then(|level| u8::try_from(level).ok())
    }

    /// The full state for `viewer` at server time `now`.
    pub fn state_for(&self, viewer: Option<Uuid>, now: UnixMs) -> StateView {
        let seat = self.seat_of(viewer);
        let level = self.computer_level();
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
            rated: self.game.spec().rated(),
            players: ByColor::new_with(|color| {
                self.players
                    .get(color)
                    .as_ref()
                    .map(|player| PlayerView::of(player, level, viewer))
            }),
            seat,
            time_control: time_control::to_json(self.game.time_control()),
            mandatory: self.game.spec().mandatory(),
            berserk: self
                .game
                .spec()
                .berserkable()
                .then(|| ByColor::new_with(|color| self.game.berserked(color))),
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
            situation: SeatedSituation {
                shared: SharedSituation::of(&self.game, self.row.mode, self.row.status, now),
                seat,
            },
            premove,
            rematch_game_id: self.row.rematch_id,
            server_time: now.millis(),
        }
    }

    /// The game copied out for a reader, at server time `now`.
    pub fn snapshot(&self, now: UnixMs) -> GameSnapshot {
        GameSnapshot {
            id: self.row.id,
            version: self.game.version(),
            mode: self.row.mode,
            rated: self.game.spec().rated(),
            players: self.players.clone(),
            computer_level: self.computer_level(),
            time_control: self.game.time_control(),
            initial_position: self.game.spec().initial_position().clone(),
            created_at: self.row.created_at,
            started_at: UnixMs::from_millis(self.game.created_at_ms()),
            updated_at: self.row.updated_at,
            moves: self.game.moves().to_vec(),
            situation: public_situation(&self.game, self.row.status, now),
            rematch_id: self.row.rematch_id,
            presence: self.presence(),
        }
    }

    /// Whether the game is being played (not open, not over).
    pub fn is_playing(&self) -> bool {
        self.row.status == GameStage::Playing && !self.game.is_over()
    }

    /// Whether the game is over.
    pub fn is_over(&self) -> bool {
        status_of(&self.game, self.row.status) == GameStage::Finished
    }
}
