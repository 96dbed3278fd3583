//! Perft: counting leaf nodes of the legal move tree, the standard test of a
//! move generator against published node counts.

use crate::{Move, Position};

/// Number of leaf nodes `depth` plies below `pos` (bulk-counted at the last ply).
///
/// ```
/// use chess_rules::{Position, perft};
/// assert_eq!(perft(&Position::startpos(), 3), 8902);
/// ```
pub fn perft(pos: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => pos.count_legal_moves() as u64,
        _ => {
            // Straight from the generator's destination sets: no move list.
            let mut nodes = 0;
            pos.generate(|piece_moves| {
                pos.for_each_move(piece_moves.role, piece_moves.from, piece_moves.to, |m| {
                    let mut child = pos.clone();
                    child.play_unchecked(&m);
                    nodes += perft(&child, depth - 1);
                });
                false
            });
            nodes
        }
    }
}

/// Perft of each legal move, for debugging against another generator.
/// Empty at depth 0, where no move is played.
///
/// ```
/// use chess_rules::{Position, divide};
/// let counts = divide(&Position::startpos(), 2);
/// assert_eq!(counts.len(), 20);
/// assert!(counts.iter().all(|(_, nodes)| *nodes == 20));
/// ```
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
