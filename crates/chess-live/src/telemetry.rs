//! What the live games report as they work, for whoever measures the node
//! (`chess-server`'s metrics implement [`Telemetry`]; tests may use
//! [`NoTelemetry`]). Every method has a default that records nothing.

use std::time::Duration;

use crate::store::{BatchPath, StoreError};

/// The events live games report.
pub trait Telemetry: Send + Sync + std::fmt::Debug + 'static {
    /// A move was committed and acknowledged, `latency` after it arrived.
    fn move_committed(&self, latency: Duration) {
        let _ = latency;
    }

    /// The writer committed a batch of `writes` game changes in `duration`.
    fn batch_committed(&self, writes: usize, duration: Duration, path: BatchPath) {
        let _ = (writes, duration, path);
    }

    /// A committed batch sent `count` notices to the other nodes.
    fn notices_sent(&self, count: usize) {
        let _ = count;
    }

    /// A hosted game followed another node's change from its notice
    /// (`followed`), or reread the game from the store (`!followed`).
    fn remote_change(&self, followed: bool) {
        let _ = followed;
    }

    /// A background store operation failed (a batch, a sweep).
    fn store_error(&self, error: &StoreError) {
        let _ = error;
    }

    /// The node now hosts `count` games.
    fn live_games(&self, count: usize) {
        let _ = count;
    }
}

/// Records nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTelemetry;

impl Telemetry for NoTelemetry {}
