//! Tournaments on the server: the director that runs each arena on one
//! node at a time, the plan it follows at each moment, and the standings,
//! computed from the stored games. The rules themselves are the
//! `chess-tournament` crate's; the rows are `chess_store::tournaments`.

pub mod arenas;
pub mod director;
#[cfg(test)]
mod fixtures;
pub mod plan;
pub mod presence;
pub mod standings;
