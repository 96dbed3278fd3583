//! Tie-breaks of the Swiss final standings, FIDE C.07 as in force from
//! 2024-08-01 ("Play-off and tie-break regulations", approved by the FIDE
//! Council on 2024-07-29), including its article 16 on unplayed rounds.
//! The 2026 edition (in force from 2026-03-01) is not what this implements;
//! see "Sources" for the one difference known to matter here.
//!
//! The organiser publishes an ordered list of tie-breaks before the first
//! round (C.07 art. 4); [`standings`] ranks the players by score, then by
//! each tie-break of the list in turn (a tie-break only ever separates
//! players still level on everything before it), then by pairing number,
//! and returns every player's score and tie-break values, exact, for a
//! standings page.
//!
//! # The tie-breaks
//!
//! | code | tie-break | value |
//! |---|---|---|
//! | `bh` | Buchholz (art. 8) | the sum of the opponents' scores, one term per round |
//! | `bh-c1` | Buchholz Cut-1 (art. 14) | BH without its least significant term |
//! | `bh-m1` | Median Buchholz, Median-1 (art. 14) | BH without its lowest and its highest term |
//! | `sb` | Sonneborn-Berger (art. 9) | the sum, per round, of the opponent's score times the points scored against them |
//! | `de` | Direct Encounter (art. 6) | points scored against the other tied players, when they have all met |
//! | `win` | WIN (art. 7) | rounds in which the player got a win's points, with or without playing |
//! | `won` | WON (art. 7) | games won over the board |
//! | `bpg` | BPG (art. 7) | games played over the board with Black |
//! | `aro` | Average Rating of Opponents (art. 10) | the mean rating of the opponents met over the board, rounded to the nearest whole number, 0.5 up |
//! | `tpr` | Tournament Performance Rating (art. 10) | ARO + dp (below) |
//!
//! Both definitions of the number of wins are offered because C.07 has
//! both and organisers use both: `win` counts forfeit wins, full-point byes
//! and a pairing-allocated bye worth a win; `won` counts only games won
//! over the board.
//!
//! TPR: `p` is the fraction of points the player scored in the games played
//! over the board, rounded to the nearest hundredth (0.005 up, computed in
//! integers); `dp` is the FIDE Rating Regulations' conversion of `p` into a
//! rating difference (table 8.1.a: +800 at 100 %, 0 at 50 %, -800 at 0 %,
//! symmetric); TPR = ARO (rounded as above) + dp, a whole number. ARO and
//! TPR count only games played over the board and have no value for a
//! player who played none. Ratings are taken as given: C.07 drops
//! rating-based tie-breaks when unrated players take part unless the
//! regulations say which rating they count with, so a caller with unrated
//! players puts that rating in [`Player::rating`].
//!
//! # Unplayed rounds (article 16)
//!
//! A round is unplayed for tie-break purposes when the player has a bye of
//! any kind or a forfeit, won or lost: a forfeited game is no game here,
//! as it is none for the pairing. Article 16's terms, as implemented:
//!
//! - A *requested bye* is a half-point or a zero-point bye. Every round
//!   after a withdrawal is a zero-point bye, and so is a round missed
//!   before a late entry ([`ByeKind::ZeroPoint`] covers all three).
//! - A *voluntary unplayed round* (VUR) is a requested bye or a forfeit
//!   loss.
//! - **The player as somebody's opponent (16.2, 16.3).** Where a tie-break
//!   uses an opponent's score (BH, SB), it is the opponent's *adjusted*
//!   score: every round counts the points it gave, except a requested bye
//!   followed only by VURs (or in the last round), which counts as a draw.
//!   So a withdrawn player's trailing zero-point byes count half a point
//!   each for their opponents; a half-point bye or a late entry's
//!   zero-point bye followed by a game keeps its points; pairing-allocated
//!   and full-point byes, forfeit wins and forfeit losses keep theirs.
//! - **The player's own tie-break (16.4).** Each unplayed round is a game
//!   against a *dummy opponent* whose score is the player's own score (the
//!   real one, not adjusted), with the round's points as the result: the
//!   BH term is the player's score, the SB term the player's score times
//!   the points of that round.
//! - **Cuts (16.5).** When Cut-1 or Median-1 drops its lowest term and the
//!   player has VURs, a VUR term is dropped first (the lowest of them),
//!   whatever its size, so that skipping a round never raises a cut
//!   Buchholz. Median-1's highest term is then the highest of the rest.
//!
//! # Direct encounter (article 6)
//!
//! It applies to a group of players level on score and on every tie-break
//! before it in the list, and only if each of them has met each other over
//! the board (a forfeited game is not a meeting, as for the no-rematch
//! rule). The value is the points each scored against the others of the
//! group; players still level stay together for the next tie-break. When
//! the group have not all met, nobody gets a value and the tie goes on to
//! the next tie-break. It is applied once per group, not again to the
//! players it leaves level.
//!
//! # Sources and what was assumed
//!
//! - C.07 (2024-08-01), FIDE Handbook chapter `TieBreakRegulations082024`.
//!   The stored copy that could be read while writing this stops after
//!   article 4 (scope, the ordered list, its completion by the chief
//!   arbiter). FIDE's announcement of the previous revision (January 2024)
//!   says it changed no tie-break definition of the 2023 text, only
//!   explanations.
//! - Article 16's structure above (the requested bye and VUR terms, the
//!   five kinds of unplayed round, the draw for a requested bye followed
//!   only by VURs, the dummy opponent with the player's own score, VURs
//!   cut first) is taken from published descriptions of the article, not
//!   from its verbatim text: summaries of the 2026 edition (which describe
//!   the same structure for 2024) and arbiter software documentation of its
//!   pre-2026 mode. The one change those name is that the 2026 edition
//!   caps the dummy opponent's score (16.4.1, 16.4.2); 2024 has no cap, so
//!   none is applied here.
//! - Assumed, not read: that the dummy's score is the player's real score
//!   (not the adjusted one); that the VUR-first rule applies to Median-1's
//!   low cut as to Cut-1's; that DE counts only games played over the
//!   board and is applied once per group; the rounding of `p` to the
//!   nearest hundredth with 0.005 up, and that TPR uses the rounded ARO.
//! - Art. 6's further clauses for groups that have not all met (where one
//!   player can no longer be caught) are not implemented: such a group
//!   goes to the next tie-break.
//!
//! Values are exact ([`TieBreakValue`], quarter points): SB multiplies half
//! points by half points, everything else is whole or half.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::str::FromStr;

