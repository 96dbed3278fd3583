//! Attack sets of every piece, from tables computed at build time.
//!
//! Sliding pieces use magic bitboards (see `build.rs`): lookups cost a mask,
//! a multiply, a shift and one load, with no initialisation at run time.

use crate::{Bitboard, Color, Role, Square};

/// One square's entry of a magic bitboard table.
struct Magic {
    /// The squares whose occupancy changes the attack set.
    mask: u64,
    factor: u64,
    shift: u32,
    /// Where this square's attack sets start in `SLIDER_ATTACKS`.
    offset: usize,
}

include!(concat!(env!("OUT_DIR"), "/attack_tables.rs"));

#[inline]
fn magic_lookup(magic: &Magic, occupied: Bitboard) -> Bitboard {
    let index = ((occupied.0 & magic.mask).wrapping_mul(magic.factor) >> magic.shift) as usize;
    Bitboard(SLIDER_ATTACKS[magic.offset + index])
}

/// Squares a knight on `sq` attacks.
#[inline]
pub fn knight_attacks(sq: Square) -> Bitboard {
    Bitboard(KNIGHT_ATTACKS[sq.index() as usize])
}

/// Squares a king on `sq` attacks.
#[inline]
pub fn king_attacks(sq: Square) -> Bitboard {
    Bitboard(KING_ATTACKS[sq.index() as usize])
}

/// Squares a pawn of `color` on `sq` attacks (diagonally forward).
#[inline]
pub fn pawn_attacks(color: Color, sq: Square) -> Bitboard {
    let table = match color {
        Color::White => &WHITE_PAWN_ATTACKS,
        Color::Black => &BLACK_PAWN_ATTACKS,
    };
    Bitboard(table[sq.index() as usize])
}

/// Squares a bishop on `sq` attacks, up to and including the first piece on each diagonal.
#[inline]
pub fn bishop_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    magic_lookup(&BISHOP_MAGICS[sq.index() as usize], occupied)
}

/// Squares a rook on `sq` attacks, up to and including the first piece on each line.
#[inline]
pub fn rook_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    magic_lookup(&ROOK_MAGICS[sq.index() as usize], occupied)
}

/// Squares a queen on `sq` attacks.
#[inline]
pub fn queen_attacks(sq: Square, occupied: Bitboard) -> Bitboard {
    rook_attacks(sq, occupied) | bishop_attacks(sq, occupied)
}

/// Squares a piece of `color` and `role` on `sq` attacks.
#[inline]
pub fn attacks(color: Color, role: Role, sq: Square, occupied: Bitboard) -> Bitboard {
    match role {
        Role::Pawn => pawn_attacks(color, sq),
        Role::Knight => knight_attacks(sq),
        Role::Bishop => bishop_attacks(sq, occupied),
        Role::Rook => rook_attacks(sq, occupied),
        Role::Queen => queen_attacks(sq, occupied),
        Role::King => king_attacks(sq),
    }
}

/// The squares strictly between `a` and `b` if they share a rank, file or
/// diagonal, else the empty set.
#[inline]
pub fn between(a: Square, b: Square) -> Bitboard {
    Bitboard(BETWEEN[a.index() as usize][b.index() as usize])
}

/// The whole line (edge to edge) through `a` and `b` if they share a rank,
/// file or diagonal, else the empty set.
#[inline]
pub fn line(a: Square, b: Square) -> Bitboard {
    Bitboard(LINE[a.index() as usize][b.index() as usize])
}

/// Whether `c` lies on the line through `a` and `b`.
#[inline]
pub fn aligned(a: Square, b: Square, c: Square) -> bool {
    line(a, b).contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ray-walking reference for sliders, independent of the magic tables.
    fn slow_slider(sq: Square, occupied: Bitboard, directions: &[(i32, i32)]) -> Bitboard {
        let mut attacks = Bitboard::EMPTY;
        for &(df, dr) in directions {
            let mut cur = sq;
            while let Some(next) = cur.offset(df, dr) {
                attacks.add(next);
                if occupied.contains(next) {
                    break;
                }
                cur = next;
            }
        }
        attacks
    }

    #[test]
    fn magic_lookups_agree_with_ray_walking() {
        let mut state = 0x1234_5678_9abc_def0u64;
        for sq in Square::all() {
            for _ in 0..200 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let occupied = Bitboard(state & (state >> 3));
                assert_eq!(
                    rook_attacks(sq, occupied),
                    slow_slider(sq, occupied, &[(1, 0), (-1, 0), (0, 1), (0, -1)]),
                    "rook on {sq}"
                );
                assert_eq!(
                    bishop_attacks(sq, occupied),
                    slow_slider(sq, occupied, &[(1, 1), (1, -1), (-1, 1), (-1, -1)]),
                    "bishop on {sq}"
                );
            }
        }
    }

    #[test]
    fn leaper_attacks() {
        assert_eq!(knight_attacks(Square::A1).count(), 2);
        assert_eq!(knight_attacks(Square::E4).count(), 8);
        assert_eq!(king_attacks(Square::H8).count(), 3);
        assert_eq!(
            pawn_attacks(Color::White, Square::E4),
            Bitboard::from_square(Square::D5) | Square::F5
        );
        assert_eq!(
            pawn_attacks(Color::Black, Square::A7),
            Bitboard::from_square(Square::B6)
        );
    }

    #[test]
    fn between_and_line() {
        assert_eq!(
            between(Square::A1, Square::D4),
            Bitboard::from_square(Square::B2) | Square::C3
        );
        assert_eq!(between(Square::A1, Square::B3), Bitboard::EMPTY);
        assert_eq!(between(Square::E1, Square::E2), Bitboard::EMPTY);
        assert_eq!(line(Square::B2, Square::C3).count(), 8);
        assert!(aligned(Square::A1, Square::H8, Square::D4));
        assert!(!aligned(Square::A1, Square::H8, Square::D5));
        assert_eq!(line(Square::A1, Square::B3), Bitboard::EMPTY);
    }
}
