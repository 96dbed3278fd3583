//! Every refused command gets a stable code (`Refusal::code`) and changes
//! nothing: not the held game, not the stored one, not what connections
//! are shown; and the game goes on serving.

use chess_live::{Applied, Command, Freshness, GameMode, PlayerRow};
use uuid::Uuid;

use crate::helpers::{Node, World, mv, premove, waiting_events};

/// Runs each `(player, command, code)` of `table` in game `id` and checks
/// it is refused with `code` and changes nothing.
async fn refused_alike(
    world: &World,
    node: &Node,
    id: Uuid,
    table: &[(Option<&PlayerRow>, Command, &str)],
) {
    let mut watcher = node.viewer(id, None).await;
    let stored = world.store.stored_game(id).expect("stored");
    let batches = world.store.batches();
    let held = node.registry.snapshot(id, Freshness::Held).await;
    let held = held.expect("served").expect("the game");
    for (player, command, code) in table {
        let answer = node
            .registry
            .command(id, player.map(|p| p.id), command.clone(), world.now())
            .await;
        let refusal = answer.expect("served").expect("the game").expect_err(code);
        assert_eq!(refusal.code(), *code, "{command:?}");
    }
    assert_eq!(world.store.stored_game(id).as_ref(), Some(&stored));
    assert_eq!(world.store.batches(), batches, "a refusal wrote something");
    let after = node.registry.snapshot(id, Freshness::Held).await;
    let after = after.expect("served").expect("the game");
    assert_eq!(
        (after.version, &after.moves, &after.situation),
        (held.version, &held.moves, &held.situation)
    );
    assert!(waiting_events(&mut watcher).await.is_empty());
}

#[tokio::test]
async fn refused_commands_get_their_stable_code_and_change_nothing() {
    let world = World::new();
    let node = world.node("a").await;
    let (id, white, black) = world.game(&node, GameMode::Online, "3+2").await;
    let (white, black) = (Some(&white), Some(&black));

    refused_alike(
        &world,
        &node,
        id,
        &[
            (None, mv("e2e4", 0), "not_a_player"),
            (black, mv("e7e5", 0), "not_your_turn"),
            (white, mv("e2e5", 0), "illegal_move"),
            (white, mv("e2e4", 3), "wrong_ply"),
            (white, premove("e2e4"), "premove_on_own_turn"),
            (black, Command::CancelPremove, "no_premove"),
            (white, Command::DrawOffer, "draw_offer_too_early"),
            (black, Command::DrawAccept, "no_draw_offer"),
            (white, Command::Resign, "resign_not_allowed_yet"),
            (white, Command::RematchOffer, "game_not_over"),
            (white, Command::Takeback, "takeback_not_allowed"),
        ],
    )
    .await;

    // Still served: the next good command is the game's first change.
    let played = node
        .registry
        .command(id, white.map(|p| p.id), mv("e2e4", 0), world.now())
        .await;
    assert!(
        matches!(
            played,
            Ok(Some(Ok(Applied::Ack {
                ply: 0,
                version: 1,
                ..
            })))
        ),
        "{played:?}"
    );
}

#[tokio::test]
async fn commands_a_game_does_not_take_get_their_stable_code_and_change_nothing() {
    let world = World::new();
    let node = world.node("a").await;
    let alice = world.player(&node, "alice").await;
    let challenge = node
        .create(GameMode::Online, "3+2", Some(alice.clone()), None)
        .await;
    refused_alike(
        &world,
        &node,
        challenge,
        &[(Some(&alice), mv("e2e4", 0), "not_started")],
    )
    .await;

    let local = node
        .create(
            GameMode::Local,
            "3+2",
            Some(alice.clone()),
            Some(alice.clone()),
        )
        .await;
    refused_alike(
        &world,
        &node,
        local,
        &[
            (Some(&alice), premove("e7e5"), "not_online"),
            (Some(&alice), Command::DrawOffer, "not_online"),
        ],
    )
    .await;
}