use super::colour::Colour;
use super::dutch::Tournament;
use super::player::{ByeKind, HalfPoints, Outcome, PairingNumber, Player, RoundRecord, Scoring};

/// One tie-break of C.07 that an organiser may put in the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TieBreak {
    /// BH, `bh`.
    Buchholz,
    /// BH-C1, `bh-c1`.
    BuchholzCut1,
    /// BH-M1, `bh-m1`.
    BuchholzMedian1,
    /// SB, `sb`.
    SonnebornBerger,
    /// DE, `de`.
    DirectEncounter,
    /// WIN, `win`: rounds with a win's points, with or without playing.
    Wins,
    /// WON, `won`: games won over the board.
    GamesWon,
    /// BPG, `bpg`: games played over the board with Black.
    BlackGames,
    /// ARO, `aro`.
    AverageRatingOfOpponents,
    /// TPR, `tpr`.
    PerformanceRating,
}

impl TieBreak {
    /// Every tie-break, in the order of the table in the module
    /// documentation.
    pub const ALL: [TieBreak; 10] = [
        TieBreak::Buchholz,
        TieBreak::BuchholzCut1,
        TieBreak::BuchholzMedian1,
        TieBreak::SonnebornBerger,
        TieBreak::DirectEncounter,
        TieBreak::Wins,
        TieBreak::GamesWon,
        TieBreak::BlackGames,
        TieBreak::AverageRatingOfOpponents,
        TieBreak::PerformanceRating,
    ];

