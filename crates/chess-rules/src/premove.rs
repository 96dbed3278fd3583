//! Premove patterns: the moves a player may prepare during the opponent's
//! turn, to be played only if legal once it is their turn.
//!
//! A premove follows the piece's movement pattern on an otherwise empty
//! board: occupied squares, blocked paths and check do not prevent one.
//! That includes squares held by the player's own pieces, since
//! the opponent may capture there first. This is chessground's
//! `unrestrictedPremoves` mode (lichess-org/chessground `src/premove.ts`);
//! its default mode instead guesses which occupied squares could become
//! reachable, which the product pages do not ask for and which would make the
//! server and client disagree on edge cases. The server checks legality when
//! the premove is played anyway.
//!
//! Pawns move forward one square, two from their starting rank, and one
//! square diagonally forward onto any square (the capture may target an empty
//! square). A king on its home square may premove castling (two squares
//! towards a rook) when it holds the matching castling right.

use crate::{Bitboard, CastlingSide, Color, File, Position, Rank, Role, Square};

const KNIGHT_STEPS: [(i32, i32); 8] = [
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
];
const KING_STEPS: [(i32, i32); 8] = [
    (0, 1),
    (1, 1),
    (1, 0),
    (1, -1),
    (0, -1),
    (-1, -1),
    (-1, 0),
    (-1, 1),
];
const ROOK_DIRECTIONS: [(i32, i32); 4] = [(0, 1), (1, 0), (0, -1), (-1, 0)];
const BISHOP_DIRECTIONS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, -1), (-1, 1)];

impl Position {
    /// Whether `color` may prepare the premove `from`-`to` in this position:
    /// `from` holds a piece of `color` and `to` lies in its premove pattern.
    ///
    /// Whose turn it is does not matter here; the caller decides when
    /// premoves are offered.
    pub fn is_premove(&self, color: Color, from: Square, to: Square) -> bool {
        self.premove_targets(color, from).contains(to)
    }

    /// Premove destinations of every piece of `color` that has one, `a1` first.
    pub fn premove_destinations(&self, color: Color) -> Vec<(Square, Bitboard)> {
        self.board()
            .by_color(color)
            .into_iter()
            .map(|from| (from, self.premove_targets(color, from)))
            .filter(|(_, targets)| targets.any())
            .collect()
    }

    /// The premove pattern of the piece of `color` on `from` (empty when
    /// `from` holds no piece of `color`).
    fn premove_targets(&self, color: Color, from: Square) -> Bitboard {
        let Some(piece) = self.board().piece_at(from) else {
            return Bitboard::EMPTY;
        };
        if piece.color != color {
            return Bitboard::EMPTY;
        }
        match piece.role {
            Role::Pawn => pawn_pattern(color, from),
            Role::Knight => steps(from, &KNIGHT_STEPS),
            Role::Bishop => rays(from, &BISHOP_DIRECTIONS),
            Role::Rook => rays(from, &ROOK_DIRECTIONS),
            Role::Queen => rays(from, &BISHOP_DIRECTIONS) | rays(from, &ROOK_DIRECTIONS),
            Role::King => steps(from, &KING_STEPS) | self.castling_premoves(color, from),
        }
    }

    fn castling_premoves(&self, color: Color, from: Square) -> Bitboard {
        let home = Square::from_coords(File::E, Rank::First.relative_to(color));
        if from != home {
            return Bitboard::EMPTY;
        }
        CastlingSide::ALL
            .into_iter()
            .filter(|&side| self.castling_rights().has(color, side))
            .map(|side| side.king_to(color))
            .collect()
    }
}

fn pawn_pattern(color: Color, from: Square) -> Bitboard {
    let forward = if color.is_white() { 1 } else { -1 };
    let mut targets: Bitboard = [(-1, forward), (0, forward), (1, forward)]
        .into_iter()
        .filter_map(|(df, dr)| from.offset(df, dr))
        .collect();
    if from.rank() == Rank::Second.relative_to(color) {
        targets |= from
            .offset(0, 2 * forward)
            .map_or(Bitboard::EMPTY, Bitboard::from_square);
    }
    targets
}

fn steps(from: Square, deltas: &[(i32, i32)]) -> Bitboard {
    deltas
        .iter()
        .filter_map(|&(df, dr)| from.offset(df, dr))
        .collect()
}

/// Every square along each direction up to the edge of an empty board.
fn rays(from: Square, directions: &[(i32, i32)]) -> Bitboard {
    let mut targets = Bitboard::EMPTY;
    for &(df, dr) in directions {
        let mut current = from;
        while let Some(next) = current.offset(df, dr) {
            targets.add(next);
            current = next;
        }
    }
    targets
}
