//! Tie-breaks (FIDE C.07, 2024) on small tournaments worked out by hand.
//! Every expected value below comes from the arithmetic in the comment
//! next to it, done from the rules as `swiss::tiebreak` states them, not
//! from running the code.
//!
//! Notation: `1-4 1-0` is a game with 1 White and 4 Black that White won;
//! `4-7 +-` a forfeit that 4 (White) won; PAB the pairing-allocated bye
//! (a win's points), HPB a requested half-point bye, ZPB a zero-point bye
//! (late entry, withdrawal). "adj" is a player's score as an opponent
//! (art. 16.3: a requested bye followed only by VURs counts as a draw); a
//! term marked `v` is a voluntary unplayed round (requested bye or forfeit
//! loss), whose Buchholz term is the player's own score (the dummy
//! opponent, 16.4) and which a cut drops first (16.5).

mod common;

use chess_tournament::swiss::{
    Colour, Outcome, Player, RoundRecord, Scoring, Standing, TieBreak, TieBreakError,
    TieBreakValue, Tournament, UnknownTieBreak, standings,
};
use common::Game;

fn tournament(ratings: &[u16], rounds: &[&[Game]]) -> Tournament {
    let players: Vec<Player> = ratings
        .iter()
        .zip(1..)
        .map(|(&rating, n)| Player::new(n, rating))
        .collect();
    let players = common::play(players, rounds);
    Tournament {
        players,
        total_rounds: u32::try_from(rounds.len()).unwrap(),
        completed_rounds: u32::try_from(rounds.len()).unwrap(),
        forbidden: vec![],
        initial_colour: Colour::White,
        scoring: Scoring::default(),
    }
}

/// "11.5", "9.25", "2363" as an exact value (parsed here, independently of
/// the crate).
fn v(text: &str) -> TieBreakValue {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let whole: i64 = whole.parse().unwrap();
    let quarters = match fraction {
        "" => 0,
        "25" => 1,
        "5" => 2,
        "75" => 3,
        other => panic!("not a quarter: {other}"),
    };
    TieBreakValue::from_quarters(4 * whole + quarters)
}

/// The value of tie-break `k` of each player, by pairing number.
fn column(table: &[Standing], k: usize) -> Vec<Option<TieBreakValue>> {
    let mut rows: Vec<&Standing> = table.iter().collect();
    rows.sort_by_key(|s| s.number);
    rows.iter().map(|s| s.tie_breaks[k]).collect()
}

fn order(table: &[Standing]) -> Vec<u32> {
    table.iter().map(|s| s.number).collect()
}

fn all(values: &[&str]) -> Vec<Option<TieBreakValue>> {
    values.iter().map(|t| Some(v(t))).collect()
}

/// Every tie-break but DE, in one list.
const EVERY: [TieBreak; 9] = [
    TieBreak::Buchholz,
    TieBreak::BuchholzCut1,
    TieBreak::BuchholzMedian1,
    TieBreak::SonnebornBerger,
    TieBreak::Wins,
    TieBreak::GamesWon,
    TieBreak::BlackGames,
    TieBreak::AverageRatingOfOpponents,
    TieBreak::PerformanceRating,
];

