//! Tournaments: who may create and join them, the lease that lets one node
//! at a time run each, pairings that commit with their games only under the
//! lease and never twice for a busy player, and pauses that two nodes
//! cannot lose between them.

use chess_live::{GameMode, GameRow, GameStage, UnixMs};
use chess_rules::ByColor;
use chess_store::Store;
use chess_store::accounts::Username;
use chess_store::clubs::{Admission, ClubRow};
use chess_store::testing::TestDatabase;
use chess_store::tournaments::{
    Listing, NewPairing, PauseRecord, TournamentError, TournamentRow, TournamentStatus,
};
use chess_store::{PasswordHash, on_both_stores};
use uuid::Uuid;

const LEASE_MS: i64 = 10_000;

async fn account(store: &Store, username: &str) -> Uuid {
    let id = Uuid::new_v4();
    let mut tx = store.begin().await.expect("begin");
    tx.sign_up(
        id,
        &Username::parse(username).expect("a valid username"),
        &PasswordHash::from_stored("$argon2id$v=19$m=64,t=1,p=1$x".to_owned()),
        1_000,
    )
    .await
    .expect("sign up");
    tx.commit().await.expect("commit");
    id
}

fn arena(id: &str, created_by: Uuid, starts_at: i64) -> TournamentRow {
    TournamentRow {
        id: id.to_owned(),
        name: format!("{id} arena"),
        created_by,
        club_id: None,
        clock_base_s: 60,
        clock_increment_s: 0,
        starts_at,
        ends_at: starts_at + 600_000,
        rated: true,
        berserkable: true,
        streaks: true,
        min_rating: None,
        max_rating: None,
        status: TournamentStatus::Created,
        created_at: 1_000,
    }
}

fn pairing(white: Uuid, black: Uuid, at: i64) -> NewPairing {
    let at = UnixMs::from_stored(at);
    NewPairing {
        game: GameRow {
            id: Uuid::new_v4(),
            mode: GameMode::Online,
            white_id: Some(white),
            black_id: Some(black),
            computer_level: None,
            time_control: r#"{"kind":"clock","initial_ms":60000,"increment_ms":0}"#.to_owned(),
            status: GameStage::Playing,
            result: None,
            state: "{}".to_owned(),
            version: 0,
            rematch_of: None,
            rematch_id: None,
            created_at: at,
            updated_at: at,
            deadline_at: None,
            recent_events: "[]".to_owned(),
            premove_nodes: ByColor::default(),
        },
        white,
        black,
    }
}

/// Ends `game` as a white win after `plies` moves, at `at`.
async fn finish_game(db: &TestDatabase, game: Uuid, plies: i64, at: i64) {
    for ply in 0..plies {
        db.raw(&format!(
            "insert into moves (game_id, ply, uci, san, record, played_at) \
             values ('{game}', {ply}, 'e2e4', 'e4', '{{}}', {at})"
        ))
        .await
        .expect("a move");
    }
    db.raw(&format!(
        "update games set status = 'finished', \
         result = '{{\"winner\":\"white\",\"reason\":\"resign\"}}', updated_at = {at} \
         where id = '{game}'"
    ))
    .await
    .expect("the ending");
}

on_both_stores!(
    tournaments_are_listed_by_stage_and_club,
    async |store: Store, _db: &TestDatabase| {
        let alice = account(&store, "Alice").await;
        let soon = arena("soon", alice, 50_000);
        let later = arena("later", alice, 90_000);
        store.create_tournament(&later).await.expect("created");
        store.create_tournament(&soon).await.expect("created");
        assert!(matches!(
            store.create_tournament(&soon).await,
            Err(TournamentError::IdTaken)
        ));
        assert_eq!(
            store.tournament("soon").await.expect("read"),
            Some(soon.clone())
        );
        let upcoming = store
            .tournaments(Listing::Upcoming, None, 10)
            .await
            .expect("listed");
        assert_eq!(upcoming, [soon.clone(), later.clone()], "soonest first");
        assert_eq!(
            store
                .tournaments(Listing::Upcoming, None, 1)
                .await
                .expect("listed"),
            std::slice::from_ref(&soon)
        );
        assert!(
            store
                .tournaments(Listing::Running, None, 10)
                .await
                .expect("listed")
                .is_empty()
        );

        store
            .create_club(&ClubRow {
                id: "hastings".to_owned(),
                name: "Hastings".to_owned(),
                description: String::new(),
                admission: Admission::Open,
                invite_code: None,
                created_by: alice,
                created_at: 1_000,
            })
            .await
            .expect("club");
        let club_arena = TournamentRow {
            club_id: Some("hastings".to_owned()),
            ..arena("club-night", alice, 70_000)
        };
        store
            .create_tournament(&club_arena)
            .await
            .expect("a leader creates it");
        assert_eq!(
            store
                .tournaments(Listing::Upcoming, Some("hastings"), 10)
                .await
                .expect("listed"),
            [club_arena]
        );
        let bob = account(&store, "Bob").await;
        let not_his = TournamentRow {
            club_id: Some("hastings".to_owned()),
            ..arena("bobs", bob, 70_000)
        };
        assert!(matches!(
            store.create_tournament(&not_his).await,
            Err(TournamentError::NotAClubLeader)
        ));
        assert_eq!(store.tournament("bobs").await.expect("read"), None);
    }
);

