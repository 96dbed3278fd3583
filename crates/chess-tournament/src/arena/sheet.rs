//! A player's score sheet: what each finished game of theirs scored, in the
//! order they finished.
//!
//! - A win scores 2, a draw 1, a loss 0.
//! - **On fire**: after two wins in a row (when the arena has streaks on),
//!   the next results count double (win 4, draw 2) while the wins go on.
//! - **Quick draw**: a draw of fewer than [`QUICK_DRAW_PLIES`] plies scores 0.
//! - **Draw streak**: when not on fire, a draw right after a draw (losses
//!   in between do not count, a win ends it) scores 0 unless the game
//!   reached [`LONG_DRAW_PLIES`] plies.
//! - **Berserk**: a berserked win gains 1 more point if the game reached
//!   [`BERSERK_BONUS_PLIES`] plies. The bonus is never doubled.

/// Plies below which a draw is a quick draw and scores nothing.
pub const QUICK_DRAW_PLIES: u32 = 20;
/// Plies from which a draw scores even right after another draw.
pub const LONG_DRAW_PLIES: u32 = 60;
/// Plies a berserked win needs for its extra point.
pub const BERSERK_BONUS_PLIES: u32 = 14;

/// A game's result for the player whose sheet it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    Win,
    Draw,
    Loss,
}

/// One finished game, as the sheet needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FinishedGame {
    pub outcome: Outcome,
    /// Plies played in the game (both sides' moves).
    pub plies: u32,
    /// Whether this player berserked in it.
    pub berserk: bool,
}

/// How a game counted, for the marks on the standings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// As it came.
    Normal,
    /// Doubled: the player was on fire.
    Double,
    /// A draw that scored nothing: a quick draw, or a draw streak.
    Null,
}

/// What one game scored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameScore {
    pub points: u32,
    pub mark: Mark,
    /// Whether the berserk point was earned (it is in `points`).
    pub berserk_bonus: bool,
}

/// A player's whole sheet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sheet {
    /// Each game's score, in the order the games finished.
    pub games: Vec<GameScore>,
    /// The sum of the games' points.
    pub total: u32,
    /// Whether the player's next game would count double.
    pub on_fire: bool,
}

