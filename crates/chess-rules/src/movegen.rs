//! Legal move generation with pins and checks, without trying each move.
//!
//! The generator reports, piece by piece, the set of legal destinations.
//! Callers turn those sets into [`crate::Move`]s, count them (perft's bulk
//! counting at the last ply needs only popcounts) or stop at the first one.
//!
//! Legality comes from three facts computed once per position:
//! - the checkers: with two, only the king may move; with one, other pieces
//!   must capture it or block the line between it and the king;
//! - the pinned pieces: a pinned piece stays on the line through its king
//!   and the pinner;
//! - the king's destinations are tested against attacks with the king
//!   lifted off the board, so it cannot step back along a checking ray.
//!
//! En passant is the one move checked on the board after it is made,
//! because it removes two pieces from one rank (a horizontal pin no pin
//! test catches) and can resolve a check by the pawn that just moved.

use crate::attacks::{
    between, bishop_attacks, king_attacks, knight_attacks, line, pawn_attacks, rook_attacks,
};
use crate::{Bitboard, CastlingSide, Color, Position, Rank, Role, Square};

/// The legal destinations of one piece of the side to move.
#[derive(Copy, Clone, Debug)]
pub(crate) struct PieceMoves {
    pub role: Role,
    pub from: Square,
    /// Castling is the king's two-square move; en passant is the pawn's
    /// diagonal move to the empty en passant square; a pawn reaching the
    /// back rank stands for its four promotions.
    pub to: Bitboard,
}

/// Receives the generator's output.
pub(crate) trait MoveVisitor {
    /// Whether pawns that are not pinned and do not capture en passant may
    /// be reported as whole sets through [`MoveVisitor::pawn_targets`]
    /// instead of pawn by pawn: enough for counting, and faster.
    const PAWNS_SETWISE: bool;

    /// The legal destinations of one piece; `true` stops the generator.
    fn piece(&mut self, moves: PieceMoves) -> bool;

    /// Destinations of several pawns at once, one pawn move per square (a
    /// square on the back rank stands for four promotions). Called only
    /// when [`MoveVisitor::PAWNS_SETWISE`] is set.
    fn pawn_targets(&mut self, targets: Bitboard);
}

/// A visitor made of a closure, which sees every piece on its own.
pub(crate) struct EachPiece<F>(pub F);

impl<F: FnMut(PieceMoves) -> bool> MoveVisitor for EachPiece<F> {
    const PAWNS_SETWISE: bool = false;

    #[inline]
    fn piece(&mut self, moves: PieceMoves) -> bool {
        (self.0)(moves)
    }

    fn pawn_targets(&mut self, _targets: Bitboard) {
        // Never called: PAWNS_SETWISE is false.
    }
}

/// Counts legal moves, promotions four times.
#[derive(Default)]
pub(crate) struct MoveCounter(pub usize);

impl MoveVisitor for MoveCounter {
    const PAWNS_SETWISE: bool = true;

    #[inline]
    fn piece(&mut self, moves: PieceMoves) -> bool {
        self.0 += if moves.role == Role::Pawn {
            self.pawn_moves(moves.to)
        } else {
            moves.to.count() as usize
        };
        false
    }

    #[inline]
    fn pawn_targets(&mut self, targets: Bitboard) {
        self.0 += self.pawn_moves(targets);
    }
}

impl MoveCounter {
    #[inline]
    fn pawn_moves(&self, targets: Bitboard) -> usize {
        let promotions = targets & Bitboard::BACKRANKS;
        if promotions.is_empty() {
            targets.count() as usize
        } else {
            (targets.count() + 3 * promotions.count()) as usize
        }
    }
}

/// A set of squares moved one rank towards `color`'s opponent, then
/// `file_delta` files sideways (squares leaving the board are dropped).
#[inline]
fn pawn_step(set: Bitboard, color: Color, file_delta: i32) -> Bitboard {
    const NOT_FILE_A: u64 = !0x0101_0101_0101_0101;
    const NOT_FILE_H: u64 = !0x8080_8080_8080_8080;
    let sideways = match file_delta {
        -1 => Bitboard(set.0 & NOT_FILE_A),
        1 => Bitboard(set.0 & NOT_FILE_H),
        _ => set,
    };
    let shift = match color {
        Color::White => 8 + file_delta,
        Color::Black => -8 + file_delta,
    };
    if shift >= 0 {
        Bitboard(sideways.0 << shift)
    } else {
        Bitboard(sideways.0 >> -shift)
    }
}

impl Position {
    /// Calls `visit` with the legal destinations of each piece that has
    /// some; stops as soon as `visit` returns `true`, and then returns `true`.
    #[inline]
    pub(crate) fn generate(&self, visit: impl FnMut(PieceMoves) -> bool) -> bool {
        self.generate_with(&mut EachPiece(visit))
    }

