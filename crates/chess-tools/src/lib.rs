//! The tools that measure and break a running `chess-server`, each a binary
//! of this crate (`src/bin/`) and a module here, which the server's test
//! binaries run short:
//!
//! - [`arena`]: a class plays a whole arena on one or two nodes, one killed
//!   half-way, and the stored rows are audited (docs/tournaments.md).
//! - [`load`]: many games over real sockets, the server's CPU per move and
//!   the latencies (docs/performance.md).
//! - [`crash`]: SIGKILL at random moments during play, and the audit after
//!   each restart that nothing acknowledged was lost (docs/reliability.md).
//! - [`rolling`]: two nodes stopped in turn behind a proxy while games go on
//!   (docs/operations.md).
//! - [`soak`]: a steady load for hours, sampling memory and descriptors.
//! - the socket fuzzer (`src/bin/socket_fuzz.rs`).
//!
//! What several tools share: the server as a process of its own
//! ([`server`]), a player's HTTP and socket client ([`client`]) and the
//! random legal moves they play ([`moves`]).

pub mod arena;
pub mod client;
pub mod crash;
pub mod flags;
pub mod load;
pub mod moves;
pub mod rolling;
pub mod server;
pub mod soak;
