//! Property tests over random games with random move times and random
//! offers, premoves and time checks.

use chess_game::{Event, Game, GameError, GameSettings, GameSpec, RewindError};
use chess_rules::{ByColor, Color, Square};
use proptest::prelude::*;

use crate::helpers::*;

const TIME_CONTROLS: [&str; 5] = ["1+0", "3+2", "0.5+0", "0+1", "correspondence"];

/// One random step: what to do, a choice among the options, and how long
/// after the previous step it happens.
#[derive(Clone, Debug)]
struct Step {
    action: u8,
    choice: u16,
    delay_ms: u64,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    // Mostly quick moves, now and then a long think that may flag or miss a
    // first-move deadline.
    let delay = prop_oneof![12 => 0u64..2_500, 1 => 0u64..40_000];
    let step = (0u8..20, any::<u16>(), delay).prop_map(|(action, choice, delay_ms)| Step {
        action,
        choice,
        delay_ms,
    });
    proptest::collection::vec(step, 1..150)
}

fn pick_color(choice: u16) -> Color {
    if choice.is_multiple_of(2) {
        White
    } else {
        Black
    }
}

/// Runs one step; returns the command's outcome.
fn run(game: &mut Game, step: &Step, now: u64) -> Result<Vec<Event>, GameError> {
    let choice = usize::from(step.choice);
    match step.action {
        0..=13 => {
            let moves = game.position().legal_moves();
            let uci = if moves.is_empty() {
                "e2e4".to_owned()
            } else {
                moves[choice % moves.len()].to_uci().to_string()
            };
            game.play_uci(game.turn(), &uci, None, now)
        }
        14 => {
            let waiting = !game.turn();
            let targets: Vec<(Square, Square)> = game
                .position()
                .premove_destinations(waiting)
                .into_iter()
                .flat_map(|(from, to)| to.into_iter().map(move |to| (from, to)))
                .collect();
            let Some(&(from, to)) = targets.get(choice % targets.len().max(1)) else {
                return Ok(Vec::new());
            };
            game.set_premove(waiting, from, to, None, step.delay_ms % 700, now)
        }
        15 => game.offer_draw(pick_color(step.choice), now),
        16 => game.accept_draw(pick_color(step.choice), now),
        17 => game.decline_draw(pick_color(step.choice), now),
        18 => Ok(game.disconnected(pick_color(step.choice), now)),
        _ => Ok(game.check_time(now)),
    }
}

/// Checks every move's clock arithmetic against the one before it: a clock
/// changes only by the time its owner spent on a move and by increments,
/// the other clock stands still, a normal move spends exactly the time since
/// the turn began, and elapsed plus remaining time add up.
fn check_clocks(game: &Game) {
    let Some(start) = game.time_control().starting_ms() else {
        assert!(
            game.moves()
                .iter()
                .all(|m| m.remaining_ms.is_none() && m.spent_ms == 0)
        );
        return;
    };
    let increment = game.time_control().increment_ms().unwrap_or(0);
    let mut before = ByColor {
        white: start,
        black: start,
    };
    let mut turn_began = game.created_at_ms();
    let mut mover = game.spec().initial_position().turn();
    let mut spent_total = ByColor::<u64>::default();
    let mut bonus_total = ByColor::<u64>::default();
    for (ply, m) in game.moves().iter().enumerate() {
        let after = m.remaining_ms.expect("real-time moves carry clocks");
        let timed = ply >= 2;
        let bonus = if timed { increment } else { 0 };
        if !timed {
            assert_eq!(m.spent_ms, 0, "first moves are free");
        } else if !m.premove {
            assert_eq!(m.spent_ms, m.at_ms - turn_began, "ply {ply}");
        }
        assert!(
            m.spent_ms < *before.get(mover) || !timed,
            "a flagged move was accepted"
        );
        assert_eq!(*after.get(mover), *before.get(mover) - m.spent_ms + bonus);
        assert_eq!(*after.get(!mover), *before.get(!mover), "idle clock moved");
        assert!(
            *after.get(mover) <= *before.get(mover) + increment,
            "gained more than the increment"
        );
        *spent_total.get_mut(mover) += m.spent_ms;
        *bonus_total.get_mut(mover) += bonus;
        before = after;
        turn_began = m.at_ms;
        mover = !mover;
    }
    if !game.is_over() {
        for color in Color::ALL {
            assert_eq!(
                start + bonus_total.get(color) - spent_total.get(color),
                *before.get(color),
                "elapsed and remaining disagree for {color}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_games_keep_their_invariants(tc_index in 0usize..TIME_CONTROLS.len(), steps in steps()) {
        let spec = GameSpec::standard(tc(TIME_CONTROLS[tc_index]));
        let mut game = Game::new(spec, GameSettings::default(), T0);
        let mut now = T0;
        for step in &steps {
            now += step.delay_ms;
            let before = game.saved().clone();
            let version = game.version();
            match run(&mut game, step, now) {
                Ok(events) => {
                    assert_versions(&game, version, &events);
                    for event in &events {
                        prop_assert!(event.at_ms >= before.state.last_event_at_ms);
                    }
                }
                Err(_) => prop_assert_eq!(game.saved(), &before, "a refused command changed the game"),
            }
            check_clocks(&game);
            if !game.is_over()
                && let Some(color) = game.running_clock()
            {
                // Every command settles time: a running clock still has time.
                prop_assert!(*game.remaining_ms(now).unwrap().get(color) > 0);
            }
            let rebuilt = Game::restore(game.saved().clone()).expect("restore");
            prop_assert_eq!(rebuilt.saved(), game.saved());
            prop_assert_eq!(rebuilt.position(), game.position());
            prop_assert_eq!(rebuilt.next_deadline(), game.next_deadline());
            if game.is_over() {
                let moves = game.position().legal_moves();
                for mv in moves.iter().take(5) {
                    let uci = mv.to_uci().to_string();
                    prop_assert_eq!(
                        game.play_uci(game.turn(), &uci, None, now),
                        Err(GameError::GameOver)
                    );
                }
                prop_assert_eq!(game.saved(), &rebuilt.saved().clone());
                break;
            }
        }
    }

    #[test]
    fn a_rewound_command_leaves_no_trace(tc_index in 0usize..TIME_CONTROLS.len(), steps in steps()) {
        let spec = GameSpec::standard(tc(TIME_CONTROLS[tc_index]));
        let mut game = Game::new(spec, GameSettings::default(), T0);
        let mut now = T0;
        for step in &steps {
            now += step.delay_ms;
            let before = game.saved().clone();
            let position = game.position().clone();
            let checkpoint = game.checkpoint();
            let _ = run(&mut game, step, now);
            match game.rewind(checkpoint) {
                Ok(()) => {
                    prop_assert_eq!(game.saved(), &before, "the rewound game differs");
                    prop_assert_eq!(game.position(), &position);
                    let rebuilt = Game::restore(game.saved().clone()).expect("restore");
                    prop_assert_eq!(rebuilt.position(), game.position());
                    // Carry on with the command applied, as if it had been stored.
                    let _ = run(&mut game, step, now);
                }
                Err(RewindError) => {
                    prop_assert!(game.moves().len() < before.moves.len(), "only a take-back cannot be rewound");
                }
            }
        }
    }
}
