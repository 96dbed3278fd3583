//! The rolling-restart tool: two nodes stopped in turn, optionally behind
//! nginx, while seated players go on playing (`src/bin/rolling.rs`).

pub mod config;
pub mod proxy;
pub mod report;
pub mod run;
pub mod seat;
