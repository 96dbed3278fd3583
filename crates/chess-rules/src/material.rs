//! Insufficient material: the automatic draw when neither side can mate, and
//! whether one side can still mate when its opponent's flag falls.

use crate::{Bitboard, Color, Position, Role};

impl Position {
    /// Whether `color` cannot possibly mate, whatever the opponent plays: the
    /// rule lichess applies when the opponent's flag falls (a timeout is then
    /// a draw instead of a loss).
    ///
    /// This is exactly scalachess `InsufficientMatingMaterial` and
    /// python-chess `has_insufficient_material(color)`:
    /// - a bare king cannot mate;
    /// - king and one knight cannot mate when the opponent has nothing but
    ///   its king and queens (any other piece could block its own king in);
    /// - king and bishops cannot mate when every bishop on the board stands
    ///   on one square colour and there are no knights and no pawns at all;
    /// - anything else can mate (two knights can, with the opponent's help).
    pub fn has_insufficient_material(&self, color: Color) -> bool {
        let board = self.board();
        let ours = board.by_color(color);
        let theirs = board.by_color(color.other());
        let heavy =
            board.by_role(Role::Pawn) | board.by_role(Role::Rook) | board.by_role(Role::Queen);
        if ours.intersects(heavy) {
            return false;
        }
        if ours.intersects(board.by_role(Role::Knight)) {
            // King and knight, and the opponent has nothing that could fill a
            // flight square next to its own king except queens.
            let opponent_minor_or_heavier =
                theirs - board.by_role(Role::King) - board.by_role(Role::Queen);
            return ours.count() <= 2 && opponent_minor_or_heavier.is_empty();
        }
        if ours.intersects(board.by_role(Role::Bishop)) {
            let bishops = board.by_role(Role::Bishop);
            return bishops_on_one_colour(bishops)
                && board.by_role(Role::Pawn).is_empty()
                && board.by_role(Role::Knight).is_empty();
        }
        // Only the king is left.
        true
    }

    /// Whether neither side can mate by any series of legal moves: only
    /// kings and minor pieces with at most one minor piece in all, or kings
    /// and bishops only (any number, either side) all on one square colour.
    /// This ends the game at once as a draw.
    pub fn is_insufficient_material(&self) -> bool {
        let board = self.board();
        let kings = board.by_role(Role::King);
        let bishops = board.by_role(Role::Bishop);
        let minors = board.by_role(Role::Knight) | bishops;
        let others = board.occupied() - kings;
        if (others - minors).any() {
            return false;
        }
        minors.count() <= 1 || (others == bishops && bishops_on_one_colour(bishops))
    }
}

fn bishops_on_one_colour(bishops: Bitboard) -> bool {
    (bishops & Bitboard::LIGHT_SQUARES).is_empty() || (bishops & Bitboard::DARK_SQUARES).is_empty()
}
