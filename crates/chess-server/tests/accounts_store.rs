//! The account tables on SQLite and Postgres: sign-up (a guest keeps their
//! player id), case-insensitive unique usernames, password changes and
//! sessions. The same tests run on both back-ends through one macro.

mod support;

use chess_server::accounts::password::PasswordHash;
use chess_server::accounts::store::{AccountRow, SignUpError};
use chess_server::accounts::username::Username;
use support::{Pooled, PostgresDb, SqliteDb};
use uuid::Uuid;

fn name(raw: &str) -> Username {
    Username::parse(raw).expect("a valid username")
}

fn hash(text: &str) -> PasswordHash {
    PasswordHash::from_stored(format!("$argon2id$v=19$m=64,t=1,p=1${text}"))
}

macro_rules! account_store_tests {
    ($backend:ident, $db:expr, $queries:path) => {
        mod $backend {
            use super::*;
            use $queries as accounts;

            async fn guest(pool: &<Db as Pooled>::Pool) -> Uuid {
                let id = Uuid::new_v4();
                sqlx::query("insert into players (id, kind, name, created_at) values ($1, 'guest', 'Brave Pawn', 0)")
                    .bind(id.to_string())
                    .execute(pool)
                    .await
                    .expect("insert a guest");
                id
            }

            async fn player_kind_and_name(pool: &<Db as Pooled>::Pool, id: Uuid) -> (String, String) {
                sqlx::query_as("select kind, name from players where id = $1")
                    .bind(id.to_string())
                    .fetch_one(pool)
                    .await
                    .expect("the player row")
            }

            async fn sign_up(pool: &<Db as Pooled>::Pool, id: Uuid, username: &str) -> Result<(), SignUpError> {
                let mut tx = pool.begin().await.expect("begin");
                let result = accounts::sign_up(&mut tx, id, &name(username), &hash("first"), 1_000).await;
                if result.is_ok() {
                    tx.commit().await.expect("commit");
                }
                result
            }

            #[tokio::test]
            async fn a_guest_who_signs_up_keeps_their_player_id() {
                let Some(db) = $db else { return };
                let id = guest(&db.pool).await;

                sign_up(&db.pool, id, "Magnus").await.expect("sign up");

                assert_eq!(
                    player_kind_and_name(&db.pool, id).await,
                    ("account".to_owned(), "Magnus".to_owned())
                );
                let mut conn = db.pool.acquire().await.expect("a connection");
                let found = accounts::by_username(&mut conn, &name("mAgNuS")).await.expect("lookup");
                assert_eq!(
                    found,
                    Some(AccountRow { player_id: id, username: "Magnus".into(), password_hash: hash("first") })
                );
                assert_eq!(accounts::by_id(&mut conn, id).await.expect("lookup"), found);
            }

            #[tokio::test]
            async fn a_new_visitor_can_sign_up_without_a_guest_row() {
                let Some(db) = $db else { return };
                let id = Uuid::new_v4();
                sign_up(&db.pool, id, "Hikaru").await.expect("sign up");
                assert_eq!(player_kind_and_name(&db.pool, id).await.0, "account");
            }

            #[tokio::test]
            async fn usernames_are_unique_whatever_their_case() {
                let Some(db) = $db else { return };
                sign_up(&db.pool, guest(&db.pool).await, "Magnus").await.expect("first");
                let second = guest(&db.pool).await;

                let taken = sign_up(&db.pool, second, "MAGNUS").await;

                assert!(matches!(taken, Err(SignUpError::UsernameTaken)), "{taken:?}");
                // Rolled back: the second player is still a guest.
                assert_eq!(player_kind_and_name(&db.pool, second).await.0, "guest");
            }

            #[tokio::test]
            async fn an_account_cannot_sign_up_again() {
                let Some(db) = $db else { return };
                let id = guest(&db.pool).await;
                sign_up(&db.pool, id, "Magnus").await.expect("first");
                let again = sign_up(&db.pool, id, "Other").await;
                assert!(matches!(again, Err(SignUpError::AlreadyAnAccount)), "{again:?}");
                assert_eq!(player_kind_and_name(&db.pool, id).await.1, "Magnus");
            }

            #[tokio::test]
            async fn a_password_change_replaces_the_hash() {
                let Some(db) = $db else { return };
                let id = guest(&db.pool).await;
                sign_up(&db.pool, id, "Magnus").await.expect("sign up");
                let mut conn = db.pool.acquire().await.expect("a connection");

                accounts::set_password_hash(&mut conn, id, &hash("second"), 2_000).await.expect("change");

                let row = accounts::by_id(&mut conn, id).await.expect("lookup").expect("exists");
                assert_eq!(row.password_hash, hash("second"));
            }

            #[tokio::test]
            async fn sessions_end_one_by_one_or_all_but_the_current() {
                let Some(db) = $db else { return };
                let id = guest(&db.pool).await;
                sign_up(&db.pool, id, "Magnus").await.expect("sign up");
                let mut conn = db.pool.acquire().await.expect("a connection");
                let (laptop, phone, tablet) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
                for session in [laptop, phone, tablet] {
                    accounts::start_session(&mut conn, session, id, 1_000).await.expect("start");
                }

                accounts::end_session(&mut conn, laptop, 2_000).await.expect("sign out");
                assert!(!accounts::session_is_active(&mut conn, laptop, id).await.expect("check"));
                assert!(accounts::session_is_active(&mut conn, phone, id).await.expect("check"));

                let ended = accounts::end_other_sessions(&mut conn, id, Some(phone), 3_000).await.expect("end");
                assert_eq!(ended, 1);
                assert!(accounts::session_is_active(&mut conn, phone, id).await.expect("check"));
                assert!(!accounts::session_is_active(&mut conn, tablet, id).await.expect("check"));
                assert!(!accounts::session_is_active(&mut conn, Uuid::new_v4(), id).await.expect("check"));
            }

            #[tokio::test]
            async fn a_session_is_active_only_for_its_own_account() {
                let Some(db) = $db else { return };
                let (magnus, hikaru) = (guest(&db.pool).await, guest(&db.pool).await);
                sign_up(&db.pool, magnus, "Magnus").await.expect("sign up");
                sign_up(&db.pool, hikaru, "Hikaru").await.expect("sign up");
                let mut conn = db.pool.acquire().await.expect("a connection");
                let session = Uuid::new_v4();
                accounts::start_session(&mut conn, session, hikaru, 1_000).await.expect("start");

                assert!(accounts::session_is_active(&mut conn, session, hikaru).await.expect("check"));
                assert!(!accounts::session_is_active(&mut conn, session, magnus).await.expect("check"));
            }
        }
    };
}

mod on_sqlite {
    use super::*;
    type Db = SqliteDb;
    account_store_tests!(
        accounts,
        Some(SqliteDb::new().await),
        chess_server::accounts::store::sqlite
    );
}

mod on_postgres {
    use super::*;
    type Db = PostgresDb;
    account_store_tests!(
        accounts,
        PostgresDb::new().await,
        chess_server::accounts::store::postgres
    );
}
