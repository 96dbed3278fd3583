//! Hosting games: the live-game cache and its commands, the views each
//! viewer gets, the rows games are stored as, the hub with its timers and
//! the game WebSocket.

pub mod hub;
pub mod live;
pub mod socket;
pub mod stored;
pub mod view;

pub use hub::{Hub, NewGame, computer_id, computer_player};
pub use live::{Command, LiveGame, Refusal};
pub use socket::SocketLimits;
