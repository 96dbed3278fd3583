//! A chess position and the moves that can be played in it.

use crate::attacks::{bishop_attacks, king_attacks, knight_attacks, pawn_attacks, rook_attacks};
use crate::movegen::MoveCounter;
use crate::zobrist;
use crate::{
    Bitboard, Board, CastlingRights, CastlingSide, Color, Ending, File, Move, MoveKind, MoveList,
    Piece, Rank, Role, Square,
};

/// A legal chess position: placement, side to move, castling rights, en
/// passant square and move counters. Built only by [`Position::startpos`],
/// [`Position::from_fen`] or by playing legal moves, so it is always valid.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    pub(crate) board: Board,
    pub(crate) turn: Color,
    pub(crate) castling: CastlingRights,
    pub(crate) ep_square: Option<Square>,
    pub(crate) halfmove_clock: u32,
    pub(crate) fullmove_number: u32,
    /// Zobrist key of placement, castling rights and side to move, kept up
    /// to date by `play_unchecked`; the en passant part is added on demand
    /// because it depends on whether the capture is legal.
    pub(crate) key: u64,
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

/// King and rook home squares: a move from or to one of them can change castling rights.
const CASTLING_SQUARES: Bitboard = Bitboard(0x9100_0000_0000_0091);

/// Clears the castling rights that need a piece on `sq` to be unmoved:
/// anything leaving or arriving on a king or rook home square ends them.
fn clear_rights_touching(rights: &mut CastlingRights, sq: Square) {
    for color in Color::ALL {
        if sq == Square::from_coords(File::E, Rank::First.relative_to(color)) {
            rights.remove_color(color);
        }
        for side in CastlingSide::ALL {
            if sq == side.rook_from(color) {
                rights.remove(color, side);
            }
        }
    }
}

impl Position {
    /// The standard starting position.
    pub fn startpos() -> Position {
        let mut board = Board::empty();
        let back = [
            Role::Rook,
            Role::Knight,
            Role::Bishop,
            Role::Queen,
            Role::King,
            Role::Bishop,
            Role::Knight,
            Role::Rook,
        ];
        for (file, role) in File::ALL.into_iter().zip(back) {
            for color in Color::ALL {
                let home = Rank::First.relative_to(color);
                let pawns = Rank::Second.relative_to(color);
                board.set_piece_at(Square::from_coords(file, home), Piece::new(color, role));
                board.set_piece_at(
                    Square::from_coords(file, pawns),
                    Piece::new(color, Role::Pawn),
                );
            }
        }
        Position::from_parts(board, Color::White, CastlingRights::ALL, None, 0, 1)
    }

    /// Assembles a position from parts already checked to be valid and
    /// computes its Zobrist key.
    pub(crate) fn from_parts(
        board: Board,
        turn: Color,
        castling: CastlingRights,
        ep_square: Option<Square>,
        halfmove_clock: u32,
        fullmove_number: u32,
    ) -> Position {
        let mut key = zobrist::castling_key(castling);
        if turn == Color::Black {
            key ^= zobrist::black_to_move_key();
        }
        for (sq, piece) in board.pieces_iter() {
            key ^= zobrist::piece_key(piece, sq);
        }
        Position {
            board,
            turn,
            castling,
            ep_square,
            halfmove_clock,
            fullmove_number,
            key,
        }
    }

    /// The placement of the pieces.
    pub fn board(&self) -> &Board {
        &self.board
    }
    /// The side to move.
    pub fn turn(&self) -> Color {
        self.turn
    }
    /// Castling rights of both sides (castling may still be impossible now).
    pub fn castling_rights(&self) -> CastlingRights {
        self.castling
    }
    /// The en passant target square as FEN would write it (after any double push).
    pub fn ep_square(&self) -> Option<Square> {
        self.ep_square
    }
    /// The en passant square only when an en passant capture is legal now.
    pub fn legal_ep_square(&self) -> Option<Square> {
        let ep = self.ep_square?;
        let candidates = pawn_attacks(self.turn.other(), ep) & self.our(Role::Pawn);
        candidates
            .into_iter()
            .any(|from| self.en_passant_is_safe(from, ep))
            .then_some(ep)
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
        let mut moves = MoveList::new();
        self.generate(|piece_moves| {
            self.push_moves(
                piece_moves.role,
                piece_moves.from,
                piece_moves.to,
                &mut moves,
            );
            false
        });
        moves
    }

