//! The account tables: sign-up (a guest keeps their player id),
//! case-insensitive unique usernames, password changes and sessions.

use chess_live::{PlayerKind, PlayerRow};
use chess_store::PasswordHash;
use chess_store::accounts::Username;
use chess_store::{AccountRow, SignUpError, Store};
use uuid::Uuid;

use chess_store::on_both_stores;
use chess_store::testing::TestDatabase;

fn name(raw: &str) -> Username {
    Username::parse(raw).expect("a valid username")
}

fn hash(text: &str) -> PasswordHash {
    PasswordHash::from_stored(format!("$argon2id$v=19$m=64,t=1,p=1${text}"))
}

async fn guest(store: &Store) -> Uuid {
    let id = Uuid::new_v4();
    store
        .insert_player(&PlayerRow {
            id,
            kind: PlayerKind::Guest,
            name: "Brave Pawn".to_owned(),
            created_at: chess_live::UnixMs::from_millis(0),
            bot: false,
        })
        .await
        .expect("insert a guest");
    id
}

async fn player_kind_and_name(store: &Store, id: Uuid) -> (String, String) {
    let row = store
        .player(id)
        .await
        .expect("read the player")
        .expect("the player row");
    (row.kind.as_str().to_owned(), row.name)
}

async fn sign_up(store: &Store, id: Uuid, username: &str) -> Result<(), SignUpError> {
    let mut tx = store.begin().await.expect("begin");
    let result = tx.sign_up(id, &name(username), &hash("first"), 1_000).await;
    if result.is_ok() {
        tx.commit().await.expect("commit");
    }
    result
}

on_both_stores!(
    a_guest_who_signs_up_keeps_their_player_id,
    async |store: Store, _db: &TestDatabase| {
        let id = guest(&store).await;

        sign_up(&store, id, "Magnus").await.expect("sign up");

        assert_eq!(
            player_kind_and_name(&store, id).await,
            ("account".to_owned(), "Magnus".to_owned())
        );
        let found = store
            .account_by_username(&name("mAgNuS"))
            .await
            .expect("lookup");
        assert_eq!(
            found,
            Some(AccountRow {
                player_id: id,
                username: "Magnus".into(),
                password_hash: hash("first"),
                must_change_password: false,
            })
        );
        assert_eq!(store.account_by_id(id).await.expect("lookup"), found);
    }
);

on_both_stores!(
    a_new_visitor_can_sign_up_without_a_guest_row,
    async |store: Store, _db: &TestDatabase| {
        let id = Uuid::new_v4();
        sign_up(&store, id, "Hikaru").await.expect("sign up");
        assert_eq!(player_kind_and_name(&store, id).await.0, "account");
    }
);

on_both_stores!(
    usernames_are_unique_whatever_their_case,
    async |store: Store, _db: &TestDatabase| {
        sign_up(&store, guest(&store).await, "Magnus")
            .await
            .expect("first");
        let second = guest(&store).await;

        let taken = sign_up(&store, second, "MAGNUS").await;

        assert!(
            matches!(taken, Err(SignUpError::UsernameTaken)),
            "{taken:?}"
        );
        // Rolled back: the second player is still a guest.
        assert_eq!(player_kind_and_name(&store, second).await.0, "guest");
    }
);

on_both_stores!(
    an_account_cannot_sign_up_again,
    async |store: Store, _db: &TestDatabase| {
        let id = guest(&store).await;
        sign_up(&store, id, "Magnus").await.expect("first");
        let again = sign_up(&store, id, "Other").await;
        assert!(
            matches!(again, Err(SignUpError::AlreadyAnAccount)),
            "{again:?}"
        );
        assert_eq!(player_kind_and_name(&store, id).await.1, "Magnus");
    }
);

on_both_stores!(
    a_password_change_replaces_the_hash,
    async |store: Store, _db: &TestDatabase| {
        let id = guest(&store).await;
        sign_up(&store, id, "Magnus").await.expect("sign up");

        let mut tx = store.begin().await.expect("begin");
        tx.set_password_hash(id, &hash("second"), 2_000)
            .await
            .expect("change");
        tx.commit().await.expect("commit");

        let row = store
            .account_by_id(id)
            .await
            .expect("lookup")
            .expect("exists");
        assert_eq!(row.password_hash, hash("second"));
    }
);

on_both_stores!(
    sessions_end_one_by_one_or_all_but_the_current,
    async |store: Store, _db: &TestDatabase| {
        let id = guest(&store).await;
        sign_up(&store, id, "Magnus").await.expect("sign up");
        let (laptop, phone, tablet) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let mut tx = store.begin().await.expect("begin");
        for session in [laptop, phone, tablet] {
            tx.start_session(session, id, 1_000).await.expect("start");
        }
        tx.commit().await.expect("commit");

        let mut tx = store.begin().await.expect("begin");
        tx.end_session(laptop, 2_000).await.expect("sign out");
        tx.commit().await.expect("commit");
        assert!(!store.session_is_active(laptop, id).await.expect("check"));
        assert!(store.session_is_active(phone, id).await.expect("check"));

        let mut tx = store.begin().await.expect("begin");
        let ended = tx
            .end_other_sessions(id, Some(phone), 3_000)
            .await
            .expect("end");
        tx.commit().await.expect("commit");
        assert_eq!(ended, 1);
        assert!(store.session_is_active(phone, id).await.expect("check"));
        assert!(!store.session_is_active(tablet, id).await.expect("check"));
        assert!(
            !store
                .session_is_active(Uuid::new_v4(), id)
                .await
                .expect("check")
        );
    }
);

on_both_stores!(
    a_session_is_active_only_for_its_own_account,
    async |store: Store, _db: &TestDatabase| {
        let (magnus, hikaru) = (guest(&store).await, guest(&store).await);
        sign_up(&store, magnus, "Magnus").await.expect("sign up");
        sign_up(&store, hikaru, "Hikaru").await.expect("sign up");
        let session = Uuid::new_v4();
        let mut tx = store.begin().await.expect("begin");
        tx.start_session(session, hikaru, 1_000)
            .await
            .expect("start");
        tx.commit().await.expect("commit");

        assert!(
            store
                .session_is_active(session, hikaru)
                .await
                .expect("check")
        );
        assert!(
            !store
                .session_is_active(session, magnus)
                .await
                .expect("check")
        );
    }
);
