//! One connection's view of a live game, whatever carries it (a game
//! socket, a lichess API stream, a watcher waiting for the end): subscribed
//! to the game's broadcasts, counted as present for the seat its player
//! holds, shown each change once and in order, and started again from a
//! full state whenever the changes alone would not do.
//!
//! A connection waits with [`Viewer::recv`] (safe to cancel in a
//! `select!`) and then asks [`Viewer::see`] what the broadcast means for it:
//!
//! ```no_run
//! # async fn watch(registry: std::sync::Arc<chess_live::Registry>, id: uuid::Uuid) {
//! use chess_live::{Seen, Viewer};
//!
//! let Ok(Some(mut viewer)) = Viewer::open(&registry, id, None).await else { return };
//! loop {
//!     let received = viewer.recv().await;
//!     match viewer.see(received).await {
//!         Some(Seen::Event(event)) => { /* show the change */ }
//!         Some(Seen::State(state)) => { /* show the whole game again */ }
//!         Some(Seen::Behind) => { /* fell behind: resync or give up */ }
//!         Some(Seen::Closed) => break,
//!         Some(_) | None => {}
//!     }
//! }
//! # }
//! ```
//!
//! Each viewer is a connection of its own ([`ConnectionId`]): a premove set
//! through it belongs to it, and a player's new connection starts from no
//! premove. Dropping the viewer counts its connection out and takes the
//! premove it set with it.

use std::sync::Arc;

use chess_rules::Color;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use uuid::Uuid;

use crate::clock::UnixMs;
use crate::command::{Applied, Command, ConnectionId, Refusal};
use crate::model::Seat;
use crate::owner::{Freshness, GameHandle, Gone};
use crate::registry::Registry;
use crate::store::StoreResult;
use crate::view::{GameSnapshot, Outgoing, StateView};

/// What a viewer's connection is to show next.
#[derive(Debug)]
pub enum Seen {
    /// A change newer than any shown before: an [`Outgoing::Event`].
    Event(Arc<Outgoing>),
    /// The whole game, to start again from: its seats changed (this
    /// viewer's seat is as the state says), or it caught up with another
    /// node's change without the events, or its owner was reloaded.
    State(Box<StateView>),
    /// The viewer fell further behind than the game keeps changes for:
    /// [`Viewer::state`] starts it again, or the connection ends.
    Behind,
    /// `color` has a connection somewhere, or none left anywhere.
    Presence { color: Color, present: bool },
    /// A rematch started: everyone goes to game `game_id`.
    Redirect { game_id: Uuid },
    /// The game is no longer served here (the node is stopping).
    Closed,
}

/// A broadcast received, not yet looked at ([`Viewer::see`]).
#[derive(Debug)]
pub struct Received(Result<Arc<Outgoing>, RecvError>);

/// One connection's view of a live game.
#[derive(Debug)]
pub struct Viewer {
    registry: Arc<Registry>,
    game: GameHandle,
    player: Option<Uuid>,
    /// This connection, which the premoves it sets belong to.
    connection: ConnectionId,
    seat: Seat,
    updates: broadcast::Receiver<Arc<Outgoing>>,
    /// The highest event version this viewer was shown.
    shown: u64,
}

impl Viewer {
    /// Opens a view of game `id` for `player` (`None`: an anonymous
    /// spectator); `None` if there is no such game.
    ///
    /// # Errors
    /// A storage failure while loading the game.
    pub async fn open(
        registry: &Arc<Registry>,
        id: Uuid,
        player: Option<Uuid>,
    ) -> StoreResult<Option<Viewer>> {
        let connection = ConnectionId::next();
        let attached = registry
            .with_game(id, |game| async move {
                // Subscribed before the seat is counted, so the owner never
                // unloads under a viewer, and a change between the two is
                // not missed.
                let updates = game.subscribe();
                let seat = game.attach(player, connection).await?;
                Ok((game, updates, seat))
            })
            .await?;
        Ok(attached.map(|(game, updates, seat)| Viewer {
            registry: Arc::clone(registry),
            game,
            player,
            connection,
            seat,
            updates,
            shown: 0,
        }))
    }

    /// The game's id.
    pub fn id(&self) -> Uuid {
        self.game.id()
    }

    /// The seat the viewer's player holds.
    pub fn seat(&self) -> Seat {
        self.seat
    }

    /// The viewer's player.
    pub fn player(&self) -> Option<Uuid> {
        self.player
    }

    /// Waits for the game's next broadcast. Safe to cancel: nothing is
    /// lost when another branch of a `select!` wins.
    pub async fn recv(&mut self) -> Received {
        Received(self.updates.recv().await)
    }