// ---------------------------------------------------------------------------
// Tournament A: 7 players, 5 rounds.
//
// Ratings: 1 2403, 2 2311, 3 2250, 4 2187, 5 2064, 6 1995, 7 1872.
//
// R1: 1-4 1-0, 5-2 0-1, 3-6 =          7 ZPB (enters late, from round 2)
// R2: 2-1 =,   7-3 0-1, 4-6 1-0        5 PAB
// R3: 3-1 0-1, 2-4 =,   5-7 0-1        6 HPB (requested)
// R4: 1-6 =,   3-2 1-0, 4-7 +-         5 ZPB (withdrew after round 3)
// R5: 7-1 0-1, 2-6 1-0, 4-3 =          5 ZPB
//
// Scores                                       adj (16.3)
// 1: 1 + ½ + 1 + ½ + 1         = 4             4
// 2: 1 + ½ + ½ + 0 + 1         = 3             3
// 3: ½ + 1 + 0 + 1 + ½         = 3             3
// 4: 0 + 1 + ½ + 1(+F) + ½     = 3             3 (forfeit win keeps its point)
// 5: 0 + 1(PAB) + 0 + 0 + 0    = 1             0+1+0+½+½ = 2 (ZPBs followed only by VURs)
// 6: ½ + 0 + ½(HPB) + ½ + 0    = 1.5           1.5 (HPB followed by a game keeps ½)
// 7: 0(ZPB) + 0 + 1 + 0(-F) + 0 = 1            1 (late ZPB followed by a game: 0;
//                                                 forfeit loss keeps 0)
//
// Buchholz terms per round (opponent's adj, or own score for an unplayed round):
// 1: 3(4) 3(2) 3(3) 1.5(6) 1(7)          BH 11.5   C1 -1 = 10.5   M1 -1 -3 = 7.5
// 2: 2(5) 4(1) 3(4) 3(3) 1.5(6)          BH 13.5   C1 -1.5 = 12   M1 -1.5 -4 = 8
// 3: 1.5(6) 1(7) 4(1) 3(2) 3(4)          BH 12.5   C1 -1 = 11.5   M1 -1 -4 = 7.5
// 4: 4(1) 1.5(6) 3(2) 3(own, +F) 3(3)    BH 14.5   C1 -1.5 = 13   M1 -1.5 -4 = 9
// 5: 3(2) 1(own, PAB) 1(7) 1v 1v         BH 7      C1 -1v = 6     M1 -1v -3 = 3
// 6: 3(3) 3(4) 1.5v 4(1) 3(2)            BH 14.5   C1 -1.5v = 13  M1 -1.5v -4 = 9
// 7: 1v 3(3) 2(5) 1v(-F) 4(1)            BH 11     C1 -1v = 10    M1 -1v -4 = 6
//
// Sonneborn-Berger (term x points of the round):
// 1: 3x1 + 3x½ + 3x1 + 1.5x½ + 1x1      = 3 + 1.5 + 3 + 0.75 + 1 = 9.25
// 2: 2x1 + 4x½ + 3x½ + 3x0 + 1.5x1      = 2 + 2 + 1.5 + 0 + 1.5  = 7
// 3: 1.5x½ + 1x1 + 4x0 + 3x1 + 3x½      = 0.75 + 1 + 0 + 3 + 1.5 = 6.25
// 4: 4x0 + 1.5x1 + 3x½ + 3x1 + 3x½      = 0 + 1.5 + 1.5 + 3 + 1.5 = 7.5
// 5: 3x0 + 1x1 + 1x0 + 1x0 + 1x0        = 1
// 6: 3x½ + 3x0 + 1.5x½ + 4x½ + 3x0      = 1.5 + 0.75 + 2 = 4.25
// 7: 1x0 + 3x0 + 2x1 + 1x0 + 4x0        = 2
//
// WIN (a win's points, played or not): 1: R1 R3 R5 = 3; 2: R1 R5 = 2;
//   3: R2 R4 = 2; 4: R2 R4(+F) = 2; 5: R2(PAB) = 1; 6: 0; 7: R3 = 1.
// WON (over the board): 3, 2, 2, 1, 0, 0, 1.
// BPG (played with Black): 1: R2 R3 R5 = 3; 2: R1 R4 = 2; 3: R2 R5 = 2;
//   4: R1 R3 = 2; 5: 0; 6: R1 R2 R4 R5 = 4; 7: R3 = 1 (R4's forfeit is no game).
//
// ARO (opponents met over the board, nearest whole, .5 up):
// 1: 2187+2311+2250+1995+1872 = 10615 / 5 = 2123
// 2: 2064+2403+2187+2250+1995 = 10899 / 5 = 2179.8  -> 2180
// 3: 1995+1872+2403+2311+2187 = 10768 / 5 = 2153.6  -> 2154
// 4: 2403+1995+2311+2250      =  8959 / 4 = 2239.75 -> 2240
// 5: 2311+1872                =  4183 / 2 = 2091.5  -> 2092
// 6: 2250+2187+2403+2311      =  9151 / 4 = 2287.75 -> 2288
// 7: 2250+2064+2403           =  6717 / 3 = 2239
//
// TPR = ARO + dp(p), p = over-the-board points / games, to hundredths:
// 1: 4/5 = .80 -> +240: 2363      2: 3/5 = .60 -> +72: 2252
// 3: 3/5 = .60 -> +72: 2226       4: 2/4 = .50 -> 0: 2240
// 5: 0/2 = 0 -> -800: 1292        6: 1/4 = .25 -> -193: 2095
// 7: 1/3 = .33 -> -125: 2114
//
// DE: 2, 3, 4 (3 points each) all met: 2-4 =, 3-2 1-0, 4-3 =
//   2: ½ + 0 = ½; 3: 1 + ½ = 1.5; 4: ½ + ½ = 1.
// 5 and 7 (1 point) met in R3, 7 won: 7: 1, 5: 0.
// ---------------------------------------------------------------------------

