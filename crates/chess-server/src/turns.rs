//! Who hears that a move was played in one of their games, wherever it was
//! played: the lobby sockets of both players, so a home page can list the
//! games where it is the player's move and call them back in
//! correspondence (`docs/protocol.md`, lobby message `moved`).
//!
//! Moves reach this from two places: this node's own group commit, after
//! each batch commits (as the store's [`chess_store::CommitObserver`]), and the
//! other nodes' change notices that the cluster listener hears
//! ([`Turns::changed_elsewhere`]). A notice too big to carry its change (a
//! take-back, a rematch) names no seats and is not passed on: the page
//! still shows the right list when it next loads it.
//!
//! Only players with a lobby socket open on this node are followed, in a
//! map from player to a channel: a move looks up its two players and
//! nothing else, however many sockets are open.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chess_live::notice::ChangeNotice;
use chess_live::{Batch, BatchOutcome, WriteOutcome};
use serde::Serialize;
use tokio::sync::broadcast;
use uuid::Uuid;

/// Moves waiting for one player's slowest lobby socket; further behind, it
/// skips the oldest (the page rereads its list on any `moved` anyway).
const QUEUED: usize = 16;

/// A move in one of a player's games.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Moved {
    pub game_id: Uuid,
    /// How many moves the game has now.
    pub moves: i64,
    /// When the last move was played (unix ms).
    pub at: u64,
}

/// The players followed on this node, each with the channel their lobby
/// sockets listen on.
#[derive(Clone, Debug, Default)]
pub struct Turns(Arc<Mutex<HashMap<Uuid, broadcast::Sender<Moved>>>>);

/// One lobby socket's subscription; dropping it stops following the player
/// when it was their last.
#[derive(Debug)]
pub struct Following {
    turns: Turns,
    player: Uuid,
    pub receiver: broadcast::Receiver<Moved>,
}

impl Drop for Following {
    fn drop(&mut self) {
        let Ok(mut players) = self.turns.0.lock() else {
            return;
        };
        // This receiver is still alive while it is dropped: the last one
        // leaves a count of one.
        if players
            .get(&self.player)
            .is_some_and(|sender| sender.receiver_count() <= 1)
        {
            players.remove(&self.player);
        }
    }
}

impl Turns {
    /// Follows the moves in `player`'s games, from now on.
    pub fn follow(&self, player: Uuid) -> Following {
        let receiver = match self.0.lock() {
            Ok(mut players) => players
                .entry(player)
                .or_insert_with(|| broadcast::channel(QUEUED).0)
                .subscribe(),
            // A poisoned map: a receiver that never hears anything.
            Err(_) => broadcast::channel(1).0.subscribe(),
        };
        Following {
            turns: self.clone(),
            player,
            receiver,
        }
    }

    /// How many players are followed on this node.
    pub fn followed(&self) -> usize {
        self.0.lock().map_or(0, |players| players.len())
    }

    /// Tells the followers among `seats` of `moved`.
    pub fn moved(&self, seats: [Option<Uuid>; 2], moved: Moved) {
        let Ok(players) = self.0.lock() else {
            return;
        };
        if players.is_empty() {
            return;
        }
        for (i, player) in seats.iter().enumerate() {
            // Both seats of a local game are one player: told once.
            if i == 1 && seats[0] == seats[1] {
                break;
            }
            if let Some(sender) = player.and_then(|player| players.get(&player)) {
                let _ = sender.send(moved);
            }
        }
    }

    /// A change another node made, as its notice told it.
    pub fn changed_elsewhere(&self, notice: &ChangeNotice<'_>) {
        let Some(change) = &notice.change else {
            return;
        };
        let Some(last) = change.moves.last() else {
            return;
        };
        self.moved(
            [change.white_id, change.black_id],
            Moved {
                game_id: notice.id,
                moves: last.ply + 1,
                at: last.played_at.millis(),
            },
        );
    }
}

/// The lobby follows the moves this node commits, registered with
/// [`chess_store::Store::observe_commits`] at start.
impl chess_store::CommitObserver for Turns {
    /// The moves of a batch this node committed: each written change that
    /// played a move.
    fn committed(&self, batch: &Batch, outcome: &BatchOutcome) {
        for (write, written) in batch.writes.iter().zip(&outcome.writes) {
            let Some(last) = write.new_moves.last() else {
                continue;
            };
            if *written != WriteOutcome::Written {
                continue;
            }
            self.moved(
                [write.row.white_id, write.row.black_id],
                Moved {
                    game_id: write.row.id,
                    moves: last.ply + 1,
                    at: last.played_at.millis(),
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moved(game_id: Uuid) -> Moved {
        Moved {
            game_id,
            moves: 3,
            at: 1,
        }
    }

    #[test]
    fn only_the_seats_hear_and_the_last_socket_stops_following() {
        let turns = Turns::default();
        let (white, black, other) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let mut first = turns.follow(white);
        let mut second = turns.follow(white);
        let mut stranger = turns.follow(other);
        let game = Uuid::new_v4();
        turns.moved([Some(white), Some(black)], moved(game));
        assert_eq!(first.receiver.try_recv().ok(), Some(moved(game)));
        assert_eq!(second.receiver.try_recv().ok(), Some(moved(game)));
        assert!(stranger.receiver.try_recv().is_err(), "not their game");
        assert_eq!(turns.followed(), 2);
        drop(first);
        assert_eq!(turns.followed(), 2, "a socket of white's is still open");
        drop(second);
        drop(stranger);
        assert_eq!(turns.followed(), 0);
    }

    #[test]
    fn a_local_game_tells_its_one_player_once() {
        let turns = Turns::default();
        let player = Uuid::new_v4();
        let mut following = turns.follow(player);
        turns.moved([Some(player), Some(player)], moved(Uuid::new_v4()));
        assert!(following.receiver.try_recv().is_ok());
        assert!(following.receiver.try_recv().is_err());
    }
}
