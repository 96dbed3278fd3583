//! The clock rules of the crate's documentation, sentence by sentence, and
//! the first-move rules.

use chess_game::{EndReason, EventKind, GameError, GameResult, GameStatus};
use chess_rules::ByColor;

use crate::helpers::*;

const FIVE_MIN: u64 = 300_000;

fn clocks(white: u64, black: u64) -> Option<ByColor<u64>> {
    Some(ByColor { white, black })
}

#[test]
fn first_moves_of_both_sides_are_time_free_and_earn_no_bonus() {
    let mut g = game("5+3");
    play(&mut g, White, "e2e4", T0 + 20_000);
    assert_eq!(g.remaining_ms(T0 + 20_000), clocks(FIVE_MIN, FIVE_MIN));
    play(&mut g, Black, "e7e5", T0 + 40_000);
    assert_eq!(g.remaining_ms(T0 + 40_000), clocks(FIVE_MIN, FIVE_MIN));
    assert_eq!(g.moves()[0].spent_ms, 0);
    assert_eq!(g.moves()[1].spent_ms, 0);
    assert_eq!(g.moves()[1].remaining_ms, clocks(FIVE_MIN, FIVE_MIN));
}

#[test]
fn no_clock_runs_before_blacks_first_move() {
    let mut g = game("5+3");
    assert_eq!(g.running_clock(), None);
    play(&mut g, White, "e2e4", T0 + 1_000);
    assert_eq!(g.running_clock(), None);
    assert_eq!(g.remaining_ms(T0 + 24_000), clocks(FIVE_MIN, FIVE_MIN));
}

#[test]
fn whites_clock_starts_when_black_makes_the_first_move() {
    let mut g = game("5+3");
    play(&mut g, White, "e2e4", T0 + 1_000);
    let events = play(&mut g, Black, "e7e5", T0 + 5_000);
    match &events[0].kind {
        EventKind::Move { running, .. } => assert_eq!(*running, Some(White)),
        other => panic!("{other:?}"),
    }
    assert_eq!(g.running_clock(), Some(White));
    assert_eq!(
        g.remaining_ms(T0 + 12_345),
        clocks(FIVE_MIN - 7_345, FIVE_MIN)
    );
}

#[test]
fn bonus_begins_with_whites_second_move_and_follows_every_later_move() {
    let mut g = game("5+3");
    play(&mut g, White, "e2e4", T0 + 1_000);
    play(&mut g, Black, "e7e5", T0 + 2_000);
    // White thinks 4 s: 300 - 4 + 3.
    play(&mut g, White, "g1f3", T0 + 6_000);
    assert_eq!(g.remaining_ms(T0 + 6_000), clocks(299_000, FIVE_MIN));
    // Black's clock started with White's second move; Black thinks 10 s.
    play(&mut g, Black, "b8c6", T0 + 16_000);
    assert_eq!(g.remaining_ms(T0 + 16_000), clocks(299_000, 293_000));
    // A quick move gains time, by the increment only.
    play(&mut g, White, "f1c4", T0 + 16_500);
    assert_eq!(g.remaining_ms(T0 + 16_500), clocks(301_500, 293_000));
    let spent: Vec<u64> = g.moves().iter().map(|m| m.spent_ms).collect();
    assert_eq!(spent, [0, 0, 4_000, 10_000, 500]);
}

#[test]
fn increment_only_games_start_with_the_increment_but_at_least_three_seconds() {
    for (time_control, start) in [("0+1", 3_000), ("0+3", 3_000), ("0+5", 5_000)] {
        let mut g = game(time_control);
        play_line(&mut g, &["e2e4", "e7e5"], T0 + 1_000);
        assert_eq!(
            g.remaining_ms(T0 + 2_000),
            clocks(start, start),
            "{time_control}"
        );
        assert_eq!(g.check_time(T0 + 2_000 + start - 1), [], "{time_control}");
        assert_eq!(codes(&g.check_time(T0 + 2_000 + start)), ["game_ended"]);
    }
}

/// 1+0 with White's clock started at `T0 + 2_000` holding 60 s.
fn bullet_with_white_running() -> chess_game::Game {
    let mut g = game("1+0");
    play(&mut g, White, "e2e4", T0 + 1_000);
    play(&mut g, Black, "e7e5", T0 + 2_000);
    g
}

#[test]
fn flag_falls_exactly_at_zero_and_not_one_millisecond_earlier() {
    let mut g = bullet_with_white_running();
    assert_eq!(g.next_deadline(), Some(T0 + 62_000));
    assert_eq!(g.check_time(T0 + 61_999), []);
    assert_eq!(g.remaining_ms(T0 + 61_999), clocks(1, 60_000));
    assert_eq!(g.status(), GameStatus::Started);
    let v = g.version();
    let events = g.check_time(T0 + 62_000);
    assert_versions(&g, v, &events);
    assert_eq!(
        events[0].kind,
        EventKind::GameEnded {
            winner: Some(Black),
            reason: EndReason::Timeout,
            remaining_ms: clocks(0, 60_000),
        }
    );
    assert_eq!(g.next_deadline(), None);
    assert_eq!(g.running_clock(), None);
    // Nothing more happens with time.
    assert_eq!(g.check_time(T0 + 100_000), []);
    assert_eq!(g.remaining_ms(T0 + 100_000), clocks(0, 60_000));
}

