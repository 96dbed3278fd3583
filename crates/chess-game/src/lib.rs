//! The rules of an online chess game on top of `chess-rules`.
