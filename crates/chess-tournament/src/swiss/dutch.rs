//! The FIDE Dutch system, 2017 rules (C.04.3 effective 2017-07-01, with the
//! basic rules C.04.1): the round is paired bracket by bracket from the top
//! scoregroup down (A.9), each bracket by [`super::bracket`], and when the
//! downfloaters of a bracket would leave the rest of the round impossible to
//! pair, that bracket is paired again as the penultimate pairing bracket
//! (C.4) and everyone below it forms the collapsed last bracket.

use std::collections::{BTreeSet, HashSet};

use super::bracket::{Bracket, BracketPairing, Mode};
use super::colour::{self, Colour, ColourHistory};
use super::entrant::{Entrant, Float};
use super::player::{PairingNumber, Player, RoundRecord, Scoring};

/// The tournament so far, as the pairing needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tournament {
    pub players: Vec<Player>,
    /// The number of rounds announced (the last round relaxes C.3 for
    /// topscorers).
    pub total_rounds: u32,
    /// Rounds already played; the round to pair is the next one.
    pub completed_rounds: u32,
    /// Pairs who must not meet (siblings, team mates): treated as if they
    /// had already played (C.1).
    pub forbidden: Vec<(PairingNumber, PairingNumber)>,
    /// The colour of the odd-numbered higher-ranked player when nothing
    /// else decides (E.5), usually drawn before round 1.
    pub initial_colour: Colour,
    pub scoring: Scoring,
}

/// One board of a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Board {
    pub white: PairingNumber,
    pub black: PairingNumber,
}

/// A paired round: the boards in board order and the player who gets the
/// pairing-allocated bye, if the number of players is odd.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RoundPairing {
    pub boards: Vec<Board>,
    pub bye: Option<PairingNumber>,
}

/// Why a round cannot be paired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PairingError {
    /// No pairing satisfies the absolute criteria C.1-C.3 (and the bye
    /// rule C.2): the arbiter must decide (A.9).
    NoLegalPairing,
    /// Two players share a pairing number.
    DuplicatePlayer(PairingNumber),
    /// A record or a forbidden pair names a player who is not entered.
    UnknownPlayer(PairingNumber),
    /// The tournament already has all its rounds.
    TournamentOver,
}

impl std::fmt::Display for PairingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PairingError::NoLegalPairing => {
                write!(
                    f,
                    "no pairing of this round satisfies the absolute criteria"
                )
            }
            PairingError::DuplicatePlayer(n) => write!(f, "pairing number {n} is used twice"),
            PairingError::UnknownPlayer(n) => write!(f, "no player has pairing number {n}"),
            PairingError::TournamentOver => write!(f, "every round has been paired"),
        }
    }
}

impl std::error::Error for PairingError {}

/// Pairs the next round of `tournament` by the Dutch system; the players in
/// `unavailable` (withdrawn, absent, or with a requested bye) are left out.
///
/// # Errors
///
/// [`PairingError::NoLegalPairing`] when no pairing satisfies the absolute
/// criteria; the other variants when the input contradicts itself.
pub fn pair_round(
    tournament: &Tournament,
    unavailable: &[PairingNumber],
) -> Result<RoundPairing, PairingError> {
    if tournament.completed_rounds >= tournament.total_rounds {
        return Err(PairingError::TournamentOver);
    }
    let entrants = entrants(tournament, unavailable)?;
    pair_entrants(&entrants, tournament.initial_colour)
}