    /// The number of legal moves, counted without listing them (promotions
    /// count four times).
    pub fn count_legal_moves(&self) -> usize {
        let mut counter = MoveCounter::default();
        self.generate_with(&mut counter);
        counter.0
    }

    /// Whether the side to move has any legal move.
    pub fn has_legal_moves(&self) -> bool {
        self.generate(|_| true)
    }
    /// Whether `m` is legal here.
    pub fn is_legal(&self, m: &Move) -> bool {
        if self.board.piece_at(m.from()) != Some(Piece::new(self.turn, m.role())) {
            return false;
        }
        let mut found = false;
        self.generate(|piece_moves| {
            if piece_moves.from == m.from() && piece_moves.to.contains(m.to()) {
                let mut moves = MoveList::new();
                self.push_moves(
                    piece_moves.role,
                    piece_moves.from,
                    m.to().into(),
                    &mut moves,
                );
                found = moves.contains(m);
                return true;
            }
            false
        });
        found
    }
    /// Legal destinations of each piece of the side to move that can move.
    /// Castling shows as the king's two-square move (`e1` to `g1`).
    pub fn legal_destinations(&self) -> Vec<(Square, Bitboard)> {
        let mut destinations = Vec::new();
        self.generate(|piece_moves| {
            destinations.push((piece_moves.from, piece_moves.to));
            false
        });
        destinations.sort_by_key(|(from, _)| *from);
        destinations
    }
    /// Plays a legal move and returns the new position.
    ///
    /// # Errors
    /// [`IllegalMoveError`] if `m` is not legal here; `self` is unchanged.
    pub fn play(&self, m: &Move) -> Result<Position, IllegalMoveError> {
        if !self.is_legal(m) {
            return Err(IllegalMoveError {
                uci: m.to_uci().to_string(),
            });
        }
        let mut next = self.clone();
        next.play_unchecked(m);
        Ok(next)
    }

    /// Plays a move known to be legal (for example from [`Position::legal_moves`]).
    ///
    /// Skips the legality check that [`Position::play`] makes, which the
    /// engine and perft cannot afford at every node. Playing a move that is
    /// not legal here corrupts the position (no undefined behaviour, but
    /// later calls may return nonsense or panic, for example when a king
    /// was captured).
    pub fn play_unchecked(&mut self, m: &Move) {
        let us = self.turn;
        let (from, to) = (m.from(), m.to());
        let moving = Piece::new(us, m.role());

        self.ep_square = None;
        self.halfmove_clock = if m.is_zeroing() {
            0
        } else {
            self.halfmove_clock.saturating_add(1)
        };
        if us == Color::Black {
            self.fullmove_number = self.fullmove_number.saturating_add(1);
        }

        self.toggle(from, moving);
        match m.kind() {
            MoveKind::Normal => {
                self.toggle(to, moving);
                if m.role() == Role::Pawn && from.rank().index().abs_diff(to.rank().index()) == 2 {
                    // The square the pawn skipped over.
                    self.ep_square = Some(Square::from_index((from.index() + to.index()) / 2));
                }
            }
            MoveKind::Capture { captured } => {
                self.toggle(to, Piece::new(us.other(), captured));
                self.toggle(to, moving);
            }
            MoveKind::EnPassant => {
                let captured_sq = Square::from_coords(to.file(), from.rank());
                self.toggle(captured_sq, Piece::new(us.other(), Role::Pawn));
                self.toggle(to, moving);
            }
            MoveKind::Castle { side } => {
                self.toggle(to, moving);
                let rook = Piece::new(us, Role::Rook);
                self.toggle(side.rook_from(us), rook);
                self.toggle(side.rook_to(us), rook);
            }
            MoveKind::Promotion {
                promotion,
                captured,
            } => {
                if let Some(captured) = captured {
                    self.toggle(to, Piece::new(us.other(), captured));
                }
                self.toggle(to, Piece::new(us, promotion));
            }
        }

        if !self.castling.is_empty() && (CASTLING_SQUARES & (Bitboard::from(from) | to)).any() {
            let mut rights = self.castling;
            clear_rights_touching(&mut rights, from);
            clear_rights_touching(&mut rights, to);
            self.key ^= zobrist::castling_key(self.castling) ^ zobrist::castling_key(rights);
            self.castling = rights;
        }

        self.turn = us.other();
        self.key ^= zobrist::black_to_move_key();
    }

