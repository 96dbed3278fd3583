//! One game in memory: a cache of its database row, the commands that change
//! it (each written with a compare-and-set before anyone is told), the
//! broadcast of its versioned events and the recent history for resuming.

use std::collections::VecDeque;
use std::sync::Arc;

use chess_game::{Event, EventKind, Game, GameError, TakeBack};
use chess_rules::{ByColor, Color, UciMove};
use tokio::sync::{Mutex, MutexGuard, Notify, broadcast};
use uuid::Uuid;

use super::stored;
use super::view::{SharedSituation, premove_of, public_event, status_of};
use crate::model::{GameMode, GameStatus, Seat};
use crate::protocol::{EventView, MoveView, PlayerView, StateView};
use crate::store::{GameRow, PlayerRow, StoreError};
use crate::time_control;

/// How many recent broadcasts a game keeps for clients that resume.
const HISTORY: usize = 256;

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
}

/// A refused command: a stable code and a readable message; nothing changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub code: &'static str,
    pub message: String,
}

impl Refusal {
    /// A refusal with a stable `code` and a readable `message`.
    pub fn new(code: &'static str, message: impl Into<String>) -> Refusal {
        Refusal {
            code,
            message: message.into(),
        }
    }

    fn internal(error: &StoreError) -> Refusal {
        tracing::error!(%error, "storing a game change failed");
        Refusal::new("internal", "the server failed; it has been logged")
    }
}

impl From<GameError> for Refusal {
    fn from(error: GameError) -> Refusal {
        Refusal::new(error.code(), error.to_string())
    }
}

/// What a player asks of a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Move { uci: String, ply: u32 },
    Premove { uci: String, charge_ms: u64 },
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
}

/// A command's outcome for the connection that sent it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Applied {
    /// Done (events were broadcast).
    Done,
    /// A move was stored: acknowledge it.
    Ack { ply: u32, uci: String, version: u64 },
}

/// The mutable part of a live game, behind its lock.
#[derive(Debug)]
pub struct Entry {
    /// The row as last written.
    pub row: GameRow,
    pub players: ByColor<Option<PlayerRow>>,
    pub game: Game,
    history: VecDeque<Arc<Outgoing>>,
    /// Open sockets per seat colour (a local player's count under both).
    connections: ByColor<usize>,
}

/// A game being hosted: the cache entry of its row.
#[derive(Debug)]
pub struct LiveGame {
    pub id: Uuid,
    entry: Mutex<Entry>,
    outbox: broadcast::Sender<Arc<Outgoing>>,
    /// Wakes the game's timer when its deadline may have changed.
    pub rearm: Notify,
}

/// Everything `commit` needs from the hub: the store and what to do with a
/// rematch.
pub trait Host {
    fn store(&self) -> &crate::store::Store;
    /// Builds the rematch of `entry`'s game (ids swapped) as a new row and game.
    fn rematch_of(&self, entry: &Entry, spec: chess_game::GameSpec, now: u64) -> (GameRow, Game);
    /// Registers a newly stored game (cache and timer).
    fn adopt(&self, row: GameRow, game: Game, players: ByColor<Option<PlayerRow>>);
}

impl LiveGame {
    /// A live game for a loaded or created game.
    pub fn new(row: GameRow, game: Game, players: ByColor<Option<PlayerRow>>) -> LiveGame {
        let (outbox, _) = broadcast::channel(512);
        LiveGame {
            id: row.id,
            entry: Mutex::new(Entry {
                row,
                players,
                game,
                history: VecDeque::new(),
                connections: ByColor::default(),
            }),
            outbox,
            rearm: Notify::new(),
        }
    }

