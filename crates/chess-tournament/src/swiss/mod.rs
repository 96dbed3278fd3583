//! The Swiss: FIDE Dutch pairings, the 2017 rules (C.04.1 basic rules and
//! C.04.3 as in force from 2017-07-01, the version bbpPairings implements),
//! the FIDE TRF16 report file they are exchanged in, and the final
//! standings with FIDE's tie-breaks (C.07 as in force from 2024-08-01,
//! [`tiebreak`]).
//!
//! The input is the tournament so far ([`Tournament`]: each [`Player`]'s
//! pairing number, rating and per-round [`RoundRecord`]), the players left
//! out of the round, and the number of rounds; the output is the round's
//! boards in board order and the pairing-allocated bye ([`RoundPairing`]),
//! or an error when no legal pairing exists.
//!
//! ```
//! use chess_tournament::swiss::{pair_round, Colour, Player, Scoring, Tournament};
//!
//! let tournament = Tournament {
//!     players: (1..=5).map(|n| Player::new(n, 2500 - 100 * n as u16)).collect(),
//!     total_rounds: 3,
//!     completed_rounds: 0,
//!     forbidden: vec![],
//!     initial_colour: Colour::White,
//!     scoring: Scoring::default(),
//! };
//! let round = pair_round(&tournament, &[]).unwrap();
//! // Round 1: the top half against the bottom half, the lowest gets the bye.
//! assert_eq!(round.bye, Some(5));
//! assert_eq!((round.boards[0].white, round.boards[0].black), (1, 3));
//! assert_eq!((round.boards[1].white, round.boards[1].black), (4, 2));
//! ```
//!
//! # Method
//!
//! The rules describe the pairing of a bracket as a search through
//! candidates in a fixed order, the first best by the quality criteria
//! winning. [`bracket`] gets the same answer with maximum-weight matchings
//! (the blossom algorithm, `integer-blossom`) whose edge weights hold every
//! criterion as a tier, highest priority highest, then the candidate order;
//! see its module documentation. The bracket-by-bracket descent, the
//! penultimate pairing bracket and the collapsed last bracket are in
//! [`dutch`].

pub mod bracket;
pub mod colour;
pub mod dutch;
mod entrant;
pub mod player;
pub mod random;
pub mod tiebreak;
pub mod trf;
mod weight;

pub use colour::{Colour, ColourHistory, Preference, Strength};
pub use dutch::{Board, PairingError, RoundPairing, Tournament, pair_round};
pub use player::{
    ByeKind, HalfPoints, Outcome, PairingByePoints, PairingNumber, Player, RoundRecord, Scoring,
};
pub use tiebreak::{Standing, TieBreak, TieBreakError, TieBreakValue, UnknownTieBreak, standings};
pub use trf::{TrfError, TrfFile, read_trf, write_trf};
