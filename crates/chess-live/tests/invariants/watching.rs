//! Every connection is a `Viewer`: subscribed before it is counted present
//! (`GameHandle::attach`), shown each change once (`Viewer::see`), started
//! again from a full `StateView` when seats change or it falls behind, and
//! counted out when dropped, taking the premove it set with it.

use chess_live::{Command, Freshness, GameMode, Seat, Seen, Viewer};
use chess_rules::Color;

use crate::helpers::{
    World, mv, next_event, next_seen, premove, stored_moves, waiting_events, within,
};

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

/// The versions of what `seen` holds: each event's, or a full state's.
fn versions(seen: &[Seen]) -> Vec<u64> {
    seen.iter()
        .map(|seen| match seen {
            Seen::Event(outgoing) => match outgoing.as_ref() {
                chess_live::Outgoing::Event { version, .. } => *version,
                other => panic!("not an event: {other:?}"),
            },
            Seen::State(state) => state.version,
            other => panic!("neither an event nor a state: {other:?}"),
        })
        .collect()
}

#[tokio::test]
async fn a_connection_is_counted_present_while_it_is_open() {
    let world = World::new();
    let node = world.node("a").await;
    let (id, white, black) = world.game(&node, GameMode::Online, "3+2").await;
    let mut on_black = node.viewer(id, Some(&black)).await;
    let presence = async || {
        let snapshot = node.registry.snapshot(id, Freshness::Held).await;
        snapshot.expect("served").expect("the game").presence
    };
    assert!(!presence().await.white);

    let on_white = node.viewer(id, Some(&white)).await;
    assert!(presence().await.white, "open, and not counted");
    assert!(presence_of(&mut on_black, Color::White).await);

    drop(on_white);
    assert!(!presence().await.white, "dropped, and still counted");
    assert!(!presence_of(&mut on_black, Color::White).await);
}

#[tokio::test]
async fn each_change_is_shown_once_and_a_resume_brings_only_what_was_missed() {
    let world = World::new();
    let node = world.node("a").await;
    let (id, white, black) = world.game(&node, GameMode::Online, "3+2").await;
    let mut watcher = node.viewer(id, None).await;
    let on_white = node.viewer(id, Some(&white)).await;
    let on_black = node.viewer(id, Some(&black)).await;
    for (viewer, uci, ply) in [
        (&on_white, "e2e4", 0),
        (&on_black, "e7e5", 1),
        (&on_white, "g1f3", 2),
    ] {
        let played = viewer.command(mv(uci, ply), world.now()).await;
        assert!(matches!(played, Ok(Ok(_))), "{played:?}");
    }

    for version in 1..=3 {
        assert_eq!(next_event(&mut watcher).await.0, version);
    }
    assert!(
        watcher.resume(Some(0)).await.is_empty(),
        "shown twice after a resume"
    );

    let mut late = node.viewer(id, None).await;
    assert_eq!(versions(&late.resume(Some(1)).await), [2, 3]);
    assert!(late.resume(Some(1)).await.is_empty(), "shown twice");
    let mut fresh = node.viewer(id, None).await;
    let from_nothing = fresh.resume(None).await;
    assert!(matches!(from_nothing.as_slice(), [Seen::State(_)]));
    assert_eq!(versions(&from_nothing), [3]);
}

#[tokio::test]
async fn a_viewer_that_falls_behind_starts_again_from_the_full_state() {
    let world = World::new();
    let node = world.node("a").await;
    let (id, white, black) = world.game(&node, GameMode::Online, "3+2").await;
    let mut slow = node.viewer(id, None).await;
    let on_black = node.viewer(id, Some(&black)).await;
    // More changes than a game keeps for a connection that reads none.
    for _ in 0..17 {
        for command in [premove("e7e5"), Command::CancelPremove] {
            let done = on_black.command(command, world.now()).await;
            assert!(matches!(done, Ok(Ok(_))), "{done:?}");
        }
    }

    assert!(matches!(next_seen(&mut slow).await, Seen::Behind));
    let state = slow.state().await.expect("served");
    assert_eq!(state.version, 34);
    // What is still queued for it is older than the state: not shown again.
    assert!(waiting_events(&mut slow).await.is_empty());

    let on_white = node.viewer(id, Some(&white)).await;
    let played = on_white.command(mv("e2e4", 0), world.now()).await;
    assert!(matches!(played, Ok(Ok(_))), "{played:?}");
    assert_eq!(
        next_event(&mut slow).await.0,
        35,
        "goes on from the full state"
    );
}