    /// The stable code: what a stored tournament and the organiser's list
    /// say; FIDE's acronym in lowercase.
    #[must_use]
    pub fn code(self) -> &'static str {
        match self {
            TieBreak::Buchholz => "bh",
            TieBreak::BuchholzCut1 => "bh-c1",
            TieBreak::BuchholzMedian1 => "bh-m1",
            TieBreak::SonnebornBerger => "sb",
            TieBreak::DirectEncounter => "de",
            TieBreak::Wins => "win",
            TieBreak::GamesWon => "won",
            TieBreak::BlackGames => "bpg",
            TieBreak::AverageRatingOfOpponents => "aro",
            TieBreak::PerformanceRating => "tpr",
        }
    }

    /// The name for a standings page's column header.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            TieBreak::Buchholz => "Buchholz",
            TieBreak::BuchholzCut1 => "Buchholz Cut-1",
            TieBreak::BuchholzMedian1 => "Median Buchholz",
            TieBreak::SonnebornBerger => "Sonneborn-Berger",
            TieBreak::DirectEncounter => "Direct encounter",
            TieBreak::Wins => "Wins",
            TieBreak::GamesWon => "Games won",
            TieBreak::BlackGames => "Games with Black",
            TieBreak::AverageRatingOfOpponents => "Average rating of opponents",
            TieBreak::PerformanceRating => "Performance rating",
        }
    }

    /// A comma-separated list of codes, in order (`"bh-c1, bh, de"`).
    ///
    /// # Errors
    ///
    /// [`UnknownTieBreak`] for the first item that is no code (an empty
    /// item included).
    pub fn parse_list(list: &str) -> Result<Vec<TieBreak>, UnknownTieBreak> {
        list.split(',').map(str::parse).collect()
    }
}

impl fmt::Display for TieBreak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl FromStr for TieBreak {
    type Err = UnknownTieBreak;

    /// A code, ignoring case and surrounding blanks (FIDE writes `BH-C1`).
    fn from_str(text: &str) -> Result<TieBreak, UnknownTieBreak> {
        let code = text.trim();
        TieBreak::ALL
            .into_iter()
            .find(|tb| tb.code().eq_ignore_ascii_case(code))
            .ok_or_else(|| UnknownTieBreak(code.to_owned()))
    }
}

/// A tie-break code that names no tie-break.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownTieBreak(pub String);

impl fmt::Display for UnknownTieBreak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown tie-break code {:?}; the codes are ", self.0)?;
        for (i, tb) in TieBreak::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(tb.code())?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownTieBreak {}

/// An exact tie-break value, in quarter units: Sonneborn-Berger multiplies
/// half points by half points; every other value is a whole number (counts,
/// ratings) or a number of half points. Compared as numbers, higher first
/// in the standings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TieBreakValue(i64);

impl TieBreakValue {
    /// `quarters / 4`.
    #[must_use]
    pub const fn from_quarters(quarters: i64) -> TieBreakValue {
        TieBreakValue(quarters)
    }

    /// A number of half points.
    #[must_use]
    pub const fn from_half_points(half_points: HalfPoints) -> TieBreakValue {
        TieBreakValue(2 * half_points as i64)
    }

    /// A whole number (a count, a rating).
    #[must_use]
    pub const fn from_whole(n: i64) -> TieBreakValue {
        TieBreakValue(4 * n)
    }

    /// The value times four.
    #[must_use]
    pub const fn quarters(self) -> i64 {
        self.0
    }
}

impl fmt::Display for TieBreakValue {
    /// `12`, `12.5`, `12.25`, `-3.75`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let q = self.0.unsigned_abs();
        let fraction = match q % 4 {
            0 => "",
            1 => ".25",
            2 => ".5",
            _ => ".75",
        };
        write!(f, "{sign}{}{fraction}", q / 4)
    }
}