fn entrants(
    tournament: &Tournament,
    unavailable: &[PairingNumber],
) -> Result<Vec<Entrant>, PairingError> {
    let played = tournament.completed_rounds as usize;
    let scoring = tournament.scoring;
    let mut numbers = BTreeSet::new();
    for player in &tournament.players {
        if !numbers.insert(player.number) {
            return Err(PairingError::DuplicatePlayer(player.number));
        }
    }
    let by_number = |n: PairingNumber| tournament.players.iter().find(|p| p.number == n);
    for &(a, b) in &tournament.forbidden {
        for n in [a, b] {
            if !numbers.contains(&n) {
                return Err(PairingError::UnknownPlayer(n));
            }
        }
    }
    // Scores before each round, for the floats.
    let score_before = |player: &Player, round: usize| player.score_after(round, scoring);
    let float_in = |player: &Player, round: usize| -> Result<Float, PairingError> {
        Ok(match player.record(round) {
            RoundRecord::Played { opponent, .. } => {
                let other = by_number(opponent).ok_or(PairingError::UnknownPlayer(opponent))?;
                let (own, theirs) = (score_before(player, round), score_before(other, round));
                match own.cmp(&theirs) {
                    std::cmp::Ordering::Greater => Float::Down,
                    std::cmp::Ordering::Less => Float::Up,
                    std::cmp::Ordering::Equal => Float::None,
                }
            }
            // A.4.b: who does not play, for whatever reason, downfloats.
            _ => Float::Down,
        })
    };
    let mut out = Vec::new();
    for player in &tournament.players {
        if unavailable.contains(&player.number) {
            continue;
        }
        let score = player.score_after(played, scoring);
        let mut history = ColourHistory::default();
        let mut avoid = HashSet::new();
        for round in 0..played {
            if let RoundRecord::Played {
                opponent, colour, ..
            } = player.record(round)
            {
                history.played.push(colour);
                avoid.insert(opponent);
            }
        }
        for &(a, b) in &tournament.forbidden {
            if a == player.number {
                avoid.insert(b);
            } else if b == player.number {
                avoid.insert(a);
            }
        }
        let float1 = if played >= 1 {
            float_in(player, played - 1)?
        } else {
            Float::None
        };
        let float2 = if played >= 2 {
            float_in(player, played - 2)?
        } else {
            Float::None
        };
        let last_round = tournament.completed_rounds + 1 == tournament.total_rounds;
        out.push(Entrant {
            number: player.number,
            score,
            preference: history.preference(),
            history,
            // A.7: more than half the maximum possible score, in the last
            // round only.
            topscorer: last_round && score > tournament.completed_rounds,
            bye_ok: player.may_get_pairing_bye(played),
            float1,
            float2,
            avoid,
        });
    }
    // A.2: score, then pairing number.
    out.sort_by(|a, b| b.score.cmp(&a.score).then(a.number.cmp(&b.number)));
    Ok(out)
}

/// Whether the players `set` can all be paired (one of them taking the bye
/// if their number is odd), no two of `apart` meeting.
fn completable(ents: &[Entrant], set: &[usize], apart: &[usize]) -> bool {
    let n = set.len();
    let bye = n % 2 == 1;
    let m = n + usize::from(bye);
    if m == 0 {
        return true;
    }
    let mut weights = vec![0i64; m * m];
    for i in 0..n {
        for j in (i + 1)..n {
            let (a, b) = (set[i], set[j]);
            if ents[a].compatible(&ents[b]) && !(apart.contains(&a) && apart.contains(&b)) {
                weights[i * m + j] = 1;
            }
        }
        if bye && ents[set[i]].bye_ok {
            weights[i * m + n] = 1;
        }
    }
    integer_blossom::max_weight_matching(&weights, m)
        .iter()
        .all(Option::is_some)
}

/// One paired bracket on the way down.
struct Step {
    mdps: Vec<usize>,
    group: usize,
    pairing: BracketPairing,
}

