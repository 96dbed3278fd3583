//! A finished game handed over whole (played in a browser) is checked: its
//! result must follow from its moves.

use chess_game::{EndReason, Game, GameResult, ResultMismatch};
use chess_rules::Color;

use crate::helpers::*;

/// `game` as saved, claiming `winner` and `reason` instead, read back.
fn claiming(game: &Game, winner: Option<Color>, reason: EndReason) -> Game {
    let mut saved = game.saved().clone();
    saved.state.result = Some(GameResult { winner, reason });
    Game::restore(saved).expect("the moves replay")
}

const FOOLS_MATE: [&str; 4] = ["f2f3", "e7e5", "g2g4", "d8h4"];

#[test]
fn the_boards_own_ending_passes_and_any_other_result_for_it_does_not() {
    let mut mated = game("5+0");
    play_line(&mut mated, &FOOLS_MATE, T0 + 1_000);
    assert_eq!(mated.verify_result(), Ok(()));
    let board = ResultMismatch::BoardDisagrees {
        board: EndReason::Checkmate,
    };
    assert_eq!(
        claiming(&mated, Some(White), EndReason::Resignation).verify_result(),
        Err(board)
    );
    assert_eq!(
        claiming(&mated, Some(White), EndReason::Checkmate).verify_result(),
        Err(board),
        "the wrong winner"
    );
    assert_eq!(
        claiming(&mated, None, EndReason::Stalemate).verify_result(),
        Err(board)
    );
}

#[test]
fn an_ending_of_the_board_that_the_position_is_not_is_refused() {
    let mut open = game("5+0");
    play_line(&mut open, &["e2e4", "e7e5"], T0 + 1_000);
    for (winner, reason) in [
        (Some(White), EndReason::Checkmate),
        (None, EndReason::Stalemate),
        (None, EndReason::ThreefoldRepetition),
        (None, EndReason::FiftyMoves),
        (None, EndReason::InsufficientMaterial),
    ] {
        assert_eq!(
            claiming(&open, winner, reason).verify_result(),
            Err(ResultMismatch::NoSuchPosition { claimed: reason }),
            "{reason:?}"
        );
    }
    assert_eq!(open.verify_result(), Err(ResultMismatch::NotOver));
}

#[test]
fn resignations_and_timeouts_need_the_right_winner_and_a_clock() {
    let mut open = game("5+0");
    play_line(&mut open, &["e2e4", "e7e5"], T0 + 1_000);
    // White is to move: only White's clock can have run out.
    assert_eq!(
        claiming(&open, Some(Black), EndReason::Timeout).verify_result(),
        Ok(())
    );
    assert_eq!(
        claiming(&open, Some(White), EndReason::Timeout).verify_result(),
        Err(ResultMismatch::WrongWinner {
            claimed: EndReason::Timeout
        })
    );
    assert_eq!(
        claiming(&open, Some(White), EndReason::Resignation).verify_result(),
        Ok(())
    );
    assert_eq!(
        claiming(&open, None, EndReason::Resignation).verify_result(),
        Err(ResultMismatch::WrongWinner {
            claimed: EndReason::Resignation
        })
    );
    let mut untimed = game("correspondence");
    play_line(&mut untimed, &["e2e4", "e7e5"], T0 + 1_000);
    assert_eq!(
        claiming(&untimed, Some(Black), EndReason::Timeout).verify_result(),
        Err(ResultMismatch::NoClock)
    );
    for reason in [EndReason::Agreement, EndReason::Aborted, EndReason::NoStart] {
        assert_eq!(
            claiming(&open, None, reason).verify_result(),
            Err(ResultMismatch::NotPossibleHere { claimed: reason })
        );
    }
}

#[test]
fn a_timeout_against_a_side_that_cannot_mate_is_a_draw_and_nothing_else() {
    // White (to move) has a rook; Black only a king: White's flag is a draw.
    let mut lone = game_from("1+0", "4k3/8/8/8/8/8/8/R3K3 w - - 0 1");
    play_line(&mut lone, &["a1a2", "e8d8"], T0 + 1_000);
    let deadline = lone.flag_deadline().expect("White's clock runs");
    lone.check_time(deadline);
    assert_eq!(
        lone.result().map(|r| r.reason),
        Some(EndReason::TimeoutVsInsufficientMaterial)
    );
    assert_eq!(lone.verify_result(), Ok(()));
    assert_eq!(
        claiming(&lone, Some(Black), EndReason::Timeout).verify_result(),
        Err(ResultMismatch::WrongWinner {
            claimed: EndReason::Timeout
        })
    );
    // With mating material on the waiting side, the flag loses.
    let mut open = game("1+0");
    play_line(&mut open, &["e2e4", "e7e5"], T0 + 1_000);
    assert_eq!(
        claiming(&open, None, EndReason::TimeoutVsInsufficientMaterial).verify_result(),
        Err(ResultMismatch::WrongWinner {
            claimed: EndReason::TimeoutVsInsufficientMaterial
        })
    );
}
