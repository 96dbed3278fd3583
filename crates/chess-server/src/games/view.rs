//! What each viewer sees of a game: the shared situation computed once per
//! change, then filtered per seat (legal destinations only for the side to
//! move, premove destinations and premoves only for their own player).

use chess_game::{EventKind, Game, RematchState};
use chess_rules::{Color, Square};
use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::clock::UnixMs;
use crate::games::model::{GameMode, GameStage, Seat};
use crate::ws::protocol::{
    ClocksView, Dests, EventView, OffersView, PremoveView, ResultView, SituationView,
};

/// The situation after a change, before per-seat filtering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedSituation {
    pub mode: GameMode,
    pub fen: String,
    pub turn: Color,
    pub check: Option<Square>,
    pub status: GameStage,
    pub clocks: Option<ClocksView>,
    pub first_move_deadline: Option<u64>,
    /// Legal destinations of the side to move.
    pub dests: Dests,
    /// Premove destinations of the waiting side.
    pub premove_dests: Dests,
    pub offers: OffersView,
    pub result: Option<ResultView>,
}

/// The server status of `game` whose row says `stored`.
pub fn status_of(game: &Game, stored: GameStage) -> GameStage {
    if game.is_over() {
        GameStage::Finished
    } else {
        stored
    }
}

impl SharedSituation {
    /// The situation of `game` at server time `now`.
    pub fn of(game: &Game, mode: GameMode, stored: GameStage, now: UnixMs) -> SharedSituation {
        let position = game.position();
        let turn = position.turn();
        let status = status_of(game, stored);
        let playing = status == GameStage::Playing;
        let check = position
            .is_check()
            .then(|| position.board().king_of(turn))
            .flatten();
        SharedSituation {
            mode,
            fen: position.fen(),
            turn,
            check,
            status,
            clocks: game.remaining_ms(now.millis()).map(|remaining| ClocksView {
                white_ms: remaining.white,
                black_ms: remaining.black,
                running: game.running_clock(),
                as_of: now.millis(),
            }),
            first_move_deadline: if playing {
                game.first_move_deadline()
            } else {
                None
            },
            dests: if playing {
                Dests::from_pairs(position.legal_destinations())
            } else {
                Dests::new()
            },
            premove_dests: if playing && mode == GameMode::Online {
                Dests::from_pairs(position.premove_destinations(turn.other()))
            } else {
                Dests::new()
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

    /// Whether a viewer holding `seat` sees the legal destinations and the
    /// premove destinations.
    fn visible_to(&self, seat: Seat) -> (bool, bool) {
        let sees_dests = seat.holds(self.turn);
        // A local player holds both seats and never premoves.
        let sees_premoves = seat == Seat::of(self.turn.other());
        (sees_dests, sees_premoves)
    }

    /// What a viewer holding `seat` sees.
    pub fn for_seat(&self, seat: Seat) -> SituationView {
        let (sees_dests, sees_premoves) = self.visible_to(seat);
        SituationView {
            fen: self.fen.clone(),
            turn: self.turn,
            check: self.check,
            status: self.status,
            clocks: self.clocks,
            first_move_deadline: self.first_move_deadline,
            dests: if sees_dests {
                self.dests.clone()
            } else {
                Dests::new()
            },
            premove_dests: if sees_premoves {
                self.premove_dests.clone()
            } else {
                Dests::new()
            },
            offers: self.offers,
            result: self.result,
        }
    }
}

/// [`SharedSituation::for_seat`] without copying the situation: written as
/// the [`SituationView`] it would make, field for field. Every socket
/// renders every event with it, so the position, the destinations and the
/// event are not copied once per socket per move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeatSituation<'a> {
    pub shared: &'a SharedSituation,
    pub seat: Seat,
}

impl Serialize for SeatSituation<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let shared = self.shared;
        let (sees_dests, sees_premoves) = shared.visible_to(self.seat);
        let none = Dests::new();
        let mut view = serializer.serialize_struct("SituationView", 10)?;
        view.serialize_field("fen", &shared.fen)?;
        view.serialize_field("turn", &shared.turn)?;
        view.serialize_field("check", &shared.check)?;
        view.serialize_field("status", &shared.status)?;
        view.serialize_field("clocks", &shared.clocks)?;
        view.serialize_field("first_move_deadline", &shared.first_move_deadline)?;
        view.serialize_field("dests", if sees_dests { &shared.dests } else { &none })?;
        let premove_dests = if sees_premoves {
            &shared.premove_dests
        } else {
            &none
        };
        view.serialize_field("premove_dests", premove_dests)?;
        view.serialize_field("offers", &shared.offers)?;
        view.serialize_field("result", &shared.result)?;
        view.end()
    }
}

/// The premove of `color` as its owner sees it.
pub fn premove_of(game: &Game, color: Color) -> Option<PremoveView> {
    game.premove(color).map(|premove| PremoveView {
        uci: premove.uci().to_string(),
    })
}

/// The public form of a game event; `None` for private (premove) events,
/// which go only to their owner as `premove` messages.
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
        | EventKind::PremoveDropped { .. } => return None,
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
        // The new game's id is known only once it is stored; see `live`.
        EventKind::RematchAccepted { .. } => return None,
        EventKind::GameEnded { winner, reason, .. } => EventView::Ended {
            result: ResultView {
                winner: *winner,
                reason: reason.code(),
            },
        },
        EventKind::TakeBack { ply, .. } => EventView::Takeback { moves: *ply },
    })
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

    #[test]
    fn a_seat_situation_is_written_as_the_view_of_that_seat() {
        let shared = situation();
        assert!(!shared.dests.is_empty() && !shared.premove_dests.is_empty());
        for seat in [Seat::White, Seat::Black, Seat::Both, Seat::None] {
            let borrowed = serde_json::to_string(&SeatSituation {
                shared: &shared,
                seat,
            })
            .expect("json");
            let owned = serde_json::to_string(&shared.for_seat(seat)).expect("json");
            assert_eq!(borrowed, owned, "{seat:?}");
        }
    }
}
