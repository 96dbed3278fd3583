//! The WebSockets: the protocol's message types, one socket per viewer of a
//! game, and the lobby socket that keeps every watcher's list of seeks live.
//! A game socket watches its game through a [`chess_live::Viewer`].

pub mod game_socket;
pub mod lobby_socket;
pub mod protocol;

pub use game_socket::SocketLimits;
