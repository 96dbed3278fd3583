//! Class accounts: made by a club's leader all together or not at all, each
//! a member that must choose its password, and given a new handed-out one
//! only by the leaders of its club while it is a member.

use chess_store::Store;
use chess_store::accounts::Username;
use chess_store::classes::NewClassAccount;
use chess_store::clubs::{Admission, ClubError, ClubRow};
use chess_store::testing::TestDatabase;
use chess_store::{PasswordHash, on_both_stores};
use uuid::Uuid;

fn hash(tag: &str) -> PasswordHash {
    PasswordHash::from_stored(format!("$argon2id$v=19$m=64,t=1,p=1${tag}"))
}

async fn account(store: &Store, username: &str) -> Uuid {
    let id = Uuid::new_v4();
    let mut tx = store.begin().await.expect("begin");
    tx.sign_up(
        id,
        &Username::parse(username).expect("valid"),
        &hash("own"),
        1_000,
    )
    .await
    .expect("sign up");
    tx.start_session(Uuid::new_v4(), id, 1_000)
        .await
        .expect("session");
    tx.commit().await.expect("commit");
    id
}

async fn club_led_by(store: &Store, id: &str, leader: Uuid) {
    store
        .create_club(&ClubRow {
            id: id.to_owned(),
            name: id.to_owned(),
            description: String::new(),
            admission: Admission::Invitation,
            invite_code: Some("code".to_owned()),
            created_by: leader,
            created_at: 1_000,
        })
        .await
        .expect("club");
}

fn pupils(names: &[&str]) -> Vec<NewClassAccount> {
    names
        .iter()
        .map(|name| NewClassAccount {
            player_id: Uuid::new_v4(),
            username: Username::parse(name).expect("valid"),
            password_hash: hash(name),
        })
        .collect()
}

on_both_stores!(
    a_class_is_made_whole_as_members_that_must_choose_a_password,
    async |store: Store, _db: &TestDatabase| {
        let teacher = account(&store, "teacher").await;
        club_led_by(&store, "7b", teacher).await;
        let class = pupils(&["lions-aaaa", "lions-bbbb", "lions-cccc"]);
        store
            .create_class_accounts("7b", teacher, &class, 5_000)
            .await
            .expect("made");
        let made = store.class_accounts("7b").await.expect("read");
        let names: Vec<&str> = made.iter().map(|a| a.username.as_str()).collect();
        assert_eq!(names, ["lions-aaaa", "lions-bbbb", "lions-cccc"]);
        assert!(
            made.iter()
                .all(|a| a.must_change_password && a.created_at == 5_000)
        );
        let members = store.club_members("7b").await.expect("members");
        assert_eq!(members.len(), 4);
        let row = store
            .account_by_username(&Username::parse("LIONS-AAAA").expect("valid"))
            .await
            .expect("read")
            .expect("an account");
        assert!(row.must_change_password);
        assert_eq!(row.password_hash, hash("lions-aaaa"));

        // The pupil's own password ends the duty.
        let mut tx = store.begin().await.expect("begin");
        tx.set_password_hash(row.player_id, &hash("mine"), 6_000)
            .await
            .expect("set");
        tx.commit().await.expect("commit");
        let after = store
            .account_by_id(row.player_id)
            .await
            .expect("read")
            .expect("row");
        assert!(!after.must_change_password);
        // Accounts signed up the usual way never have it.
        let own = store
            .account_by_id(teacher)
            .await
            .expect("read")
            .expect("row");
        assert!(!own.must_change_password);
    }
);

on_both_stores!(
    one_taken_name_stores_none_of_the_class,
    async |store: Store, _db: &TestDatabase| {
        let teacher = account(&store, "teacher").await;
        account(&store, "Lions-Bbbb").await;
        club_led_by(&store, "7b", teacher).await;
        let class = pupils(&["lions-aaaa", "lions-bbbb", "lions-cccc"]);
        let refused = store
            .create_class_accounts("7b", teacher, &class, 5_000)
            .await;
        assert!(
            matches!(&refused, Err(ClubError::UsernameTaken(name)) if name == "lions-bbbb"),
            "{refused:?}"
        );
        assert!(store.class_accounts("7b").await.expect("read").is_empty());
        assert_eq!(store.club_members("7b").await.expect("members").len(), 1);
        let first = Username::parse("lions-aaaa").expect("valid");
        assert!(
            store
                .account_by_username(&first)
                .await
                .expect("read")
                .is_none()
        );
        // The same class with free names is made afterwards.
        store
            .create_class_accounts("7b", teacher, &pupils(&["lions-aaaa", "lions-dddd"]), 5_000)
            .await
            .expect("made");
        assert_eq!(store.class_accounts("7b").await.expect("read").len(), 2);
    }
);

on_both_stores!(
    only_a_leader_makes_a_class_and_resets_its_members,
    async |store: Store, _db: &TestDatabase| {
        let (teacher, pupil_leader) = (
            account(&store, "teacher").await,
            account(&store, "other").await,
        );
        club_led_by(&store, "7b", teacher).await;
        club_led_by(&store, "8c", pupil_leader).await;
        assert!(matches!(
            store
                .create_class_accounts("7b", pupil_leader, &pupils(&["x-aaaa"]), 5_000)
                .await,
            Err(ClubError::NotALeader)
        ));
        assert!(matches!(
            store
                .create_class_accounts("nope", teacher, &pupils(&["x-aaaa"]), 5_000)
                .await,
            Err(ClubError::NoSuchClub)
        ));
        let class = pupils(&["lions-aaaa"]);
        store
            .create_class_accounts("7b", teacher, &class, 5_000)
            .await
            .expect("made");
        let pupil = class[0].player_id;
        let session = Uuid::new_v4();
        let mut tx = store.begin().await.expect("begin");
        tx.set_password_hash(pupil, &hash("mine"), 6_000)
            .await
            .expect("own");
        tx.start_session(session, pupil, 6_000)
            .await
            .expect("session");
        tx.commit().await.expect("commit");

        // The other club's leader may not; the club's own leader may, and
        // the pupil's sessions end with it.
        assert!(matches!(
            store
                .reset_class_password("8c", pupil_leader, pupil, &hash("new"), 7_000)
                .await,
            Err(ClubError::NotInClass)
        ));
        assert!(matches!(
            store
                .reset_class_password("7b", pupil_leader, pupil, &hash("new"), 7_000)
                .await,
            Err(ClubError::NotALeader)
        ));
        store
            .reset_class_password("7b", teacher, pupil, &hash("new"), 7_000)
            .await
            .expect("reset");
        let row = store
            .account_by_id(pupil)
            .await
            .expect("read")
            .expect("row");
        assert!(row.must_change_password);
        assert_eq!(row.password_hash, hash("new"));
        assert!(!store.session_is_active(session, pupil).await.expect("read"));

        // An account that is not of the class, or has left the club, is not
        // the leaders' to reset.
        assert!(matches!(
            store
                .reset_class_password("7b", teacher, pupil_leader, &hash("new"), 7_000)
                .await,
            Err(ClubError::NotInClass)
        ));
        store
            .remove_club_member("7b", pupil, pupil)
            .await
            .expect("left");
        assert!(matches!(
            store
                .reset_class_password("7b", teacher, pupil, &hash("again"), 8_000)
                .await,
            Err(ClubError::NotInClass)
        ));
    }
);
