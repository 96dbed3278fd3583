//! Clubs: creation with a first leader, the three ways in, leaders' rights,
//! and a club that always keeps a leader, even when two step down at once.

use chess_store::PasswordHash;
use chess_store::Store;
use chess_store::accounts::Username;
use chess_store::clubs::{Admission, ClubError, ClubRow, Joined};
use chess_store::testing::TestDatabase;
use uuid::Uuid;

use chess_store::on_both_stores;

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

fn club(id: &str, name: &str, admission: Admission, created_by: Uuid) -> ClubRow {
    ClubRow {
        id: id.to_owned(),
        name: name.to_owned(),
        description: "Tuesday nights".to_owned(),
        admission,
        invite_code: (admission == Admission::Invitation).then(|| "s3cret".to_owned()),
        created_by,
        created_at: 2_000,
    }
}

fn names(members: &[chess_store::clubs::ClubMember]) -> Vec<(&str, bool)> {
    members
        .iter()
        .map(|member| (member.username.as_str(), member.leader))
        .collect()
}

on_both_stores!(
    a_new_club_has_its_creator_as_leader_and_a_unique_name,
    async |store: Store, _db: &TestDatabase| {
        let alice = account(&store, "Alice").await;
        let row = club("hastings", "Hastings CC", Admission::Open, alice);
        store.create_club(&row).await.expect("created");
        assert_eq!(store.club("hastings").await.expect("read"), Some(row));
        assert_eq!(
            names(&store.club_members("hastings").await.expect("members")),
            [("Alice", true)]
        );
        let again = club("hastings-2", "HASTINGS cc", Admission::Open, alice);
        assert!(matches!(
            store.create_club(&again).await,
            Err(ClubError::NameTaken)
        ));
        let same_id = club("hastings", "Other", Admission::Open, alice);
        assert!(matches!(
            store.create_club(&same_id).await,
            Err(ClubError::NameTaken)
        ));
        assert!(store.club("hastings-2").await.expect("read").is_none());
        assert_eq!(store.clubs_of(alice).await.expect("clubs").len(), 1);
    }
);

on_both_stores!(
    each_admission_lets_people_in_its_own_way,
    async |store: Store, _db: &TestDatabase| {
        let (alice, bob) = (account(&store, "Alice").await, account(&store, "Bob").await);
        for (id, admission) in [
            ("open", Admission::Open),
            ("asked", Admission::Request),
            ("invited", Admission::Invitation),
        ] {
            store
                .create_club(&club(id, id, admission, alice))
                .await
                .expect("created");
        }
        let join = |id: &'static str, code: Option<&'static str>| {
            let store = store.clone();
            async move { store.join_club(id, bob, code, "hello", 3_000).await }
        };
        assert_eq!(join("open", None).await.expect("joins"), Joined::Member);
        assert_eq!(
            join("open", None).await.expect("joins"),
            Joined::AlreadyMember
        );
        assert!(matches!(
            join("invited", Some("guess")).await,
            Err(ClubError::WrongInvitation)
        ));
        assert!(matches!(
            join("invited", None).await,
            Err(ClubError::WrongInvitation)
        ));
        assert_eq!(
            join("invited", Some("s3cret")).await.expect("joins"),
            Joined::Member
        );
        assert_eq!(join("asked", None).await.expect("asks"), Joined::Requested);
        assert_eq!(
            names(&store.club_members("asked").await.expect("members")),
            [("Alice", true)],
            "a request is not a membership"
        );
        let requests = store.club_requests("asked").await.expect("requests");
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].message, "hello");
        assert!(matches!(
            join("nowhere", None).await,
            Err(ClubError::NoSuchClub)
        ));

        // Only a leader answers; the answer removes the request.
        assert!(matches!(
            store
                .answer_club_request("asked", bob, bob, true, 4_000)
                .await,
            Err(ClubError::NotALeader)
        ));
        assert!(
            store
                .answer_club_request("asked", alice, bob, true, 4_000)
                .await
                .expect("accepted")
        );
        assert!(
            !store
                .answer_club_request("asked", alice, bob, true, 4_000)
                .await
                .expect("answered once"),
            "no request left to answer"
        );
        assert_eq!(
            names(&store.club_members("asked").await.expect("members")),
            [("Alice", true), ("Bob", false)]
        );
        assert!(
            store
                .club_requests("asked")
                .await
                .expect("requests")
                .is_empty()
        );
        assert_eq!(store.clubs_of(bob).await.expect("clubs").len(), 3);
    }
);

on_both_stores!(
    leaders_manage_members_and_a_club_keeps_a_leader,
    async |store: Store, _db: &TestDatabase| {
        let alice = account(&store, "Alice").await;
        let bob = account(&store, "Bob").await;
        let carol = account(&store, "Carol").await;
        store
            .create_club(&club("c", "C", Admission::Open, alice))
            .await
            .expect("created");
        for member in [bob, carol] {
            store
                .join_club("c", member, None, "", 3_000)
                .await
                .expect("joins");
        }
        // A member may not remove another, nor name leaders.
        assert!(matches!(
            store.remove_club_member("c", bob, carol).await,
            Err(ClubError::NotALeader)
        ));
        assert!(matches!(
            store.set_club_leader("c", bob, bob, true).await,
            Err(ClubError::NotALeader)
        ));
        // The only leader may neither leave nor step down.
        assert!(matches!(
            store.remove_club_member("c", alice, alice).await,
            Err(ClubError::LastLeader)
        ));
        assert!(matches!(
            store.set_club_leader("c", alice, alice, false).await,
            Err(ClubError::LastLeader)
        ));
        store
            .set_club_leader("c", alice, bob, true)
            .await
            .expect("Bob leads too");
        store
            .remove_club_member("c", bob, carol)
            .await
            .expect("a leader removes a member");
        assert!(matches!(
            store.remove_club_member("c", alice, carol).await,
            Err(ClubError::NotAMember)
        ));
        store
            .remove_club_member("c", alice, alice)
            .await
            .expect("with another leader, Alice may leave");
        assert_eq!(
            names(&store.club_members("c").await.expect("members")),
            [("Bob", true)]
        );
    }
);

on_both_stores!(
    two_leaders_stepping_down_at_once_leave_one,
    async |store: Store, _db: &TestDatabase| {
        let alice = account(&store, "Alice").await;
        let bob = account(&store, "Bob").await;
        store
            .create_club(&club("c", "C", Admission::Open, alice))
            .await
            .expect("created");
        store
            .join_club("c", bob, None, "", 3_000)
            .await
            .expect("joins");
        store
            .set_club_leader("c", alice, bob, true)
            .await
            .expect("two leaders");
        for _ in 0..5 {
            let (a, b) = tokio::join!(
                store.set_club_leader("c", alice, alice, false),
                store.set_club_leader("c", bob, bob, false),
            );
            assert_eq!(
                u8::from(a.is_ok()) + u8::from(b.is_ok()),
                1,
                "exactly one steps down: {a:?} {b:?}"
            );
            let leaders = store
                .club_members("c")
                .await
                .expect("members")
                .iter()
                .filter(|member| member.leader)
                .count();
            assert_eq!(leaders, 1);
            // Whoever is left leading names the other again.
            let (leader, other) = if a.is_ok() {
                (bob, alice)
            } else {
                (alice, bob)
            };
            store
                .set_club_leader("c", leader, other, true)
                .await
                .expect("two leaders again");
        }
    }
);
