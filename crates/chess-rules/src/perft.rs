//! Perft: counting leaf nodes of the legal move tree, the standard test of a
//! move generator against published node counts.

use crate::{Move, Position};

/// Number of leaf nodes `depth` plies below `pos` (bulk-counted at the last ply).
pub fn perft(pos: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => pos.count_legal_moves() as u64,
        _ => pos
            .legal_moves()
            .iter()
            .map(|m| {
                let mut child = pos.clone();
                child.play_unchecked(m);
                perft(&child, depth - 1)
            })
            .sum(),
    }
}

/// Perft of each legal move, for debugging against another generator.
/// Empty at depth 0, where no move is played.
pub fn divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .iter()
        .map(|m| {
            let mut child = pos.clone();
            child.play_unchecked(m);
            (*m, perft(&child, depth - 1))
        })
        .collect()
}
