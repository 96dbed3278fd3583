//! The soak: the load tool's games for as long as asked, sampled into a CSV,
//! judged on whether memory or descriptors keep growing (`src/bin/soak.rs`).

pub mod plan;
pub mod run;
pub mod samples;
pub mod verdict;
