//! The invariants of `ARCHITECTURE.md` that the live-game core keeps, each
//! checked on its own: one module per invariant, over a store in memory
//! and a clock moved by hand (`chess_live::testing`), so the whole binary
//! runs in about a second with no database and no real waiting.
//!
//! The ledger's, the ratings' and the archive's invariants are the store's:
//! `chess-server`'s tests check them against both databases.

mod helpers;

/// Nothing is acknowledged before it is committed.
mod acknowledged;
/// A bad message changes nothing.
mod bad_messages;
/// Clocks run on the server.
mod clocks;
/// The core hears from above, never calls up.
mod hears_from_above;
/// The held game is the stored game.
mod held_game;
/// One owner per game per node; nobody else touches its state.
mod one_owner;
/// Versions rise by one per change, and one change is stored per version.
mod versions;
/// Every connection watches the same way.
mod watching;