#[test]
fn move_with_one_millisecond_left_is_in_time() {
    let mut g = bullet_with_white_running();
    play(&mut g, White, "g1f3", T0 + 61_999);
    assert_eq!(g.remaining_ms(T0 + 61_999), clocks(1, 60_000));
    assert!(!g.is_over());
}

#[test]
fn late_move_is_rejected_and_the_game_ends_on_time() {
    let mut g = bullet_with_white_running();
    let events = g.play_uci(White, "g1f3", Some(2), T0 + 62_000).unwrap();
    assert_eq!(codes(&events), ["game_ended"]);
    assert_eq!(g.ply(), 2, "the late move was not played");
    assert_eq!(g.result().unwrap().reason, EndReason::Timeout);
    assert_eq!(g.result().unwrap().winner, Some(Black));
}

#[test]
fn timeout_seen_by_a_move_of_the_side_not_to_move() {
    let mut g = bullet_with_white_running();
    // Black tries to move out of turn after White's flag fell: the flag is
    // what the game reports.
    let events = g.play_uci(Black, "g8f6", None, T0 + 70_000).unwrap();
    assert_eq!(codes(&events), ["game_ended"]);
    assert_eq!(g.result().unwrap().winner, Some(Black));
}

#[test]
fn next_deadline_follows_the_game() {
    let mut g = game("1+0"); // bullet: 20 s for each first move
    assert_eq!(g.next_deadline(), Some(T0 + 20_000));
    play(&mut g, White, "e2e4", T0 + 3_000);
    assert_eq!(g.next_deadline(), Some(T0 + 23_000));
    play(&mut g, Black, "e7e5", T0 + 5_000);
    assert_eq!(g.next_deadline(), Some(T0 + 65_000));
    play(&mut g, White, "g1f3", T0 + 15_000); // White keeps 50 s
    assert_eq!(g.next_deadline(), Some(T0 + 75_000)); // Black's 60 s run
}

/// Plays two quiet king moves from `fen` (White `b1a1`, Black `h8h7`) in a
/// 1+0 game, so White's clock runs from `T0 + 2_000`, then lets it flag.
fn flag_white_in(fen: &str) -> GameResult {
    let mut g = game_from("1+0", fen);
    play_line(&mut g, &["b1a1", "h8h7"], T0 + 1_000);
    let events = g.check_time(T0 + 62_000);
    assert_eq!(codes(&events), ["game_ended"], "{fen}");
    g.result().expect("ended")
}

#[test]
fn timeout_is_a_draw_when_the_other_side_cannot_mate() {
    let draw = GameResult {
        winner: None,
        reason: EndReason::TimeoutVsInsufficientMaterial,
    };
    let loss = GameResult {
        winner: Some(Black),
        reason: EndReason::Timeout,
    };
    for (black_has, fen, expected) in [
        ("a bare king", "7k/8/8/8/8/Q7/8/1K6 w - - 0 1", draw),
        (
            "a knight against a queen",
            "7k/8/2n5/8/8/Q7/8/1K6 w - - 0 1",
            draw,
        ),
        ("a bishop", "2b4k/8/8/8/8/Q7/8/1K6 w - - 0 1", draw),
        (
            "a knight against a rook",
            "7k/8/2n5/8/8/R7/8/1K6 w - - 0 1",
            loss,
        ),
        ("two knights", "7k/8/2n2n2/8/8/Q7/8/1K6 w - - 0 1", loss),
        ("a rook", "7k/6r1/8/8/8/Q7/8/1K6 w - - 0 1", loss),
        ("a pawn", "7k/p7/8/8/8/Q7/8/1K6 w - - 0 1", loss),
    ] {
        assert_eq!(flag_white_in(fen), expected, "Black has {black_has}");
    }
}

#[test]
fn timeout_with_the_other_sides_draw_offer_open_still_loses() {
    let mut g = bullet_with_white_running();
    g.offer_draw(Black, T0 + 3_000).unwrap();
    let events = g.check_time(T0 + 62_000);
    assert_eq!(
        events[0].kind,
        EventKind::GameEnded {
            winner: Some(Black),
            reason: EndReason::Timeout,
            remaining_ms: clocks(0, 60_000),
        }
    );
}

#[test]
fn timeout_after_offering_a_draw_and_moving_loses_for_the_flagging_side() {
    // White offers, moves, and Black never answers: Black's flag falls with
    // White's offer still open, and White wins on time.
    let mut g = game("15+0");
    play_line(&mut g, &["e2e4", "e7e5"], T0 + 1_000);
    g.offer_draw(White, T0 + 3_000).unwrap();
    play(&mut g, White, "g1f3", T0 + 4_000);
    assert_eq!(g.draw_offer(), Some(White), "the offer stays open");
    let events = g.check_time(T0 + 4_000 + 900_000);
    assert_eq!(codes(&events), ["game_ended"]);
    assert_eq!(
        g.result(),
        Some(GameResult {
            winner: Some(White),
            reason: EndReason::Timeout
        })
    );
}

