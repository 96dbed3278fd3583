//! Hosting games: one owner task per live game and the registry that loads
//! them (the hub), the group-commit writer, the change notices between
//! nodes, the views each viewer gets, the rows games are stored as, the
//! stored vocabulary (`model`) and the lobby's seeks and pairing.

pub mod hub;
pub mod live;
pub mod lobby;
pub mod model;
pub mod notify;
pub mod owner;
pub mod stored;
pub mod view;
pub mod writer;

pub use crate::ws::protocol::Command;
pub use hub::{Hub, NewGame, computer_id, computer_player};
pub use live::{Entry, Refusal};
pub use owner::{GameHandle, JoinError};
