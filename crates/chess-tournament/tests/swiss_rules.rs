//! Hand-made tournaments, one per rule of the Dutch system (2017), with the
//! expected pairing worked out from the rules' text in a comment.
//!
//! Notation in the comments: `1-3 1-0` is a game with 1 White and 3 Black
//! that White won; `W`/`B` a colour played; "wants B" a colour preference.

mod common;

use chess_tournament::swiss::{
    Board, ByeKind, Colour, PairingByePoints, PairingError, Player, RoundRecord, Scoring,
    Tournament, pair_round, read_trf, write_trf,
};
use common::Game;

fn tournament(players: u32, total_rounds: u32, rounds: &[&[Game]]) -> Tournament {
    let list: Vec<Player> = (1..=players)
        .map(|n| Player::new(n, 2600 - 10 * u16::try_from(n).unwrap()))
        .collect();
    let list = common::play(list, rounds);
    Tournament {
        players: list,
        total_rounds,
        completed_rounds: u32::try_from(rounds.len()).unwrap(),
        forbidden: Vec::new(),
        initial_colour: Colour::White,
        scoring: Scoring::default(),
    }
}

fn boards(list: &[(u32, u32)]) -> Vec<Board> {
    list.iter()
        .map(|&(white, black)| Board { white, black })
        .collect()
}

#[test]
fn round_one_top_half_against_bottom_half_with_alternating_colours() {
    // Round 1, 8 players, one homogeneous bracket: S1 = 1-4, S2 = 5-8,
    // 1-5, 2-6, 3-7, 4-8. E.5: an odd-numbered higher player gets the
    // initial colour (White), an even-numbered one the other.
    let t = tournament(8, 5, &[]);
    let round = pair_round(&t, &[]).unwrap();
    assert_eq!(round.boards, boards(&[(1, 5), (6, 2), (3, 7), (8, 4)]));
    assert_eq!(round.bye, None);
}

#[test]
fn odd_number_the_lowest_gets_the_pairing_allocated_bye() {
    // Round 1, 7 players: MaxPairs = 3, S1 = 1-3, S2 = 4-7; 7 is left
    // over and, being the last bracket, gets the bye.
    let t = tournament(7, 5, &[]);
    let round = pair_round(&t, &[]).unwrap();
    assert_eq!(round.boards, boards(&[(1, 4), (5, 2), (3, 6)]));
    assert_eq!(round.bye, Some(7));
}

#[test]
fn c1_no_rematch_a_transposition_of_s2() {
    // R1: 1-3 =, 2-4 =; everyone has 1/2. R2: S1 = {1,2}, S2 = {3,4}: the
    // candidate 1-3, 2-4 repeats both games (C.1); the next transposition
    // 1-4, 2-3 is legal and grants every colour (1, 2 played White and
    // want Black).
    let t = tournament(4, 5, &[&[(1, 3, "="), (2, 4, "=")]]);
    let round = pair_round(&t, &[]).unwrap();
    assert_eq!(round.boards, boards(&[(4, 1), (3, 2)]));
}

#[test]
fn forbidden_pairs_act_like_a_rematch() {
    // Round 1 with 1 and 3 forbidden to meet: 1-3 is out like a rematch,
    // the next transposition is 1-4, 2-3. E.5 gives 1 White and 2 Black.
    let mut t = tournament(4, 5, &[]);
    t.forbidden = vec![(1, 3)];
    let round = pair_round(&t, &[]).unwrap();
    assert_eq!(round.boards, boards(&[(1, 4), (3, 2)]));
}

#[test]
fn forfeited_games_are_no_meeting_and_no_colour() {
    // R1: 1-3 and 2-4 both lost by both players (double forfeits count as
    // forfeit losses here: 1 and 2 "win" nothing). R2: all on 0, the games
    // were not played, so 1-3 and 2-4 may be paired (C.1 is about games
    // played) and nobody has a colour yet: E.5 as in round 1.
    let mut t = tournament(4, 5, &[&[(1, 3, "-+"), (2, 4, "-+")]]);
    for player in &mut t.players {
        if let RoundRecord::Forfeit { won, .. } = &mut player.rounds[0] {
            *won = false;
        }
    }
    let round = pair_round(&t, &[]).unwrap();
    assert_eq!(round.boards, boards(&[(1, 3), (4, 2)]));
}

#[test]
fn c2_no_pairing_allocated_bye_after_a_forfeit_win() {
    // R1: 1-2 1-0, 4-3 0-1, 5-6 +- (5 wins without playing). R2: 2, 4, 6
    // are absent; 1, 3, 5 are on 1 point. S1 = {1}, S2 = {3, 5}: 1-3 grants
    // both colours (1 wants B, 3 wants W) and would leave 5 the bye, but 5
    // has scored a win without playing (C.2). So 1-5 (5 has no colour yet,
    // 1 gets his Black) and 3 gets the bye.
    let t = tournament(6, 5, &[&[(1, 2, "1-0"), (4, 3, "0-1"), (5, 6, "+-")]]);
    let round = pair_round(&t, &[2, 4, 6]).unwrap();
    assert_eq!(round.boards, boards(&[(5, 1)]));
    assert_eq!(round.bye, Some(3));
}

