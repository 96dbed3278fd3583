//! Perft: counting leaf nodes of the legal move tree. OWNER: rules-core helper.

use crate::{Move, Position};

/// Number of leaf nodes `depth` plies below `pos` (bulk-counted at the last ply).
pub fn perft(_pos: &Position, _depth: u32) -> u64 {
    todo!()
}

/// Perft of each legal move, for debugging against another generator.
pub fn divide(_pos: &Position, _depth: u32) -> Vec<(Move, u64)> {
    todo!()
}