/// One line of the final standings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Standing {
    /// The place, from 1; players level on everything are placed by
    /// pairing number.
    pub rank: u32,
    pub number: PairingNumber,
    pub score: HalfPoints,
    /// One entry per tie-break of the list, in its order. `None` where the
    /// tie-break has no value: DE for a player it did not have to separate
    /// or whose group had not all met, ARO and TPR without a game played.
    pub tie_breaks: Vec<Option<TieBreakValue>>,
}

/// Why the standings cannot be computed: the records contradict each other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TieBreakError {
    /// Two players share a pairing number.
    DuplicatePlayer(PairingNumber),
    /// A record names an opponent who is not entered.
    UnknownPlayer(PairingNumber),
    /// `player`'s record of `round` (from 1) names `opponent`, whose own
    /// record of that round is not the same game seen from the other side.
    Inconsistent {
        round: u32,
        player: PairingNumber,
        opponent: PairingNumber,
    },
}

impl fmt::Display for TieBreakError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TieBreakError::DuplicatePlayer(n) => write!(f, "pairing number {n} is used twice"),
            TieBreakError::UnknownPlayer(n) => write!(f, "no player has pairing number {n}"),
            TieBreakError::Inconsistent {
                round,
                player,
                opponent,
            } => write!(
                f,
                "round {round}: player {player}'s record names {opponent}, whose record does not match"
            ),
        }
    }
}

impl std::error::Error for TieBreakError {}

/// The final standings after `tournament.completed_rounds` rounds: by
/// score, then by each tie-break of `order` in turn, then by pairing
/// number; each player's values of every tie-break of `order`.
///
/// # Errors
///
/// [`TieBreakError`] when the records contradict each other.
pub fn standings(
    tournament: &Tournament,
    order: &[TieBreak],
) -> Result<Vec<Standing>, TieBreakError> {
    let field = Field::new(tournament)?;
    let n = field.players.len();
    let mut values: Vec<Vec<Option<TieBreakValue>>> = vec![vec![None; order.len()]; n];
    for (k, &tb) in order.iter().enumerate() {
        if tb != TieBreak::DirectEncounter {
            for (i, row) in values.iter_mut().enumerate() {
                row[k] = field.value(tb, i);
            }
        }
    }
    let mut by_score: Vec<usize> = (0..n).collect();
    by_score.sort_by(|&a, &b| field.score[b].cmp(&field.score[a]));
    let mut groups = runs(&by_score, |&a, &b| field.score[a] == field.score[b]);
    for (k, &tb) in order.iter().enumerate() {
        let mut next = Vec::with_capacity(groups.len());
        for mut group in groups {
            if group.len() < 2 {
                next.push(group);
                continue;
            }
            if tb == TieBreak::DirectEncounter {
                for (i, value) in field.direct_encounter(&group) {
                    values[i][k] = value;
                }
            }
            // Higher first; no value after every value.
            group.sort_by(|&a, &b| values[b][k].cmp(&values[a][k]));
            next.extend(runs(&group, |&a, &b| values[a][k] == values[b][k]));
        }
        groups = next;
    }
    let mut out = Vec::with_capacity(n);
    for mut group in groups {
        group.sort_by_key(|&i| field.players[i].number);
        for i in group {
            out.push(Standing {
                rank: u32::try_from(out.len() + 1).unwrap_or(u32::MAX),
                number: field.players[i].number,
                score: field.score[i],
                tie_breaks: std::mem::take(&mut values[i]),
            });
        }
    }
    Ok(out)
}

/// `items` cut into runs of neighbours that `same` says are level.
fn runs(items: &[usize], same: impl Fn(&usize, &usize) -> bool) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for &i in items {
        match out.last_mut() {
            Some(run) if run.last().is_some_and(|last| same(last, &i)) => run.push(i),
            _ => out.push(vec![i]),
        }
    }
    out
}

/// A draw's points, in half points.
const DRAW: HalfPoints = 1;
/// A win's points, in half points.
const WIN: HalfPoints = 2;

