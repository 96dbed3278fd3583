//! The store's contract, run against SQLite and Postgres alike with a fresh
//! database per test and no server: what the layers above rely on.

mod accounts;
mod clubs;
mod games;
mod ledger;

/// Runs an async store test once per backend: `sqlite` and `postgres` tests
/// whose body, an async closure, gets a [`chess_store::Store`] on a fresh
/// database and the database itself (removed when the test ends).
#[macro_export]
macro_rules! on_both_stores {
    ($name:ident, $body:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                if let Some((store, db)) =
                    chess_store::testing::fresh_store(chess_store::testing::Backend::Sqlite).await
                {
                    ($body)(store, &db).await;
                }
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                if let Some((store, db)) =
                    chess_store::testing::fresh_store(chess_store::testing::Backend::Postgres).await
                {
                    ($body)(store, &db).await;
                }
            }
        }
    };
}
