//! The game state machine: commands in, versioned events out.

use chess_rules::{ByColor, Color, GameRecord, Move, Position, Rank, Role, Square, UciMove};

use crate::{
    EndReason, Event, EventKind, GameError, GameResult, GameSettings, GameSpec, GameStatus,
    Premove, PremoveCancelReason, RematchState, RestoreError, SavedGame, SavedMove, SavedState,
    TimeControl,
};

/// A point a game can return to: see [`Game::checkpoint`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    state: SavedState,
    moves: usize,
}

impl Checkpoint {
    /// How many moves had been played at the checkpoint.
    pub fn moves(&self) -> usize {
        self.moves
    }
}

/// [`Game::rewind`] could not return to a checkpoint: moves were taken back
/// since it was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RewindError;

impl std::fmt::Display for RewindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("moves were taken back since the checkpoint")
    }
}

impl std::error::Error for RewindError {}

/// Which moves a take-back undoes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(tag = "type", content = "color", rename_all = "snake_case")
)]
pub enum TakeBack {
    /// Undo the last move, whoever made it.
    LastMove,
    /// Undo as few moves as needed (one or two) to give this side its turn
    /// back with at least one of its own moves undone: against the computer,
    /// this undoes the computer's reply and the person's move before it.
    ToTurnOf(Color),
}

/// An online chess game: the board, the clocks, offers, premoves, the
/// result, and the event version.
///
/// Every command takes the caller's current time `now_ms` (milliseconds on
/// any scale that never goes backwards, such as Unix epoch milliseconds) and
/// returns the events it caused, or a [`GameError`] and no change at all.
/// A time earlier than the last event's is taken as that time.
///
/// Every command first *settles the clock* at `now_ms`: if the side to move
/// has flagged, or a first-move deadline has passed, the game ends there.
/// In that case the command itself is not carried out and the `Ok` events
/// are just those of the ending (a late move is rejected that way, and the
/// mover learns why from the `game_ended` event).
#[derive(Clone, Debug)]
pub struct Game {
    saved: SavedGame,
    /// The moves with the positions they lead to, for the board's endings
    /// (threefold repetition needs the history); derived from the saved
    /// moves, so never persisted.
    pub(crate) record: GameRecord,
}

impl Game {
    /// A new game created at `now_ms`. No event is emitted: the version is 0.
    pub fn new(spec: GameSpec, settings: GameSettings, now_ms: u64) -> Game {
        let remaining_ms = spec.time_control().starting_ms().map(|ms| ByColor {
            white: ms,
            black: ms,
        });
        let record = GameRecord::new(spec.initial_position().clone());
        Game {
            saved: SavedGame {
                spec,
                settings,
                created_at_ms: now_ms,
                moves: Vec::new(),
                state: SavedState {
                    version: 0,
                    last_event_at_ms: now_ms,
                    turn_started_at_ms: now_ms,
                    remaining_ms,
                    draw_offer: None,
                    draw_offer_allowed_after: ByColor::default(),
                    premoves: ByColor::default(),
                    rematch: RematchState::None,
                    result: None,
                    berserk: ByColor::default(),
                },
            },
            record,
        }
    }

    /// Rebuilds a game from what [`Game::saved`] returned, exactly as it was.
    /// Call [`Game::check_time`] afterwards so that time spent while the
    /// server was down counts.
    ///
    /// # Errors
    /// [`RestoreError`] when a saved move is not legal where it was played or
    /// the saved state contradicts the moves.
    pub fn restore(saved: SavedGame) -> Result<Game, RestoreError> {
        let SavedGame {
            spec,
            settings,
            created_at_ms,
            moves,
            state,
        } = saved;
        let record = GameRecord::new(spec.initial_position().clone());
        let mut game = Game {
            saved: SavedGame {
                spec,
                settings,
                created_at_ms,
                moves: Vec::new(),
                state: state.clone(),
            },
            record,
        };
        // A game rebuilt from nothing is the empty game advanced by every move.
        game.advance(state, moves)?;
        Ok(game)
    }

    /// Brings the game up to a later saved form of itself, written elsewhere
    /// (another server sharing the database): `moves` are the moves played
    /// since, in order, and `state` the state after them. Only the new moves
    /// are replayed, checked as [`Game::restore`] checks them.
    ///
    /// # Errors
    /// [`RestoreError`] as for [`Game::restore`]; the game is then unchanged.
    pub fn advance(
        &mut self,
        state: SavedState,
        moves: Vec<SavedMove>,
    ) -> Result<(), RestoreError> {
        let real_time = self.saved.spec.time_control().is_real_time();
        let before = self.record.len();
        let undo = |game: &mut Game| {
            while game.record.len() > before {
                game.record.pop();
            }
        };
        for (ply, saved_move) in (u32::try_from(before).unwrap_or(u32::MAX)..).zip(&moves) {
            let checked = if saved_move.remaining_ms.is_some() != real_time {
                Err(RestoreError::Inconsistent(
                    "a move's clocks do not match the time control",
                ))
            } else {
                match self.record.push_uci(&saved_move.uci) {
                    Ok(played) if played.san == saved_move.san => Ok(()),
                    Ok(_) => Err(RestoreError::Inconsistent("a move's san does not match")),
                    Err(_) => Err(RestoreError::BadMove {
                        ply,
                        uci: saved_move.uci.clone(),
                    }),
                }
            };
            if let Err(error) = checked {
                undo(self);
                return Err(error);
            }
        }
        let contradiction = if state.remaining_ms.is_some() != real_time {
            Some("clocks do not match the time control")
        } else {
            None
        };
        if let Some(what) = contradiction {
            undo(self);
            return Err(RestoreError::Inconsistent(what));
        }
        self.saved.moves.extend(moves);
        self.saved.state = state;
        Ok(())
    }