on_both_stores!(
    joining_checks_the_club_and_the_rating_range,
    async |store: Store, _db: &TestDatabase| {
        let alice = account(&store, "Alice").await;
        let bob = account(&store, "Bob").await;
        store
            .create_club(&ClubRow {
                id: "school".to_owned(),
                name: "School".to_owned(),
                description: String::new(),
                admission: Admission::Request,
                invite_code: None,
                created_by: alice,
                created_at: 1_000,
            })
            .await
            .expect("club");
        let class = TournamentRow {
            club_id: Some("school".to_owned()),
            min_rating: Some(1200),
            max_rating: Some(1800),
            ..arena("class", alice, 50_000)
        };
        store.create_tournament(&class).await.expect("created");
        assert!(matches!(
            store.join_tournament("class", bob, 1500, 2_000).await,
            Err(TournamentError::NotAClubMember)
        ));
        assert!(matches!(
            store.join_tournament("class", alice, 1199, 2_000).await,
            Err(TournamentError::RatingOutOfRange)
        ));
        assert!(matches!(
            store.join_tournament("class", alice, 1801, 2_000).await,
            Err(TournamentError::RatingOutOfRange)
        ));
        assert!(matches!(
            store.join_tournament("nowhere", alice, 1500, 2_000).await,
            Err(TournamentError::NoSuchTournament)
        ));
        store
            .join_tournament("class", alice, 1800, 2_000)
            .await
            .expect("joined");
        store
            .join_tournament("class", alice, 1800, 3_000)
            .await
            .expect("twice is once");
        let players = store.tournament_players("class").await.expect("players");
        assert_eq!(players.len(), 1);
        assert_eq!(
            (
                players[0].username.as_str(),
                players[0].rating,
                players[0].joined_at
            ),
            ("Alice", 1800, 2_000)
        );
        assert_eq!(players[0].pauses, PauseRecord::default());
    }
);

on_both_stores!(
    withdrawing_before_the_start_leaves_no_entry_after_it_keeps_one,
    async |store: Store, _db: &TestDatabase| {
        let alice = account(&store, "Alice").await;
        let node = Uuid::new_v4();
        store
            .create_tournament(&arena("weekly", alice, 50_000))
            .await
            .expect("created");
        store
            .join_tournament("weekly", alice, 1500, 2_000)
            .await
            .expect("joined");
        assert!(
            store
                .withdraw_from_tournament("weekly", alice)
                .await
                .expect("withdrew")
        );
        assert!(
            store
                .tournament_players("weekly")
                .await
                .expect("players")
                .is_empty()
        );
        assert!(
            !store
                .withdraw_from_tournament("weekly", alice)
                .await
                .expect("not in it")
        );

        store
            .join_tournament("weekly", alice, 1500, 3_000)
            .await
            .expect("joined");
        store
            .claim_tournaments(node, 50_000, LEASE_MS)
            .await
            .expect("claimed");
        assert!(
            store
                .start_tournament("weekly", node, 50_000)
                .await
                .expect("started")
        );
        assert!(
            !store
                .start_tournament("weekly", node, 50_001)
                .await
                .expect("once")
        );
        assert!(
            store
                .withdraw_from_tournament("weekly", alice)
                .await
                .expect("withdrew")
        );
        let players = store.tournament_players("weekly").await.expect("players");
        assert!(players[0].withdrawn, "kept, withdrawn");
        store
            .join_tournament("weekly", alice, 1500, 60_000)
            .await
            .expect("back");
        let players = store.tournament_players("weekly").await.expect("players");
        assert!(!players[0].withdrawn);
        assert_eq!(players[0].joined_at, 3_000, "the first entry stands");
    }
);

