//! Who is there for an arena: the pool is the players seen lately
//! (`plan::PRESENT_FOR_MS`). A person shows it by having the tournament
//! page open (its every request marks them, `http::tournaments`); an API
//! client (a bot, a board app) by keeping its event stream open, which
//! marks the account in every arena it is playing in while it lasts.

use std::time::Duration;

use chess_live::now_ms;
use chess_store::Store;
use chess_store::tournaments::TournamentStatus;
use uuid::Uuid;

/// How often an open event stream marks its account present.
pub const STREAM_BEAT: Duration = Duration::from_secs(10);
/// The most arenas one account is marked in at a time.
const ARENAS_AT_ONCE: i64 = 20;

/// Marks `player` present in each arena they joined that is not over,
/// now and then every [`STREAM_BEAT`], until the task is aborted (the
/// stream closed).
pub async fn keep_present(store: Store, player: Uuid) {
    let mut beats = tokio::time::interval(STREAM_BEAT);
    loop {
        beats.tick().await;
        if let Err(error) = mark_everywhere(&store, player).await {
            tracing::debug!(%error, %player, "marking an API player present failed");
        }
    }
}

async fn mark_everywhere(store: &Store, player: Uuid) -> Result<(), chess_store::StoreError> {
    let now = now_ms().to_stored();
    for tournament in store.tournaments_of(player, ARENAS_AT_ONCE).await? {
        if tournament.status != TournamentStatus::Finished {
            store
                .mark_tournament_presence(&tournament.id, player, now)
                .await?;
        }
    }
    Ok(())
}
