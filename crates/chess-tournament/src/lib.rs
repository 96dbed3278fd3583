//! Tournament rules as pure functions, the way docs/tournaments.md states
//! them: nothing here reads a clock, a socket or a database. Time is a value
//! passed in, results are values handed over, and the answer (a score, a
//! pairing, a wait) is a value the caller stores or acts on.
//!
//! - [`arena`]: the lichess-style arena: its score sheet (streaks, quick
//!   draws, draw streaks, berserk), its standings, its timings (waits before
//!   a pairing pass, the closing window, pauses) and its
//!   pairing passes.
//! - [`swiss`]: the Swiss: FIDE Dutch pairings (the 2017 rules, as
//!   bbpPairings implements them) of one round from the tournament so far,
//!   the FIDE TRF16 file that arbiters' programs exchange, and the final
//!   standings by FIDE's tie-breaks (C.07, 2024).

pub mod arena;
pub mod swiss;
