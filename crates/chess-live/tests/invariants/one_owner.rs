//! The registry hands out handles to one owner per game; an owner unloads
//! by closing its mailbox and the next request loads the game afresh
//! (`Registry::get`; the retry of `Registry::with_game` is checked by the
//! registry's own tests, which can stand a closed handle in its way).

use std::time::Duration;

use chess_live::{Applied, Freshness, GameMode, IDLE_UNLOAD};

use crate::helpers::{World, mv, next_event, stored_moves, until};

#[tokio::test]
async fn concurrent_requests_for_a_game_share_one_owner() {
    let world = World::new();
    let maker = world.node("a").await;
    let (id, white, _) = world.game(&maker, GameMode::Online, "correspondence").await;
    maker.stop().await;
    // A node that does not host the game yet: every request finds it loading.
    let node = world.node("a").await;
    assert_eq!(node.registry.live_games(), 0);

    let opens: Vec<_> = (0..8)
        .map(|_| {
            let registry = node.registry.clone();
            tokio::spawn(async move { chess_live::Viewer::open(&registry, id, None).await })
        })
        .collect();
    let mut viewers = Vec::new();
    for open in opens {
        viewers.push(
            open.await
                .expect("the task ran")
                .expect("loaded")
                .expect("the game"),
        );
    }
    assert_eq!(node.registry.live_games(), 1);

    let played = node
        .registry
        .command(id, Some(white.id), mv("e2e4", 0), world.now())
        .await;
    assert!(
        matches!(played, Ok(Some(Ok(Applied::Ack { .. })))),
        "{played:?}"
    );
    // One owner: every viewer hears of the move it made.
    for viewer in &mut viewers {
        assert_eq!(next_event(viewer).await.0, 1);
    }
}

#[tokio::test]
async fn an_idle_game_unloads_and_is_loaded_afresh_from_the_store() {
    let world = World::shared();
    let a = world.node("a").await;
    let (id, white, _) = world.game(&a, GameMode::Online, "correspondence").await;
    assert_eq!(a.registry.live_games(), 1);

    world.clock.advance(IDLE_UNLOAD + Duration::from_secs(1));
    until("the idle game to unload", || a.registry.live_games() == 0).await;
    // Meanwhile another node plays, and a is not told.
    let b = world.node("b").await;
    let on_b = b.viewer(id, Some(&white)).await;
    let played = on_b.command(mv("e2e4", 0), world.now()).await;
    assert!(matches!(played, Ok(Ok(_))), "{played:?}");

    let state = a
        .registry
        .state(id, None, Freshness::Held)
        .await
        .expect("served")
        .expect("the game");
    assert_eq!(state.version, 1, "a held copy survived the unload");
    assert_eq!(state.moves[0].uci, "e2e4");
    assert_eq!(a.registry.live_games(), 1);
    assert_eq!(stored_moves(&world, id), ["e2e4"]);
}
