//! A game's version rises by exactly one per event, the stored row's
//! version is the last event's, and the compare-and-set on it lets one
//! change be stored per version however nodes race.

use chess_live::{Applied, Command, Freshness, GameMode};

use crate::helpers::{World, mv, premove, waiting_events};

#[tokio::test]
async fn every_change_raises_the_version_by_one_and_the_row_keeps_up() {
    let world = World::new();
    let node = world.node("a").await;
    let (id, white, black) = world.game(&node, GameMode::Online, "3+2").await;
    let mut watcher = node.viewer(id, None).await;
    let on_white = node.viewer(id, Some(&white)).await;
    let on_black = node.viewer(id, Some(&black)).await;
    let script = [
        (&on_white, mv("e2e4", 0)),
        (&on_white, premove("g1f3")),
        (&on_white, Command::CancelPremove),
        (&on_black, mv("e7e5", 1)),
        (&on_white, Command::DrawOffer),
        (&on_black, Command::DrawDecline),
        (&on_white, mv("g1f3", 2)),
        // Moving with a draw offer open declines it: two events, one change.
        (&on_black, Command::DrawOffer),
        (&on_white, premove("f1c4")),
        (&on_black, mv("b8c6", 3)),
    ];

    let mut seen = Vec::new();
    for (viewer, command) in script {
        let done = viewer.command(command.clone(), world.now()).await;
        assert!(matches!(done, Ok(Ok(_))), "{command:?}: {done:?}");
        seen.extend(waiting_events(&mut watcher).await);
        let row = world.store.stored_game(id).expect("stored");
        assert_eq!(
            Some(row.version),
            seen.last().map(|&v| i64::try_from(v).expect("small")),
            "after {command:?}"
        );
    }

    let expected: Vec<u64> = (1..=u64::try_from(seen.len()).expect("small")).collect();
    assert_eq!(seen, expected, "versions skipped or repeated");
    assert!(seen.len() > 10, "a change made more than one event");
    let held = node.registry.state(id, None, Freshness::Held).await;
    let held = held.expect("served").expect("the game");
    assert_eq!(Some(held.version), seen.last().copied());
}

#[tokio::test]
async fn two_nodes_racing_for_one_version_store_exactly_one_change() {
    let world = World::shared();
    let (a, b) = (world.node("a").await, world.node("b").await);
    let (id, white, _) = world.game(&a, GameMode::Online, "3+2").await;
    let on_a = a.viewer(id, Some(&white)).await;
    let on_b = b.viewer(id, Some(&white)).await;

    let (from_a, from_b) = tokio::join!(
        on_a.command(mv("e2e4", 0), world.now()),
        on_b.command(mv("d2d4", 0), world.now()),
    );

    let answers = [from_a.expect("served"), from_b.expect("served")];
    let acked: Vec<&str> = answers
        .iter()
        .zip(["e2e4", "d2d4"])
        .filter(|(answer, _)| matches!(answer, Ok(Applied::Ack { version: 1, .. })))
        .map(|(_, uci)| uci)
        .collect();
    assert_eq!(acked.len(), 1, "{answers:?}");
    assert!(
        answers
            .iter()
            .any(|answer| answer.as_ref().is_err_and(|r| r.code() == "wrong_ply")),
        "{answers:?}"
    );
    let row = world.store.stored_game(id).expect("stored");
    assert_eq!(row.version, 1);
    let stored: Vec<String> = world
        .store
        .stored_moves(id)
        .into_iter()
        .map(|mv| mv.uci)
        .collect();
    assert_eq!(stored, acked);
    for node in [&a, &b] {
        let held = node.registry.state(id, None, Freshness::Stored).await;
        let held = held.expect("served").expect("the game");
        assert_eq!((held.version, held.moves[0].uci.as_str()), (1, acked[0]));
    }
}