fn tournament_a() -> Tournament {
    tournament(
        &[2403, 2311, 2250, 2187, 2064, 1995, 1872],
        &[
            &[(1, 4, "1-0"), (5, 2, "0-1"), (3, 6, "="), (7, 0, "Z")],
            &[(2, 1, "="), (7, 3, "0-1"), (4, 6, "1-0"), (5, 0, "U")],
            &[(3, 1, "0-1"), (2, 4, "="), (5, 7, "0-1"), (6, 0, "H")],
            &[(1, 6, "="), (3, 2, "1-0"), (4, 7, "+-"), (5, 0, "Z")],
            &[(7, 1, "0-1"), (2, 6, "1-0"), (4, 3, "="), (5, 0, "Z")],
        ],
    )
}

#[test]
fn tournament_a_scores() {
    let table = standings(&tournament_a(), &[]).unwrap();
    let mut scores: Vec<(u32, u32)> = table.iter().map(|s| (s.number, s.score)).collect();
    scores.sort_unstable();
    // In half points.
    assert_eq!(
        scores,
        [(1, 8), (2, 6), (3, 6), (4, 6), (5, 2), (6, 3), (7, 2)]
    );
}

#[test]
fn tournament_a_every_tie_break() {
    let table = standings(&tournament_a(), &EVERY).unwrap();
    let expected: [&[&str]; 9] = [
        &["11.5", "13.5", "12.5", "14.5", "7", "14.5", "11"],
        &["10.5", "12", "11.5", "13", "6", "13", "10"],
        &["7.5", "8", "7.5", "9", "3", "9", "6"],
        &["9.25", "7", "6.25", "7.5", "1", "4.25", "2"],
        &["3", "2", "2", "2", "1", "0", "1"],
        &["3", "2", "2", "1", "0", "0", "1"],
        &["3", "2", "2", "2", "0", "4", "1"],
        &["2123", "2180", "2154", "2240", "2092", "2288", "2239"],
        &["2363", "2252", "2226", "2240", "1292", "2095", "2114"],
    ];
    for (k, values) in expected.iter().enumerate() {
        assert_eq!(column(&table, k), all(values), "{}", EVERY[k]);
    }
}

#[test]
fn tournament_a_direct_encounter_when_all_met() {
    let table = standings(&tournament_a(), &[TieBreak::DirectEncounter]).unwrap();
    // 1 alone on 4; 3, 4, 2 by DE; 6 alone on 1.5; 7 beat 5.
    assert_eq!(order(&table), [1, 3, 4, 2, 6, 7, 5]);
    assert_eq!(
        column(&table, 0),
        [
            None,
            Some(v("0.5")),
            Some(v("1.5")),
            Some(v("1")),
            Some(v("0")),
            None,
            Some(v("1")),
        ]
    );
}

#[test]
fn the_organisers_order_changes_the_ranking() {
    let t = tournament_a();
    let ranked = |list: &[TieBreak]| order(&standings(&t, list).unwrap());
    // Nothing but the pairing number: 2, 3, 4 and then 5 before 7.
    assert_eq!(ranked(&[]), [1, 2, 3, 4, 6, 5, 7]);
    // BH: 4 (14.5), 2 (13.5), 3 (12.5); 7 (11) before 5 (7).
    assert_eq!(ranked(&[TieBreak::Buchholz]), [1, 4, 2, 3, 6, 7, 5]);
    // DE first: 3 (1.5), 4 (1), 2 (½).
    assert_eq!(
        ranked(&[TieBreak::DirectEncounter, TieBreak::Buchholz]),
        [1, 3, 4, 2, 6, 7, 5]
    );
    // TPR: 2 (2252), 4 (2240), 3 (2226); 7 (2114) before 5 (1292).
    assert_eq!(
        ranked(&[TieBreak::PerformanceRating]),
        [1, 2, 4, 3, 6, 7, 5]
    );
    // WIN leaves 2, 3, 4 level (2 each), WON splits off 4 (1), BPG leaves
    // 2 and 3 level (2 each): pairing number. WON puts 7 (1) before 5 (0).
    assert_eq!(
        ranked(&[TieBreak::Wins, TieBreak::GamesWon, TieBreak::BlackGames]),
        [1, 2, 3, 4, 6, 7, 5]
    );
}