#[test]
fn c2_the_pairing_allocated_bye_at_most_once() {
    // The bye is worth 1/2 here so that everyone stays on 1/2. R1: 1-4 =,
    // 5-2 =, 3 got the bye. R2 with 4 and 5 absent: 1 (wants B), 2 (wants
    // W) and 3 (no colour yet). S1 = {1}, S2 = {2, 3}: 1-2 grants both
    // colours and would leave 3 the bye, but 3 has had it (C.2): 1-3
    // instead (3 takes the White 1 does not want) and 2 gets the bye.
    let mut t = tournament(5, 5, &[&[(1, 4, "="), (5, 2, "="), (3, 0, "U")]]);
    t.scoring.pairing_bye = PairingByePoints::Draw;
    let round = pair_round(&t, &[4, 5]).unwrap();
    assert_eq!(round.boards, boards(&[(3, 1)]));
    assert_eq!(round.bye, Some(2));
}

#[test]
fn c3_same_absolute_preference_cannot_meet_outside_the_last_round() {
    // R1: 1-3 =, 2-4 =; R2: 1-4 =, 2-3 =. Everyone has 1 point; 1 and 2
    // played White twice (absolute Black), 3 and 4 Black twice (absolute
    // White). The only pairs not yet played are 1-2 and 3-4, and C.3 bars
    // both in round 3 of 4: no legal pairing.
    let t = tournament(
        4,
        4,
        &[&[(1, 3, "="), (2, 4, "=")], &[(1, 4, "="), (2, 3, "=")]],
    );
    assert_eq!(pair_round(&t, &[]), Err(PairingError::NoLegalPairing));
}

#[test]
fn e4_equal_preferences_go_to_the_higher_ranked() {
    // R1: 1-3 1-0, 2-4 1-0. R2: {1, 2} and {3, 4}. 1 and 2 both want Black
    // (mild), their histories are the same (E.3 finds no round with
    // different colours), so E.4 grants the higher-ranked 1: 2-1. Likewise
    // 3 (higher than 4) gets the White both want: 3-4.
    let t = tournament(4, 5, &[&[(1, 3, "1-0"), (2, 4, "1-0")]]);
    let round = pair_round(&t, &[]).unwrap();
    assert_eq!(round.boards, boards(&[(2, 1), (3, 4)]));
}

#[test]
fn c10_colour_preferences_choose_among_transpositions() {
    // R1: 1-3 =, 4-2 =. All on 1/2: 1 wants B, 2 wants W, 3 wants W, 4
    // wants B. S1 = {1, 2}, S2 = {3, 4}: 1-3 is a rematch; 1-4 and 2-3
    // leaves 1 and 4 both wanting Black and 2 and 3 both wanting White (two
    // players without their colour, C.10). An exchange does better: 1-2
    // and 3-4 grant all four preferences. D.2: the first exchange swaps 2
    // (the highest of S1) with 3 (the lowest of S2): S1 = {1, 3}, S2 =
    // {2, 4}: 1-2, 3-4. Colours: 2-1, 3-4.
    let t = tournament(4, 5, &[&[(1, 3, "="), (4, 2, "=")]]);
    let round = pair_round(&t, &[]).unwrap();
    assert_eq!(round.boards, boards(&[(2, 1), (3, 4)]));
}

#[test]
fn mdp_is_paired_first_in_a_heterogeneous_bracket() {
    // R1: 1-3 1-0, 2-4 =. R2: 1 (1 point) alone floats into the 1/2
    // bracket {2, 4} as an MDP. MDP-pairing: S1 = {1}, S2 = {2, 4}; 1-2
    // leaves both wanting Black, 1-4 grants both (4 wants White): 4-1.
    // The remainder {2} floats to 3: 2 wants Black, 3 wants White: 3-2.
    let t = tournament(4, 5, &[&[(1, 3, "1-0"), (2, 4, "=")]]);
    let round = pair_round(&t, &[]).unwrap();
    assert_eq!(round.boards, boards(&[(4, 1), (3, 2)]));
}

