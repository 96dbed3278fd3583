//! `Owner::commit` answers and broadcasts only after the writer reported
//! the change written; a write in doubt is checked against the store
//! (`outcome_of_failed_write`) before it is refused.

use chess_live::{Applied, Freshness, GameMode, Refusal, StoreErrorKind};

use crate::helpers::{World, mv, next_event, stored_moves, waiting_events, within};

fn ack(ply: u32, uci: &str, version: u64) -> Result<Applied, Refusal> {
    Ok(Applied::Ack {
        ply,
        uci: uci.parse().expect("uci"),
        version,
    })
}

#[tokio::test]
async fn a_move_is_answered_and_broadcast_only_once_its_batch_committed() {
    let world = World::new();
    let node = world.node("a").await;
    let (id, white, _) = world.game(&node, GameMode::Online, "3+2").await;
    let mover = node.viewer(id, Some(&white)).await;
    let mut spectator = node.viewer(id, None).await;
    world.store.hold_batches();

    let now = world.now();
    let answer = tokio::spawn(async move { mover.command(mv("e2e4", 0), now).await });
    within(
        "the move's batch to reach the store",
        world.store.batch_held(),
    )
    .await;

    assert!(
        !answer.is_finished(),
        "the move was answered before its commit"
    );
    assert_eq!(
        waiting_events(&mut spectator).await,
        Vec::<u64>::new(),
        "the move was broadcast before its commit"
    );
    assert!(stored_moves(&world, id).is_empty());

    world.store.release_batches();
    let answered = within("the answer", answer).await.expect("the task ran");
    assert_eq!(answered.expect("served"), ack(0, "e2e4", 1));
    assert_eq!(next_event(&mut spectator).await.0, 1);
    assert_eq!(stored_moves(&world, id), ["e2e4"]);
}

#[tokio::test]
async fn a_write_that_failed_is_refused_and_the_game_undone() {
    let world = World::new();
    let node = world.node("a").await;
    let (id, white, _) = world.game(&node, GameMode::Online, "3+2").await;
    let mover = node.viewer(id, Some(&white)).await;
    let mut spectator = node.viewer(id, None).await;
    world.store.fail_next_batch(StoreErrorKind::Unavailable);

    let refused = mover.command(mv("e2e4", 0), world.now()).await;

    let refusal = refused.expect("served").expect_err("refused");
    assert_eq!(refusal.code(), "unavailable");
    assert!(waiting_events(&mut spectator).await.is_empty());
    let held = node
        .registry
        .state(id, None, Freshness::Held)
        .await
        .expect("served")
        .expect("the game");
    assert_eq!(
        (held.version, held.moves.len()),
        (0, 0),
        "the move was kept"
    );
    assert_eq!(world.store.stored_game(id).expect("stored").version, 0);
    // Sent again, it is played and stored: had the held game kept it, the
    // resend would be acknowledged as a replay with nothing stored.
    let resent = mover.command(mv("e2e4", 0), world.now()).await;
    assert_eq!(resent.expect("served"), ack(0, "e2e4", 1));
    assert_eq!(stored_moves(&world, id), ["e2e4"]);
}

#[tokio::test]
async fn a_write_in_doubt_that_landed_is_acknowledged_once() {
    let world = World::new();
    let node = world.node("a").await;
    let (id, white, _) = world.game(&node, GameMode::Online, "3+2").await;
    let mover = node.viewer(id, Some(&white)).await;
    let mut spectator = node.viewer(id, None).await;
    world.store.lose_next_commit_answer();

    let answered = mover.command(mv("e2e4", 0), world.now()).await;

    assert_eq!(answered.expect("served"), ack(0, "e2e4", 1));
    assert_eq!(stored_moves(&world, id), ["e2e4"]);
    assert_eq!(next_event(&mut spectator).await.0, 1);
    assert!(waiting_events(&mut spectator).await.is_empty());
}

#[tokio::test]
async fn a_write_in_doubt_that_did_not_land_is_refused() {
    let world = World::new();
    let node = world.node("a").await;
    let (id, white, _) = world.game(&node, GameMode::Online, "3+2").await;
    let mover = node.viewer(id, Some(&white)).await;
    let mut spectator = node.viewer(id, None).await;
    world.store.fail_next_batch(StoreErrorKind::InDoubt);

    let refused = mover.command(mv("e2e4", 0), world.now()).await;

    assert_eq!(refused.expect("served"), Err(Refusal::Unavailable));
    assert!(stored_moves(&world, id).is_empty());
    assert!(waiting_events(&mut spectator).await.is_empty());
    let held = node
        .registry
        .snapshot(id, Freshness::Held)
        .await
        .expect("served")
        .expect("the game");
    assert!(held.moves.is_empty(), "the move was kept");
}

/// The one case where the held game and the stored one part for a while:
/// the write landed and the store could not say so. The refusal stands,
/// and the resend meets a lost compare-and-set, rereads the game and is
/// acknowledged from it: the move is stored once.
#[tokio::test]
async fn a_write_in_doubt_the_store_cannot_confirm_is_refused_and_its_resend_acknowledged() {
    let world = World::new();
    let node = world.node("a").await;
    let (id, white, _) = world.game(&node, GameMode::Online, "3+2").await;
    let mover = node.viewer(id, Some(&white)).await;
    world.store.lose_next_commit_answer();
    world.store.fail_reads(Some(StoreErrorKind::Unreachable));

    let refused = mover.command(mv("e2e4", 0), world.now()).await;
    assert_eq!(refused.expect("served"), Err(Refusal::Unavailable));
    assert_eq!(stored_moves(&world, id), ["e2e4"], "it landed all the same");

    world.store.fail_reads(None);
    let resent = mover.command(mv("e2e4", 0), world.now()).await;
    assert_eq!(resent.expect("served"), ack(0, "e2e4", 1));
    assert_eq!(stored_moves(&world, id), ["e2e4"], "stored twice");
    let held = node
        .registry
        .state(id, None, Freshness::Held)
        .await
        .expect("served")
        .expect("the game");
    assert_eq!(held.version, 1);
    assert_eq!(world.store.stored_game(id).expect("stored").version, 1);
}