    /// The position after the side to move passes its turn: the "null move"
    /// of search algorithms, not a move of chess. `None` when the side to
    /// move is in check, since passing would leave its king attacked.
    ///
    /// The en passant square is cleared and the half-move clock restarts, so
    /// nothing before the pass counts towards repetition or the fifty-move
    /// rule of what follows.
    ///
    /// ```
    /// use chess_rules::{Color, Position};
    ///
    /// let start = Position::startpos();
    /// let passed = start.null_move().expect("not in check");
    /// assert_eq!(passed.turn(), Color::Black);
    /// assert_eq!(passed.board(), start.board());
    /// ```
    #[must_use]
    pub fn null_move(&self) -> Option<Position> {
        if self.is_check() {
            return None;
        }
        let mut passed = self.clone();
        passed.ep_square = None;
        passed.halfmove_clock = 0;
        if passed.turn == Color::Black {
            passed.fullmove_number = passed.fullmove_number.saturating_add(1);
        }
        passed.turn = passed.turn.other();
        passed.key ^= zobrist::black_to_move_key();
        Some(passed)
    }

    /// Adds or removes a piece, keeping the Zobrist key in step.
    #[inline]
    fn toggle(&mut self, sq: Square, piece: Piece) {
        self.board.toggle(sq, piece);
        self.key ^= zobrist::piece_key(piece, sq);
    }

    /// Pieces giving check to the side to move.
    pub fn checkers(&self) -> Bitboard {
        self.attackers_to(self.our_king(), self.turn.other())
    }
    /// Whether the side to move is in check.
    pub fn is_check(&self) -> bool {
        self.checkers().any()
    }
    /// Whether the side to move is checkmated.
    pub fn is_checkmate(&self) -> bool {
        self.is_check() && !self.has_legal_moves()
    }
    /// Whether the side to move is stalemated.
    pub fn is_stalemate(&self) -> bool {
        !self.is_check() && !self.has_legal_moves()
    }
    /// Squares of `attacker`'s pieces that attack `sq` given the current occupancy.
    pub fn attackers_to(&self, sq: Square, attacker: Color) -> Bitboard {
        self.attackers_with_occupancy(sq, attacker, self.board.occupied())
    }

    /// `attacker`'s pieces attacking `sq` if the occupied squares were `occupied`.
    #[inline]
    pub(crate) fn attackers_with_occupancy(
        &self,
        sq: Square,
        attacker: Color,
        occupied: Bitboard,
    ) -> Bitboard {
        let board = &self.board;
        ((rook_attacks(sq, occupied) & board.rooks_and_queens(attacker))
            | (bishop_attacks(sq, occupied) & board.bishops_and_queens(attacker))
            | (knight_attacks(sq) & board.pieces(attacker, Role::Knight))
            | (king_attacks(sq) & board.pieces(attacker, Role::King))
            | (pawn_attacks(attacker.other(), sq) & board.pieces(attacker, Role::Pawn)))
            & occupied
    }

    /// The side to move's pieces of one role.
    #[inline]
    pub(crate) fn our(&self, role: Role) -> Bitboard {
        self.board.pieces(self.turn, role)
    }

    /// The square of the side to move's king.
    #[inline]
    pub(crate) fn our_king(&self) -> Square {
        self.board
            .king_of(self.turn)
            .expect("a valid position has exactly one king per side")
    }

    /// Whether capturing en passant from `from` onto `ep` leaves the king safe:
    /// decided on the board after the capture, because removing two pawns
    /// from one rank can open a line that no pin test sees.
    pub(crate) fn en_passant_is_safe(&self, from: Square, ep: Square) -> bool {
        let captured = Square::from_coords(ep.file(), from.rank());
        let occupied = (self.board.occupied() ^ from ^ captured) | ep;
        let them = self.turn.other();
        // The captured pawn is gone; `attackers_with_occupancy` masks by occupancy.
        self.attackers_with_occupancy(self.our_king(), them, occupied)
            .is_empty()
    }

