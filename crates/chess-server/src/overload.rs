//! Shedding load: past a node's limits a request is refused at once with
//! `429 busy` and a `Retry-After`, instead of waiting in a queue that grows
//! without bound until memory or file descriptors run out.
//!
//! Two limits live here: open WebSockets (each one a file descriptor for as
//! long as it lives) and requests creating or joining games and seeks in
//! flight (each one holds database work; a slow database would otherwise
//! pile them up). The third, the writer's queue, is in `games::writer`.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::http::error::ApiError;

/// File descriptors kept for everything but sockets (the database, the
/// listener, requests being read), as a share of the open-file limit.
const RESERVED_SHARE: u64 = 10;
/// The least kept, however low the limit.
const RESERVED_AT_LEAST: u64 = 64;
/// A default cap above this would only say "no cap" with a bigger number.
const MAX_DEFAULT_SOCKETS: u64 = 1 << 24;

/// The node's admission limits; clones share them.
#[derive(Clone, Debug)]
pub struct Admission {
    sockets: Arc<Semaphore>,
    creations: Arc<Semaphore>,
}

/// A place taken under one of the limits; given back when dropped.
#[derive(Debug)]
pub struct Admitted {
    _place: OwnedSemaphorePermit,
}

impl Admission {
    /// Limits of `max_sockets` open sockets and `max_creations` creation
    /// requests at once.
    pub fn new(max_sockets: usize, max_creations: usize) -> Admission {
        Admission {
            sockets: Arc::new(Semaphore::new(max_sockets.min(Semaphore::MAX_PERMITS))),
            creations: Arc::new(Semaphore::new(max_creations.min(Semaphore::MAX_PERMITS))),
        }
    }

    /// A place for one more WebSocket, held for the socket's life.
    ///
    /// # Errors
    /// `429 busy` when the node holds as many sockets as it may.
    pub fn socket(&self) -> Result<Admitted, ApiError> {
        take(
            &self.sockets,
            "this server holds as many connections as it can; try again shortly",
        )
    }

    /// A place for one request that creates or joins a game or a seek.
    ///
    /// # Errors
    /// `429 busy` when as many such requests are already being served.
    pub fn creation(&self) -> Result<Admitted, ApiError> {
        take(
            &self.creations,
            "this server is creating as many games as it can; try again shortly",
        )
    }
}

fn take(limit: &Arc<Semaphore>, message: &'static str) -> Result<Admitted, ApiError> {
    Arc::clone(limit)
        .try_acquire_owned()
        .map(|place| Admitted { _place: place })
        .map_err(|_| ApiError::Busy {
            message,
            retry_after_seconds: 1,
        })
}

/// The default socket cap for an open-file limit of `open_files`: the limit
/// less a tenth (at least 64) for everything else.
pub fn sockets_for_open_files(open_files: u64) -> usize {
    let reserved = (open_files / RESERVED_SHARE).max(RESERVED_AT_LEAST);
    let sockets = open_files
        .saturating_sub(reserved)
        .clamp(1, MAX_DEFAULT_SOCKETS);
    usize::try_from(sockets).unwrap_or(usize::MAX)
}

/// The default socket cap under this process's current (soft) open-file
/// limit; `main` raises that limit to the hard one before the server starts.
pub fn default_max_sockets() -> usize {
    let open_files = rlimit::getrlimit(rlimit::Resource::NOFILE).map_or(1024, |(soft, _hard)| soft);
    sockets_for_open_files(open_files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_cap_keeps_a_tenth_of_the_descriptors() {
        assert_eq!(sockets_for_open_files(1024), 1024 - 102);
        assert_eq!(sockets_for_open_files(1_048_576), 1_048_576 - 104_857);
        // Small limits keep at least 64, and the cap never reaches zero.
        assert_eq!(sockets_for_open_files(256), 256 - 64);
        assert_eq!(sockets_for_open_files(10), 1);
        // An unlimited soft limit gives a large cap, not an overflow.
        assert_eq!(sockets_for_open_files(u64::MAX), 1 << 24);
    }

    #[test]
    fn a_place_is_given_back_when_dropped() {
        let admission = Admission::new(1, 1);
        let held = admission.socket().expect("the first socket fits");
        assert!(matches!(admission.socket(), Err(ApiError::Busy { .. })));
        // The limits are separate.
        let creating = admission.creation().expect("a creation fits");
        drop(held);
        assert!(admission.socket().is_ok());
        drop(creating);
    }
}
