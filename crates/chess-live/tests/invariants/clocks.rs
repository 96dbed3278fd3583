//! Deadlines are stored with every change (`stored_deadline`), and the
//! registry's sweeper loads games whose deadline passed, so a game nobody
//! hosts still flags; a hosted one flags on its own timer.

use std::time::Duration;

use chess_game::{EndReason, EventKind};
use chess_live::{Command, GameMode, GameRow, GameStage, UnixMs};
use chess_rules::Color;
use uuid::Uuid;

use crate::helpers::{Node, World, mv, next_event, within};

const SECOND: Duration = Duration::from_secs(1);

/// Plays `moves` in game `id` from ply `from` on, one second apart, each
/// by its side's player (`seats`: white's id, black's).
async fn play(world: &World, node: &Node, id: Uuid, seats: [Uuid; 2], from: u32, moves: &[&str]) {
    for (ply, uci) in (from..).zip(moves) {
        world.clock.advance(SECOND);
        let player = seats[usize::from(ply % 2 == 1)];
        let played = node
            .registry
            .command(id, Some(player), mv(uci, ply), world.now())
            .await;
        assert!(matches!(played, Ok(Some(Ok(_)))), "{uci}: {played:?}");
    }
}

/// The stored result's winner and reason.
fn result_of(row: &GameRow) -> (Option<String>, String) {
    let result: serde_json::Value =
        serde_json::from_str(row.result.as_deref().expect("a result")).expect("JSON");
    (
        result["winner"].as_str().map(str::to_owned),
        result["reason"].as_str().expect("a reason").to_owned(),
    )
}

#[tokio::test]
async fn every_change_stores_the_deadline_it_leads_to() {
    let world = World::new();
    let node = world.node("a").await;
    let start = world.now();
    let (id, white, black) = world.game(&node, GameMode::Online, "1+0").await;
    let deadline = || world.store.stored_game(id).expect("stored").deadline_at;
    let after = |moment: UnixMs, seconds: u64| Some(moment.plus(Duration::from_secs(seconds)));
    // Each side's first move is due 30 s after its turn began.
    assert_eq!(deadline(), after(start, 30));

    play(&world, &node, id, [white.id, black.id], 0, &["e2e4"]).await;
    assert_eq!(deadline(), after(world.now(), 30));

    // From the second move on, white's minute runs.
    play(&world, &node, id, [white.id, black.id], 1, &["e7e5"]).await;
    assert_eq!(deadline(), after(world.now(), 60));

    let resigned = node
        .registry
        .command(id, Some(white.id), Command::Resign, world.now())
        .await;
    assert!(matches!(resigned, Ok(Some(Ok(_)))), "{resigned:?}");
    assert_eq!(deadline(), None, "an ended game has nothing to wait for");
}

#[tokio::test]
async fn the_sweeper_flags_a_game_nobody_hosts() {
    let world = World::new();
    let first = world.node("a").await;
    let (id, white, black) = world.game(&first, GameMode::Online, "1+0").await;
    play(
        &world,
        &first,
        id,
        [white.id, black.id],
        0,
        &["e2e4", "e7e5"],
    )
    .await;
    first.stop().await;
    // The server started again: it hosts nothing until asked.
    let node = world.node("a").await;
    assert_eq!(node.registry.live_games(), 0);

    world.clock.advance(59 * SECOND);
    within("a sweep", world.store.swept(world.now())).await;
    let row = world.store.stored_game(id).expect("stored");
    assert_eq!(row.status, GameStage::Playing, "flagged early");
    assert_eq!(node.registry.live_games(), 0, "loaded before its deadline");

    world.clock.advance(2 * SECOND);
    let flagged = within(
        "the flag",
        world
            .store
            .wait_for_game(id, |row| row.status == GameStage::Finished),
    )
    .await;
    assert_eq!(
        result_of(&flagged),
        (Some("black".to_owned()), "timeout".to_owned())
    );
    assert_eq!(flagged.deadline_at, None);
}

#[tokio::test]
async fn a_hosted_game_flags_on_time_and_its_connections_are_told() {
    let world = World::new();
    let node = world.node("a").await;
    let (id, white, black) = world.game(&node, GameMode::Online, "1+0").await;
    let mut on_black = node.viewer(id, Some(&black)).await;
    play(
        &world,
        &node,
        id,
        [white.id, black.id],
        0,
        &["e2e4", "e7e5"],
    )
    .await;
    assert_eq!(next_event(&mut on_black).await.0, 1);
    assert_eq!(next_event(&mut on_black).await.0, 2);

    world.clock.advance(61 * SECOND);

    let (version, kind) = next_event(&mut on_black).await;
    assert_eq!(version, 3);
    assert!(
        matches!(
            kind,
            EventKind::GameEnded {
                winner: Some(Color::Black),
                reason: EndReason::Timeout,
                ..
            }
        ),
        "{kind:?}"
    );
    let row = world.store.stored_game(id).expect("stored");
    assert_eq!((row.status, row.version), (GameStage::Finished, 3));
}

#[tokio::test]
async fn a_first_move_not_made_in_time_aborts_the_game() {
    let world = World::new();
    let node = world.node("a").await;
    let (id, _, _) = world.game(&node, GameMode::Online, "3+2").await;

    world.clock.advance(31 * SECOND);

    let aborted = within(
        "the abort",
        world
            .store
            .wait_for_game(id, |row| row.status == GameStage::Finished),
    )
    .await;
    assert_eq!(result_of(&aborted), (None, "aborted".to_owned()));
}
