//! The standings: players ranked by score, then by performance.

use crate::arena::sheet::Outcome;

/// Games a player needs before their performance counts.
pub const PERFORMANCE_MIN_GAMES: usize = 3;

/// A player's performance: the mean over their finished games of the
/// opponent's rating, +500 for a win, -500 for a loss; `None` under
/// [`PERFORMANCE_MIN_GAMES`] games. Rounded to the nearest point.
pub fn performance(games: &[(Outcome, i32)]) -> Option<i32> {
    if games.len() < PERFORMANCE_MIN_GAMES {
        return None;
    }
    let sum: i64 = games
        .iter()
        .map(|&(outcome, opponent)| {
            i64::from(opponent)
                + match outcome {
                    Outcome::Win => 500,
                    Outcome::Draw => 0,
                    Outcome::Loss => -500,
                }
        })
        .sum();
    let count = i64::try_from(games.len()).ok()?;
    // Round half away from zero.
    let mean = (2 * sum + count * sum.signum()) / (2 * count);
    i32::try_from(mean).ok()
}

/// One line of the standings before it is ranked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry<P> {
    pub player: P,
    pub score: u32,
    /// From [`performance`]; `None` under three games.
    pub performance: Option<i32>,
    /// The player's rating, which breaks ties while there is no performance.
    pub rating: i32,
}

/// Ranks `entries`, best first: score, then performance (or the rating
/// where there is none yet), then the player's id so that every node ranks
/// a tie the same way.
pub fn rank<P: Ord>(mut entries: Vec<Entry<P>>) -> Vec<Entry<P>> {
    entries.sort_by(|a, b| {
        b.score
            .cmp(&a.score)
            .then_with(|| {
                b.performance
                    .unwrap_or(b.rating)
                    .cmp(&a.performance.unwrap_or(a.rating))
            })
            .then_with(|| a.player.cmp(&b.player))
    });
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn performance_needs_three_games() {
        assert_eq!(
            performance(&[(Outcome::Win, 1500), (Outcome::Win, 1500)]),
            None
        );
        assert_eq!(
            performance(&[
                (Outcome::Win, 1500),
                (Outcome::Draw, 1600),
                (Outcome::Loss, 1700),
            ]),
            Some(1600)
        );
        // (2000 + 2000 + 2001) / 3 = 2000.33: 2000.
        assert_eq!(
            performance(&[
                (Outcome::Win, 1500),
                (Outcome::Win, 1500),
                (Outcome::Win, 1501),
            ]),
            Some(2000)
        );
        // (1500 + 1501 + 1501) / 3 = 1500.67: 1501.
        assert_eq!(
            performance(&[
                (Outcome::Draw, 1500),
                (Outcome::Draw, 1501),
                (Outcome::Draw, 1501),
            ]),
            Some(1501)
        );
    }

    #[test]
    fn score_first_then_performance_or_rating_then_id() {
        let entry = |player: u32, score, performance, rating| Entry {
            player,
            score,
            performance,
            rating,
        };
        let ranked = rank(vec![
            entry(1, 4, Some(1500), 1900),
            entry(2, 6, None, 1200),
            entry(3, 4, None, 1600),
            entry(4, 4, Some(1600), 1000),
            entry(5, 4, Some(1600), 1000),
        ]);
        let order: Vec<u32> = ranked.iter().map(|entry| entry.player).collect();
        assert_eq!(order, [2, 3, 4, 5, 1]);
    }
}