#[test]
fn collapsed_last_bracket_when_the_lowest_group_cannot_be_paired() {
    // R1: 1-4, 2-5, 3-6, all won by White. R2 with 4-5, 4-6 and 5-6
    // forbidden: the lowest group {4, 5, 6} cannot pair among itself, so
    // whatever the top bracket {1, 2, 3} floats (one player), the round
    // cannot be completed. A.9: the top bracket is the penultimate pairing
    // bracket and is paired again under C.4: all three must float, and
    // the collapsed last bracket is {1, 2, 3 (MDPs), 4, 5, 6}. MDP-pairing
    // S1 = {1, 2, 3}, S2 = {4, 5, 6}, transpositions in lexicographic
    // order: 4-5-6 (1-4 rematch), 4-6-5 (1-4), 5-4-6 (3-6 rematch),
    // 5-6-4: 1-5, 2-6, 3-4, legal and every colour granted (1-3 played
    // White, 4-6 Black).
    let mut t = tournament(6, 5, &[&[(1, 4, "1-0"), (2, 5, "1-0"), (3, 6, "1-0")]]);
    t.forbidden = vec![(4, 5), (4, 6), (5, 6)];
    let round = pair_round(&t, &[]).unwrap();
    assert_eq!(round.boards, boards(&[(5, 1), (6, 2), (4, 3)]));
}

#[test]
fn topscorers_in_the_last_round() {
    // 6 players, 3 rounds. R1: 1-4 1-0, 2-5 1-0, 6-3 0-1. R2: 1-6 1-0,
    // 2-4 1-0, 3-5 1-0. Before R3 (the last): 1, 2 (WW) and 3 (BW) have 2
    // points, more than half of 2: topscorers (A.7). 4, 5 have BB (absolute
    // White), 6 WB. Top bracket {1, 2, 3}, one must float:
    // - 1-2 (both absolute Black, allowed for topscorers) gives one of
    //   them a third White and colour difference +3 (C.8, C.9);
    // - 1-3 floats 2, who has met 4 and 5: the next bracket {2, 4, 5, 6}
    //   has one pair at most (4-5 is barred by C.3), so C.7 prefers
    // - 2-3 floating 1: {1, 4, 5, 6} pairs 1-5 and 4-6. 2-3: 3 (mild Black)
    //   yields to 2's absolute Black (E.2): 3-2.
    // Next bracket: MDP 1 with 4 (played) or 5: 5-1; 4-6: 4 absolute
    // White: 4-6.
    let t = tournament(
        6,
        3,
        &[
            &[(1, 4, "1-0"), (2, 5, "1-0"), (6, 3, "0-1")],
            &[(1, 6, "1-0"), (2, 4, "1-0"), (3, 5, "1-0")],
        ],
    );
    let round = pair_round(&t, &[]).unwrap();
    assert_eq!(round.boards, boards(&[(3, 2), (5, 1), (4, 6)]));
}

#[test]
fn half_point_pairing_bye_only_changes_scores() {
    // With the bye worth 1/2, 5 (bye in R1) is on 1/2 with the winners of
    // R1 on 1 and the losers on 0; the pairing follows the scores.
    let mut t = tournament(5, 5, &[&[(1, 3, "1-0"), (4, 2, "0-1"), (5, 0, "U")]]);
    t.scoring.pairing_bye = PairingByePoints::Draw;
    let round = pair_round(&t, &[]).unwrap();
    // {1, 2}: 1 wants B, 2 wants W: 2-1. {5}: floats to {3, 4}; 5 has no
    // colour: 5-3 against 3's wish for White is not needed, 3 gets White:
    // 3-5; 4 gets the bye.
    assert_eq!(round.boards, boards(&[(2, 1), (3, 5)]));
    assert_eq!(round.bye, Some(4));
}

#[test]
fn trf_round_trip() {
    let t = tournament(
        5,
        7,
        &[
            &[(1, 3, "1-0"), (4, 2, "+-"), (5, 0, "U")],
            &[(2, 1, "="), (3, 5, "0-1"), (4, 0, "H")],
        ],
    );
    let file = chess_tournament::swiss::TrfFile {
        tournament: t.clone(),
        next_round: vec![(3, ByeKind::HalfPoint)],
    };
    let text = write_trf("round trip", &file);
    let back = read_trf(&text).unwrap();
    assert_eq!(back.tournament.completed_rounds, 2);
    assert_eq!(back.tournament.total_rounds, 7);
    assert_eq!(back.next_round, vec![(3, ByeKind::HalfPoint)]);
    for (a, b) in t.players.iter().zip(&back.tournament.players) {
        assert_eq!(a.number, b.number);
        assert_eq!(a.rating, b.rating);
        assert_eq!(a.rounds, b.rounds);
    }
}

#[test]
fn trf_errors_are_values() {
    let bad_result = "XXR 5\n001    1      A                                 2400                             1.0    1     2 w X\n";
    assert!(matches!(
        read_trf(bad_result),
        Err(chess_tournament::swiss::TrfError::BadField { line: 2, .. })
    ));
    let no_rounds = "001    1      A                                 2400                             0.0    1\n";
    assert_eq!(
        read_trf(no_rounds),
        Err(chess_tournament::swiss::TrfError::MissingRounds)
    );
    let bad_number = "XXR 5\n001   x1      A\n";
    assert!(read_trf(bad_number).is_err());
}