on_both_stores!(
    one_node_at_a_time_holds_a_tournament,
    async |store: Store, _db: &TestDatabase| {
        let alice = account(&store, "Alice").await;
        let (first, second) = (Uuid::new_v4(), Uuid::new_v4());
        store
            .create_tournament(&arena("due", alice, 50_000))
            .await
            .expect("created");
        store
            .create_tournament(&arena("later", alice, 90_000))
            .await
            .expect("created");

        assert!(
            store
                .claim_tournaments(first, 49_999, LEASE_MS)
                .await
                .expect("claim")
                .is_empty()
        );
        let ids = |rows: Vec<TournamentRow>| rows.into_iter().map(|row| row.id).collect::<Vec<_>>();
        assert_eq!(
            ids(store
                .claim_tournaments(first, 50_000, LEASE_MS)
                .await
                .expect("claim")),
            ["due"]
        );
        assert!(
            store
                .claim_tournaments(second, 55_000, LEASE_MS)
                .await
                .expect("claim")
                .is_empty(),
            "held by the first node"
        );
        assert_eq!(
            ids(store
                .claim_tournaments(first, 58_000, LEASE_MS)
                .await
                .expect("renew")),
            ["due"],
            "the holder renews"
        );
        // The first node stops renewing (it died): once its lease has run
        // out, the second takes over and the first can no longer act.
        assert!(
            store
                .claim_tournaments(second, 68_000, LEASE_MS)
                .await
                .expect("claim")
                .is_empty()
        );
        assert_eq!(
            ids(store
                .claim_tournaments(second, 68_001, LEASE_MS)
                .await
                .expect("claim")),
            ["due"]
        );
        assert!(matches!(
            store.start_tournament("due", first, 68_002).await,
            Err(TournamentError::LeaseLost)
        ));
        assert!(
            store
                .start_tournament("due", second, 68_002)
                .await
                .expect("started")
        );
        // A node that shuts down hands over at once.
        store
            .release_tournament("due", second)
            .await
            .expect("released");
        assert_eq!(
            ids(store
                .claim_tournaments(first, 68_003, LEASE_MS)
                .await
                .expect("claim")),
            ["due"]
        );
        assert_eq!(
            store
                .tournament("due")
                .await
                .expect("read")
                .map(|row| row.status),
            Some(TournamentStatus::Started)
        );
    }
);

on_both_stores!(
    two_nodes_claiming_at_once_never_both_win,
    async |store: Store, _db: &TestDatabase| {
        let alice = account(&store, "Alice").await;
        for index in 0..8 {
            store
                .create_tournament(&arena(&format!("t{index}"), alice, 50_000))
                .await
                .expect("created");
        }
        let nodes: Vec<Uuid> = (0..4).map(|_| Uuid::new_v4()).collect();
        let claims = nodes.iter().map(|&node| {
            let store = store.clone();
            tokio::spawn(async move { store.claim_tournaments(node, 60_000, LEASE_MS).await })
        });
        let mut claimed: Vec<String> = Vec::new();
        for claim in claims {
            let rows = claim.await.expect("joined").expect("claimed");
            claimed.extend(rows.into_iter().map(|row| row.id));
        }
        claimed.sort();
        let all: Vec<String> = (0..8).map(|index| format!("t{index}")).collect();
        assert_eq!(claimed, all, "each tournament claimed by exactly one node");
    }
);