pub(crate) fn pair_entrants(
    ents: &[Entrant],
    initial: Colour,
) -> Result<RoundPairing, PairingError> {
    let all: Vec<usize> = (0..ents.len()).collect();
    if !completable(ents, &all, &[]) {
        return Err(PairingError::NoLegalPairing);
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, e) in ents.iter().enumerate() {
        match groups.last_mut() {
            Some(group) if ents[group[0]].score == e.score => group.push(i),
            _ => groups.push(vec![i]),
        }
    }
    let round_lowest = ents.iter().map(|e| e.score).min().unwrap_or(0);
    let order = |v: &mut Vec<usize>| {
        v.sort_by(|&a, &b| {
            ents[b]
                .score
                .cmp(&ents[a].score)
                .then(ents[a].number.cmp(&ents[b].number))
        })
    };
    let bracket = |mdps: &[usize], residents: Vec<usize>, extra: Vec<usize>, mode: Mode| {
        let mut members = mdps.to_vec();
        order(&mut members);
        let mdp_count = members.len();
        members.extend(residents);
        Bracket {
            ents,
            members,
            mdp_count,
            extra,
            mode,
            initial,
            round_lowest,
        }
    };

    let mut steps: Vec<Step> = Vec::new();
    let mut mdps: Vec<usize> = Vec::new();
    let mut g = 0;
    let mut last: Option<BracketPairing> = None;
    let mut collapse_at: Option<usize> = None;
    while g < groups.len() {
        let lower: Vec<usize> = groups[g + 1..].concat();
        if lower.is_empty() {
            let b = bracket(&mdps, groups[g].clone(), Vec::new(), Mode::Last);
            match b.solve() {
                Some(p) => {
                    last = Some(p);
                }
                None if steps.is_empty() => return Err(PairingError::NoLegalPairing),
                None => collapse_at = Some(steps.len() - 1),
            }
            break;
        }
        let b = bracket(
            &mdps,
            groups[g].clone(),
            groups[g + 1].clone(),
            Mode::Normal,
        );
        let pairing = b.solve().ok_or(PairingError::NoLegalPairing)?;
        let mut rest = pairing.floaters.clone();
        rest.extend(&lower);
        if completable(ents, &rest, &pairing.floaters) {
            let floaters = pairing.floaters.clone();
            steps.push(Step {
                mdps: std::mem::take(&mut mdps),
                group: g,
                pairing,
            });
            mdps = floaters;
            g += 1;
        } else {
            steps.push(Step {
                mdps: std::mem::take(&mut mdps),
                group: g,
                pairing,
            });
            collapse_at = Some(steps.len() - 1);
            break;
        }
    }
    if let Some(mut at) = collapse_at {
        // A.9: pair the penultimate pairing bracket again so that the round
        // can be completed, then everyone below it is one last bracket.
        loop {
            let step = &steps[at];
            let lower: Vec<usize> = groups[step.group + 1..].concat();
            let b = bracket(
                &step.mdps,
                groups[step.group].clone(),
                lower.clone(),
                Mode::Completion,
            );
            let solved = b.solve().and_then(|ppb| {
                let mut clb = ppb.floaters.clone();
                let clb_mdps = ppb.floaters.clone();
                let residents = lower.clone();
                clb.extend(&residents);
                let last_bracket = bracket(&clb_mdps, residents, Vec::new(), Mode::Last);
                last_bracket.solve().map(|lp| (ppb, lp))
            });
            match solved {
                Some((ppb, lp)) => {
                    steps.truncate(at);
                    steps.push(Step {
                        mdps: Vec::new(),
                        group: usize::MAX,
                        pairing: ppb,
                    });
                    last = Some(lp);
                    break;
                }
                None if at > 0 => at -= 1,
                None => return Err(PairingError::NoLegalPairing),
            }
        }
    }
    let last = last.ok_or(PairingError::NoLegalPairing)?;
    let mut pairs: Vec<(usize, usize)> = steps
        .iter()
        .flat_map(|s| s.pairing.pairs.iter().copied())
        .collect();
    pairs.extend(last.pairs.iter().copied());
    Ok(finish(ents, &pairs, last.bye, initial))
}

/// Colours by E.1-E.5 and board order: the higher score of the pair, then
/// the sum of the scores, then the rank of the higher-ranked player.
fn finish(
    ents: &[Entrant],
    pairs: &[(usize, usize)],
    bye: Option<usize>,
    initial: Colour,
) -> RoundPairing {
    let mut ordered: Vec<(usize, usize)> = pairs
        .iter()
        .map(|&(a, b)| if a < b { (a, b) } else { (b, a) })
        .collect();
    ordered.sort_by(|&(a1, b1), &(a2, b2)| {
        let key = |a: usize, b: usize| {
            let (x, y) = (ents[a].score, ents[b].score);
            (std::cmp::Reverse(x.max(y)), std::cmp::Reverse(x + y), a)
        };
        key(a1, b1).cmp(&key(a2, b2))
    });
    let boards = ordered
        .into_iter()
        .map(|(high, low)| {
            let colour = colour::allocate(ents[high].side(), ents[low].side(), initial);
            let (white, black) = if colour == Colour::White {
                (high, low)
            } else {
                (low, high)
            };
            Board {
                white: ents[white].number,
                black: ents[black].number,
            }
        })
        .collect();
    RoundPairing {
        boards,
        bye: bye.map(|b| ents[b].number),
    }
}
