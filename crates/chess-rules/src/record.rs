//! A game record: the moves from the start with their positions. OWNER: rules-text helper.

use crate::{Move, Position};

/// One half-move of a game: the move, its SAN and the position after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ply {
    pub mv: Move,
    pub san: String,
    pub position: Position,
}

/// The moves of a game from its initial position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRecord {
    initial: Position,
    plies: Vec<Ply>,
}
