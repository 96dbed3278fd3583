//! What a game looks like from outside its owner: the situation after each
//! change (computed once per change, then shown per seat: legal
//! destinations only to the side to move, premove destinations and
//! premoves only to their own player), the full state a viewer starts from,
//! the public form of each event, and a snapshot for readers that are not
//! connections (game lists, PGN export, the lichess API).
//!
//! The views are plain data with `Serialize`: the game socket writes them
//! as they are (`docs/protocol.md`); other edges read their fields.

use chess_game::{EventKind, Game, RematchState, SavedMove, TimeControl};
use chess_rules::{Bitboard, ByColor, Color, Position, Square};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use uuid::Uuid;

use crate::clock::UnixMs;
use crate::model::{GameMode, GameStage, PlayerKind, Seat};
use crate::rows::PlayerRow;

/// A player as others see them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlayerView {
    pub id: Uuid,
    pub name: String,
    pub kind: PlayerKind,
    /// The computer's level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<u8>,
    pub is_you: bool,
}

impl PlayerView {
    /// `player` as `viewer` sees them; `level` is the computer's.
    pub fn of(player: &PlayerRow, level: Option<u8>, viewer: Option<Uuid>) -> PlayerView {
        PlayerView {
            id: player.id,
            name: player.name.clone(),
            kind: player.kind,
            level: (player.kind == PlayerKind::Computer)
                .then_some(level)
                .flatten(),
            is_you: viewer == Some(player.id),
        }
    }
}

/// Both clocks at server time `as_of`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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

/// Destinations a viewer may not see.
static NO_DESTS: Dests = Dests(Vec::new());

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
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PremoveView {
    pub uci: String,
}

/// Open offers: the colour that made each, if any.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OffersView {
    pub draw: Option<Color>,
    pub rematch: Option<Color>,
}

/// A result: the winner (none for a draw or an abort) and the ending's code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ResultView {
    pub winner: Option<Color>,
    pub reason: &'static str,
}

/// One move in the move list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MoveView {
    pub uci: String,
    pub san: String,
}

/// A versioned event's public payload.
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
    /// A player berserked (the clocks in the situation are cut).
    Berserk {
        color: Color,
    },
    Ended {
        result: ResultView,
    },
}

/// What everyone may see of the situation after a change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PublicSituation {
    pub fen: String,
    pub turn: Color,
    pub check: Option<Square>,
    pub status: GameStage,
    pub clocks: Option<ClocksView>,
    pub first_move_deadline: Option<u64>,
    pub offers: OffersView,
    pub result: Option<ResultView>,
}

impl PublicSituation {
    /// Whether the game is over.
    pub fn is_over(&self) -> bool {
        self.result.is_some() || self.status == GameStage::Finished
    }
}

/// The situation after a change, before it is shown to a seat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedSituation {
    pub public: PublicSituation,
    /// Legal destinations of the side to move.
    pub dests: Dests,
    /// Premove destinations of the waiting side.
    pub premove_dests: Dests,
}

/// The server status of `game` whose row says `stored`.
pub fn status_of(game: &Game, stored: GameStage) -> GameStage {
    if game.is_over() {
        GameStage::Finished
    } else {
        stored
    }
}

/// What everyone sees of `game` (stored as `stored`) at server time `now`.
pub(crate) fn public_situation(game: &Game, stored: GameStage, now: UnixMs) -> PublicSituation {
    let position = game.position();
    let turn = position.turn();
    let status = status_of(game, stored);
    PublicSituation {
        fen: position.fen(),
        turn,
        check: position
            .is_check()
            .then(|| position.board().king_of(turn))
            .flatten(),
        status,
        clocks: game.remaining_ms(now.millis()).map(|remaining| ClocksView {
            white_ms: remaining.white,
            black_ms: remaining.black,
            running: game.running_clock(),
            as_of: now.millis(),
        }),
        first_move_deadline: if status == GameStage::Playing {
            game.first_move_deadline()
        } else {
            None
        },
        offers: OffersView {
            draw: game.draw_offer(),
            rematch: match game.rematch() {
                RematchState::Offered(color) => Some(color),
                RematchState::None | RematchState::Accepted => None,
            },
        },
        result: game.result().map(|result| ResultView {
            winner: result.winner,
            reason: result.reason.code(),
        }),
    }
}