/// A half-point or zero-point bye (art. 16: withdrawals and late entries'
/// missed rounds are zero-point byes).
fn requested_bye(record: &RoundRecord) -> bool {
    matches!(
        record,
        RoundRecord::Bye(ByeKind::HalfPoint | ByeKind::ZeroPoint)
    )
}

/// A voluntary unplayed round: a requested bye or a forfeit loss.
fn voluntary_unplayed(record: &RoundRecord) -> bool {
    requested_bye(record) || matches!(record, RoundRecord::Forfeit { won: false, .. })
}

fn mirrored(outcome: Outcome) -> Outcome {
    match outcome {
        Outcome::Win => Outcome::Loss,
        Outcome::Draw => Outcome::Draw,
        Outcome::Loss => Outcome::Win,
    }
}

/// FIDE Rating Regulations table 8.1.a: `DP[k]` is dp for p = 0.50 + k/100.
const DP: [i64; 51] = [
    0, 7, 14, 21, 29, 36, 43, 50, 57, 65, 72, 80, 87, 95, 102, 110, 117, 125, 133, 141, 149, 158,
    166, 175, 184, 193, 202, 211, 220, 230, 240, 251, 262, 273, 284, 296, 309, 322, 336, 351, 366,
    383, 401, 422, 444, 470, 501, 538, 589, 677, 800,
];

/// dp for `p` in hundredths (0..=100).
fn rating_difference(p: u64) -> i64 {
    let p = p.min(100);
    let (index, sign) = if p >= 50 { (p - 50, 1) } else { (50 - p, -1) };
    usize::try_from(index)
        .ok()
        .and_then(|i| DP.get(i))
        .map_or(0, |dp| sign * dp)
}

/// The tournament as the tie-breaks read it.
struct Field<'a> {
    scoring: Scoring,
    rounds: usize,
    players: &'a [Player],
    index: HashMap<PairingNumber, usize>,
    /// Each player's score.
    score: Vec<HalfPoints>,
    /// Each player's score as an opponent (art. 16.3).
    adjusted: Vec<HalfPoints>,
}

impl<'a> Field<'a> {
    fn new(tournament: &'a Tournament) -> Result<Field<'a>, TieBreakError> {
        let players = tournament.players.as_slice();
        let rounds = tournament.completed_rounds as usize;
        let scoring = tournament.scoring;
        let mut index = HashMap::with_capacity(players.len());
        for (i, player) in players.iter().enumerate() {
            if index.insert(player.number, i).is_some() {
                return Err(TieBreakError::DuplicatePlayer(player.number));
            }
        }
        let field = Field {
            scoring,
            rounds,
            players,
            score: players
                .iter()
                .map(|p| p.score_after(rounds, scoring))
                .collect(),
            adjusted: players
                .iter()
                .map(|p| adjusted(p, rounds, scoring))
                .collect(),
            index,
        };
        field.check()?;
        Ok(field)
    }

    /// Every game and forfeit is recorded the same way by both sides.
    fn check(&self) -> Result<(), TieBreakError> {
        for player in self.players {
            for r in 0..self.rounds {
                let record = player.record(r);
                let opponent = match record {
                    RoundRecord::Played { opponent, .. }
                    | RoundRecord::Forfeit { opponent, .. } => opponent,
                    RoundRecord::Bye(_) => continue,
                };
                let other = self
                    .index
                    .get(&opponent)
                    .map(|&i| &self.players[i])
                    .ok_or(TieBreakError::UnknownPlayer(opponent))?;
                let matches = match (record, other.record(r)) {
                    (
                        RoundRecord::Played {
                            colour, outcome, ..
                        },
                        RoundRecord::Played {
                            opponent: back,
                            colour: c,
                            outcome: o,
                        },
                    ) => back == player.number && c == colour.opposite() && o == mirrored(outcome),
                    // Both may lose by forfeit (neither came); both cannot win.
                    (
                        RoundRecord::Forfeit { won, .. },
                        RoundRecord::Forfeit {
                            opponent: back,
                            won: w,
                            ..
                        },
                    ) => back == player.number && !(won && w),
                    _ => false,
                };
                if !matches || opponent == player.number {
                    return Err(TieBreakError::Inconsistent {
                        round: u32::try_from(r + 1).unwrap_or(u32::MAX),
                        player: player.number,
                        opponent,
                    });
                }
            }
        }
        Ok(())
    }

    fn records(&self, i: usize) -> impl Iterator<Item = RoundRecord> + '_ {
        let player = &self.players[i];
        (0..self.rounds).map(move |r| player.record(r))
    }