    /// Zobrist hash of placement, side to move, castling rights and the
    /// en passant square only when an en passant capture is legal.
    pub fn zobrist_key(&self) -> u64 {
        match self.legal_ep_square() {
            Some(ep) => self.key ^ zobrist::en_passant_key(ep),
            None => self.key,
        }
    }
    /// How the board alone ends the game here: checkmate, stalemate,
    /// insufficient material or the fifty-move rule (repetition needs the
    /// game's history: see [`crate::GameRecord`]).
    ///
    /// Checkmate on the hundredth half-move wins: mate is tested first.
    pub fn ending(&self) -> Option<Ending> {
        if !self.has_legal_moves() {
            return Some(if self.is_check() {
                Ending::Checkmate {
                    winner: self.turn.other(),
                }
            } else {
                Ending::Stalemate
            });
        }
        if self.is_insufficient_material() {
            return Some(Ending::InsufficientMaterial);
        }
        if self.halfmove_clock >= 100 {
            return Some(Ending::FiftyMoves);
        }
        None
    }

    /// Turns generated destinations into moves with their kinds.
    fn push_moves(&self, role: Role, from: Square, targets: Bitboard, moves: &mut MoveList) {
        self.for_each_move(role, from, targets, |m| moves.push(m));
    }

    /// Calls `f` with each move of the piece on `from` to one of `targets`,
    /// with its kind (capture, castling, en passant, four promotions).
    #[inline]
    pub(crate) fn for_each_move(
        &self,
        role: Role,
        from: Square,
        targets: Bitboard,
        mut f: impl FnMut(Move),
    ) {
        for to in targets {
            let captured = self.board.role_at(to);
            let kind = match (role, captured) {
                (Role::King, None) if from.distance(to) == 2 => MoveKind::Castle {
                    side: if to.file() == File::G {
                        CastlingSide::KingSide
                    } else {
                        CastlingSide::QueenSide
                    },
                },
                (Role::Pawn, None) if from.file() != to.file() => MoveKind::EnPassant,
                (Role::Pawn, captured) if Bitboard::BACKRANKS.contains(to) => {
                    for promotion in Role::PROMOTIONS {
                        f(Move::new(
                            role,
                            from,
                            to,
                            MoveKind::Promotion {
                                promotion,
                                captured,
                            },
                        ));
                    }
                    continue;
                }
                (_, Some(captured)) => MoveKind::Capture { captured },
                (_, None) => MoveKind::Normal,
            };
            f(Move::new(role, from, to, kind));
        }
    }
}