#[tokio::test]
async fn a_viewer_whose_seat_changed_starts_again_from_the_full_state() {
    let world = World::new();
    let node = world.node("a").await;
    let alice = world.player(&node, "alice").await;
    let bob = world.player(&node, "bob").await;
    let id = node
        .create(GameMode::Online, "3+2", Some(alice), None)
        .await;
    let mut bobs = node.viewer(id, Some(&bob)).await;
    assert_eq!(bobs.seat(), Seat::None);

    let joined = node.registry.join(id, bob.clone()).await;
    assert_eq!(joined.expect("joined"), Some(Color::Black));

    match next_seen(&mut bobs).await {
        Seen::State(state) => assert_eq!(state.seat, Seat::Black),
        other => panic!("expected the full state, got {other:?}"),
    }
    assert_eq!(bobs.seat(), Seat::Black);
    let snapshot = node.registry.snapshot(id, Freshness::Held).await;
    let presence = snapshot.expect("served").expect("the game").presence;
    assert!(presence.black, "counted for the new seat");
}

/// Control for the next test: a premove whose connection stays is played.
#[tokio::test]
async fn a_premove_is_played_while_the_connection_that_set_it_is_open() {
    let world = World::new();
    let node = world.node("a").await;
    let (id, white, black) = world.game(&node, GameMode::Online, "3+2").await;
    let on_white = node.viewer(id, Some(&white)).await;
    let on_black = node.viewer(id, Some(&black)).await;
    let played = on_white.command(mv("e2e4", 0), world.now()).await;
    assert!(matches!(played, Ok(Ok(_))), "{played:?}");
    let set = on_white.command(premove("g1f3"), world.now()).await;
    assert!(matches!(set, Ok(Ok(_))), "{set:?}");

    let answered = on_black.command(mv("e7e5", 1), world.now()).await;

    assert!(matches!(answered, Ok(Ok(_))), "{answered:?}");
    assert_eq!(stored_moves(&world, id), ["e2e4", "e7e5", "g1f3"]);
}

#[tokio::test]
async fn a_closed_connection_takes_the_premove_it_set_with_it() {
    let world = World::new();
    let node = world.node("a").await;
    let (id, white, black) = world.game(&node, GameMode::Online, "3+2").await;
    let setter = node.viewer(id, Some(&white)).await;
    let other_tab = node.viewer(id, Some(&white)).await;
    let on_black = node.viewer(id, Some(&black)).await;
    let played = other_tab.command(mv("e2e4", 0), world.now()).await;
    assert!(matches!(played, Ok(Ok(_))), "{played:?}");
    let set = setter.command(premove("g1f3"), world.now()).await;
    assert!(matches!(set, Ok(Ok(_))), "{set:?}");

    drop(setter);

    // White is still connected, through the other tab: the premove was
    // the closed connection's all the same.
    let state = node
        .registry
        .state(id, Some(white.id), Freshness::Held)
        .await;
    assert_eq!(state.expect("served").expect("the game").premove, None);
    let answered = on_black.command(mv("e7e5", 1), world.now()).await;
    assert!(matches!(answered, Ok(Ok(_))), "{answered:?}");
    assert_eq!(stored_moves(&world, id), ["e2e4", "e7e5"]);
    drop(other_tab);
}

#[tokio::test]
async fn a_players_new_connection_starts_from_no_premove() {
    let world = World::new();
    let node = world.node("a").await;
    let (id, white, black) = world.game(&node, GameMode::Online, "3+2").await;
    let setter = node.viewer(id, Some(&white)).await;
    let _on_black = node.viewer(id, Some(&black)).await;
    let played = setter.command(mv("e2e4", 0), world.now()).await;
    assert!(matches!(played, Ok(Ok(_))), "{played:?}");
    let set = setter.command(premove("g1f3"), world.now()).await;
    assert!(matches!(set, Ok(Ok(_))), "{set:?}");

    let mut new_tab = node.viewer(id, Some(&white)).await;

    let state = new_tab.state().await.expect("served");
    assert_eq!(state.premove, None);
    drop(setter);
}
