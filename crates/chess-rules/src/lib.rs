//! The laws of chess, as a pure library: positions, legal moves, FEN, UCI,
//! SAN and PGN, how a game ends by the board, premove patterns and perft.
//!
//! (Crate docs with runnable examples: to be written by the rules helpers.)

pub mod attacks;
mod bitboard;
mod board;
mod castling;
mod color;
mod ending;
mod fen;
mod material;
mod movegen;
mod moves;
mod perft;
mod position;
mod premove;
mod record;
mod role;
mod san;
mod square;
mod uci;
mod zobrist;

pub mod pgn;

pub use bitboard::{Bitboard, Squares};
pub use board::Board;
pub use castling::{CastlingRights, CastlingSide};
pub use color::{ByColor, Color};
pub use ending::Ending;
pub use fen::FenError;
pub use moves::{MAX_MOVES, Move, MoveKind, MoveList};
pub use perft::{divide, perft};
pub use position::{IllegalMoveError, Position};
pub use record::{GameRecord, Ply};
pub use role::{Piece, Role};
pub use san::{San, SanError};
pub use square::{File, ParseSquareError, Rank, Square};
pub use uci::{UciError, UciMove, UciMoveError};
