//! Moves, as produced by the move generator, and a list of them.

use std::fmt;
use std::ops::Deref;

use crate::{CastlingSide, Role, Square};

/// What kind of move a [`Move`] is, with what it captures or promotes to.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum MoveKind {
    /// A move to an empty square (including pawn pushes).
    Normal,
    /// A capture of the piece standing on the destination.
    Capture { captured: Role },
    /// A pawn capturing a pawn that just advanced two squares past it.
    EnPassant,
    /// Castling: `from` and `to` are the king's squares (`e1` to `g1`).
    Castle { side: CastlingSide },
    /// A pawn reaching the last rank, possibly by capturing.
    Promotion {
        promotion: Role,
        captured: Option<Role>,
    },
}

/// A move of a piece in some position.
///
/// Values come from [`crate::Position::legal_moves`] or from parsing UCI or
/// SAN against a position; a hand-made `Move` is only legal where
/// [`crate::Position::is_legal`] says so.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Move {
    from: Square,
    to: Square,
    role: Role,
    kind: MoveKind,
}

impl Move {
    /// A move of `role` from `from` to `to` of the given kind.
    #[inline]
    pub const fn new(role: Role, from: Square, to: Square, kind: MoveKind) -> Move {
        Move {
            from,
            to,
            role,
            kind,
        }
    }

    /// The square the moving piece leaves (the king's square for castling).
    #[inline]
    pub const fn from(&self) -> Square {
        self.from
    }

    /// The square the moving piece lands on (the king's square for castling).
    #[inline]
    pub const fn to(&self) -> Square {
        self.to
    }

    /// The role of the moving piece (a pawn for a promotion).
    #[inline]
    pub const fn role(&self) -> Role {
        self.role
    }

    #[inline]
    pub const fn kind(&self) -> MoveKind {
        self.kind
    }

    /// The role captured, if any (a pawn for en passant).
    #[inline]
    pub const fn capture(&self) -> Option<Role> {
        match self.kind {
            MoveKind::Capture { captured } => Some(captured),
            MoveKind::EnPassant => Some(Role::Pawn),
            MoveKind::Promotion { captured, .. } => captured,
            MoveKind::Normal | MoveKind::Castle { .. } => None,
        }
    }

    #[inline]
    pub const fn is_capture(&self) -> bool {
        self.capture().is_some()
    }

    /// The role a pawn promotes to, if this is a promotion.
    #[inline]
    pub const fn promotion(&self) -> Option<Role> {
        match self.kind {
            MoveKind::Promotion { promotion, .. } => Some(promotion),
            _ => None,
        }
    }

    /// The side castled to, if this is castling.
    #[inline]
    pub const fn castling_side(&self) -> Option<CastlingSide> {
        match self.kind {
            MoveKind::Castle { side } => Some(side),
            _ => None,
        }
    }

    #[inline]
    pub const fn is_en_passant(&self) -> bool {
        matches!(self.kind, MoveKind::EnPassant)
    }

    /// Whether the move resets the fifty-move counter (a pawn move or a capture).
    #[inline]
    pub const fn is_zeroing(&self) -> bool {
        matches!(self.role, Role::Pawn) || self.is_capture()
    }

    /// The move in UCI notation: `e2e4`, `e1g1`, `e7e8q`.
    pub fn to_uci(&self) -> crate::UciMove {
        crate::UciMove::new(self.from, self.to, self.promotion())
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Move({} {}{}{:?})",
            self.role.upper_char(),
            self.from,
            self.to,
            self.kind
        )
    }
}

impl fmt::Display for Move {
    /// The UCI form, which needs no position to write.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.to_uci(), f)
    }
}

/// The most legal moves any chess position has is 218; this leaves room.
pub const MAX_MOVES: usize = 256;

/// A list of moves kept on the stack, as returned by the move generator.
#[derive(Clone)]
pub struct MoveList {
    moves: [Move; MAX_MOVES],
    len: usize,
}

const FILLER: Move = Move::new(Role::Pawn, Square::A1, Square::A1, MoveKind::Normal);

impl MoveList {
    #[inline]
    pub const fn new() -> MoveList {
        MoveList {
            moves: [FILLER; MAX_MOVES],
            len: 0,
        }
    }

    /// Appends a move.
    ///
    /// # Panics
    /// If the list already holds [`MAX_MOVES`] moves, which no legal position reaches.
    #[inline]
    pub fn push(&mut self, m: Move) {
        self.moves[self.len] = m;
        self.len += 1;
    }

    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Keeps only the moves for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(&Move) -> bool) {
        let mut kept = 0;
        for i in 0..self.len {
            if keep(&self.moves[i]) {
                self.moves[kept] = self.moves[i];
                kept += 1;
            }
        }
        self.len = kept;
    }

    /// The moves as a mutable slice, for sorting by the engine.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [Move] {
        &mut self.moves[..self.len]
    }
}

impl Default for MoveList {
    fn default() -> MoveList {
        MoveList::new()
    }
}

impl Deref for MoveList {
    type Target = [Move];
    #[inline]
    fn deref(&self) -> &[Move] {
        &self.moves[..self.len]
    }
}

impl fmt::Debug for MoveList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a Move;
    type IntoIter = std::slice::Iter<'a, Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl Extend<Move> for MoveList {
    fn extend<I: IntoIterator<Item = Move>>(&mut self, iter: I) {
        for m in iter {
            self.push(m);
        }
    }
}
