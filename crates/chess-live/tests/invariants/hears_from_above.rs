//! Other nodes' news reaches a game only through its registry, called from
//! above by the server's listener (`Registry::changed_elsewhere`,
//! `presence_elsewhere`, `catch_up_all`); an owner reports to the registry
//! by message (`OwnerReport`: its unload is seen in `one_owner`).

use chess_game::EventKind;
use chess_live::{Freshness, GameMode, Seen, Viewer};
use chess_rules::Color;

use crate::helpers::{Node, World, mv, next_event, within};

/// The next presence news of `color` the viewer is shown.
async fn presence_of(viewer: &mut Viewer, color: Color) -> bool {
    loop {
        if let Seen::Presence {
            color: shown,
            present,
        } = within("presence news", viewer.next()).await
            && shown == color
        {
            return present;
        }
    }
}

/// Hands the nodes their notices, as the listener does, until `done`.
async fn deliver_until(world: &World, nodes: &[&Node], done: &impl AsyncFn() -> bool) {
    within("the notices to arrive", async {
        loop {
            world.deliver_notices(nodes);
            if done().await {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn another_nodes_change_is_followed_from_the_notice_handed_to_the_registry() {
    let world = World::shared();
    let (a, b) = (world.node("a").await, world.node("b").await);
    let (id, white, black) = world.game(&a, GameMode::Online, "3+2").await;
    let mut on_a = a.viewer(id, Some(&black)).await;
    let on_b = b.viewer(id, Some(&white)).await;
    let played = on_b.command(mv("e2e4", 0), world.now()).await;
    assert!(matches!(played, Ok(Ok(_))), "{played:?}");

    world.deliver_notices(&[&a, &b]);

    let (version, kind) = next_event(&mut on_a).await;
    assert_eq!(version, 1);
    assert!(
        matches!(&kind, EventKind::Move { uci, .. } if uci == "e2e4"),
        "{kind:?}"
    );
    let followed = a
        .telemetry
        .remote_changes
        .lock()
        .expect("not poisoned")
        .clone();
    assert_eq!(followed, [true], "followed from the notice, not reread");
    // Held as stored: black's answer lands over it at once.
    let answered = on_a.command(mv("e7e5", 1), world.now()).await;
    assert!(matches!(answered, Ok(Ok(_))), "{answered:?}");
    assert_eq!(world.store.stored_game(id).expect("stored").version, 2);
}

#[tokio::test]
async fn after_lost_notices_the_listener_has_every_hosted_game_reread() {
    let world = World::shared();
    let (a, b) = (world.node("a").await, world.node("b").await);
    let (id, white, black) = world.game(&a, GameMode::Online, "3+2").await;
    let mut on_a = a.viewer(id, Some(&black)).await;
    let on_b = b.viewer(id, Some(&white)).await;
    let played = on_b.command(mv("e2e4", 0), world.now()).await;
    assert!(matches!(played, Ok(Ok(_))), "{played:?}");
    // The notice is lost.
    world.store.take_notices(chess_live::notice::GAMES_CHANNEL);

    a.registry.catch_up_all();

    assert_eq!(next_event(&mut on_a).await.0, 1);
    let reread = a
        .telemetry
        .remote_changes
        .lock()
        .expect("not poisoned")
        .clone();
    assert_eq!(reread, [false], "reread from the store");
    let held = a.registry.state(id, None, Freshness::Held).await;
    assert_eq!(held.expect("served").expect("the game").version, 1);
}

#[tokio::test]
async fn another_nodes_connections_are_known_only_from_the_notices_handed_to_the_registry() {
    let world = World::shared();
    let (a, b) = (world.node("a").await, world.node("b").await);
    let (id, white, black) = world.game(&a, GameMode::Online, "3+2").await;
    let mut on_a = a.viewer(id, Some(&black)).await;
    let on_b = b.viewer(id, Some(&white)).await;
    let white_present_on_a = async || {
        let snapshot = a.registry.snapshot(id, Freshness::Held).await;
        snapshot.expect("served").expect("the game").presence.white
    };
    assert!(!white_present_on_a().await, "a heard of b without a notice");

    deliver_until(&world, &[&a, &b], &white_present_on_a).await;
    assert!(presence_of(&mut on_a, Color::White).await);

    drop(on_b);
    deliver_until(&world, &[&a, &b], &async || !white_present_on_a().await).await;
    assert!(!presence_of(&mut on_a, Color::White).await);
}