// ---------------------------------------------------------------------------
// Tournament B: 6 players, 4 rounds.
//
// Ratings: 1 1950, 2 1875, 3 1820, 4 1760, 5 1690, 6 1605.
//
// R1: 1-3 1-0, 4-2 0-1      5 PAB, 6 ZPB (enters late, from round 2)
// R2: 2-5 1-0, 6-3 =        4 PAB, 1 HPB (requested)
// R3: 2-1 0-1, 4-5 +-       6 PAB, 3 ZPB (withdrew after round 2)
// R4: 4-1 0-1, 6-5 =        2 PAB, 3 ZPB
//
// Scores                                     adj (16.3)
// 1: 1 + ½(HPB) + 1 + 1        = 3.5         3.5 (the HPB is followed by games)
// 2: 1 + 1 + 0 + 1(PAB)        = 3           3
// 3: 0 + ½ + 0 + 0             = 0.5         0+½+½+½ = 1.5 (ZPBs followed only by VURs)
// 4: 0 + 1(PAB) + 1(+F) + 0    = 2           2
// 5: 1(PAB) + 0 + 0(-F) + ½    = 1.5         1.5 (a forfeit loss keeps its 0)
// 6: 0(ZPB) + ½ + 1(PAB) + ½   = 2           2 (late ZPB followed by games keeps 0)
//
// Buchholz terms:
// 1: 1.5(3) 3.5v 3(2) 2(4)       BH 10    C1 -3.5v = 6.5 (not -1.5)  M1 -3.5v -3 = 3.5
// 2: 2(4) 1.5(5) 3.5(1) 3(PAB)   BH 10    C1 -1.5 = 8.5              M1 -1.5 -3.5 = 5
// 3: 3.5(1) 2(6) 0.5v 0.5v       BH 6.5   C1 -0.5v = 6               M1 -0.5v -3.5 = 2.5
// 4: 3(2) 2(PAB) 2(+F) 3.5(1)    BH 10.5  C1 -2 = 8.5                M1 -2 -3.5 = 5
// 5: 1.5(PAB) 3(2) 1.5v(-F) 2(6) BH 8     C1 -1.5v = 6.5             M1 -1.5v -3 = 3.5
// 6: 2v 1.5(3) 2(PAB) 1.5(5)     BH 7     C1 -2v = 5 (not -1.5)      M1 -2v -2 = 3
//
// Sonneborn-Berger:
// 1: 1.5x1 + 3.5x½ + 3x1 + 2x1   = 1.5 + 1.75 + 3 + 2 = 8.25
// 2: 2x1 + 1.5x1 + 3.5x0 + 3x1   = 6.5
// 3: 3.5x0 + 2x½ + 0.5x0 + 0.5x0 = 1
// 4: 3x0 + 2x1 + 2x1 + 3.5x0     = 4
// 5: 1.5x1 + 3x0 + 1.5x0 + 2x½   = 2.5
// 6: 2x0 + 1.5x½ + 2x1 + 1.5x½   = 0.75 + 2 + 0.75 = 3.5
//
// WIN: 1: R1 R3 R4 = 3; 2: R1 R2 R4(PAB) = 3; 3: 0; 4: PAB, +F = 2; 5: PAB = 1;
//   6: PAB = 1.   WON: 3, 2, 0, 0, 0, 0.
// BPG: 1: R3 R4 = 2; 2: R1 = 1; 3: R1 R2 = 2; 4: 0; 5: R2 R4 = 2; 6: 0.
//
// ARO:
// 1: 1820+1875+1760 = 5455 / 3 = 1818.33 -> 1818
// 2: 1760+1690+1950 = 5400 / 3 = 1800
// 3: 1950+1605      = 3555 / 2 = 1777.5  -> 1778
// 4: 1875+1950      = 3825 / 2 = 1912.5  -> 1913
// 5: 1875+1605      = 3480 / 2 = 1740
// 6: 1820+1690      = 3510 / 2 = 1755
//
// TPR:
// 1: 3/3 = 1.00 -> +800: 2618     2: 2/3 = .67 -> +125: 1925
// 3: ½/2 = .25 -> -193: 1585      4: 0/2 = 0 -> -800: 1113
// 5: ½/2 = .25 -> -193: 1547      6: 1/2 = .50 -> 0: 1755
//
// 4 and 6 tie on 2 points and never met: DE has no value for them.
// ---------------------------------------------------------------------------