on_both_stores!(
    a_pass_commits_with_its_games_and_never_pairs_a_busy_player,
    async |store: Store, db: &TestDatabase| {
        let alice = account(&store, "Alice").await;
        let bob = account(&store, "Bob").await;
        let carol = account(&store, "Carol").await;
        let dave = account(&store, "Dave").await;
        let node = Uuid::new_v4();
        store
            .create_tournament(&arena("weekly", alice, 50_000))
            .await
            .expect("created");
        store
            .claim_tournaments(node, 50_000, LEASE_MS)
            .await
            .expect("claimed");

        let early = [pairing(alice, bob, 50_000)];
        assert!(
            matches!(
                store
                    .pair_tournament_games("weekly", node, 50_000, &early)
                    .await,
                Err(TournamentError::LeaseLost)
            ),
            "not before the start"
        );
        store
            .start_tournament("weekly", node, 50_000)
            .await
            .expect("started");
        let pass = [pairing(alice, bob, 51_000), pairing(carol, dave, 51_000)];
        store
            .pair_tournament_games("weekly", node, 51_000, &pass)
            .await
            .expect("paired");
        let games = store.tournament_games("weekly").await.expect("games");
        assert_eq!(games.len(), 2);
        assert!(games.iter().all(|game| !game.finished && game.plies == 0));
        assert_eq!(
            store
                .tournament_of_game(pass[0].game.id)
                .await
                .expect("read")
                .as_deref(),
            Some("weekly")
        );
        let stored = store
            .game(pass[1].game.id)
            .await
            .expect("read")
            .expect("stored");
        assert_eq!(stored, pass[1].game, "the game is stored as given");

        // Alice and Bob's game is over, Carol and Dave's is not: a pass
        // pairing all four writes nothing at all, not even Alice's game.
        finish_game(db, pass[0].game.id, 25, 80_000).await;
        store
            .claim_tournaments(node, 80_000, LEASE_MS)
            .await
            .expect("renewed");
        let repeated = [pairing(alice, bob, 81_000), pairing(carol, dave, 81_000)];
        let refused = store
            .pair_tournament_games("weekly", node, 81_000, &repeated)
            .await;
        assert!(
            matches!(refused, Err(TournamentError::PlayerBusy)),
            "{refused:?}"
        );
        assert_eq!(
            store.tournament_games("weekly").await.expect("games").len(),
            2
        );
        assert_eq!(store.game(repeated[0].game.id).await.expect("read"), None);

        let next = [pairing(bob, alice, 81_000)];
        store
            .pair_tournament_games("weekly", node, 81_000, &next)
            .await
            .expect("paired");
        let games = store.tournament_games("weekly").await.expect("games");
        assert_eq!(games.len(), 3);
        let first = &games
            .iter()
            .find(|game| game.game_id == pass[0].game.id)
            .expect("there");
        assert!(first.finished);
        assert_eq!(
            (first.white, first.black, first.plies, first.updated_at),
            (alice, bob, 25, 80_000)
        );
        assert!(
            first
                .result
                .as_deref()
                .is_some_and(|result| result.contains("white"))
        );

        // Another node, lease lost: nothing.
        let other = Uuid::new_v4();
        assert!(matches!(
            store
                .pair_tournament_games("weekly", other, 81_000, &[pairing(carol, dave, 81_000)])
                .await,
            Err(TournamentError::LeaseLost)
        ));
    }
);

on_both_stores!(
    pauses_from_two_nodes_at_once_both_count,
    async |store: Store, _db: &TestDatabase| {
        let alice = account(&store, "Alice").await;
        store
            .create_tournament(&arena("weekly", alice, 50_000))
            .await
            .expect("created");
        store
            .join_tournament("weekly", alice, 1500, 2_000)
            .await
            .expect("joined");
        let pause_at = |now: i64| {
            move |stored: PauseRecord| PauseRecord {
                count: stored.count + 1,
                last_at: Some(now),
                until: Some(now + 10_000 * (stored.count + 1)),
            }
        };
        let tasks: Vec<_> = (0..2)
            .map(|index| {
                let store = store.clone();
                tokio::spawn(async move {
                    store
                        .pause_tournament_player("weekly", alice, pause_at(60_000 + index))
                        .await
                })
            })
            .collect();
        for task in tasks {
            task.await.expect("joined").expect("paused");
        }
        let players = store.tournament_players("weekly").await.expect("players");
        assert_eq!(players[0].pauses.count, 2, "neither pause lost");
        let bob = Uuid::new_v4();
        assert!(matches!(
            store
                .pause_tournament_player("weekly", bob, pause_at(70_000))
                .await,
            Err(TournamentError::NotAPlayer)
        ));
    }
);

