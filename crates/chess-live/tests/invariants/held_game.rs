//! A change that could not be stored is undone (`Undo`, see
//! `acknowledged`); a compare-and-set lost to another node reloads the
//! game (`catch_up`); on a store no other node shares the held copy is
//! never stale, so it is never reread.

use chess_game::EventKind;
use chess_live::{Freshness, GameMode};

use crate::helpers::{World, mv, next_event, stored_moves};

#[tokio::test]
async fn a_compare_and_set_lost_to_another_node_reloads_the_game() {
    let world = World::shared();
    let (a, b) = (world.node("a").await, world.node("b").await);
    let (id, white, _) = world.game(&a, GameMode::Online, "3+2").await;
    let mut on_a = a.viewer(id, Some(&white)).await;
    let on_b = b.viewer(id, Some(&white)).await;
    // Node b plays first; a is not told (its notice is never delivered).
    let played = on_b.command(mv("d2d4", 0), world.now()).await;
    assert!(matches!(played, Ok(Ok(_))), "{played:?}");

    // a's copy takes the move; its compare-and-set on version 0 loses.
    let refused = on_a.command(mv("e2e4", 0), world.now()).await;

    let refusal = refused.expect("served").expect_err("refused");
    assert_eq!(
        refusal.code(),
        "wrong_ply",
        "tried again on the reread game"
    );
    let held = a
        .registry
        .state(id, None, Freshness::Held)
        .await
        .expect("served")
        .expect("the game");
    let held_moves: Vec<&str> = held.moves.iter().map(|mv| mv.uci.as_str()).collect();
    assert_eq!((held.version, held_moves), (1, vec!["d2d4"]));
    assert_eq!(stored_moves(&world, id), ["d2d4"]);
    // a's connections are shown the change they missed, in order.
    let (version, kind) = next_event(&mut on_a).await;
    assert_eq!(version, 1);
    assert!(
        matches!(&kind, EventKind::Move { uci, .. } if uci == "d2d4"),
        "{kind:?}"
    );
}

#[tokio::test]
async fn a_full_state_on_a_shared_store_is_the_stored_game() {
    let world = World::shared();
    let (a, b) = (world.node("a").await, world.node("b").await);
    let (id, white, _) = world.game(&a, GameMode::Online, "3+2").await;
    let on_b = b.viewer(id, Some(&white)).await;
    let played = on_b.command(mv("e2e4", 0), world.now()).await;
    assert!(matches!(played, Ok(Ok(_))), "{played:?}");

    let held = a.registry.state(id, None, Freshness::Held).await;
    let stored = a.registry.state(id, None, Freshness::Stored).await;

    let held = held.expect("served").expect("the game");
    assert_eq!(held.version, 0, "a was told of b's move after all");
    let stored = stored.expect("served").expect("the game");
    assert_eq!(stored.version, 1);
    assert_eq!(stored.moves.len(), 1);
    assert_eq!(stored.moves[0].uci, "e2e4");
}

/// Every change to a game this node hosts goes through its owner, so a
/// full state costs no read. (The row's version is moved here by hand:
/// nothing else could move it.)
#[tokio::test]
async fn on_a_store_nobody_shares_the_held_copy_is_not_reread() {
    let world = World::new();
    let node = world.node("a").await;
    let (id, _, _) = world.game(&node, GameMode::Online, "3+2").await;
    assert!(world.store.edit_game(id, |row| row.version = 7));

    let state = node.registry.state(id, None, Freshness::Stored).await;

    assert_eq!(state.expect("served").expect("the game").version, 0);
}
