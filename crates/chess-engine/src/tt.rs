//! The transposition table: a fixed-size hash table of search results keyed
//! by the position's Zobrist key, so the search neither repeats work on
//! transpositions nor forgets the best move of the previous iteration.

use chess_rules::Move;

use crate::score::{MATE, MATE_BOUND};

/// What a stored score says about the true value of the position.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    /// The score is exact.
    Exact,
    /// The true value is at least the score (the node failed high).
    Lower,
    /// The true value is at most the score (the node failed low).
    Upper,
}

/// One stored search result.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Entry {
    key: u64,
    pub best_move: Option<Move>,
    score: i32,
    pub depth: i32,
    pub bound: Bound,
}

impl Entry {
    /// The stored score, with mate distances counted from the node at `ply`.
    pub fn score(&self, ply: usize) -> i32 {
        score_from_tt(self.score, ply)
    }
}

/// A fixed-size, always-replace-unless-deeper table.
#[derive(Debug)]
pub(crate) struct TranspositionTable {
    entries: Vec<Option<Entry>>,
}

impl TranspositionTable {
    /// A table using about `megabytes` of memory (at least one entry).
    pub fn new(megabytes: usize) -> TranspositionTable {
        let entry_size = std::mem::size_of::<Option<Entry>>();
        let wanted = (megabytes * 1024 * 1024 / entry_size).max(1);
        // A power of two lets the index be a mask rather than a division.
        let len = if wanted.is_power_of_two() {
            wanted
        } else {
            wanted.next_power_of_two() / 2
        };
        TranspositionTable {
            entries: vec![None; len],
        }
    }

    /// Forgets everything, for a new game.
    pub fn clear(&mut self) {
        self.entries.fill(None);
    }

    fn index(&self, key: u64) -> usize {
        // The table length is a power of two; the high bits of the key are
        // as good as the low ones and are not what the zobrist XOR of the
        // side to move touches first.
        (key as usize) & (self.entries.len() - 1)
    }

    /// The entry for `key`, if one is stored.
    pub fn probe(&self, key: u64) -> Option<Entry> {
        self.entries[self.index(key)].filter(|e| e.key == key)
    }

    /// Stores a result for `key` searched at `ply` from the root.
    pub fn store(
        &mut self,
        key: u64,
        best_move: Option<Move>,
        score: i32,
        depth: i32,
        bound: Bound,
        ply: usize,
    ) {
        let index = self.index(key);
        let slot = &mut self.entries[index];
        // Keep a deeper result of the same position unless this one is exact;
        // a different position always replaces (the old one is stale).
        if let Some(old) = slot
            && old.key == key
            && old.depth > depth
            && bound != Bound::Exact
        {
            return;
        }
        // Keep the old best move when this search found none (a fail low).
        let best_move =
            best_move.or_else(|| slot.filter(|e| e.key == key).and_then(|e| e.best_move));
        *slot = Some(Entry {
            key,
            best_move,
            score: score_to_tt(score, ply),
            depth,
            bound,
        });
    }
}

/// Mate scores are stored relative to the node, not the root, so that a
/// transposition reached at another ply reads the right distance to mate.
fn score_to_tt(score: i32, ply: usize) -> i32 {
    let ply = ply as i32;
    if score >= MATE_BOUND {
        score + ply
    } else if score <= -MATE_BOUND {
        score - ply
    } else {
        score
    }
}

fn score_from_tt(score: i32, ply: usize) -> i32 {
    let ply = ply as i32;
    if score >= MATE_BOUND {
        (score - ply).min(MATE)
    } else if score <= -MATE_BOUND {
        (score + ply).max(-MATE)
    } else {
        score
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mate_scores_are_stored_relative_to_the_node() {
        // Mate in 3 plies seen from ply 5 is mate in 8 plies from the root.
        let at_root = MATE - 8;
        let stored = score_to_tt(at_root, 5);
        assert_eq!(stored, MATE - 3);
        // Read back at ply 2 it is mate in 5 plies from that root.
        assert_eq!(score_from_tt(stored, 2), MATE - 5);
        assert_eq!(score_from_tt(score_to_tt(-at_root, 5), 2), -(MATE - 5));
        assert_eq!(score_from_tt(score_to_tt(123, 7), 1), 123);
    }

    #[test]
    fn probe_finds_only_the_stored_key() {
        let mut tt = TranspositionTable::new(1);
        tt.store(42, None, 17, 3, Bound::Exact, 0);
        let entry = tt.probe(42).expect("stored entry");
        assert_eq!(entry.score(0), 17);
        assert_eq!(entry.depth, 3);
        assert!(tt.probe(43).is_none());
        tt.clear();
        assert!(tt.probe(42).is_none());
    }
}