#[test]
fn own_open_draw_offer_does_not_save_the_side_that_flags() {
    let mut g = bullet_with_white_running();
    g.offer_draw(White, T0 + 3_000).unwrap();
    g.check_time(T0 + 62_000);
    assert_eq!(g.result().unwrap().winner, Some(Black));
    assert_eq!(g.result().unwrap().reason, EndReason::Timeout);
}

#[test]
fn timeout_with_a_draw_offer_open_is_a_draw_only_without_mating_material() {
    // Black has a bare king and offered a draw: the draw comes from the
    // material, not from the offer.
    let mut g = game_from("1+0", "7k/8/8/8/8/Q7/8/1K6 w - - 0 1");
    play_line(&mut g, &["b1a1", "h8h7"], T0 + 1_000);
    g.offer_draw(Black, T0 + 3_000).unwrap();
    g.check_time(T0 + 62_000);
    assert_eq!(
        g.result(),
        Some(GameResult {
            winner: None,
            reason: EndReason::TimeoutVsInsufficientMaterial
        })
    );
}

#[test]
fn either_player_may_abort_before_both_have_moved() {
    let mut g = game("5+3");
    let events = g.abort(T0 + 1_000).unwrap();
    assert_eq!(codes(&events), ["game_ended"]);
    assert_eq!(
        g.result(),
        Some(GameResult {
            winner: None,
            reason: EndReason::Aborted
        })
    );
    assert!(!g.result().unwrap().is_draw());

    let mut g = game("5+3");
    play(&mut g, White, "e2e4", T0 + 1_000);
    assert_eq!(g.status(), GameStatus::Created);
    assert!(g.is_abortable());
    g.abort(T0 + 2_000).unwrap();
    assert_eq!(g.result().unwrap().reason, EndReason::Aborted);
}

#[test]
fn after_both_moved_resign_is_the_way_out() {
    let mut g = game("5+3");
    assert_eq!(g.resign(White, T0), Err(GameError::ResignNotAllowedYet));
    play_line(&mut g, &["e2e4", "e7e5"], T0 + 1_000);
    assert!(!g.is_abortable());
    assert_eq!(g.abort(T0 + 3_000), Err(GameError::AbortNotAllowed));
    g.resign(White, T0 + 3_000).unwrap();
    assert_eq!(
        g.result(),
        Some(GameResult {
            winner: Some(Black),
            reason: EndReason::Resignation
        })
    );
}

#[test]
fn first_move_deadline_aborts_a_game_white_never_starts() {
    let mut g = game("5+3"); // blitz: 25 s
    assert_eq!(g.check_time(T0 + 24_999), []);
    let events = g.check_time(T0 + 25_000);
    assert_eq!(codes(&events), ["game_ended"]);
    assert_eq!(g.result().unwrap().reason, EndReason::Aborted);
}

#[test]
fn first_move_deadline_for_black_counts_from_whites_first_move() {
    let mut g = game("5+3");
    play(&mut g, White, "e2e4", T0 + 20_000);
    assert_eq!(g.check_time(T0 + 44_999), []);
    // A first move arriving after the deadline is too late: aborted.
    let events = g.play_uci(Black, "e7e5", Some(1), T0 + 45_000).unwrap();
    assert_eq!(codes(&events), ["game_ended"]);
    assert_eq!(g.result().unwrap().reason, EndReason::Aborted);
    assert_eq!(g.ply(), 1);
}

#[test]
fn first_move_deadline_depends_on_speed() {
    for (time_control, deadline) in [
        ("0.25+0", 15_000),
        ("1+0", 20_000),
        ("5+0", 25_000),
        ("10+0", 30_000),
        ("30+0", 35_000),
        ("correspondence", 86_400_000),
    ] {
        let g = game(time_control);
        assert_eq!(g.next_deadline(), Some(T0 + deadline), "{time_control}");
    }
}

#[test]
fn correspondence_has_no_clock_and_no_flag() {
    let mut g = game("correspondence");
    play_line(&mut g, &["e2e4", "e7e5", "g1f3"], T0 + 1_000);
    assert_eq!(g.running_clock(), None);
    assert_eq!(g.remaining_ms(T0 + 1_000_000_000), None);
    assert_eq!(g.next_deadline(), None);
    assert_eq!(g.check_time(T0 + 365 * 86_400_000), []);
    assert!(!g.is_over());
    assert!(
        g.moves()
            .iter()
            .all(|m| m.remaining_ms.is_none() && m.spent_ms == 0)
    );
}

#[test]
fn times_before_the_last_event_count_as_that_event() {
    let mut g = bullet_with_white_running();
    // A server clock that stepped back does not give White time back.
    play(&mut g, White, "g1f3", T0 + 1_000);
    assert_eq!(g.moves()[2].at_ms, T0 + 2_000);
    assert_eq!(g.moves()[2].spent_ms, 0);
}