    /// The opponent's index in a game played over the board.
    fn played_opponent(&self, record: &RoundRecord) -> Option<usize> {
        match record {
            RoundRecord::Played { opponent, .. } => self.index.get(opponent).copied(),
            _ => None,
        }
    }

    fn value(&self, tb: TieBreak, i: usize) -> Option<TieBreakValue> {
        let count = |f: &dyn Fn(&RoundRecord) -> bool| {
            let n = self.records(i).filter(|r| f(r)).count();
            TieBreakValue::from_whole(i64::try_from(n).unwrap_or(i64::MAX))
        };
        match tb {
            TieBreak::Buchholz => Some(self.buchholz(i, 0, 0)),
            TieBreak::BuchholzCut1 => Some(self.buchholz(i, 1, 0)),
            TieBreak::BuchholzMedian1 => Some(self.buchholz(i, 1, 1)),
            TieBreak::SonnebornBerger => Some(self.sonneborn_berger(i)),
            TieBreak::DirectEncounter => None,
            TieBreak::Wins => Some(count(&|r| self.scoring.points(r) == WIN)),
            TieBreak::GamesWon => Some(count(&|r| {
                matches!(
                    r,
                    RoundRecord::Played {
                        outcome: Outcome::Win,
                        ..
                    }
                )
            })),
            TieBreak::BlackGames => Some(count(&|r| {
                matches!(
                    r,
                    RoundRecord::Played {
                        colour: Colour::Black,
                        ..
                    }
                )
            })),
            TieBreak::AverageRatingOfOpponents => self.aro(i).map(TieBreakValue::from_whole),
            TieBreak::PerformanceRating => self.tpr(i).map(TieBreakValue::from_whole),
        }
    }

    /// BH without `low` lowest terms (VURs first, art. 16.5) and then
    /// `high` highest.
    fn buchholz(&self, i: usize, low: usize, high: usize) -> TieBreakValue {
        // (term, whether the round is a VUR)
        let mut terms: Vec<(HalfPoints, bool)> = self
            .records(i)
            .map(|record| match self.played_opponent(&record) {
                Some(o) => (self.adjusted[o], false),
                // The dummy opponent has the player's own score (16.4).
                None => (self.score[i], voluntary_unplayed(&record)),
            })
            .collect();
        for _ in 0..low {
            let any_vur = terms.iter().any(|&(_, vur)| vur);
            let lowest = terms
                .iter()
                .enumerate()
                .filter(|(_, (_, vur))| *vur || !any_vur)
                .min_by_key(|(_, (term, _))| *term)
                .map(|(k, _)| k);
            if let Some(k) = lowest {
                terms.swap_remove(k);
            }
        }
        for _ in 0..high {
            let highest = terms
                .iter()
                .enumerate()
                .max_by_key(|(_, (term, _))| *term)
                .map(|(k, _)| k);
            if let Some(k) = highest {
                terms.swap_remove(k);
            }
        }
        TieBreakValue::from_half_points(terms.iter().map(|&(term, _)| term).sum())
    }

    fn sonneborn_berger(&self, i: usize) -> TieBreakValue {
        // Half points times half points are quarter points.
        let quarters: HalfPoints = self
            .records(i)
            .map(|record| {
                let opponent_score = match self.played_opponent(&record) {
                    Some(o) => self.adjusted[o],
                    None => self.score[i],
                };
                opponent_score * self.scoring.points(&record)
            })
            .sum();
        TieBreakValue::from_quarters(i64::from(quarters))
    }

