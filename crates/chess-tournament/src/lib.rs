//! Tournament rules as pure functions, the way docs/tournaments.md states
//! them: nothing here reads a clock, a socket or a database. Time is a value
//! passed in, results are values handed over, and the answer (a score, a
//! pairing, a wait) is a value the caller stores or acts on.
//!
//! - [`arena`]: the lichess-style arena: its score sheet (streaks, quick
//!   draws, draw streaks, berserk), its standings, its timings (waits before
//!   a pairing pass, the closing window, pauses) and its
//!   pairing passes.

pub mod arena;