fn tournament_b() -> Tournament {
    tournament(
        &[1950, 1875, 1820, 1760, 1690, 1605],
        &[
            &[(1, 3, "1-0"), (4, 2, "0-1"), (5, 0, "U"), (6, 0, "Z")],
            &[(2, 5, "1-0"), (6, 3, "="), (4, 0, "U"), (1, 0, "H")],
            &[(2, 1, "0-1"), (4, 5, "+-"), (6, 0, "U"), (3, 0, "Z")],
            &[(4, 1, "0-1"), (6, 5, "="), (2, 0, "U"), (3, 0, "Z")],
        ],
    )
}

#[test]
fn tournament_b_every_tie_break() {
    let table = standings(&tournament_b(), &EVERY).unwrap();
    let mut scores: Vec<(u32, u32)> = table.iter().map(|s| (s.number, s.score)).collect();
    scores.sort_unstable();
    assert_eq!(scores, [(1, 7), (2, 6), (3, 1), (4, 4), (5, 3), (6, 4)]);
    let expected: [&[&str]; 9] = [
        &["10", "10", "6.5", "10.5", "8", "7"],
        &["6.5", "8.5", "6", "8.5", "6.5", "5"],
        &["3.5", "5", "2.5", "5", "3.5", "3"],
        &["8.25", "6.5", "1", "4", "2.5", "3.5"],
        &["3", "3", "0", "2", "1", "1"],
        &["3", "2", "0", "0", "0", "0"],
        &["2", "1", "2", "0", "2", "0"],
        &["1818", "1800", "1778", "1913", "1740", "1755"],
        &["2618", "1925", "1585", "1113", "1547", "1755"],
    ];
    for (k, values) in expected.iter().enumerate() {
        assert_eq!(column(&table, k), all(values), "{}", EVERY[k]);
    }
}

#[test]
fn tournament_b_ranking() {
    let t = tournament_b();
    // 4 and 6 (2 points): BH-C1 8.5 against 5.
    let table = standings(&t, &[TieBreak::BuchholzCut1]).unwrap();
    assert_eq!(order(&table), [1, 2, 4, 6, 5, 3]);
    assert_eq!(table[2].rank, 3);
    // DE cannot separate them (they never met); TPR puts 6 (1755) before
    // 4 (1113).
    let table = standings(
        &t,
        &[TieBreak::DirectEncounter, TieBreak::PerformanceRating],
    )
    .unwrap();
    assert_eq!(order(&table), [1, 2, 6, 4, 5, 3]);
    assert_eq!(column(&table, 0), [None; 6]);
}

// ---------------------------------------------------------------------------
// Tournament C: DE when the tied players did not all meet. 6 players,
// 3 rounds.
//
// R1: 1-2 1-0, 4-3 0-1, 5-6 1-0
// R2: 5-1 1-0, 2-4 1-0, 6-3 =
// R3: 1-4 1-0, 6-2 0-1, 5-3 =
//
// Scores: 1: 1+0+1 = 2; 2: 0+1+1 = 2; 3: 1+½+½ = 2; 4: 0; 5: 1+1+½ = 2.5;
// 6: 0+½+0 = 0.5.
// 1, 2 and 3 tie; 1 beat 2 but 3 met neither, so DE does not apply (it
// would put 1 first). BPG then decides: 3 played Black in all three
// rounds (3), 2 in R1 and R3 (2), 1 in R2 (1).
// ---------------------------------------------------------------------------

