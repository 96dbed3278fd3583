//! A chess engine on top of `chess-rules`.
