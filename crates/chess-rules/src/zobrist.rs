//! Zobrist keys: a random 64-bit number per feature of a position, XORed
//! together so that playing a move updates the key in a few operations.
//! The numbers come from a fixed-seed generator in `build.rs`.

use crate::{CastlingRights, Piece, Square};

include!(concat!(env!("OUT_DIR"), "/zobrist_keys.rs"));

/// The key of `piece` standing on `sq`.
#[inline]
pub(crate) fn piece_key(piece: Piece, sq: Square) -> u64 {
    PIECE_KEYS[(piece.color.index() * 6 + piece.role.index()) * 64 + sq.index() as usize]
}

/// The key of a whole set of castling rights.
#[inline]
pub(crate) fn castling_key(rights: CastlingRights) -> u64 {
    CASTLING_KEYS[rights.bits() as usize]
}

/// The key of an en passant capture being possible on `sq`'s file.
#[inline]
pub(crate) fn en_passant_key(sq: Square) -> u64 {
    EN_PASSANT_FILE_KEYS[sq.file().index() as usize]
}

/// XORed in when Black is to move.
#[inline]
pub(crate) const fn black_to_move_key() -> u64 {
    BLACK_TO_MOVE_KEY
}
