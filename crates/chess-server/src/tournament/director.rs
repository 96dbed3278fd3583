//! The tournament director: one task per node that runs the tournaments
//! whose lease the node holds. Every [`TICK`] it claims (or renews) the
//! leases of the tournaments due to run, starts those whose time has come,
//! finishes those whose time is up, and for each running one carries out
//! its [`plan`](super::plan::plan): pauses, then a pairing pass whose games
//! are stored with their pairings under the lease
//! (`Store::pair_tournament_games`). Nothing is kept between ticks that
//! the rows do not hold, so a node that takes a tournament over (its
//! holder died and the lease ran out) carries on exactly where it stood.

use std::time::Duration;

use chess_game::{GameSpec, TimeControl};
use chess_live::{GameMode, NewGame, now_ms};
use chess_store::tournaments::{
    NewPairing, PauseRecord, TournamentError, TournamentRow, TournamentStatus,
};
use chess_tournament::arena::Pauses;
use tokio::sync::watch;
use tracing::Instrument as _;
use uuid::Uuid;

use super::plan::{arena_clock, plan};
use super::standings::standings;
use crate::state::AppState;

/// How often the director looks at its tournaments.
pub const TICK: Duration = Duration::from_secs(1);
/// How long a claim lasts unless renewed: a node that stops ticking hands
/// its tournaments over after this long.
pub const LEASE_MS: i64 = 10_000;

/// Starts the director of this node; it stops, giving its leases back,
/// when `shutdown` turns true.
pub fn start(state: AppState, mut shutdown: watch::Receiver<bool>) -> tokio::task::JoinHandle<()> {
    let node = state.registry.node_id();
    tokio::spawn(
        async move {
            let mut held: Vec<String> = Vec::new();
            let mut ticks = tokio::time::interval(TICK);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = ticks.tick() => {}
                    _ = shutdown.changed() => break,
                }
                if *shutdown.borrow() {
                    break;
                }
                match tick(&state, node).await {
                    Ok(ids) => held = ids,
                    Err(error) => tracing::warn!(%error, "claiming tournaments failed"),
                }
            }
            for id in held {
                if let Err(error) = state.store.release_tournament(&id, node).await {
                    tracing::debug!(%error, id, "giving a tournament back failed");
                }
            }
        }
        .instrument(tracing::info_span!("tournament_director")),
    )
}

/// One round over this node's tournaments; the ids it holds.
async fn tick(state: &AppState, node: Uuid) -> Result<Vec<String>, chess_store::StoreError> {
    let now = now_ms().to_stored();
    let claimed = state.store.claim_tournaments(node, now, LEASE_MS).await?;
    let ids = claimed
        .iter()
        .map(|tournament| tournament.id.clone())
        .collect();
    for tournament in claimed {
        if let Err(error) = direct(state, node, &tournament, now).await {
            match error {
                TournamentError::LeaseLost => {
                    tracing::info!(id = tournament.id, "another node runs the tournament now");
                }
                error => tracing::warn!(%error, id = tournament.id, "running a tournament failed"),
            }
        }
    }
    Ok(ids)
}

/// Moves `tournament` on at `now`.
async fn direct(
    state: &AppState,
    node: Uuid,
    tournament: &TournamentRow,
    now: i64,
) -> Result<(), TournamentError> {
    let store = &state.store;
    if now >= tournament.ends_at {
        if store.finish_tournament(&tournament.id, node, now).await? {
            tracing::info!(id = tournament.id, "tournament finished");
        }
        return Ok(());
    }
    if tournament.status == TournamentStatus::Created {
        store.start_tournament(&tournament.id, node, now).await?;
        tracing::info!(id = tournament.id, "tournament started");
    }
    let players = store.tournament_players(&tournament.id).await?;
    let games = store.tournament_games(&tournament.id).await?;
    let table = standings(tournament, &players, &games)?;
    let plan = plan(tournament, &players, &games, &table, now, &mut rand::rng());
    let clock = arena_clock(tournament);
    for (player, ended) in plan.pauses {
        store
            .pause_tournament_player(&tournament.id, player, |stored| {
                pause_after_no_start(stored, ended, clock)
            })
            .await?;
    }
    if plan.pairings.is_empty() {
        return Ok(());
    }
    let mut pairings = Vec::with_capacity(plan.pairings.len());
    for pairing in &plan.pairings {
        let (Some(white), Some(black)) = (
            store.player(pairing.white).await?,
            store.player(pairing.black).await?,
        ) else {
            continue;
        };
        let new = NewGame {
            id: Uuid::new_v4(),
            mode: GameMode::Online,
            spec: game_spec(tournament)?,
            white: Some(white),
            black: Some(black),
            computer_level: None,
        };
        let (row, _) = state.registry.new_row(&new);
        pairings.push(NewPairing {
            game: row,
            white: pairing.white,
            black: pairing.black,
        });
    }
    store
        .pair_tournament_games(&tournament.id, node, now, &pairings)
        .await?;
    for pairing in &pairings {
        state
            .lobby
            .tournament_game_started(pairing.game.id, [pairing.white, pairing.black])
            .await;
    }
    tracing::info!(
        id = tournament.id,
        games = pairings.len(),
        "tournament pass"
    );
    Ok(())
}

/// The spec of `tournament`'s games: its clock, rated or not, berserk if
/// allowed, and to be played (no abort; no first move loses).
pub fn game_spec(tournament: &TournamentRow) -> Result<GameSpec, TournamentError> {
    let clock = arena_clock(tournament);
    let time_control =
        TimeControl::real_time(clock.base_ms, clock.increment_ms).map_err(|error| {
            TournamentError::Store(chess_store::StoreError::Corrupt(format!(
                "tournament clock: {error}"
            )))
        })?;
    Ok(GameSpec::standard(time_control)
        .with_rated(tournament.rated)
        .with_berserk(tournament.berserkable)
        .with_mandatory(true))
}

/// The stored pauses after one more at `ended` (a first move not made in a
/// game that ended then, or a player pausing): one more pause from then,
/// unless it was counted already (by a node that stopped after pausing and
/// before its next tick).
pub(super) fn pause_after_no_start(
    stored: PauseRecord,
    ended: i64,
    clock: chess_tournament::arena::ArenaClock,
) -> PauseRecord {
    if stored.last_at.is_some_and(|last| last >= ended) {
        return stored;
    }
    let mut pauses = Pauses {
        count: u32::try_from(stored.count).unwrap_or(0),
        last_at: stored.last_at.and_then(|last| u64::try_from(last).ok()),
    };
    let back_at = pauses.pause(u64::try_from(ended).unwrap_or(0), clock);
    PauseRecord {
        count: i64::from(pauses.count),
        last_at: Some(ended),
        until: Some(i64::try_from(back_at).unwrap_or(i64::MAX)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chess_tournament::arena::ArenaClock;

    const ONE_MINUTE: ArenaClock = ArenaClock {
        base_ms: 60_000,
        increment_ms: 0,
    };

    #[test]
    fn a_no_start_pauses_once_however_often_it_is_applied() {
        let once = pause_after_no_start(PauseRecord::default(), 50_000, ONE_MINUTE);
        assert_eq!(once.count, 1);
        assert_eq!(once.last_at, Some(50_000));
        assert_eq!(once.until, Some(60_000), "10 s after the first pause");
        assert_eq!(pause_after_no_start(once, 50_000, ONE_MINUTE), once);
        let twice = pause_after_no_start(once, 90_000, ONE_MINUTE);
        assert_eq!(twice.count, 2);
    }
}