impl SharedSituation {
    /// The situation of `game` (a game of `mode`, stored as `stored`) at
    /// server time `now`.
    pub fn of(game: &Game, mode: GameMode, stored: GameStage, now: UnixMs) -> SharedSituation {
        let public = public_situation(game, stored, now);
        let playing = public.status == GameStage::Playing;
        let position = game.position();
        SharedSituation {
            dests: if playing {
                Dests::from_pairs(position.legal_destinations())
            } else {
                Dests::new()
            },
            premove_dests: if playing && mode == GameMode::Online {
                Dests::from_pairs(position.premove_destinations(public.turn.other()))
            } else {
                Dests::new()
            },
            public,
        }
    }

    /// What a viewer holding `seat` sees: the destinations only of the side
    /// it may move for, the premove destinations only of the waiting side's
    /// own player (a local player holds both seats and never premoves).
    pub fn for_seat(&self, seat: Seat) -> SituationView<'_> {
        let turn = self.public.turn;
        SituationView {
            public: &self.public,
            dests: if seat.holds(turn) {
                &self.dests
            } else {
                &NO_DESTS
            },
            premove_dests: if seat == Seat::of(turn.other()) {
                &self.premove_dests
            } else {
                &NO_DESTS
            },
        }
    }
}

/// The situation as one seat sees it, borrowed from the shared one: every
/// connection writes every event with it, without copying the position and
/// the destinations once per connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SituationView<'a> {
    #[serde(flatten)]
    pub public: &'a PublicSituation,
    pub dests: &'a Dests,
    pub premove_dests: &'a Dests,
}

/// A shared situation with the seat it is shown to, written as
/// [`SharedSituation::for_seat`] shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeatedSituation {
    pub shared: SharedSituation,
    pub seat: Seat,
}

impl Serialize for SeatedSituation {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.shared.for_seat(self.seat).serialize(serializer)
    }
}

/// The full snapshot of a game for one viewer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StateView {
    pub game_id: Uuid,
    pub version: u64,
    pub mode: GameMode,
    /// Whether the result changes the players' ratings.
    pub rated: bool,
    pub players: ByColor<Option<PlayerView>>,
    pub seat: Seat,
    pub time_control: serde_json::Value,
    /// A tournament's game: it cannot be aborted and has no rematch.
    pub mandatory: bool,
    /// Who has berserked, in a game that allows it (`None` otherwise).
    pub berserk: Option<ByColor<bool>>,
    pub initial_fen: String,
    pub moves: Vec<MoveView>,
    #[serde(flatten)]
    pub situation: SeatedSituation,
    pub premove: Option<PremoveView>,
    pub rematch_game_id: Option<Uuid>,
    pub server_time: u64,
}

/// What every connection of a game receives, and shows as its seat sees it.
#[derive(Debug)]
pub enum Outgoing {
    /// A versioned change with the situation after the command that made it.
    Event {
        version: u64,
        kind: EventKind,
        public: Option<EventView>,
        situation: Box<SharedSituation>,
    },
    /// Seats changed (a challenge was joined), or the game caught up with
    /// another node's change without its events: every connection starts
    /// again from the full state.
    Resync,
    /// A rematch started: everyone goes to the new game.
    Redirect { game_id: Uuid },
    /// `color` now has a connection (a socket or an API stream) on some node,
    /// or none left anywhere. Not kept for resuming clients.
    Presence { color: Color, present: bool },
}

/// The premove of `color` as its owner sees it.
pub fn premove_of(game: &Game, color: Color) -> Option<PremoveView> {
    game.premove(color).map(|premove| PremoveView {
        uci: premove.uci().to_string(),
    })
}