on_both_stores!(
    only_the_organiser_terminates_and_then_nothing_moves,
    async |store: Store, _db: &TestDatabase| {
        let alice = account(&store, "Alice").await;
        let bob = account(&store, "Bob").await;
        let node = Uuid::new_v4();
        store
            .create_tournament(&arena("weekly", alice, 50_000))
            .await
            .expect("created");
        store
            .join_tournament("weekly", alice, 1500, 2_000)
            .await
            .expect("joined");
        store
            .claim_tournaments(node, 50_000, LEASE_MS)
            .await
            .expect("claimed");
        store
            .start_tournament("weekly", node, 50_000)
            .await
            .expect("started");
        assert!(matches!(
            store.terminate_tournament("weekly", bob, 60_000).await,
            Err(TournamentError::NotTheOrganiser)
        ));
        assert!(
            store
                .terminate_tournament("weekly", alice, 60_000)
                .await
                .expect("ended")
        );
        assert!(
            !store
                .terminate_tournament("weekly", alice, 61_000)
                .await
                .expect("once")
        );
        let ended = store
            .tournament("weekly")
            .await
            .expect("read")
            .expect("there");
        assert_eq!(
            (ended.status, ended.ends_at),
            (TournamentStatus::Finished, 60_000)
        );
        assert!(matches!(
            store.join_tournament("weekly", bob, 1500, 62_000).await,
            Err(TournamentError::Finished)
        ));
        assert!(
            store
                .claim_tournaments(node, 62_000, LEASE_MS)
                .await
                .expect("claim")
                .is_empty(),
            "a finished tournament is nobody's"
        );
        assert!(matches!(
            store.finish_tournament("weekly", node, 62_000).await,
            Err(TournamentError::LeaseLost)
        ));
        assert_eq!(
            store
                .tournaments(Listing::Finished, None, 10)
                .await
                .expect("listed"),
            std::slice::from_ref(&ended)
        );
        assert_eq!(
            store.tournaments_of(alice, 10).await.expect("listed"),
            [ended]
        );
        assert_eq!(store.tournaments_of(bob, 10).await.expect("listed"), []);
    }
);

on_both_stores!(
    presence_is_written_at_most_every_few_seconds_and_only_for_players_of_a_live_arena,
    async |store: Store, _db: &TestDatabase| {
        let store = &store;
        let organiser = account(store, "Organiser").await;
        let alice = account(store, "Alice").await;
        let bob = account(store, "Bob").await;
        store
            .create_tournament(&arena("live", organiser, 50_000))
            .await
            .expect("created");
        store
            .join_tournament("live", alice, 1500, 2_000)
            .await
            .expect("joined");
        store
            .join_tournament("live", bob, 1500, 2_000)
            .await
            .expect("joined");
        let seen = |players: Vec<chess_store::tournaments::TournamentPlayer>, who: Uuid| {
            players
                .into_iter()
                .find(|player| player.player_id == who)
                .expect("a player")
                .seen_at
        };
        assert_eq!(
            seen(store.tournament_players("live").await.unwrap(), alice),
            None
        );

        assert!(
            store
                .mark_tournament_presence("live", alice, 10_000)
                .await
                .unwrap()
        );
        assert!(
            !store
                .mark_tournament_presence("live", alice, 12_000)
                .await
                .unwrap(),
            "written lately: no write"
        );
        assert_eq!(
            seen(store.tournament_players("live").await.unwrap(), alice),
            Some(10_000)
        );
        assert!(
            store
                .mark_tournament_presence("live", alice, 15_000)
                .await
                .unwrap()
        );
        assert_eq!(
            seen(store.tournament_players("live").await.unwrap(), alice),
            Some(15_000)
        );
        assert_eq!(
            seen(store.tournament_players("live").await.unwrap(), bob),
            None,
            "only Alice"
        );

        assert!(
            !store
                .mark_tournament_presence("live", organiser, 20_000)
                .await
                .unwrap(),
            "not a player"
        );
        assert!(store.withdraw_from_tournament("live", bob).await.unwrap());
        assert!(
            !store
                .mark_tournament_presence("live", bob, 20_000)
                .await
                .unwrap(),
            "withdrew before the start: no entry"
        );
        store
            .terminate_tournament("live", organiser, 30_000)
            .await
            .expect("ended");
        assert!(
            !store
                .mark_tournament_presence("live", alice, 40_000)
                .await
                .unwrap(),
            "the arena is over"
        );
    }
);
