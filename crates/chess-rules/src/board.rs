//! Piece placement: which piece stands on which square.

use crate::{Bitboard, ByColor, Color, Piece, Role, Square};

/// The placement of the pieces, as bitboards by role and by colour.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Board {
    by_role: [Bitboard; 6],
    by_color: ByColor<Bitboard>,
}

impl Board {
    /// A board with no pieces.
    pub const fn empty() -> Board {
        Board {
            by_role: [Bitboard::EMPTY; 6],
            by_color: ByColor {
                white: Bitboard::EMPTY,
                black: Bitboard::EMPTY,
            },
        }
    }

    /// The piece on a square, if any.
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        let color = if self.by_color.white.contains(sq) {
            Color::White
        } else if self.by_color.black.contains(sq) {
            Color::Black
        } else {
            return None;
        };
        let role = Role::ALL
            .into_iter()
            .find(|role| self.by_role[role.index()].contains(sq))?;
        Some(Piece { color, role })
    }

    /// The role on a square, if any.
    #[inline]
    pub fn role_at(&self, sq: Square) -> Option<Role> {
        if !self.occupied().contains(sq) {
            return None;
        }
        Role::ALL
            .into_iter()
            .find(|role| self.by_role[role.index()].contains(sq))
    }

    /// Puts a piece on a square, replacing whatever stood there.
    pub fn set_piece_at(&mut self, sq: Square, piece: Piece) {
        self.discard_piece_at(sq);
        self.by_role[piece.role.index()].add(sq);
        self.by_color.get_mut(piece.color).add(sq);
    }

    /// Removes and returns the piece on a square, if any.
    pub fn remove_piece_at(&mut self, sq: Square) -> Option<Piece> {
        let piece = self.piece_at(sq)?;
        self.by_role[piece.role.index()].remove(sq);
        self.by_color.get_mut(piece.color).remove(sq);
        Some(piece)
    }

    /// Empties a square.
    #[inline]
    pub fn discard_piece_at(&mut self, sq: Square) {
        let mask = !Bitboard::from_square(sq);
        for bb in &mut self.by_role {
            *bb &= mask;
        }
        self.by_color.white &= mask;
        self.by_color.black &= mask;
    }

    /// Adds `piece` on an empty `sq`, or removes it from `sq` where it
    /// stands: the cheap update used when playing moves.
    #[inline]
    pub(crate) fn toggle(&mut self, sq: Square, piece: Piece) {
        self.by_role[piece.role.index()].toggle(sq);
        self.by_color.get_mut(piece.color).toggle(sq);
    }

    /// The colour of the piece on a square, if any.
    #[inline]
    pub fn color_at(&self, sq: Square) -> Option<Color> {
        if self.by_color.white.contains(sq) {
            Some(Color::White)
        } else if self.by_color.black.contains(sq) {
            Some(Color::Black)
        } else {
            None
        }
    }

    /// Every occupied square.
    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.by_color.white | self.by_color.black
    }

    /// The squares of one colour's pieces.
    #[inline]
    pub fn by_color(&self, color: Color) -> Bitboard {
        *self.by_color.get(color)
    }

    /// The squares of one role's pieces, of both colours.
    #[inline]
    pub fn by_role(&self, role: Role) -> Bitboard {
        self.by_role[role.index()]
    }

    /// The squares of one piece kind: `pieces(White, Knight)`.
    #[inline]
    pub fn pieces(&self, color: Color, role: Role) -> Bitboard {
        self.by_role[role.index()] & *self.by_color.get(color)
    }

    /// The square of a colour's king, if it has exactly one.
    #[inline]
    pub fn king_of(&self, color: Color) -> Option<Square> {
        self.pieces(color, Role::King).single_square()
    }

    /// Rooks and queens of a colour.
    #[inline]
    pub fn rooks_and_queens(&self, color: Color) -> Bitboard {
        (self.by_role(Role::Rook) | self.by_role(Role::Queen)) & self.by_color(color)
    }

    /// Bishops and queens of a colour.
    #[inline]
    pub fn bishops_and_queens(&self, color: Color) -> Bitboard {
        (self.by_role(Role::Bishop) | self.by_role(Role::Queen)) & self.by_color(color)
    }

    /// Every piece on the board with its square, `a1` first.
    pub fn pieces_iter(&self) -> impl Iterator<Item = (Square, Piece)> + '_ {
        self.occupied()
            .into_iter()
            .filter_map(|sq| self.piece_at(sq).map(|p| (sq, p)))
    }
}

impl Default for Board {
    fn default() -> Board {
        Board::empty()
    }
}