impl Default for Position {
    fn default() -> Position {
        Position::startpos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(fen: &str) -> Position {
        Position::from_fen(fen).unwrap_or_else(|err| panic!("{fen}: {err}"))
    }

    /// Plays moves given in UCI, finding each among the legal moves.
    fn play_uci(mut position: Position, moves: &[&str]) -> Position {
        for uci in moves {
            let m = *position
                .legal_moves()
                .iter()
                .find(|m| m.to_uci().to_string() == *uci)
                .unwrap_or_else(|| panic!("{uci} is not legal in {}", position.fen()));
            position = position.play(&m).expect("a generated move is legal");
        }
        position
    }

    #[test]
    fn startpos_has_twenty_moves_and_no_check() {
        let start = Position::startpos();
        assert_eq!(start.legal_moves().len(), 20);
        assert_eq!(start.count_legal_moves(), 20);
        assert!(!start.is_check());
        assert_eq!(start.legal_ep_square(), None);
    }

    #[test]
    fn playing_updates_every_field() {
        let after = play_uci(Position::startpos(), &["e2e4", "c7c5", "g1f3"]);
        assert_eq!(
            after.fen(),
            "rnbqkbnr/pp1ppppp/8/2p5/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2"
        );
        let castled = play_uci(
            pos("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"),
            &["e1g1", "a8a1"],
        );
        assert_eq!(castled.fen(), "4k2r/8/8/8/8/8/8/r4RK1 w k - 0 2");
    }

    #[test]
    fn illegal_moves_are_refused_and_leave_the_position_alone() {
        let start = Position::startpos();
        let jump = Move::new(Role::Pawn, Square::E2, Square::E5, MoveKind::Normal);
        assert_eq!(
            start.play(&jump),
            Err(IllegalMoveError { uci: "e2e5".into() })
        );
        // The right squares but the wrong kind: e2e4 is not a capture.
        let fake_capture = Move::new(
            Role::Pawn,
            Square::E2,
            Square::E4,
            MoveKind::Capture {
                captured: Role::Pawn,
            },
        );
        assert!(!start.is_legal(&fake_capture));
        // A black move when White is to move.
        let black = Move::new(Role::Pawn, Square::E7, Square::E5, MoveKind::Normal);
        assert!(!start.is_legal(&black));
        assert_eq!(start, Position::startpos());
    }

    #[test]
    fn pinned_pieces_stay_on_the_pin_line() {
        // The e2 rook is pinned by the e8 rook: it may only move along the e-file.
        let pinned = pos("4r2k/8/8/8/8/8/4R3/4K3 w - - 0 1");
        let rook_moves: Vec<String> = pinned
            .legal_moves()
            .iter()
            .filter(|m| m.role() == Role::Rook)
            .map(|m| m.to_uci().to_string())
            .collect();
        assert_eq!(rook_moves, ["e2e3", "e2e4", "e2e5", "e2e6", "e2e7", "e2e8"]);
    }

    #[test]
    fn en_passant_that_exposes_the_king_on_the_rank_is_illegal() {
        // After ...c7c5 the b5 pawn could take on c6, but that would open
        // the fifth rank between the a5 king and the h5 rook.
        let position = play_uci(pos("3k4/2p5/8/KP5r/8/8/8/8 b - - 0 1"), &["c7c5"]);
        assert_eq!(position.ep_square(), Some(Square::C6));
        assert_eq!(position.legal_ep_square(), None);
        assert!(!position.legal_moves().iter().any(Move::is_en_passant));
        // Without the rook the capture is legal.
        let free = play_uci(pos("3k4/2p5/8/KP6/8/8/8/8 b - - 0 1"), &["c7c5"]);
        assert_eq!(free.legal_ep_square(), Some(Square::C6));
        assert!(free.legal_moves().iter().any(Move::is_en_passant));
    }

    #[test]
    fn castling_is_refused_out_of_through_and_into_check() {
        let castles = |fen: &str| -> Vec<String> {
            pos(fen)
                .legal_moves()
                .iter()
                .filter(|m| m.castling_side().is_some())
                .map(|m| m.to_uci().to_string())
                .collect()
        };
        assert_eq!(
            castles("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"),
            ["e1c1", "e1g1"]
        );
        // Out of check.
        assert!(castles("4k3/4r3/8/8/8/8/8/R3K2R w KQ - 0 1").is_empty());
        // Through check on f1, and into check on c1.
        assert!(castles("2r1kr2/8/8/8/8/8/8/R3K2R w KQ - 0 1").is_empty());
        // b1 attacked does not matter: only the king's path counts.
        assert_eq!(castles("1r2k3/8/8/8/8/8/8/R3K3 w Q - 0 1"), ["e1c1"]);
        // A piece between king and rook blocks, even on b1.
        assert!(castles("4k3/8/8/8/8/8/8/RN2K3 w Q - 0 1").is_empty());
    }

    #[test]
    fn legal_destinations_group_moves_by_piece() {
        let destinations = pos("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").legal_destinations();
        let king = destinations
            .iter()
            .find(|(from, _)| *from == Square::E1)
            .map(|(_, to)| *to)
            .expect("the king can move");
        assert!(king.contains(Square::G1) && king.contains(Square::C1));
        let total: u32 = destinations.iter().map(|(_, to)| to.count()).sum();
        assert_eq!(total, 26);
    }

    #[test]
    fn checkers_and_attackers() {
        let position = pos("4k3/8/8/8/1b6/8/8/r3K3 w - - 0 1");
        assert_eq!(position.checkers(), Bitboard::from(Square::A1) | Square::B4);
        // Double check: only the king moves.
        assert!(
            position
                .legal_moves()
                .iter()
                .all(|m| m.role() == Role::King)
        );
        assert_eq!(
            position.attackers_to(Square::D2, Color::Black),
            Bitboard::from(Square::B4)
        );
        // The white king on e1 blocks the a1 rook's rank.
        assert_eq!(
            position.attackers_to(Square::H1, Color::Black),
            Bitboard::EMPTY
        );
    }

    #[test]
    fn zobrist_keys_agree_on_transpositions_and_differ_otherwise() {
        let start = Position::startpos();
        let a = play_uci(start.clone(), &["g1f3", "g8f6", "b1c3"]);
        let b = play_uci(start.clone(), &["b1c3", "g8f6", "g1f3"]);
        assert_eq!(a.zobrist_key(), b.zobrist_key());
        // Same placement, other side to move.
        let c = play_uci(start.clone(), &["g1f3", "g8f6", "f3g1", "f6g8"]);
        assert_eq!(c.zobrist_key(), start.zobrist_key());
        let d = play_uci(start.clone(), &["g1f3"]);
        assert_ne!(d.zobrist_key(), start.zobrist_key());
        // Incremental keys match keys computed from scratch.
        for p in [&a, &b, &c, &d] {
            assert_eq!(p.zobrist_key(), pos(&p.fen()).zobrist_key());
        }
    }

    #[test]
    fn zobrist_key_counts_en_passant_only_when_it_is_legal() {
        // 1. e4: no black pawn can take on e3, so the key ignores the square.
        let with_square = pos("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1");
        let without = pos("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
        assert_eq!(with_square.zobrist_key(), without.zobrist_key());
        // Here d4xe3 is possible, so the two positions differ.
        let capturable = pos("4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1");
        let not = pos("4k3/8/8/8/3pP3/8/8/4K3 b - - 0 1");
        assert_eq!(capturable.legal_ep_square(), Some(Square::E3));
        assert_ne!(capturable.zobrist_key(), not.zobrist_key());
    }

    #[test]
    fn checkmate_and_stalemate_end_the_game() {
        let fools_mate = play_uci(Position::startpos(), &["f2f3", "e7e5", "g2g4", "d8h4"]);
        assert!(fools_mate.is_checkmate());
        assert_eq!(
            fools_mate.ending(),
            Some(Ending::Checkmate {
                winner: Color::Black
            })
        );
        let stalemate = pos("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
        assert!(stalemate.is_stalemate());
        assert_eq!(stalemate.ending(), Some(Ending::Stalemate));
        assert!(!stalemate.has_legal_moves());
    }

    #[test]
    fn checkmate_on_the_hundredth_half_move_wins() {
        let mated = pos("7k/6Q1/6K1/8/8/8/8/8 b - - 100 80");
        assert_eq!(
            mated.ending(),
            Some(Ending::Checkmate {
                winner: Color::White
            })
        );
    }

    #[test]
    fn fifty_moves_end_the_game_at_one_hundred_half_moves() {
        let base = "r3k3/8/8/8/8/8/8/R3K3 w - -";
        assert_eq!(pos(&format!("{base} 99 80")).ending(), None);
        assert_eq!(
            pos(&format!("{base} 100 80")).ending(),
            Some(Ending::FiftyMoves)
        );
    }

    #[test]
    fn null_move_passes_the_turn_and_keeps_the_key_in_step() {
        // After 1. e4 the en passant square is set (not capturable); passing
        // clears it and hands the move back to White.
        let after_e4 = play_uci(Position::startpos(), &["e2e4"]);
        let passed = after_e4.null_move().expect("black is not in check");
        let expected = pos("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2");
        assert_eq!(passed, expected);
        assert_eq!(passed.zobrist_key(), expected.zobrist_key());
        assert_eq!(passed.legal_moves().len(), expected.legal_moves().len());
    }

    #[test]
    fn null_move_is_refused_in_check() {
        let checked = pos("4k3/8/8/8/8/8/4R3/4K3 b - - 0 1");
        assert_eq!(checked.null_move(), None);
    }
}
