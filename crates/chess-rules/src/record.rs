//! A game record: the moves from an initial position with their SAN and the
//! position after each, which is what threefold repetition needs.

use crate::{Ending, IllegalMoveError, Move, Position, SanError, UciMoveError};

/// One half-move of a game: the move, its SAN and the position after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ply {
    /// The move played.
    pub mv: Move,
    /// Its SAN in the position before it, with `+` or `#`.
    pub san: String,
    /// The position after it.
    pub position: Position,
}

/// The moves of a game from its initial position.
///
/// Every move in it is legal: moves only get in through [`GameRecord::push`]
/// and its UCI and SAN variants, which check them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRecord {
    initial: Position,
    plies: Vec<Ply>,
}

impl Default for GameRecord {
    /// A record starting from the standard start position.
    fn default() -> GameRecord {
        GameRecord::new(Position::startpos())
    }
}

impl GameRecord {
    /// An empty record starting from `initial`.
    pub fn new(initial: Position) -> GameRecord {
        GameRecord {
            initial,
            plies: Vec::new(),
        }
    }

    /// The position the game started from.
    pub fn initial(&self) -> &Position {
        &self.initial
    }

    /// The position now: after the last move, or the initial one.
    pub fn position(&self) -> &Position {
        self.plies.last().map_or(&self.initial, |ply| &ply.position)
    }

    /// Every half-move played, first first.
    pub fn plies(&self) -> &[Ply] {
        &self.plies
    }

    /// The number of half-moves played.
    pub fn len(&self) -> usize {
        self.plies.len()
    }

    /// Whether no move has been played.
    pub fn is_empty(&self) -> bool {
        self.plies.is_empty()
    }

    /// The SAN of every move played, first first.
    pub fn sans(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.plies.iter().map(|ply| ply.san.as_str())
    }

    /// The moves played, first first.
    pub fn moves(&self) -> impl ExactSizeIterator<Item = Move> + '_ {
        self.plies.iter().map(|ply| ply.mv)
    }

    /// Plays a move in the current position and records it.
    ///
    /// # Errors
    /// [`IllegalMoveError`] if the move is not legal now; the record is unchanged.
    pub fn push(&mut self, m: Move) -> Result<&Ply, IllegalMoveError> {
        let before = self.position();
        let position = before.play(&m)?;
        let san = before.san_with_after(&m, &position);
        self.plies.push(Ply {
            mv: m,
            san,
            position,
        });
        Ok(self.last_ply())
    }

    /// Reads a UCI move (`e2e4`) in the current position and records it.
    ///
    /// # Errors
    /// [`UciMoveError`] when the text is not UCI or not a legal move now; the
    /// record is unchanged.
    pub fn push_uci(&mut self, uci: &str) -> Result<&Ply, UciMoveError> {
        let m = self.position().parse_uci(uci)?;
        Ok(self.push(m)?)
    }

    /// Reads a SAN move (`Nf3`) in the current position and records it.
    ///
    /// # Errors
    /// [`SanError`] when the text is not SAN or names no single legal move
    /// now; the record is unchanged.
    pub fn push_san(&mut self, san: &str) -> Result<&Ply, SanError> {
        let m = self.position().parse_san(san)?;
        // `parse_san` only returns legal moves, so this push cannot fail;
        // map the impossible error rather than panic.
        self.push(m).map_err(|_| SanError::Illegal {
            san: san.to_owned(),
        })
    }

    /// Takes back the last move, if any, and returns it.
    pub fn pop(&mut self) -> Option<Ply> {
        self.plies.pop()
    }

    /// How many times the current position has occurred in the game,
    /// counting now (so at least 1).
    ///
    /// Positions are the same when placement, side to move, castling rights
    /// and en passant possibilities are: the Zobrist key holds exactly these,
    /// with the en passant square only when a capture there is legal.
    pub fn repetition_count(&self) -> usize {
        let current = self.position().zobrist_key();
        let mut count = 1;
        // Walk back through earlier positions. A capture or a pawn move can
        // never be undone, so no position before the last one of those can
        // repeat the current one.
        for (index, ply) in self.plies.iter().enumerate().rev() {
            if ply.mv.is_zeroing() {
                return count;
            }
            let earlier = match index {
                0 => &self.initial,
                _ => &self.plies[index - 1].position,
            };
            if earlier.zobrist_key() == current {
                count += 1;
            }
        }
        count
    }

    /// Whether the current position has occurred for at least the third time.
    pub fn is_threefold_repetition(&self) -> bool {
        self.repetition_count() >= 3
    }

    /// How the board ends the game now: checkmate, stalemate, insufficient
    /// material or the fifty-move rule (see [`Position::ending`]), else
    /// threefold repetition.
    pub fn ending(&self) -> Option<Ending> {
        self.position().ending().or_else(|| {
            self.is_threefold_repetition()
                .then_some(Ending::ThreefoldRepetition)
        })
    }

    fn last_ply(&self) -> &Ply {
        // Only called right after a push.
        &self.plies[self.plies.len() - 1]
    }
}