    /// The generator proper, reporting to any [`MoveVisitor`].
    #[inline]
    pub(crate) fn generate_with<V: MoveVisitor>(&self, visitor: &mut V) -> bool {
        let us = self.turn;
        let them = us.other();
        let board = &self.board;
        let ours = board.by_color(us);
        let theirs = board.by_color(them);
        let occupied = ours | theirs;
        let king = self.our_king();
        let checkers = self.attackers_to(king, them);

        // King steps, tested with the king lifted so that it cannot hide
        // behind itself on a checking line.
        let without_king = occupied ^ king;
        let mut king_dests = Bitboard::EMPTY;
        for to in king_attacks(king) & !ours {
            if self
                .attackers_with_occupancy(to, them, without_king)
                .is_empty()
            {
                king_dests.add(to);
            }
        }
        if checkers.is_empty() {
            king_dests |= self.castling_destinations(king, occupied);
        }
        if king_dests.any()
            && visitor.piece(PieceMoves {
                role: Role::King,
                from: king,
                to: king_dests,
            })
        {
            return true;
        }

        if checkers.more_than_one() {
            return false;
        }
        // Squares a non-king move may land on: anywhere not our own, or when
        // in check, the checker itself or a square blocking its line.
        let target = match checkers.first() {
            Some(checker) => between(king, checker) | checker,
            None => !ours,
        };
        let pinned = self.pinned(king, occupied);

        let visit_piece = |visitor: &mut V, role: Role, from: Square, mut to: Bitboard| {
            if pinned.contains(from) {
                to &= line(king, from);
            }
            to.any() && visitor.piece(PieceMoves { role, from, to })
        };

        // A pinned knight can never stay on its pin line.
        for from in board.pieces(us, Role::Knight) & !pinned {
            if visit_piece(visitor, Role::Knight, from, knight_attacks(from) & target) {
                return true;
            }
        }
        for from in board.pieces(us, Role::Bishop) {
            if visit_piece(
                visitor,
                Role::Bishop,
                from,
                bishop_attacks(from, occupied) & target,
            ) {
                return true;
            }
        }
        for from in board.pieces(us, Role::Rook) {
            if visit_piece(
                visitor,
                Role::Rook,
                from,
                rook_attacks(from, occupied) & target,
            ) {
                return true;
            }
        }
        for from in board.pieces(us, Role::Queen) {
            let attacks = rook_attacks(from, occupied) | bishop_attacks(from, occupied);
            if visit_piece(visitor, Role::Queen, from, attacks & target) {
                return true;
            }
        }

        let pawns = board.pieces(us, Role::Pawn);
        let (forward, start_rank) = match us {
            Color::White => (1, Rank::Second),
            Color::Black => (-1, Rank::Seventh),
        };
        let ep_capturers = match self.ep_square {
            Some(ep) => pawn_attacks(them, ep) & pawns,
            None => Bitboard::EMPTY,
        };
        let mut pawns_one_by_one = pawns;
        if V::PAWNS_SETWISE {
            // Pawns that are free to move are counted as sets, four shifts
            // for all of them at once; pinned pawns and en passant
            // capturers go one by one below.
            let free = pawns & !pinned & !ep_capturers;
            let empty = !occupied;
            let single = pawn_step(free, us, 0) & empty;
            let double_rank = Bitboard::from_rank(Rank::Fourth.relative_to(us));
            let double = pawn_step(single, us, 0) & empty & double_rank;
            for targets in [
                single & target,
                double & target,
                pawn_step(free, us, -1) & theirs & target,
                pawn_step(free, us, 1) & theirs & target,
            ] {
                visitor.pawn_targets(targets);
            }
            pawns_one_by_one = pawns & (pinned | ep_capturers);
        }
        for from in pawns_one_by_one {
            let mut to = pawn_attacks(us, from) & theirs;
            let single = Bitboard::from(from).shift_ranks(forward) & !occupied;
            to |= single;
            if from.rank() == start_rank {
                to |= single.shift_ranks(forward) & !occupied;
            }
            to &= target;
            if ep_capturers.contains(from)
                && let Some(ep) = self.ep_square
                && self.en_passant_is_safe(from, ep)
            {
                // Checked on the board after the capture, which covers pins
                // and checks, so it bypasses `target`. A pinned pawn's safe
                // capture lands on its pin line, so the pin mask keeps it.
                to.add(ep);
            }
            if visit_piece(visitor, Role::Pawn, from, to) {
                return true;
            }
        }
        false
    }

    /// Our pieces standing alone between our king and an enemy slider.
    #[inline]
    fn pinned(&self, king: Square, occupied: Bitboard) -> Bitboard {
        let them = self.turn.other();
        let board = &self.board;
        let snipers = (rook_attacks(king, Bitboard::EMPTY) & board.rooks_and_queens(them))
            | (bishop_attacks(king, Bitboard::EMPTY) & board.bishops_and_queens(them));
        let mut pinned = Bitboard::EMPTY;
        for sniper in snipers {
            let blockers = between(king, sniper) & occupied;
            if !blockers.more_than_one() {
                pinned |= blockers;
            }
        }
        pinned & board.by_color(self.turn)
    }

    /// Castling king destinations, for a side not in check.
    fn castling_destinations(&self, king: Square, occupied: Bitboard) -> Bitboard {
        let us = self.turn;
        let mut dests = Bitboard::EMPTY;
        if !self.castling.has_any(us) {
            return dests;
        }
        for side in CastlingSide::ALL {
            if !self.castling.has(us, side) {
                continue;
            }
            let rook = side.rook_from(us);
            let king_to = side.king_to(us);
            if (between(king, rook) & occupied).any() {
                continue;
            }
            // The king may not pass through or land on an attacked square
            // (it is not in check now, so its own square is safe).
            let path = between(king, king_to) | king_to;
            if path
                .into_iter()
                .all(|sq| self.attackers_to(sq, us.other()).is_empty())
            {
                dests.add(king_to);
            }
        }
        dests
    }
}
