//! The laws of chess, as a pure library: positions, legal moves, FEN, UCI,
//! SAN and PGN, how a game ends by the board, premove patterns and perft.
//!
//! Play a few moves from the start, by UCI or SAN, and read them back:
//!
//! ```
//! use chess_rules::{GameRecord, Position};
//!
//! let mut game = GameRecord::default();
//! game.push_san("e4")?;
//! game.push_uci("e7e5")?;
//! game.push_san("Nf3")?;
//! assert_eq!(game.sans().collect::<Vec<_>>(), ["e4", "e5", "Nf3"]);
//! assert_eq!(
//!     game.position().fen(),
//!     "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2"
//! );
//!
//! // A parsed move string is not yet a move: the position decides.
//! let position: &Position = game.position();
//! let knight = position.parse_san("Nc6")?;
//! assert_eq!(knight.to_string(), "b8c6");
//! assert!(position.parse_san("Nf3").is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! How a game ends by the board, and what the client needs to draw it:
//!
//! ```
//! use chess_rules::{Color, Ending, GameRecord, Position, Square};
//!
//! let mut game = GameRecord::default();
//! for san in ["f3", "e5", "g4", "Qh4#"] {
//!     game.push_san(san)?;
//! }
//! assert_eq!(game.ending(), Some(Ending::Checkmate { winner: Color::Black }));
//!
//! // Legal destinations for the side to move, premoves for the other side.
//! let start = Position::startpos();
//! let destinations = start.legal_destinations();
//! assert_eq!(destinations.len(), 10); // eight pawns and two knights can move
//! assert!(start.is_premove(Color::Black, Square::E7, Square::E5));
//!
//! // Whether a side whose opponent ran out of time could still mate.
//! let knight_only = Position::from_fen("4k3/8/8/8/8/8/8/4KN2 b - - 0 1")?;
//! assert!(knight_only.has_insufficient_material(Color::White));
//! assert!(knight_only.is_insufficient_material());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Games go to and from PGN with [`pgn::PgnGame`].

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