#[test]
fn direct_encounter_needs_every_tied_player_to_have_met() {
    let t = tournament(
        &[2000, 1900, 1800, 1700, 1600, 1500],
        &[
            &[(1, 2, "1-0"), (4, 3, "0-1"), (5, 6, "1-0")],
            &[(5, 1, "1-0"), (2, 4, "1-0"), (6, 3, "=")],
            &[(1, 4, "1-0"), (6, 2, "0-1"), (5, 3, "=")],
        ],
    );
    let table = standings(&t, &[TieBreak::DirectEncounter, TieBreak::BlackGames]).unwrap();
    assert_eq!(order(&table), [5, 3, 2, 1, 6, 4]);
    assert_eq!(column(&table, 0), [None; 6]);
    assert_eq!(column(&table, 1), all(&["1", "2", "3", "2", "0", "1"]));
}

#[test]
fn performance_rating_at_the_extremes_and_between() {
    // 100 %: B's player 1, 3/3 against 1818 -> 1818 + 800.
    let b = standings(&tournament_b(), &[TieBreak::PerformanceRating]).unwrap();
    let tpr = |table: &[Standing], n: u32| {
        table
            .iter()
            .find(|s| s.number == n)
            .and_then(|s| s.tie_breaks[0])
    };
    assert_eq!(tpr(&b, 1), Some(v("2618")));
    // 0 %: B's player 4, 0/2 against 1913 -> 1913 - 800.
    assert_eq!(tpr(&b, 4), Some(v("1113")));
    // Between: A's player 1, 80 % against 2123 -> +240; player 7, 1/3
    // rounds to 33 % -> -125.
    let a = standings(&tournament_a(), &[TieBreak::PerformanceRating]).unwrap();
    assert_eq!(tpr(&a, 1), Some(v("2363")));
    assert_eq!(tpr(&a, 7), Some(v("2114")));
    // No game played: no value, ranked after every value.
    let t = tournament(&[2000, 1900, 1800], &[&[(1, 2, "1-0"), (3, 0, "U")]]);
    let table = standings(&t, &[TieBreak::PerformanceRating]).unwrap();
    assert_eq!(tpr(&table, 3), None);
}

#[test]
fn codes_parse_and_unknown_codes_are_refused() {
    assert_eq!(
        TieBreak::parse_list("bh-c1, BH, de,tpr"),
        Ok(vec![
            TieBreak::BuchholzCut1,
            TieBreak::Buchholz,
            TieBreak::DirectEncounter,
            TieBreak::PerformanceRating,
        ])
    );
    for (code, tb) in [
        ("bh", TieBreak::Buchholz),
        ("bh-c1", TieBreak::BuchholzCut1),
        ("bh-m1", TieBreak::BuchholzMedian1),
        ("sb", TieBreak::SonnebornBerger),
        ("de", TieBreak::DirectEncounter),
        ("win", TieBreak::Wins),
        ("won", TieBreak::GamesWon),
        ("bpg", TieBreak::BlackGames),
        ("aro", TieBreak::AverageRatingOfOpponents),
        ("tpr", TieBreak::PerformanceRating),
    ] {
        assert_eq!(code.parse::<TieBreak>(), Ok(tb));
        assert_eq!(tb.to_string(), code);
    }
    let error = TieBreak::parse_list("bh,buchholz").unwrap_err();
    assert_eq!(error, UnknownTieBreak("buchholz".to_owned()));
    let message = error.to_string();
    assert!(message.contains("\"buchholz\""), "{message}");
    assert!(message.contains("bh-c1"), "{message}");
    assert!("".parse::<TieBreak>().is_err());
    assert!(TieBreak::parse_list("bh,,sb").is_err());
}

#[test]
fn contradictory_records_are_refused() {
    let mut t = tournament_a();
    // Player 4 now claims the round-1 game that 1 says 1 won.
    t.players[3].rounds[0] = RoundRecord::Played {
        opponent: 1,
        colour: Colour::Black,
        outcome: Outcome::Win,
    };
    assert_eq!(
        standings(&t, &[TieBreak::Buchholz]),
        Err(TieBreakError::Inconsistent {
            round: 1,
            player: 1,
            opponent: 4
        })
    );
    let mut t = tournament_a();
    t.players[0].rounds[0] = RoundRecord::Played {
        opponent: 9,
        colour: Colour::White,
        outcome: Outcome::Win,
    };
    assert_eq!(standings(&t, &[]), Err(TieBreakError::UnknownPlayer(9)));
}