/// The public form of a game event; `None` for private (premove) events,
/// which go only to their owner, and for a rematch's acceptance, whose new
/// game's id only its owner knows once it is stored.
pub fn public_event(kind: &EventKind) -> Option<EventView> {
    Some(match kind {
        EventKind::Move {
            ply,
            color,
            uci,
            san,
            premove,
            ..
        } => EventView::Move {
            ply: *ply,
            uci: uci.clone(),
            san: san.clone(),
            color: *color,
            premove: *premove,
        },
        EventKind::PremoveSet { .. }
        | EventKind::PremoveCancelled { .. }
        | EventKind::PremoveDropped { .. }
        | EventKind::RematchAccepted { .. } => return None,
        EventKind::DrawOffered { color } => EventView::DrawOffered { color: *color },
        EventKind::DrawDeclined { color, by_move } => EventView::DrawDeclined {
            color: *color,
            by_move: *by_move,
        },
        EventKind::DrawWithdrawn { color } => EventView::DrawWithdrawn { color: *color },
        EventKind::DrawAccepted { color } => EventView::DrawAccepted { color: *color },
        EventKind::RematchOffered { color } => EventView::RematchOffered { color: *color },
        EventKind::RematchDeclined { color } => EventView::RematchDeclined { color: *color },
        EventKind::RematchWithdrawn { color } => EventView::RematchWithdrawn { color: *color },
        EventKind::GameEnded { winner, reason, .. } => EventView::Ended {
            result: ResultView {
                winner: *winner,
                reason: reason.code(),
            },
        },
        EventKind::TakeBack { ply, .. } => EventView::Takeback { moves: *ply },
        EventKind::Berserk { color, .. } => EventView::Berserk { color: *color },
    })
}

/// A game copied out of its owner for a reader that is not a connection: a
/// game list, a PGN export, the lichess API.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameSnapshot {
    pub id: Uuid,
    pub version: u64,
    pub mode: GameMode,
    /// Whether the result changes the players' ratings.
    pub rated: bool,
    pub players: ByColor<Option<PlayerRow>>,
    /// The computer's level, in a game against it.
    pub computer_level: Option<u8>,
    pub time_control: TimeControl,
    pub initial_position: Position,
    /// When the game (or the challenge that became it) was created.
    pub created_at: UnixMs,
    /// When its clocks and first-move deadlines started counting (a
    /// challenge starts when its second player sits down).
    pub started_at: UnixMs,
    pub updated_at: UnixMs,
    pub moves: Vec<SavedMove>,
    pub situation: PublicSituation,
    pub rematch_id: Option<Uuid>,
    /// Which colours have a connection on some node.
    pub presence: ByColor<bool>,
}

impl GameSnapshot {
    /// The seat `player` holds.
    pub fn seat_of(&self, player: Option<Uuid>) -> Seat {
        seat_of(&self.players, player)
    }

    /// The colour `player` plays, if they hold exactly one seat.
    pub fn color_of(&self, player: Uuid) -> Option<Color> {
        match self.seat_of(Some(player)) {
            Seat::White => Some(Color::White),
            Seat::Black => Some(Color::Black),
            Seat::Both | Seat::None => None,
        }
    }

    /// The player of `color` as `viewer` sees them.
    pub fn player_view(&self, color: Color, viewer: Option<Uuid>) -> Option<PlayerView> {
        self.players
            .get(color)
            .as_ref()
            .map(|player| PlayerView::of(player, self.computer_level, viewer))
    }

    /// Whether the game is over.
    pub fn is_over(&self) -> bool {
        self.situation.is_over()
    }
}

impl GameSnapshot {
    /// A stored game copied out without hosting it: its row, its players
    /// and its moves, as read from the store. For readers of many games at
    /// once that need no live owner, such as a player's archive export; a
    /// game in play is better read through the registry, which knows its
    /// latest state.
    ///
    /// # Errors
    /// A corrupt [`crate::StoreError`] when the row's record does not
    /// rebuild a game.
    pub fn from_stored(
        row: &crate::rows::GameRow,
        players: ByColor<Option<PlayerRow>>,
        moves: &[crate::rows::MoveRow],
        now: UnixMs,
    ) -> Result<GameSnapshot, crate::StoreError> {
        let game = crate::stored::restore(&row.state, moves)?;
        Ok(GameSnapshot {
            id: row.id,
            version: game.version(),
            mode: row.mode,
            players,
            computer_level: row
                .computer_level
                .and_then(|level| u8::try_from(level).ok()),
            time_control: game.time_control(),
            initial_position: game.spec().initial_position().clone(),
            rated: game.spec().rated(),
            created_at: row.created_at,
            started_at: UnixMs::from_millis(game.created_at_ms()),
            updated_at: row.updated_at,
            moves: game.moves().to_vec(),
            situation: public_situation(&game, row.status, now),
            rematch_id: row.rematch_id,
            presence: ByColor::default(),
        })
    }
}