    /// The next broadcast if one is waiting already.
    pub fn try_recv(&mut self) -> Option<Received> {
        match self.updates.try_recv() {
            Ok(outgoing) => Some(Received(Ok(outgoing))),
            Err(TryRecvError::Lagged(missed)) => Some(Received(Err(RecvError::Lagged(missed)))),
            Err(TryRecvError::Closed) => Some(Received(Err(RecvError::Closed))),
            Err(TryRecvError::Empty) => None,
        }
    }

    /// What `received` means for this viewer; `None` when there is nothing
    /// to show (a change already shown). May ask the game for its full
    /// state, or reopen a game whose owner stopped: not to be cancelled.
    pub async fn see(&mut self, received: Received) -> Option<Seen> {
        let outgoing = match received.0 {
            Ok(outgoing) => outgoing,
            Err(RecvError::Lagged(_)) => return Some(Seen::Behind),
            Err(RecvError::Closed) => return Some(self.reopen().await),
        };
        match outgoing.as_ref() {
            Outgoing::Event { version, .. } => {
                if *version <= self.shown {
                    return None;
                }
                self.shown = *version;
                Some(Seen::Event(outgoing))
            }
            Outgoing::Resync => Some(match self.state().await {
                Some(state) => Seen::State(Box::new(state)),
                None => Seen::Closed,
            }),
            Outgoing::Presence { color, present } => Some(Seen::Presence {
                color: *color,
                present: *present,
            }),
            Outgoing::Redirect { game_id } => Some(Seen::Redirect { game_id: *game_id }),
        }
    }

    /// Waits for the next thing to show. Not safe to cancel (use
    /// [`Viewer::recv`] and [`Viewer::see`] in a `select!`).
    pub async fn next(&mut self) -> Seen {
        loop {
            let received = self.recv().await;
            if let Some(seen) = self.see(received).await {
                return seen;
            }
        }
    }

    /// The whole game as this viewer's player sees it, up to date with the
    /// store; what is shown from here on follows it. The viewer's seat is
    /// counted again if it changed (the player joined the game). `None` if
    /// the game is no longer served.
    pub async fn state(&mut self) -> Option<StateView> {
        let state = self.game.state(self.player, Freshness::Stored).await.ok()?;
        if state.seat != self.seat {
            self.game.detach(self.connection);
            self.seat = self.game.attach(self.player, self.connection).await.ok()?;
        }
        self.shown = state.version;
        Some(state)
    }

    /// What a viewer that saw the game up to `version` missed: the changes
    /// since, when the game still keeps them all, else the whole game.
    pub async fn resume(&mut self, version: Option<u64>) -> Vec<Seen> {
        let missed = match version {
            Some(version) => self.game.events_after(version).await.ok().flatten(),
            None => None,
        };
        match missed {
            Some(missed) => missed
                .into_iter()
                .filter_map(|outgoing| match outgoing.as_ref() {
                    Outgoing::Event { version, .. } if *version > self.shown => {
                        self.shown = *version;
                        Some(Seen::Event(outgoing))
                    }
                    _ => None,
                })
                .collect(),
            None => vec![match self.state().await {
                Some(state) => Seen::State(Box::new(state)),
                None => Seen::Closed,
            }],
        }
    }

    /// Runs `command` as the viewer's player, received at `now`.
    ///
    /// # Errors
    /// [`Gone`] if the game is no longer served (its owner cannot unload
    /// under a viewer: the node is stopping).
    pub async fn command(
        &self,
        mut command: Command,
        now: UnixMs,
    ) -> Result<Result<Applied, Refusal>, Gone> {
        if let Command::Premove { connection, .. } = &mut command {
            *connection = Some(self.connection);
        }
        self.game.command(self.player, command, now).await
    }

    /// The game copied out.
    ///
    /// # Errors
    /// [`Gone`] if the game is no longer served.
    pub async fn snapshot(&self, freshness: Freshness) -> Result<GameSnapshot, Gone> {
        self.game.snapshot(freshness).await
    }

    /// The game's owner stopped under the viewer: unless the node is
    /// stopping, the viewer attaches to the game as hosted again and starts
    /// from its full state.
    async fn reopen(&mut self) -> Seen {
        if *self.registry.shutdown_signal().borrow() {
            return Seen::Closed;
        }
        let Ok(Some(fresh)) = Viewer::open(&self.registry, self.id(), self.player).await else {
            return Seen::Closed;
        };
        // The old owner went with its count of this connection.
        drop(std::mem::replace(self, fresh));
        match self.state().await {
            Some(state) => Seen::State(Box::new(state)),
            None => Seen::Closed,
        }
    }
}

impl Drop for Viewer {
    /// Counts the connection out, a spectator's too: the owner of a
    /// finished game looks whether it can unload only when told something.
    fn drop(&mut self) {
        self.game.detach(self.connection);
    }
}
