//! A chess position and the moves that can be played in it.
//!
//! OWNER: rules-core helper. Signatures here are the contract other crates
//! build against; bodies are being filled in.

use crate::{Bitboard, Board, CastlingRights, Color, Ending, Move, MoveList, Square};

/// A legal chess position: placement, side to move, castling rights, en
/// passant square and move counters. Built only by [`Position::startpos`],
/// [`Position::from_fen`] or by playing legal moves, so it is always valid.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    board: Board,
    turn: Color,
    castling: CastlingRights,
    ep_square: Option<Square>,
    halfmove_clock: u32,
    fullmove_number: u32,
}

/// A move that is not legal in the position it was played in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IllegalMoveError {
    pub uci: String,
}

impl std::fmt::Display for IllegalMoveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "illegal move: {}", self.uci)
    }
}

impl std::error::Error for IllegalMoveError {}

impl Position {
    /// The standard starting position.
    pub fn startpos() -> Position {
        todo!()
    }

    pub fn board(&self) -> &Board {
        &self.board
    }
    pub fn turn(&self) -> Color {
        self.turn
    }
    pub fn castling_rights(&self) -> CastlingRights {
        self.castling
    }
    /// The en passant target square as FEN would write it (after any double push).
    pub fn ep_square(&self) -> Option<Square> {
        self.ep_square
    }
    /// The en passant square only when an en passant capture is legal now.
    pub fn legal_ep_square(&self) -> Option<Square> {
        todo!()
    }
    /// Half-moves since the last capture or pawn move.
    pub fn halfmove_clock(&self) -> u32 {
        self.halfmove_clock
    }
    /// Starts at 1, incremented after Black's move.
    pub fn fullmove_number(&self) -> u32 {
        self.fullmove_number
    }

    /// Every legal move.
    pub fn legal_moves(&self) -> MoveList {
        todo!()
    }
    /// Whether the side to move has any legal move.
    pub fn has_legal_moves(&self) -> bool {
        todo!()
    }
    /// Whether `m` is legal here.
    pub fn is_legal(&self, _m: &Move) -> bool {
        todo!()
    }
    /// Legal destinations of each piece of the side to move that can move.
    pub fn legal_destinations(&self) -> Vec<(Square, Bitboard)> {
        todo!()
    }
    /// Plays a legal move and returns the new position.
    ///
    /// # Errors
    /// [`IllegalMoveError`] if `m` is not legal here; `self` is unchanged.
    pub fn play(&self, _m: &Move) -> Result<Position, IllegalMoveError> {
        todo!()
    }
    /// Plays a move known to be legal (for example from [`Position::legal_moves`]).
    pub fn play_unchecked(&mut self, _m: &Move) {
        todo!()
    }
    /// Pieces giving check to the side to move.
    pub fn checkers(&self) -> Bitboard {
        todo!()
    }
    pub fn is_check(&self) -> bool {
        self.checkers().any()
    }
    pub fn is_checkmate(&self) -> bool {
        self.is_check() && !self.has_legal_moves()
    }
    pub fn is_stalemate(&self) -> bool {
        !self.is_check() && !self.has_legal_moves()
    }
    /// Squares of `attacker`'s pieces that attack `sq` given the current occupancy.
    pub fn attackers_to(&self, _sq: Square, _attacker: Color) -> Bitboard {
        todo!()
    }
    /// Zobrist hash of placement, side to move, castling rights and the
    /// en passant square only when an en passant capture is legal.
    pub fn zobrist_key(&self) -> u64 {
        todo!()
    }
    /// How the board alone ends the game here: checkmate, stalemate,
    /// insufficient material or the fifty-move rule (repetition needs the
    /// game's history: see [`crate::GameRecord`]).
    pub fn ending(&self) -> Option<Ending> {
        todo!()
    }
}

impl Default for Position {
    fn default() -> Position {
        Position::startpos()
    }
}
