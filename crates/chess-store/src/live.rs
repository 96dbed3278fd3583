//! The store as the live games' seam ([`chess_live::GameStore`]): each
//! method is the store's own query, its failure told as what it means to
//! the live games ([`StoreError::kind`](crate::StoreError::kind)).

use chess_live::{
    Batch, BatchOutcome, GameRow, GameStore, MoveRow, PlayerRow, StoreResult, UnixMs,
};
use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
use uuid::Uuid;

use crate::Store;

impl GameStore for Store {
    /// Postgres is shared by every node on it; an SQLite file serves one.
    fn is_shared(&self) -> bool {
        self.is_postgres()
    }

    fn game(&self, id: Uuid) -> BoxFuture<'_, StoreResult<Option<GameRow>>> {
        async move { Ok(Store::game(self, id).await?) }.boxed()
    }

    fn game_version(&self, id: Uuid) -> BoxFuture<'_, StoreResult<Option<i64>>> {
        async move { Ok(Store::game_version(self, id).await?) }.boxed()
    }

    fn moves_from(&self, id: Uuid, from_ply: usize) -> BoxFuture<'_, StoreResult<Vec<MoveRow>>> {
        async move { Ok(Store::moves_from(self, id, from_ply).await?) }.boxed()
    }

    fn player(&self, id: Uuid) -> BoxFuture<'_, StoreResult<Option<PlayerRow>>> {
        async move { Ok(Store::player(self, id).await?) }.boxed()
    }

    fn set_deadline(
        &self,
        id: Uuid,
        version: i64,
        deadline_at: Option<UnixMs>,
    ) -> BoxFuture<'_, StoreResult<bool>> {
        async move { Ok(Store::set_deadline(self, id, version, deadline_at).await?) }.boxed()
    }

    fn due_games(&self, now: UnixMs, limit: i64) -> BoxFuture<'_, StoreResult<Vec<Uuid>>> {
        async move { Ok(Store::due_games(self, now, limit).await?) }.boxed()
    }

    fn register_node<'a>(
        &'a self,
        id: Uuid,
        name: &'a str,
        now: UnixMs,
    ) -> BoxFuture<'a, StoreResult<()>> {
        async move { Ok(Store::register_node(self, id, name, now).await?) }.boxed()
    }

    fn heartbeat<'a>(
        &'a self,
        id: Uuid,
        name: &'a str,
        now: UnixMs,
        alive_since: UnixMs,
    ) -> BoxFuture<'a, StoreResult<Vec<Uuid>>> {
        async move { Ok(Store::heartbeat(self, id, name, now, alive_since).await?) }.boxed()
    }

    fn remove_node(&self, id: Uuid) -> BoxFuture<'_, StoreResult<()>> {
        async move { Ok(Store::remove_node(self, id).await?) }.boxed()
    }

    /// The batch ([`Store::write_batch`]); on SQLite, a committed batch's
    /// pages are then copied into the database file in the background
    /// ([`Store::start_checkpoints`]).
    fn write_batch<'a>(
        &'a self,
        batch: &'a Batch,
        channel: &'a str,
        announce: &'a (dyn Fn(&BatchOutcome) -> Vec<String> + Sync),
    ) -> BoxFuture<'a, StoreResult<BatchOutcome>> {
        async move {
            let outcome = Store::write_batch(self, batch, channel, announce).await?;
            self.batch_committed();
            if let Some(observer) = self.commit_observer.get() {
                observer.committed(batch, &outcome);
            }
            Ok(outcome)
        }
        .boxed()
    }

    fn notify<'a>(
        &'a self,
        channel: &'a str,
        payloads: &'a [String],
    ) -> BoxFuture<'a, StoreResult<()>> {
        async move { Ok(Store::notify_all(self, channel, payloads).await?) }.boxed()
    }
}