impl Sheet {
    /// The sheet of `games`, in the order they finished; `streaks` is the
    /// arena's setting (off: nobody is ever on fire).
    pub fn of(games: &[FinishedGame], streaks: bool) -> Sheet {
        let mut sheet = Sheet {
            games: Vec::with_capacity(games.len()),
            total: 0,
            on_fire: false,
        };
        let mut wins_in_a_row = 0_u32;
        // The latest result that was not a loss was a draw.
        let mut after_a_draw = false;
        for game in games {
            let on_fire = streaks && wins_in_a_row >= 2;
            let score = match game.outcome {
                Outcome::Win => {
                    wins_in_a_row += 1;
                    after_a_draw = false;
                    let berserk_bonus = game.berserk && game.plies >= BERSERK_BONUS_PLIES;
                    GameScore {
                        points: if on_fire { 4 } else { 2 } + u32::from(berserk_bonus),
                        mark: if on_fire { Mark::Double } else { Mark::Normal },
                        berserk_bonus,
                    }
                }
                Outcome::Draw => {
                    wins_in_a_row = 0;
                    let streak = !on_fire && after_a_draw && game.plies < LONG_DRAW_PLIES;
                    after_a_draw = true;
                    if game.plies < QUICK_DRAW_PLIES || streak {
                        GameScore {
                            points: 0,
                            mark: Mark::Null,
                            berserk_bonus: false,
                        }
                    } else if on_fire {
                        GameScore {
                            points: 2,
                            mark: Mark::Double,
                            berserk_bonus: false,
                        }
                    } else {
                        GameScore {
                            points: 1,
                            mark: Mark::Normal,
                            berserk_bonus: false,
                        }
                    }
                }
                Outcome::Loss => {
                    wins_in_a_row = 0;
                    GameScore {
                        points: 0,
                        mark: Mark::Normal,
                        berserk_bonus: false,
                    }
                }
            };
            sheet.total += score.points;
            sheet.games.push(score);
        }
        sheet.on_fire = streaks && wins_in_a_row >= 2;
        sheet
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(outcome: Outcome, plies: u32) -> FinishedGame {
        FinishedGame {
            outcome,
            plies,
            berserk: false,
        }
    }

    fn points(games: &[FinishedGame]) -> Vec<u32> {
        Sheet::of(games, true)
            .games
            .iter()
            .map(|score| score.points)
            .collect()
    }

    use Outcome::{Draw, Loss, Win};

    #[test]
    fn two_wins_then_a_draw_make_six() {
        let games = [game(Win, 40), game(Win, 40), game(Draw, 40)];
        let sheet = Sheet::of(&games, true);
        assert_eq!(sheet.total, 6);
        assert_eq!(sheet.games[2].mark, Mark::Double);
        assert!(!sheet.on_fire, "the draw put the fire out");
    }

    #[test]
    fn the_fire_lasts_while_the_wins_go_on() {
        let games = [game(Win, 40); 5];
        assert_eq!(points(&games), [2, 2, 4, 4, 4]);
        assert!(Sheet::of(&games, true).on_fire);
    }

    #[test]
    fn without_streaks_nothing_is_doubled() {
        let games = [game(Win, 40); 4];
        let sheet = Sheet::of(&games, false);
        assert_eq!(sheet.total, 8);
        assert!(!sheet.on_fire);
    }

    #[test]
    fn a_quick_draw_scores_nothing_even_on_fire() {
        assert_eq!(points(&[game(Draw, 19)]), [0]);
        assert_eq!(points(&[game(Draw, 20)]), [1]);
        assert_eq!(
            points(&[game(Win, 40), game(Win, 40), game(Draw, 19)]),
            [2, 2, 0]
        );
    }

    #[test]
    fn a_draw_after_a_draw_scores_nothing_unless_it_is_long() {
        assert_eq!(points(&[game(Draw, 30), game(Draw, 59)]), [1, 0]);
        assert_eq!(points(&[game(Draw, 30), game(Draw, 60)]), [1, 1]);
        // Losses in between do not end the streak; a win does.
        assert_eq!(
            points(&[game(Draw, 30), game(Loss, 30), game(Draw, 30)]),
            [1, 0, 0]
        );
        assert_eq!(
            points(&[game(Draw, 30), game(Win, 30), game(Draw, 30)]),
            [1, 2, 1]
        );
        // A quick draw counts as the draw before.
        assert_eq!(points(&[game(Draw, 10), game(Draw, 30)]), [0, 0]);
    }

    #[test]
    fn a_draw_on_fire_doubles_and_starts_a_draw_streak() {
        // Two wins, then a draw: doubled. The fire is out, so the next draw
        // is a draw right after a draw.
        assert_eq!(
            points(&[game(Win, 30), game(Win, 30), game(Draw, 30), game(Draw, 30)]),
            [2, 2, 2, 0]
        );
    }

    #[test]
    fn a_berserked_win_gains_a_point_from_fourteen_plies() {
        let berserked = |plies| FinishedGame {
            outcome: Win,
            plies,
            berserk: true,
        };
        assert_eq!(points(&[berserked(13)]), [2]);
        assert_eq!(points(&[berserked(14)]), [3]);
        // Never doubled.
        assert_eq!(
            points(&[berserked(14), berserked(14), berserked(14)]),
            [3, 3, 5]
        );
        // A berserked loss or draw gains nothing.
        let drawn = FinishedGame {
            outcome: Draw,
            plies: 40,
            berserk: true,
        };
        assert_eq!(points(&[drawn]), [1]);
    }
}
