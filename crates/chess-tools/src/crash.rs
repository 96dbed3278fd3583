//! The crash-cycle tool: random games against a server process killed with
//! SIGKILL at random moments, audited after every restart (the binary's
//! `src/bin/crash.rs` says how to run it).

pub mod audit;
pub mod cluster;
pub mod config;
pub mod game;
pub mod ledger;
pub mod ratings;
pub mod report;
pub mod run;
pub mod verify;
