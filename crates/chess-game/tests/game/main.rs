//! Black-box tests of the game state machine, with time as a value.

mod berserk;
mod clock;
mod draw;
mod endings;
mod helpers;
mod mandatory;
mod persistence;
mod premove;
mod properties;
mod rematch;
mod takeback;
mod verify;