    /// The opponents met over the board: (count, sum of ratings, points
    /// scored against them in half points).
    fn games(&self, i: usize) -> (u64, u64, u64) {
        self.records(i)
            .filter_map(|record| {
                self.played_opponent(&record).map(|o| {
                    (
                        u64::from(self.players[o].rating),
                        u64::from(self.scoring.points(&record)),
                    )
                })
            })
            .fold((0, 0, 0), |(n, sum, pts), (rating, p)| {
                (n + 1, sum + rating, pts + p)
            })
    }

    fn aro(&self, i: usize) -> Option<i64> {
        let (n, sum, _) = self.games(i);
        // The nearest whole number, 0.5 up.
        (n > 0).then(|| i64::try_from((2 * sum + n) / (2 * n)).unwrap_or(i64::MAX))
    }

    fn tpr(&self, i: usize) -> Option<i64> {
        let (n, _, half_points) = self.games(i);
        let aro = self.aro(i)?;
        // p = half_points / (2n), in hundredths to the nearest, 0.005 up.
        let p = (100 * half_points + n) / (2 * n);
        Some(aro + rating_difference(p))
    }

    /// DE of `group` (art. 6): points against the rest of the group when
    /// every two of them met over the board, else no value.
    fn direct_encounter(&self, group: &[usize]) -> Vec<(usize, Option<TieBreakValue>)> {
        let members: HashSet<usize> = group.iter().copied().collect();
        let met = |a: usize, b: usize| {
            self.records(a)
                .any(|record| self.played_opponent(&record) == Some(b))
        };
        let all_met = group
            .iter()
            .enumerate()
            .all(|(k, &a)| group[k + 1..].iter().all(|&b| met(a, b)));
        group
            .iter()
            .map(|&a| {
                let value = all_met.then(|| {
                    let points = self
                        .records(a)
                        .filter(|record| {
                            self.played_opponent(record)
                                .is_some_and(|o| members.contains(&o))
                        })
                        .map(|record| self.scoring.points(&record))
                        .sum();
                    TieBreakValue::from_half_points(points)
                });
                (a, value)
            })
            .collect()
    }
}

/// `player`'s score as an opponent (art. 16.3): a requested bye followed
/// only by voluntary unplayed rounds counts as a draw, every other round
/// its points.
fn adjusted(player: &Player, rounds: usize, scoring: Scoring) -> HalfPoints {
    (0..rounds)
        .map(|r| {
            let record = player.record(r);
            let trailing = requested_bye(&record)
                && (r + 1..rounds).all(|later| voluntary_unplayed(&player.record(later)));
            if trailing {
                DRAW
            } else {
                scoring.points(&record)
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for tb in TieBreak::ALL {
            assert_eq!(tb.code().parse::<TieBreak>(), Ok(tb));
            assert_eq!(tb.to_string(), tb.code());
        }
        assert_eq!("BH-C1".parse::<TieBreak>(), Ok(TieBreak::BuchholzCut1));
    }

    #[test]
    fn value_display() {
        assert_eq!(TieBreakValue::from_quarters(49).to_string(), "12.25");
        assert_eq!(TieBreakValue::from_quarters(50).to_string(), "12.5");
        assert_eq!(TieBreakValue::from_quarters(51).to_string(), "12.75");
        assert_eq!(TieBreakValue::from_whole(2363).to_string(), "2363");
        assert_eq!(TieBreakValue::from_quarters(-15).to_string(), "-3.75");
    }

    #[test]
    fn dp_table_points() {
        // Rating Regulations 8.1.a, read off the table.
        for (p, dp) in [
            (100, 800),
            (99, 677),
            (90, 366),
            (80, 240),
            (75, 193),
            (67, 125),
            (60, 72),
            (51, 7),
            (50, 0),
            (33, -125),
            (25, -193),
            (0, -800),
        ] {
            assert_eq!(rating_difference(p), dp, "p = {p}");
        }
    }
}