    /// The persisted form of the game; see [`SavedGame`] for which parts are
    /// append-only.
    pub fn saved(&self) -> &SavedGame {
        &self.saved
    }

    /// A point this game can return to with [`Game::rewind`], taken before
    /// a command whose change may yet be refused elsewhere (a server that
    /// applies commands in place and then fails to store them). It copies
    /// only the small changing state, not the history.
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            state: self.saved.state.clone(),
            moves: self.saved.moves.len(),
        }
    }

    /// Returns the game to `checkpoint`, undoing every command since.
    ///
    /// # Errors
    /// [`RewindError`] when moves were taken back since the checkpoint (their
    /// record is gone); the game is then unchanged and must be rebuilt from
    /// its saved form instead.
    pub fn rewind(&mut self, checkpoint: Checkpoint) -> Result<(), RewindError> {
        if self.saved.moves.len() < checkpoint.moves {
            return Err(RewindError);
        }
        self.saved.moves.truncate(checkpoint.moves);
        while self.record.len() > checkpoint.moves {
            self.record.pop();
        }
        self.saved.state = checkpoint.state;
        Ok(())
    }

    // ----- Queries ---------------------------------------------------------

    /// What the game was created from.
    pub fn spec(&self) -> &GameSpec {
        &self.saved.spec
    }

    /// The settings the game was created with.
    pub fn settings(&self) -> &GameSettings {
        &self.saved.settings
    }

    /// The game's time control.
    pub fn time_control(&self) -> TimeControl {
        self.saved.spec.time_control()
    }

    /// When the game was created.
    pub fn created_at_ms(&self) -> u64 {
        self.saved.created_at_ms
    }

    /// The version of the last event, 0 before any.
    pub fn version(&self) -> u64 {
        self.saved.state.version
    }

    /// Created (abortable), started, or ended with a result.
    pub fn status(&self) -> GameStatus {
        match self.saved.state.result {
            Some(result) => GameStatus::Ended(result),
            None if self.ply() < 2 => GameStatus::Created,
            None => GameStatus::Started,
        }
    }

    /// The result once the game is over.
    pub fn result(&self) -> Option<GameResult> {
        self.saved.state.result
    }

    /// Whether the game has a result (aborted included).
    pub fn is_over(&self) -> bool {
        self.saved.state.result.is_some()
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        self.record.position()
    }

    /// The position after `ply` moves (0 is the initial position).
    pub fn position_at(&self, ply: u32) -> Option<&Position> {
        match usize::try_from(ply).ok()? {
            0 => Some(self.record.initial()),
            n => self.record.plies().get(n - 1).map(|p| &p.position),
        }
    }

    /// The side to move.
    pub fn turn(&self) -> Color {
        self.position().turn()
    }

    /// How many moves have been played; also the ply the next move is for.
    pub fn ply(&self) -> u32 {
        u32::try_from(self.saved.moves.len()).unwrap_or(u32::MAX)
    }

    /// The moves played, with UCI, SAN, times and clocks.
    pub fn moves(&self) -> &[SavedMove] {
        &self.saved.moves
    }

    /// How many moves `color` has made.
    pub fn moves_made_by(&self, color: Color) -> u32 {
        let ply = self.ply();
        if color == self.spec().initial_position().turn() {
            ply.div_ceil(2)
        } else {
            ply / 2
        }
    }

    /// Whose clock is running: the side to move, once both sides have made
    /// their first move, in a real-time game that is not over.
    pub fn running_clock(&self) -> Option<Color> {
        let running = self.time_control().is_real_time()
            && self.ply() >= 2
            && self.saved.state.result.is_none();
        running.then(|| self.turn())
    }

    /// Both remaining times at `now_ms`, or `None` in correspondence. The
    /// running clock is counted down to `now_ms` (never below zero).
    pub fn remaining_ms(&self, now_ms: u64) -> Option<ByColor<u64>> {
        let mut remaining = self.saved.state.remaining_ms?;
        if let Some(color) = self.running_clock() {
            let elapsed = now_ms.saturating_sub(self.saved.state.turn_started_at_ms);
            let clock = remaining.get_mut(color);
            *clock = clock.saturating_sub(elapsed);
        }
        Some(remaining)
    }

    /// The instant at which the side to move flags, if a clock runs.
    pub fn flag_deadline(&self) -> Option<u64> {
        let color = self.running_clock()?;
        let remaining = self.saved.state.remaining_ms?;
        Some(self.saved.state.turn_started_at_ms + *remaining.get(color))
    }

    /// The instant at which the game is aborted (lost, in a mandatory game)
    /// if the side to move has not made its first move.
    pub fn first_move_deadline(&self) -> Option<u64> {
        if self.ply() >= 2 || self.saved.state.result.is_some() {
            return None;
        }
        let deadline = self
            .saved
            .settings
            .first_move_deadline_ms
            .for_speed(self.time_control().speed())?;
        Some(self.saved.state.turn_started_at_ms.saturating_add(deadline))
    }

    /// The next instant at which [`Game::check_time`] would end the game (a
    /// flag or a first-move abort), so the server can keep one timer per
    /// game. `None` when nothing can happen by time alone.
    pub fn next_deadline(&self) -> Option<u64> {
        self.flag_deadline().or_else(|| self.first_move_deadline())
    }

    /// Whether either player may still abort: fewer than two moves made,
    /// in a game that need not be played ([`GameSpec::with_mandatory`]).
    pub fn is_abortable(&self) -> bool {
        self.saved.state.result.is_none() && self.ply() < 2 && !self.spec().mandatory()
    }

    /// The side whose draw offer is open.
    pub fn draw_offer(&self) -> Option<Color> {
        self.saved.state.draw_offer
    }

    /// Whether `color` may offer a draw now.
    ///
    /// # Errors
    /// The error [`Game::offer_draw`] would give, apart from settling time.
    pub fn can_offer_draw(&self, color: Color) -> Result<(), GameError> {
        if self.is_over() {
            return Err(GameError::GameOver);
        }
        if self.ply() < 2 {
            return Err(GameError::DrawOfferTooEarly);
        }
        if self.saved.state.draw_offer == Some(color) {
            return Err(GameError::DrawAlreadyOffered);
        }
        if self.saved.state.draw_offer == Some(!color) {
            // Offering back accepts the opponent's offer.
            return Ok(());
        }
        let needed = *self.saved.state.draw_offer_allowed_after.get(color);
        let made = self.moves_made_by(color);
        if made < needed {
            return Err(GameError::DrawOfferCooldown {
                moves_left: needed - made,
            });
        }
        Ok(())
    }

    /// Whether `color` berserked ([`Game::berserk`]).
    pub fn berserked(&self, color: Color) -> bool {
        *self.saved.state.berserk.get(color)
    }

    /// The premove `color` has stored.
    pub fn premove(&self, color: Color) -> Option<Premove> {
        *self.saved.state.premoves.get(color)
    }

    /// Where the rematch question stands.
    pub fn rematch(&self) -> RematchState {
        self.saved.state.rematch
    }

    /// The spec of the rematch once it is accepted: the same as this game's
    /// (same time control and position); the server swaps the seats.
    pub fn rematch_spec(&self) -> Option<GameSpec> {
        (self.saved.state.rematch == RematchState::Accepted).then(|| self.saved.spec.clone())
    }

    /// Checks that a move meant for `ply` would be the next one. A helper
    /// for clients that resend moves after reconnecting.
    ///
    /// # Errors
    /// [`GameError::WrongPly`] when it is not.
    pub fn check_ply(&self, ply: u32) -> Result<(), GameError> {
        let expected = self.ply();
        if ply == expected {
            Ok(())
        } else {
            Err(GameError::WrongPly { expected, got: ply })
        }
    }

    // ----- Commands --------------------------------------------------------

    /// `color` plays `uci`, meant for ply `for_ply` if given. If it ends the
    /// game, a `game_ended` event follows the `move`; if the opponent has a
    /// premove, it is then played or dropped in the same call.
    ///
    /// # Errors
    /// In this order: [`GameError::GameOver`]; [`GameError::WrongPly`] when
    /// `for_ply` is not the ply to be played, whoever's turn it is;
    /// [`GameError::NotYourTurn`]; [`GameError::IllegalMove`].
    pub fn play(
        &mut self,
        color: Color,
        uci: UciMove,
        for_ply: Option<u32>,
        now_ms: u64,
    ) -> Result<Vec<Event>, GameError> {
        let mut events = self.play_only(color, uci, for_ply, now_ms)?;
        let now = self.clamp(now_ms);
        self.try_premove(now, &mut events);
        Ok(events)
    }

    /// [`Game::play`], except that the opponent's premove, if any, is not
    /// played: it stays stored, due, until [`Game::play_premove`] plays it
    /// (or the opponent moves by hand, cancels it or disconnects). A server
    /// defers a premove this way to the server holding the connection that
    /// set it, so that only a connected player's premove is ever played.
    ///
    /// # Errors
    /// As [`Game::play`].
    pub fn play_leaving_premove(
        &mut self,
        color: Color,
        uci: UciMove,
        for_ply: Option<u32>,
        now_ms: u64,
    ) -> Result<Vec<Event>, GameError> {
        self.play_only(color, uci, for_ply, now_ms)
    }

    /// The move of [`Game::play`] and nothing after it.
    fn play_only(
        &mut self,
        color: Color,
        uci: UciMove,
        for_ply: Option<u32>,
        now_ms: u64,
    ) -> Result<Vec<Event>, GameError> {
        let now = self.clamp(now_ms);
        let mut events = Vec::new();
        if self.settle(now, &mut events)? {
            return Ok(events);
        }
        // The ply comes first: a move meant for a ply already played (or not
        // yet reached) is stale whoever's turn it is now, and the sender
        // needs to hear that rather than whose turn it is.
        if let Some(ply) = for_ply {
            self.check_ply(ply)?;
        }
        if self.turn() != color {
            return Err(GameError::NotYourTurn);
        }
        let mv = uci
            .to_move(self.position())
            .map_err(|_| GameError::IllegalMove(uci.to_string()))?;
        // A premove left due for this turn is replaced by the move itself.
        if self.premove(color).is_some() {
            self.clear_premove(color, PremoveCancelReason::Cancelled, now, &mut events);
        }
        self.apply_move(color, mv, None, now, &mut events);
        Ok(events)
    }

    /// Plays the premove the side to move has stored, left due by
    /// [`Game::play_leaving_premove`]: or drops it if it is not legal in the
    /// position. Its player is charged the premove's charge, or the time
    /// since their turn began if that is longer (the premove waited for the
    /// server, not for them); a clock that ran out meanwhile ends the game
    /// instead. No events when no premove is due or the game is over.
    pub fn play_premove(&mut self, now_ms: u64) -> Vec<Event> {
        let now = self.clamp(now_ms);
        let mut events = Vec::new();
        if self.is_over() || self.settle(now, &mut events).unwrap_or(true) {
            return events;
        }
        let started = self.saved.state.turn_started_at_ms;
        let turn = self.turn();
        let Some(premove) = self.saved.state.premoves.get_mut(turn) else {
            return events;
        };
        premove.charge_ms = premove.charge_ms.max(now.saturating_sub(started));
        self.try_premove(now, &mut events);
        events
    }

    /// [`Game::play`] with the move as UCI text.
    ///
    /// # Errors
    /// [`GameError::InvalidUci`] for text that is not UCI, then as
    /// [`Game::play`].
    pub fn play_uci(
        &mut self,
        color: Color,
        uci: &str,
        for_ply: Option<u32>,
        now_ms: u64,
    ) -> Result<Vec<Event>, GameError> {
        let parsed: UciMove = uci
            .parse()
            .map_err(|_| GameError::InvalidUci(uci.to_owned()))?;
        self.play(color, parsed, for_ply, now_ms)
    }

    /// [`Game::play`] with a [`Move`] (from the engine, say).
    ///
    /// # Errors
    /// As [`Game::play`].
    pub fn play_move(
        &mut self,
        color: Color,
        mv: Move,
        for_ply: Option<u32>,
        now_ms: u64,
    ) -> Result<Vec<Event>, GameError> {
        self.play(color, mv.to_uci(), for_ply, now_ms)
    }

    /// `color` resigns: the opponent wins.
    ///
    /// # Errors
    /// [`GameError::GameOver`]; [`GameError::ResignNotAllowedYet`] before
    /// both sides have moved (abort instead), unless the game must be
    /// played and so cannot be aborted.
    pub fn resign(&mut self, color: Color, now_ms: u64) -> Result<Vec<Event>, GameError> {
        self.command(now_ms, |game, now, events| {
            if game.ply() < 2 && !game.spec().mandatory() {
                return Err(GameError::ResignNotAllowedYet);
            }
            game.end(
                now,
                GameResult {
                    winner: Some(!color),
                    reason: EndReason::Resignation,
                },
                events,
            );
            Ok(())
        })
    }

    /// `color` berserks, in a game whose spec allows it
    /// ([`GameSpec::with_berserk`]), before both sides have moved: their
    /// clock drops to [`crate::RealTime::berserk_initial_ms`] and they get no
    /// increment for the rest of the game. Their first move is not timed
    /// yet, so the clock they berserk is still whole.
    ///
    /// # Errors
    /// [`GameError::GameOver`], [`GameError::BerserkNotAllowed`],
    /// [`GameError::AlreadyBerserk`].
    pub fn berserk(&mut self, color: Color, now_ms: u64) -> Result<Vec<Event>, GameError> {
        self.command(now_ms, |game, now, events| {
            let TimeControl::RealTime(clock) = game.time_control() else {
                return Err(GameError::BerserkNotAllowed);
            };
            let kept = clock.berserk_initial_ms();
            let (Some(kept), true, true) = (kept, game.spec().berserkable(), game.ply() < 2) else {
                return Err(GameError::BerserkNotAllowed);
            };
            if game.berserked(color) {
                return Err(GameError::AlreadyBerserk);
            }
            *game.saved.state.berserk.get_mut(color) = true;
            if let Some(remaining) = game.saved.state.remaining_ms.as_mut() {
                *remaining.get_mut(color) = kept;
            }
            let remaining_ms = game.saved.state.remaining_ms;
            game.emit(
                now,
                EventKind::Berserk {
                    color,
                    remaining_ms,
                },
                events,
            );
            Ok(())
        })
    }

    /// Aborts the game (no result) before both sides have moved; either
    /// player may do so, unless the game must be played.
    ///
    /// # Errors
    /// [`GameError::GameOver`]; [`GameError::AbortNotAllowed`] once both
    /// sides have moved; [`GameError::MustBePlayed`] in a mandatory game.
    pub fn abort(&mut self, now_ms: u64) -> Result<Vec<Event>, GameError> {
        self.command(now_ms, |game, now, events| {
            if game.spec().mandatory() {
                return Err(GameError::MustBePlayed);
            }
            if game.ply() >= 2 {
                return Err(GameError::AbortNotAllowed);
            }
            game.end(now, ABORTED, events);
            Ok(())
        })
    }

    /// `color` offers a draw. If the opponent's offer is open, this accepts
    /// it instead (as on lichess).
    ///
    /// # Errors
    /// [`GameError::GameOver`], [`GameError::DrawOfferTooEarly`],
    /// [`GameError::DrawAlreadyOffered`], [`GameError::DrawOfferCooldown`].
    pub fn offer_draw(&mut self, color: Color, now_ms: u64) -> Result<Vec<Event>, GameError> {
        self.command(now_ms, |game, now, events| {
            game.can_offer_draw(color)?;
            if game.saved.state.draw_offer == Some(!color) {
                game.agree_draw(color, now, events);
            } else {
                game.saved.state.draw_offer = Some(color);
                game.emit(now, EventKind::DrawOffered { color }, events);
            }
            Ok(())
        })
    }

    /// `color` accepts the opponent's open draw offer: a draw by agreement.
    ///
    /// # Errors
    /// [`GameError::GameOver`], [`GameError::NoDrawOffer`].
    pub fn accept_draw(&mut self, color: Color, now_ms: u64) -> Result<Vec<Event>, GameError> {
        self.command(now_ms, |game, now, events| {
            if game.saved.state.draw_offer != Some(!color) {
                return Err(GameError::NoDrawOffer);
            }
            game.agree_draw(color, now, events);
            Ok(())
        })
    }

    /// `color` declines the opponent's open draw offer; the offerer must
    /// wait out the cooldown before offering again.
    ///
    /// # Errors
    /// [`GameError::GameOver`], [`GameError::NoDrawOffer`].
    pub fn decline_draw(&mut self, color: Color, now_ms: u64) -> Result<Vec<Event>, GameError> {
        self.command(now_ms, |game, now, events| {
            if game.saved.state.draw_offer != Some(!color) {
                return Err(GameError::NoDrawOffer);
            }
            game.close_draw_offer(!color);
            game.emit(
                now,
                EventKind::DrawDeclined {
                    color,
                    by_move: false,
                },
                events,
            );
            Ok(())
        })
    }

    /// `color` withdraws their own open draw offer. The cooldown applies as
    /// after a decline, or offer-and-withdraw could be used to pester.
    ///
    /// # Errors
    /// [`GameError::GameOver`], [`GameError::NoOwnDrawOffer`].
    pub fn withdraw_draw(&mut self, color: Color, now_ms: u64) -> Result<Vec<Event>, GameError> {
        self.command(now_ms, |game, now, events| {
            if game.saved.state.draw_offer != Some(color) {
                return Err(GameError::NoOwnDrawOffer);
            }
            game.close_draw_offer(color);
            game.emit(now, EventKind::DrawWithdrawn { color }, events);
            Ok(())
        })
    }

    /// `color` stores a premove `from`-`to` during the opponent's turn,
    /// replacing any earlier one. It must follow the piece's movement
    /// pattern ([`Position::is_premove`]). A pawn going to its last rank
    /// promotes to `promotion`, a queen if `None`; `promotion` must be
    /// `None` for any other premove. `charge_ms` (the player's measured
    /// round trip) is taken off their clock when the premove is played.
    ///
    /// # Errors
    /// [`GameError::GameOver`], [`GameError::PremoveOnOwnTurn`],
    /// [`GameError::InvalidPremove`], [`GameError::InvalidPromotion`].
    pub fn set_premove(
        &mut self,
        color: Color,
        from: Square,
        to: Square,
        promotion: Option<Role>,
        charge_ms: u64,
        now_ms: u64,
    ) -> Result<Vec<Event>, GameError> {
        self.command(now_ms, |game, now, events| {
            if game.turn() == color {
                return Err(GameError::PremoveOnOwnTurn);
            }
            let named = UciMove::new(from, to, promotion).to_string();
            let position = game.position();
            if !position.is_premove(color, from, to) {
                return Err(GameError::InvalidPremove(named));
            }
            let is_own_pawn = position
                .board()
                .piece_at(from)
                .is_some_and(|piece| piece.color == color && piece.role == Role::Pawn);
            let promotes = is_own_pawn && to.rank() == Rank::Eighth.relative_to(color);
            let promotion = match (promotes, promotion) {
                (true, None) => Some(Role::Queen),
                (true, Some(role)) if role.is_promotion_target() => Some(role),
                (false, None) => None,
                _ => return Err(GameError::InvalidPromotion(named)),
            };
            let premove = Premove {
                from,
                to,
                promotion,
                charge_ms,
            };
            *game.saved.state.premoves.get_mut(color) = Some(premove);
            let uci = premove.uci().to_string();
            game.emit(now, EventKind::PremoveSet { color, uci }, events);
            Ok(())
        })
    }

    /// `color` cancels their premove.
    ///
    /// # Errors
    /// [`GameError::GameOver`], [`GameError::NoPremove`].
    pub fn cancel_premove(&mut self, color: Color, now_ms: u64) -> Result<Vec<Event>, GameError> {
        self.command(now_ms, |game, now, events| {
            if game.premove(color).is_none() {
                return Err(GameError::NoPremove);
            }
            game.clear_premove(color, PremoveCancelReason::Cancelled, now, events);
            Ok(())
        })
    }

    /// `color`'s connection dropped: their premove, if any, is cleared. Never
    /// fails, so the server may call it for any game, over or not.
    pub fn disconnected(&mut self, color: Color, now_ms: u64) -> Vec<Event> {
        let now = self.clamp(now_ms);
        let mut events = Vec::new();
        if self.is_over() || self.settle(now, &mut events).unwrap_or(true) {
            return events;
        }
        if self.premove(color).is_some() {
            self.clear_premove(color, PremoveCancelReason::Disconnected, now, &mut events);
        }
        events
    }

    /// Ends the game if the side to move has flagged by `now_ms` (a timeout,
    /// or a draw when the other side cannot mate or has a draw offer open),
    /// or aborts it if a first-move deadline has passed. Returns no events
    /// when nothing happened or the game was already over; never fails.
    pub fn check_time(&mut self, now_ms: u64) -> Vec<Event> {
        let now = self.clamp(now_ms);
        let mut events = Vec::new();
        if !self.is_over() {
            // Settling a game that is not over cannot fail.
            let _ended = self.settle(now, &mut events);
        }
        events
    }

    /// `color` offers a rematch after the game. If the opponent's offer is
    /// open, this accepts it instead.
    ///
    /// # Errors
    /// [`GameError::GameNotOver`], [`GameError::RematchAlreadyOffered`],
    /// [`GameError::RematchAlreadyAccepted`].
    pub fn offer_rematch(&mut self, color: Color, now_ms: u64) -> Result<Vec<Event>, GameError> {
        let now = self.clamp(now_ms);
        let mut events = Vec::new();
        match self.rematch_state_after_game()? {
            RematchState::Accepted => return Err(GameError::RematchAlreadyAccepted),
            RematchState::Offered(offerer) if offerer == color => {
                return Err(GameError::RematchAlreadyOffered);
            }
            RematchState::Offered(_) => {
                self.saved.state.rematch = RematchState::Accepted;
                self.emit(now, EventKind::RematchAccepted { color }, &mut events);
            }
            RematchState::None => {
                self.saved.state.rematch = RematchState::Offered(color);
                self.emit(now, EventKind::RematchOffered { color }, &mut events);
            }
        }
        Ok(events)
    }

    /// `color` accepts the opponent's rematch offer; [`Game::rematch_spec`]
    /// then gives the new game's spec.
    ///
    /// # Errors
    /// [`GameError::GameNotOver`], [`GameError::NoRematchOffer`],
    /// [`GameError::RematchAlreadyAccepted`].
    pub fn accept_rematch(&mut self, color: Color, now_ms: u64) -> Result<Vec<Event>, GameError> {
        self.answer_rematch(color, now_ms, true)
    }

    /// `color` declines the opponent's rematch offer.
    ///
    /// # Errors
    /// [`GameError::GameNotOver`], [`GameError::NoRematchOffer`],
    /// [`GameError::RematchAlreadyAccepted`].
    pub fn decline_rematch(&mut self, color: Color, now_ms: u64) -> Result<Vec<Event>, GameError> {
        self.answer_rematch(color, now_ms, false)
    }

    /// `color` answers the opponent's rematch offer: yes or no.
    fn answer_rematch(
        &mut self,
        color: Color,
        now_ms: u64,
        yes: bool,
    ) -> Result<Vec<Event>, GameError> {
        let now = self.clamp(now_ms);
        let mut events = Vec::new();
        match self.rematch_state_after_game()? {
            RematchState::Accepted => return Err(GameError::RematchAlreadyAccepted),
            RematchState::Offered(offerer) if offerer != color => {
                let (state, event) = if yes {
                    (RematchState::Accepted, EventKind::RematchAccepted { color })
                } else {
                    (RematchState::None, EventKind::RematchDeclined { color })
                };
                self.saved.state.rematch = state;
                self.emit(now, event, &mut events);
            }
            RematchState::Offered(_) | RematchState::None => {
                return Err(GameError::NoRematchOffer);
            }
        }
        Ok(events)
    }

    /// `color` withdraws their own rematch offer.
    ///
    /// # Errors
    /// [`GameError::GameNotOver`], [`GameError::NoOwnRematchOffer`],
    /// [`GameError::RematchAlreadyAccepted`].
    pub fn withdraw_rematch(&mut self, color: Color, now_ms: u64) -> Result<Vec<Event>, GameError> {
        let now = self.clamp(now_ms);
        let mut events = Vec::new();
        match self.rematch_state_after_game()? {
            RematchState::Accepted => return Err(GameError::RematchAlreadyAccepted),
            RematchState::Offered(offerer) if offerer == color => {
                self.saved.state.rematch = RematchState::None;
                self.emit(now, EventKind::RematchWithdrawn { color }, &mut events);
            }
            RematchState::Offered(_) | RematchState::None => {
                return Err(GameError::NoOwnRematchOffer);
            }
        }
        Ok(events)
    }

    /// Takes moves back, in a game whose spec allows it. Clocks return to
    /// their readings after the last remaining move and the side to move's
    /// turn starts at `now_ms`; offers and premoves are cleared. A game the
    /// board ended (checkmate or an automatic draw) is reopened; any other
    /// ending is final.
    ///
    /// # Errors
    /// [`GameError::TakebackNotAllowed`], [`GameError::GameOver`] (ended
    /// other than by the board), [`GameError::RematchAlreadyAccepted`],
    /// [`GameError::NothingToTakeBack`].
    pub fn take_back(&mut self, which: TakeBack, now_ms: u64) -> Result<Vec<Event>, GameError> {
        if !self.spec().takeback_allowed() {
            return Err(GameError::TakebackNotAllowed);
        }
        let now = self.clamp(now_ms);
        let mut events = Vec::new();
        match self.saved.state.result {
            Some(result) if !result.reason.is_board_ending() => return Err(GameError::GameOver),
            // The rematch has begun: this game stays as it ended.
            Some(_) if self.saved.state.rematch == RematchState::Accepted => {
                return Err(GameError::RematchAlreadyAccepted);
            }
            Some(_) => {}
            None => {
                if self.settle(now, &mut events)? {
                    return Ok(events);
                }
            }
        }
        let undo = match which {
            TakeBack::LastMove => 1,
            TakeBack::ToTurnOf(color) if color == self.turn() => 2,
            TakeBack::ToTurnOf(_) => 1,
        };
        let ply = self.ply();
        if undo > ply {
            return Err(GameError::NothingToTakeBack);
        }
        let keep = ply - undo;
        let keep_len = usize::try_from(keep).unwrap_or(usize::MAX);
        self.saved.moves.truncate(keep_len);
        while self.record.len() > keep_len {
            self.record.pop();
        }
        let state = &mut self.saved.state;
        state.remaining_ms = match self.saved.moves.last() {
            Some(last) => last.remaining_ms,
            None => self
                .saved
                .spec
                .time_control()
                .starting_ms()
                .map(|ms| ByColor {
                    white: ms,
                    black: ms,
                }),
        };
        state.turn_started_at_ms = now;
        state.result = None;
        state.draw_offer = None;
        state.premoves = ByColor::default();
        state.rematch = RematchState::None;
        let kind = EventKind::TakeBack {
            plies_undone: undo,
            ply: keep,
            fen: self.position().fen(),
            remaining_ms: self.saved.state.remaining_ms,
            running: self.running_clock(),
        };
        self.emit(now, kind, &mut events);
        Ok(events)
    }

    // ----- Internals -------------------------------------------------------

    /// Time never runs backwards for a game.
    fn clamp(&self, now_ms: u64) -> u64 {
        now_ms.max(self.saved.state.last_event_at_ms)
    }

    /// Records an event with the next version.
    fn emit(&mut self, now: u64, kind: EventKind, events: &mut Vec<Event>) {
        let state = &mut self.saved.state;
        state.version += 1;
        state.last_event_at_ms = now;
        events.push(Event {
            version: state.version,
            at_ms: now,
            kind,
        });
    }

    /// Runs a player's command at `now_ms`: refused on a finished game; if
    /// time ran out by then the game ends and the command does nothing more;
    /// otherwise `body` runs with the moment (clamped as [`Game::clamp`]
    /// does) and the events so far, and its events are the answer.
    fn command(
        &mut self,
        now_ms: u64,
        body: impl FnOnce(&mut Self, u64, &mut Vec<Event>) -> Result<(), GameError>,
    ) -> Result<Vec<Event>, GameError> {
        let now = self.clamp(now_ms);
        let mut events = Vec::new();
        if !self.settle(now, &mut events)? {
            body(self, now, &mut events)?;
        }
        Ok(events)
    }

    /// Refuses commands on a finished game, then ends the game if time has
    /// run out by `now`. Returns whether it just ended.
    fn settle(&mut self, now: u64, events: &mut Vec<Event>) -> Result<bool, GameError> {
        if self.is_over() {
            return Err(GameError::GameOver);
        }
        if self.first_move_deadline().is_some_and(|at| at <= now) {
            let result = if self.spec().mandatory() {
                GameResult {
                    winner: Some(!self.turn()),
                    reason: EndReason::NoStart,
                }
            } else {
                ABORTED
            };
            self.end(now, result, events);
            return Ok(true);
        }
        if let Some(flagged) = self.running_clock()
            && self.flag_deadline().is_some_and(|at| at <= now)
        {
            let result = self.timeout_result(flagged);
            self.end(now, result, events);
            return Ok(true);
        }
        Ok(false)
    }

    /// The result when `flagged` runs out of time: a loss, unless the other
    /// side has no mating material in the current position. An open draw
    /// offer, from either side, changes nothing: it was never accepted.
    fn timeout_result(&self, flagged: Color) -> GameResult {
        let other = !flagged;
        let (winner, reason) = if self.position().has_insufficient_material(other) {
            (None, EndReason::TimeoutVsInsufficientMaterial)
        } else {
            (Some(other), EndReason::Timeout)
        };
        GameResult { winner, reason }
    }

    /// Ends the game: clocks stop at `now`, offers and premoves go.
    fn end(&mut self, now: u64, result: GameResult, events: &mut Vec<Event>) {
        let remaining_ms = self.remaining_ms(now);
        let state = &mut self.saved.state;
        state.remaining_ms = remaining_ms;
        state.turn_started_at_ms = now;
        state.result = Some(result);
        state.draw_offer = None;
        state.premoves = ByColor::default();
        self.emit(
            now,
            EventKind::GameEnded {
                winner: result.winner,
                reason: result.reason,
                remaining_ms,
            },
            events,
        );
    }

    fn agree_draw(&mut self, color: Color, now: u64, events: &mut Vec<Event>) {
        self.saved.state.draw_offer = None;
        self.emit(now, EventKind::DrawAccepted { color }, events);
        self.end(
            now,
            GameResult {
                winner: None,
                reason: EndReason::Agreement,
            },
            events,
        );
    }

    /// Removes `offerer`'s draw offer and starts their cooldown.
    fn close_draw_offer(&mut self, offerer: Color) {
        let allowed_after =
            self.moves_made_by(offerer) + self.saved.settings.draw_offer_cooldown_moves;
        let state = &mut self.saved.state;
        state.draw_offer = None;
        *state.draw_offer_allowed_after.get_mut(offerer) = allowed_after;
    }

    fn clear_premove(
        &mut self,
        color: Color,
        reason: PremoveCancelReason,
        now: u64,
        events: &mut Vec<Event>,
    ) {
        *self.saved.state.premoves.get_mut(color) = None;
        self.emit(now, EventKind::PremoveCancelled { color, reason }, events);
    }

    /// Whether the side whose time is at stake may lose by time: each side's
    /// first move is free.
    fn is_timed_ply(ply: u32) -> bool {
        ply >= 2
    }

    /// Plays a legal move for `color` at `now`. `premove_charge` is the
    /// charge of a premove, which replaces the time since the turn began.
    /// The caller has made sure the mover has not flagged.
    fn apply_move(
        &mut self,
        color: Color,
        mv: Move,
        premove_charge: Option<u64>,
        now: u64,
        events: &mut Vec<Event>,
    ) {
        let ply = self.ply();
        // The caller checked legality; a refusal here would be a bug in the
        // caller, and leaves the game untouched.
        let Ok(played) = self.record.push(mv) else {
            debug_assert!(false, "apply_move called with an illegal move {mv}");
            return;
        };
        let san = played.san.clone();
        let fen = played.position.fen();

        let timed = Self::is_timed_ply(ply);
        let spent_ms = match (self.saved.state.remaining_ms, timed) {
            (Some(_), true) => {
                premove_charge.unwrap_or(now.saturating_sub(self.saved.state.turn_started_at_ms))
            }
            _ => 0,
        };
        let increment = if timed && !self.berserked(color) {
            self.time_control().increment_ms().unwrap_or(0)
        } else {
            0
        };
        if let Some(remaining) = self.saved.state.remaining_ms.as_mut() {
            let clock = remaining.get_mut(color);
            *clock = clock.saturating_sub(spent_ms) + increment;
        }
        self.saved.state.turn_started_at_ms = now;

        let uci = mv.to_uci().to_string();
        self.saved.moves.push(SavedMove {
            uci: uci.clone(),
            san: san.clone(),
            at_ms: now,
            spent_ms,
            remaining_ms: self.saved.state.remaining_ms,
            premove: premove_charge.is_some(),
        });
        let ending = self.board_ending();

        self.emit(
            now,
            EventKind::Move {
                ply,
                color,
                uci,
                san,
                fen,
                remaining_ms: self.saved.state.remaining_ms,
                running: if ending.is_some() {
                    None
                } else {
                    self.running_clock()
                },
                premove: premove_charge.is_some(),
            },
            events,
        );
        if let Some(result) = ending {
            self.end(now, result, events);
            return;
        }
        // Moving instead of answering declines the opponent's offer.
        if self.saved.state.draw_offer == Some(!color) {
            self.close_draw_offer(!color);
            self.emit(
                now,
                EventKind::DrawDeclined {
                    color,
                    by_move: true,
                },
                events,
            );
        }
    }

    /// After a move, plays or drops the premove of the side now to move.
    fn try_premove(&mut self, now: u64, events: &mut Vec<Event>) {
        if self.is_over() {
            return;
        }
        let color = self.turn();
        let Some(premove) = self.saved.state.premoves.get_mut(color).take() else {
            return;
        };
        let Ok(mv) = premove.uci().to_move(self.position()) else {
            let uci = premove.uci().to_string();
            self.emit(now, EventKind::PremoveDropped { color, uci }, events);
            return;
        };
        let flags = Self::is_timed_ply(self.ply())
            && self
                .saved
                .state
                .remaining_ms
                .is_some_and(|remaining| premove.charge_ms >= *remaining.get(color));
        if flags {
            let result = self.timeout_result(color);
            let remaining = self.saved.state.remaining_ms.as_mut();
            if let Some(remaining) = remaining {
                *remaining.get_mut(color) = 0;
            }
            self.end(now, result, events);
            return;
        }
        self.apply_move(color, mv, Some(premove.charge_ms), now, events);
    }

    /// How the board ends the game after the last move: checkmate or an
    /// automatic draw, including threefold repetition.
    fn board_ending(&self) -> Option<GameResult> {
        self.record.ending().map(|ending| GameResult {
            winner: ending.winner(),
            reason: EndReason::from_ending(ending),
        })
    }

    /// The rematch state, once the game is over.
    fn rematch_state_after_game(&self) -> Result<RematchState, GameError> {
        // A tournament pairs its players itself: its games have no rematch.
        if self.spec().mandatory() {
            return Err(GameError::NoRematchInTournament);
        }
        if self.is_over() {
            Ok(self.saved.state.rematch)
        } else {
            Err(GameError::GameNotOver)
        }
    }
}

const ABORTED: GameResult = GameResult {
    winner: None,
    reason: EndReason::Aborted,
};
