//! The rules, the game and the engine for the browser.
//!
//! The page plays games on one screen and against the computer with the
//! project's own crates, compiled to WebAssembly (`wasm32-unknown-unknown`)
//! and bound to JavaScript with wasm-bindgen, so the rules a page runs are
//! the rules the server enforces:
//!
//! - [`LocalGame`]: a game of the game crate played in the page, speaking the
//!   game socket's messages (`docs/protocol.md`) so the game page shows it as
//!   it shows an online game, and saved as JSON in the browser.
//! - [`Analyst`]: the engine's searches for the computer's moves and the
//!   analysis board, in a Web Worker (`web/js/engine-worker.js`).
//!
//! The JavaScript bindings (`bindings`, only in the WebAssembly build) are a
//! thin layer of strings and numbers over these; everything they call is
//! tested natively here. chess-server's build script compiles this crate for
//! the browser and generates the JavaScript glue; the server serves both
//! under `/wasm/`.

mod local;
mod opponent;
mod protocol;
mod search;

#[cfg(target_arch = "wasm32")]
mod bindings;

pub use local::{Command, LocalError, LocalGame};
pub use opponent::Opponent;
pub use protocol::Message;
pub use search::{
    Analyst, ScoreReport, SearchError, SearchLimit, SearchReport, SearchRequest, replay,
};