/// The seat `player` holds among `players`.
pub(crate) fn seat_of(players: &ByColor<Option<PlayerRow>>, player: Option<Uuid>) -> Seat {
    let Some(player) = player else {
        return Seat::None;
    };
    let holds = |color: Color| players.get(color).as_ref().is_some_and(|p| p.id == player);
    match (holds(Color::White), holds(Color::Black)) {
        (true, true) => Seat::Both,
        (true, false) => Seat::White,
        (false, true) => Seat::Black,
        (false, false) => Seat::None,
    }
}

#[cfg(test)]
mod tests {
    use chess_game::{GameSettings, GameSpec};

    use super::*;

    /// A timed online game after 1. e4 e5 2. Nf3, with a draw offer open:
    /// Black to move, both kinds of destinations and the clocks set.
    fn situation() -> SharedSituation {
        let mut game = Game::new(
            GameSpec::standard("3+2".parse().expect("preset")),
            GameSettings::default(),
            1_000,
        );
        for (ply, (color, uci)) in [
            (Color::White, "e2e4"),
            (Color::Black, "e7e5"),
            (Color::White, "g1f3"),
        ]
        .into_iter()
        .enumerate()
        {
            let ply = u32::try_from(ply).expect("small");
            game.play_uci(color, uci, Some(ply), 2_000 + u64::from(ply) * 500)
                .expect("legal");
        }
        game.offer_draw(Color::White, 3_500).expect("an offer");
        SharedSituation::of(
            &game,
            GameMode::Online,
            GameStage::Playing,
            UnixMs::from_millis(3_000),
        )
    }

    fn shown_to(shared: &SharedSituation, seat: Seat) -> serde_json::Value {
        serde_json::to_value(shared.for_seat(seat)).expect("json")
    }

    #[test]
    fn each_seat_sees_only_its_own_destinations() {
        let shared = situation();
        assert!(!shared.dests.is_empty() && !shared.premove_dests.is_empty());
        // Black is to move: Black sees the legal moves, White its premoves.
        let black = shown_to(&shared, Seat::Black);
        assert!(black["dests"]["e5"].is_null() && black["dests"]["g8"].is_array());
        assert_eq!(black["premove_dests"], serde_json::json!({}));
        let white = shown_to(&shared, Seat::White);
        assert_eq!(white["dests"], serde_json::json!({}));
        assert!(
            white["premove_dests"]
                .as_object()
                .is_some_and(|map| !map.is_empty())
        );
        // A local player moves for either side and never premoves; a
        // spectator sees neither.
        let both = shown_to(&shared, Seat::Both);
        assert_eq!(both["dests"], black["dests"]);
        assert_eq!(both["premove_dests"], serde_json::json!({}));
        let spectator = shown_to(&shared, Seat::None);
        assert_eq!(spectator["dests"], serde_json::json!({}));
        assert_eq!(spectator["premove_dests"], serde_json::json!({}));
    }

    #[test]
    fn every_seat_sees_the_same_public_situation() {
        let shared = situation();
        for seat in [Seat::White, Seat::Black, Seat::Both, Seat::None] {
            let view = shown_to(&shared, seat);
            assert_eq!(view["turn"], "black", "{seat:?}");
            assert_eq!(view["offers"]["draw"], "white", "{seat:?}");
            assert_eq!(view["clocks"]["as_of"], 3_000, "{seat:?}");
            assert!(view["fen"].as_str().is_some_and(|fen| fen.contains(" b ")));
        }
    }
}