    /// Locks the game's state.
    pub async fn lock(&self) -> MutexGuard<'_, Entry> {
        self.entry.lock().await
    }

    /// A receiver of everything broadcast from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Outgoing>> {
        self.outbox.subscribe()
    }

    /// Tells every socket something that is not a game event.
    pub fn announce(&self, outgoing: Outgoing) {
        // No receivers is fine: nobody is watching.
        let _ = self.outbox.send(Arc::new(outgoing));
    }

    /// Runs `command` for the viewer holding `seat` at server time `now`.
    ///
    /// # Errors
    /// A [`Refusal`] with a stable code; nothing changed then.
    pub async fn apply(
        &self,
        host: &impl Host,
        seat: Seat,
        command: Command,
        now: u64,
    ) -> Result<Applied, Refusal> {
        let mut entry = self.lock().await;
        if seat == Seat::None {
            return Err(Refusal::new(
                "not_a_player",
                "spectators cannot act in a game",
            ));
        }
        if entry.row.status == GameStatus::Open {
            return Err(Refusal::new(
                "not_started",
                "the game is waiting for its second player",
            ));
        }
        // Two attempts: a command refused or lost to a concurrent writer on a
        // stale cache (another node moved the game on) is tried again once on
        // the reloaded game.
        let mut attempt = 0;
        let (color, events) = loop {
            attempt += 1;
            let color = entry.acting_color(seat);
            if let Command::Move { uci, ply } = &command
                && let Some(ack) = entry.replayed_move(color, uci, *ply)
            {
                return Ok(ack);
            }
            let mut next = entry.game.clone();
            match run(&mut next, entry.row.mode, color, &command, now) {
                Ok(events) => match self
                    .commit(&mut entry, host, next, events.clone(), now)
                    .await
                {
                    Ok(()) => break (color, events),
                    // `commit` reloaded the game already.
                    Err(refusal) if refusal.code == "conflict" && attempt == 1 => {}
                    Err(refusal) => return Err(refusal),
                },
                Err(refusal) => {
                    if attempt == 1 && self.reload_if_stale(&mut entry, host).await {
                        continue;
                    }
                    return Err(refusal);
                }
            }
        };
        if let Command::Move { uci, ply } = command {
            let played = events.iter().find_map(|event| match &event.kind {
                EventKind::Move {
                    ply: played_ply,
                    color: mover,
                    ..
                } if *played_ply == ply && *mover == color => Some(event.version),
                _ => None,
            });
            return match played {
                Some(version) => Ok(Applied::Ack { ply, uci, version }),
                // Settling the clock ended the game first: the move came too late.
                None => Err(Refusal::new(
                    "game_over",
                    "the game ended before the move arrived",
                )),
            };
        }
        Ok(Applied::Done)
    }

    /// Ends the game if a clock ran out or a first move is overdue.
    ///
    /// # Errors
    /// A storage failure or a lost race (the game is reloaded then).
    pub async fn check_time(&self, host: &impl Host, now: u64) -> Result<(), Refusal> {
        let mut entry = self.lock().await;
        if entry.row.status != GameStatus::Playing {
            return Ok(());
        }
        let mut next = entry.game.clone();
        let events = next.check_time(now);
        self.commit(&mut entry, host, next, events, now).await
    }

    /// Whether the game is over and nobody watches it: it need not stay cached.
    pub async fn is_idle(&self) -> bool {
        let entry = self.lock().await;
        let finished = entry.row.status == GameStatus::Finished || entry.game.is_over();
        finished
            && entry.connections.white == 0
            && entry.connections.black == 0
            && self.outbox.receiver_count() == 0
    }

    /// A socket of `seat` opened.
    pub async fn connected(&self, seat: Seat) {
        let mut entry = self.lock().await;
        for color in Color::ALL {
            if seat.holds(color) {
                *entry.connections.get_mut(color) += 1;
            }
        }
    }

    /// A socket of `seat` closed; when it was the last of a colour, that
    /// colour's premove is cleared.
    pub async fn disconnected(&self, host: &impl Host, seat: Seat, now: u64) {
        let mut entry = self.lock().await;
        for color in Color::ALL {
            if !seat.holds(color) {
                continue;
            }
            let count = entry.connections.get_mut(color);
            *count = count.saturating_sub(1);
            if *count == 0 && entry.game.premove(color).is_some() {
                let mut next = entry.game.clone();
                let events = next.disconnected(color, now);
                if let Err(refusal) = self.commit(&mut entry, host, next, events, now).await {
                    tracing::warn!(
                        code = refusal.code,
                        "clearing a premove on disconnect failed"
                    );
                }
            }
        }
    }

    /// Writes `next` (with `events`) as a compare-and-set on the stored
    /// version, then makes it the cached game and broadcasts the events.
    async fn commit(
        &self,
        entry: &mut Entry,
        host: &impl Host,
        next: Game,
        events: Vec<Event>,
        now: u64,
    ) -> Result<(), Refusal> {
        if events.is_empty() {
            return Ok(());
        }
        let previous_moves = entry.game.moves().len();
        let took_back = events
            .iter()
            .any(|event| matches!(event.kind, EventKind::TakeBack { .. }));
        let keep_moves = took_back.then(|| u32::try_from(next.moves().len()).unwrap_or(u32::MAX));
        let first_new = if took_back {
            next.moves().len()
        } else {
            previous_moves
        };
        let new_moves: Vec<_> = (first_new..next.moves().len())
            .filter_map(|ply| stored::move_row(&next, ply))
            .collect();
        let mut row = entry.row.clone();
        row.status = status_of(&next, row.status);
        row.result = next.result().map(|result| {
            serde_json::json!({ "winner": result.winner, "reason": result.reason.code() })
                .to_string()
        });
        row.state = stored::state_json(&next);
        row.version = version_i64(next.version());
        row.updated_at = i64::try_from(now).unwrap_or(i64::MAX);
        let expected = version_i64(entry.game.version());

        let rematch = events
            .iter()
            .any(|event| matches!(event.kind, EventKind::RematchAccepted { .. }))
            .then(|| next.rematch_spec())
            .flatten()
            .map(|spec| host.rematch_of(entry, spec, now));
        if let Some((new_row, _)) = &rematch {
            row.rematch_id = Some(new_row.id);
        }

        // The change that ends the game settles its reward in the same
        // transaction (issue 5): exactly once, within the daily cap.
        let ending = (entry.row.status != GameStatus::Finished
            && row.status == GameStatus::Finished)
            .then(|| next.result())
            .flatten();
        let written = match (&rematch, ending) {
            (Some((new_row, _)), _) => host.store().insert_rematch(&row, expected, new_row).await,
            (None, Some(result)) => host
                .store()
                .finish_game(&row, expected, &new_moves, &result, row.updated_at)
                .await
                .map(|recorded| {
                    if let Some(recorded) = recorded {
                        let entry = recorded.entry();
                        tracing::info!(
                            account = %entry.account_id,
                            cents = entry.amount_cents,
                            status = entry.status.code(),
                            "reward settled"
                        );
                    }
                }),
            (None, None) => {
                host.store()
                    .update_game(&row, expected, keep_moves, &new_moves)
                    .await
            }
        };
        match written {
            Ok(()) => {}
            Err(StoreError::Conflict) => {
                self.reload(entry, host).await;
                return Err(Refusal::new(
                    "conflict",
                    "the game changed meanwhile; it was reloaded, try again",
                ));
            }
            Err(error) => return Err(Refusal::internal(&error)),
        }

        entry.row = row;
        entry.game = next;
        let situation = SharedSituation::of(&entry.game, entry.row.mode, entry.row.status, now);
        for event in events {
            let public = match &event.kind {
                EventKind::RematchAccepted { .. } => entry
                    .row
                    .rematch_id
                    .map(|game_id| EventView::RematchStarted { game_id }),
                kind => public_event(kind),
            };
            let outgoing = Arc::new(Outgoing::Event {
                version: event.version,
                kind: event.kind,
                public,
                situation: Box::new(situation.clone()),
            });
            entry.history.push_back(Arc::clone(&outgoing));
            if entry.history.len() > HISTORY {
                entry.history.pop_front();
            }
            let _ = self.outbox.send(outgoing);
        }
        if let Some((new_row, new_game)) = rematch {
            let game_id = new_row.id;
            let players = ByColor {
                white: entry.players.black.clone(),
                black: entry.players.white.clone(),
            };
            host.adopt(new_row, new_game, players);
            self.announce(Outgoing::Redirect { game_id });
        }
        self.rearm.notify_one();
        Ok(())
    }

    /// Brings the cache up to date when another node changed the stored game
    /// (before a full state is shown).
    pub async fn refresh(&self, host: &impl Host) {
        let mut entry = self.lock().await;
        self.reload_if_stale(&mut entry, host).await;
    }

    /// Reloads the game if the stored version moved past the cached one;
    /// whether it did.
    async fn reload_if_stale(&self, entry: &mut Entry, host: &impl Host) -> bool {
        let cached = version_i64(entry.game.version());
        match host.store().game_version(self.id).await {
            Ok(Some(stored)) if stored != cached => {
                self.reload(entry, host).await;
                true
            }
            Ok(_) => false,
            Err(error) => {
                tracing::error!(%error, "checking a game's stored version failed");
                false
            }
        }
    }

    /// Replaces the cached game with the stored one after a lost race.
    async fn reload(&self, entry: &mut Entry, host: &impl Host) {
        let loaded = async {
            let row = host.store().game(self.id).await?;
            let Some(row) = row else {
                return Err(StoreError::Corrupt("game row vanished".to_owned()));
            };
            let moves = host.store().moves(self.id).await?;
            let game = stored::restore(&row.state, &moves)?;
            Ok::<_, StoreError>((row, game))
        }
        .await;
        match loaded {
            Ok((row, game)) => {
                entry.row = row;
                entry.game = game;
                entry.history.clear();
                self.announce(Outgoing::Resync);
                self.rearm.notify_one();
            }
            Err(error) => tracing::error!(%error, "reloading a game after a conflict failed"),
        }
    }
}

impl Entry {
    /// The colour `seat` acts for: its own, or the side to move for a local player.
    fn acting_color(&self, seat: Seat) -> Color {
        match seat {
            Seat::White => Color::White,
            Seat::Black => Color::Black,
            Seat::Both | Seat::None => self.game.turn(),
        }
    }

    /// The acknowledgement of a move already played (a retry), if it is one.
    fn replayed_move(&self, color: Color, uci: &str, ply: u32) -> Option<Applied> {
        let index = usize::try_from(ply).ok()?;
        let saved = self.game.moves().get(index)?;
        let mover = self.game.position_at(ply)?.turn();
        if saved.uci != uci || mover != color {
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
        Some(Applied::Ack {
            ply,
            uci: uci.to_owned(),
            version,
        })
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
            level: if player.kind == crate::model::PlayerKind::Computer {
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
    pub fn state_for(&self, viewer: Option<Uuid>, now: u64) -> StateView {
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
            server_time: now,
        }
    }

    /// Whether the game is being played (not open, not over).
    pub fn is_playing(&self) -> bool {
        self.row.status == GameStatus::Playing && !self.game.is_over()
    }
}

fn version_i64(version: u64) -> i64 {
    i64::try_from(version).unwrap_or(i64::MAX)
}

/// Runs one command on `game` for `color`.
fn run(
    game: &mut Game,
    mode: GameMode,
    color: Color,
    command: &Command,
    now: u64,
) -> Result<Vec<Event>, Refusal> {
    let events = match command {
        Command::Move { uci, ply } => game.play_uci(color, uci, Some(*ply), now)?,
        Command::Premove { uci, charge_ms } => {
            if mode != GameMode::Online {
                return Err(Refusal::new(
                    "invalid_premove",
                    "premoves are for games between two people",
                ));
            }
            let parsed: UciMove = uci
                .parse()
                .map_err(|_| Refusal::from(GameError::InvalidUci(uci.clone())))?;
            game.set_premove(
                color,
                parsed.from(),
                parsed.to(),
                parsed.promotion(),
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
            return Err(Refusal::new(
                "draw_offer_too_early",
                "draw offers are for games between two people",
            ));
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
