//! Databases for tests and tools (feature `testing`): a fresh SQLite file or
//! Postgres database per test, removed when it ends, and a raw connection of
//! the test's own beside the [`Store`]'s, to audit the tables, tamper with
//! them as a careless hand would, hold a lock or cut the server's
//! connections. Everything here speaks SQL, so it lives with the store:
//! the crates above it (the server, its tests, the tools) name no driver.

use sqlx::{Column as _, Connection as _, Row as _, TypeInfo as _};
use uuid::Uuid;

use crate::{Result, Store};

/// Runs an async store test once per backend: `sqlite` and `postgres` tests
/// whose body, an async closure, gets a [`Store`] on a fresh database and
/// the database itself (removed when the test ends).
#[macro_export]
macro_rules! on_both_stores {
    ($name:ident, $body:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                if let Some((store, db)) =
                    $crate::testing::fresh_store($crate::testing::Backend::Sqlite).await
                {
                    ($body)(store, &db).await;
                }
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                if let Some((store, db)) =
                    $crate::testing::fresh_store($crate::testing::Backend::Postgres).await
                {
                    ($body)(store, &db).await;
                }
            }
        }
    };
}

/// A row read by [`Connection::rows`]: each column as text, `None` for NULL.
pub type TextRow = Vec<Option<String>>;

/// Which database a test runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A database made for one test, removed when the test ends.
#[derive(Debug)]
pub struct TestDatabase {
    pub url: String,
    backend: Backend,
    /// Postgres: the admin URL and the database's name, to drop it.
    postgres: Option<(String, String)>,
    /// SQLite: the folder holding the file.
    folder: Option<std::path::PathBuf>,
}

/// A [`Store`] (connected and migrated like the server's) on a fresh
/// database for `backend`; `None` when Postgres tests are skipped on purpose.
///
/// # Panics
/// As [`fresh_database`], and when the store cannot connect or migrate.
pub async fn fresh_store(backend: Backend) -> Option<(Store, TestDatabase)> {
    let db = fresh_database(backend).await?;
    let store = crate::connect(&db.url)
        .await
        .expect("connects and migrates");
    Some((store, db))
}

/// A fresh, empty database for `backend`, or `None` when Postgres tests are
/// skipped on purpose (`CHESS_SKIP_POSTGRES_TESTS=1`). Postgres is the
/// server at `TEST_POSTGRES_URL` (an admin URL; by default the local
/// `postgres://postgres@127.0.0.1:5432/postgres`).
///
/// # Panics
/// When Postgres is unreachable and the skip variable is not set: a test
/// that silently did not run would pass.
pub async fn fresh_database(backend: Backend) -> Option<TestDatabase> {
    match backend {
        Backend::Sqlite => {
            let folder = std::env::temp_dir().join(format!("chess-test-{}", Uuid::new_v4()));
            std::fs::create_dir_all(&folder).expect("temp folder");
            Some(TestDatabase {
                url: format!("sqlite://{}", folder.join("chess.db").display()),
                backend,
                postgres: None,
                folder: Some(folder),
            })
        }
        Backend::Postgres => {
            if std::env::var("CHESS_SKIP_POSTGRES_TESTS").is_ok_and(|v| v == "1") {
                eprintln!("skipping a Postgres test: CHESS_SKIP_POSTGRES_TESTS=1");
                return None;
            }
            let admin = std::env::var("TEST_POSTGRES_URL")
                .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
            let name = format!("chess_test_{}", Uuid::new_v4().simple());
            let url = match create_postgres_database(&admin, &name).await {
                Ok(url) => url,
                Err(error) => panic!(
                    "Postgres at {admin} cannot make a test database ({error}). Start it, point \
                     TEST_POSTGRES_URL at an admin URL, or set CHESS_SKIP_POSTGRES_TESTS=1 to skip \
                     the Postgres runs."
                ),
            };
            Some(TestDatabase {
                url,
                backend,
                postgres: Some((admin.clone(), name)),
                folder: None,
            })
        }
    }
}

/// Creates the empty database `name` on the Postgres server whose admin
/// database is at `admin_url` (one of ours: `name` is never user input);
/// the new database's URL.
///
/// # Errors
/// The server is out of reach or refuses.
pub async fn create_postgres_database(admin_url: &str, name: &str) -> Result<String> {
    let mut connection = Connection::open(admin_url).await?;
    let created = connection
        .execute(&format!("create database \"{name}\""))
        .await;
    connection.close().await;
    created?;
    let base = admin_url
        .rsplit_once('/')
        .map_or(admin_url, |(base, _)| base);
    Ok(format!("{base}/{name}"))
}

/// Drops the database `name` (if it exists, with whoever is connected) on
/// the Postgres server whose admin database is at `admin_url`.
///
/// # Errors
/// The server is out of reach or refuses.
pub async fn drop_postgres_database(admin_url: &str, name: &str) -> Result<()> {
    let mut connection = Connection::open(admin_url).await?;
    let dropped = connection
        .execute(&format!("drop database if exists \"{name}\" with (force)"))
        .await;
    connection.close().await;
    dropped
}

impl TestDatabase {
    /// Which database this is.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Runs one statement `sql` on a connection of its own; how many rows
    /// it returned.
    ///
    /// # Errors
    /// The database's refusal.
    pub async fn raw(&self, sql: &str) -> Result<usize> {
        let mut connection = Connection::open(&self.url).await?;
        let rows = connection.rows(sql).await?.len();
        connection.close().await;
        Ok(rows)
    }

    /// Runs one statement `sql` on a connection of its own: its rows, each
    /// column as text (see [`Connection::rows`]).
    ///
    /// # Errors
    /// The database's refusal.
    pub async fn rows(&self, sql: &str) -> Result<Vec<TextRow>> {
        let mut connection = Connection::open(&self.url).await?;
        let rows = connection.rows(sql).await?;
        connection.close().await;
        Ok(rows)
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Some(folder) = &self.folder {
            let _ = std::fs::remove_dir_all(folder);
        }
        if let Some((admin, name)) = self.postgres.take() {
            // Drop runs outside async: a small runtime of its own on a thread.
            let _ = std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build();
                if let Ok(runtime) = runtime {
                    let _ = runtime.block_on(drop_postgres_database(&admin, &name));
                }
            })
            .join();
        }
    }
}

/// One raw connection to a database, SQLite or Postgres by the URL's scheme
/// (SQLite URLs may carry `?mode=ro`), outside any pool: it stays in whatever
/// transaction its statements open until [`Connection::close`] or drop.
#[derive(Debug)]
pub struct Connection(Driver);

#[derive(Debug)]
enum Driver {
    Sqlite(sqlx::SqliteConnection),
    Postgres(sqlx::PgConnection),
}

impl Connection {
    /// Opens a connection to `url`.
    ///
    /// # Errors
    /// An unsupported scheme, or the database's refusal.
    pub async fn open(url: &str) -> Result<Connection> {
        if url.starts_with("sqlite:") {
            Ok(Connection(Driver::Sqlite(
                sqlx::SqliteConnection::connect(url).await?,
            )))
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Ok(Connection(Driver::Postgres(
                sqlx::PgConnection::connect(url).await?,
            )))
        } else {
            Err(crate::StoreError::UnsupportedUrl(url.to_owned()))
        }
    }

    /// Opens a connection to `url` that cannot write: SQLite opens the file
    /// read-only, Postgres makes every transaction of the session read-only.
    /// For audits, which must not change what they check.
    ///
    /// # Errors
    /// An unsupported scheme, or the database's refusal.
    pub async fn open_read_only(url: &str) -> Result<Connection> {
        if url.starts_with("sqlite:") {
            let separator = if url.contains('?') { '&' } else { '?' };
            Connection::open(&format!("{url}{separator}mode=ro")).await
        } else {
            let mut connection = Connection::open(url).await?;
            connection
                .execute("set session characteristics as transaction read only")
                .await?;
            Ok(connection)
        }
    }

    /// Runs `sql`, one or several statements separated by `;`, ignoring
    /// what they return (`begin immediate`, `rollback`, a pragma).
    ///
    /// # Errors
    /// The database's refusal.
    pub async fn execute(&mut self, sql: &str) -> Result<()> {
        let sql = sqlx::AssertSqlSafe(sql.to_owned());
        match &mut self.0 {
            Driver::Sqlite(connection) => {
                sqlx::raw_sql(sql).execute(connection).await?;
            }
            Driver::Postgres(connection) => {
                sqlx::raw_sql(sql).execute(connection).await?;
            }
        }
        Ok(())
    }

    /// Runs one statement `sql`: its rows, each column as text (`None` for
    /// NULL). Numbers and booleans are written as Rust prints them, JSON as
    /// its text: audits compare values, not types.
    ///
    /// # Errors
    /// The database's refusal.
    pub async fn rows(&mut self, sql: &str) -> Result<Vec<TextRow>> {
        let sql = sqlx::AssertSqlSafe(sql.to_owned());
        match &mut self.0 {
            Driver::Sqlite(connection) => {
                let rows = sqlx::query(sql).fetch_all(connection).await?;
                Ok(rows.iter().map(sqlite_texts).collect())
            }
            Driver::Postgres(connection) => {
                let rows = sqlx::query(sql).fetch_all(connection).await?;
                Ok(rows.iter().map(postgres_texts).collect())
            }
        }
    }

    /// Closes the connection (a transaction it holds rolls back).
    pub async fn close(self) {
        let _ = match self.0 {
            Driver::Sqlite(connection) => connection.close().await,
            Driver::Postgres(connection) => connection.close().await,
        };
    }
}

/// A SQLite row's columns as text: SQLite's values are dynamically typed,
/// so each is read as the type it holds.
fn sqlite_texts(row: &sqlx::sqlite::SqliteRow) -> TextRow {
    (0..row.columns().len())
        .map(|column| {
            row.try_get::<Option<String>, _>(column)
                .or_else(|_| {
                    row.try_get::<Option<i64>, _>(column)
                        .map(|n| n.map(|n| n.to_string()))
                })
                .or_else(|_| {
                    row.try_get::<Option<f64>, _>(column)
                        .map(|n| n.map(|n| n.to_string()))
                })
                .unwrap_or(None)
        })
        .collect()
}

/// A Postgres row's columns as text, by the column's declared type.
fn postgres_texts(row: &sqlx::postgres::PgRow) -> TextRow {
    row.columns()
        .iter()
        .enumerate()
        .map(|(column, info)| match info.type_info().name() {
            "INT2" => row
                .try_get::<Option<i16>, _>(column)
                .ok()
                .flatten()
                .map(|n| n.to_string()),
            "INT4" => row
                .try_get::<Option<i32>, _>(column)
                .ok()
                .flatten()
                .map(|n| n.to_string()),
            "INT8" => row
                .try_get::<Option<i64>, _>(column)
                .ok()
                .flatten()
                .map(|n| n.to_string()),
            "FLOAT4" | "FLOAT8" => row
                .try_get::<Option<f64>, _>(column)
                .ok()
                .flatten()
                .map(|n| n.to_string()),
            "BOOL" => row
                .try_get::<Option<bool>, _>(column)
                .ok()
                .flatten()
                .map(|b| b.to_string()),
            "UUID" => row
                .try_get::<Option<Uuid>, _>(column)
                .ok()
                .flatten()
                .map(|id| id.to_string()),
            // Text, and JSON (whose wire form is its text).
            _ => row
                .try_get_unchecked::<Option<String>, _>(column)
                .ok()
                .flatten(),
        })
        .collect()
}

/// A connection of the test's own holding the database's write lock, so the
/// server's writes wait (SQLite: up to its busy timeout, then fail; Postgres:
/// until the lock is released). Reads go on.
#[derive(Debug)]
pub struct WriteLock(Connection);

impl WriteLock {
    /// Takes the lock on the database at `url`, of `backend`.
    ///
    /// # Panics
    /// When the database cannot be reached or the lock cannot be taken.
    pub async fn take_on(url: &str, backend: Backend) -> WriteLock {
        let mut connection = Connection::open(url)
            .await
            .expect("connect to the database");
        let lock = match backend {
            Backend::Sqlite => "begin immediate",
            Backend::Postgres => "begin; lock table games in exclusive mode",
        };
        connection.execute(lock).await.expect("take the write lock");
        WriteLock(connection)
    }

    /// Releases the lock.
    ///
    /// # Panics
    /// When the database refuses the rollback.
    pub async fn release(mut self) {
        self.0.execute("rollback").await.expect("release the lock");
        self.0.close().await;
    }
}

/// Postgres notifications on one channel, as the other nodes hear them.
#[derive(Debug)]
pub struct Listener(sqlx::postgres::PgListener);

impl Listener {
    /// Listens on `channel` of the Postgres database at `url`.
    ///
    /// # Errors
    /// The database's refusal.
    pub async fn listen(url: &str, channel: &str) -> Result<Listener> {
        let mut listener = sqlx::postgres::PgListener::connect(url).await?;
        listener.listen(channel).await?;
        Ok(Listener(listener))
    }

    /// The next notification's payload.
    ///
    /// # Errors
    /// The connection failed.
    pub async fn recv(&mut self) -> Result<String> {
        Ok(self.0.recv().await?.payload().to_owned())
    }
}

impl Store {
    /// Runs `sql` (a pragma) on every connection the server's SQLite store
    /// holds: each pooled one (all held at once, so each gets it) and the
    /// group commit's own. Nothing on Postgres.
    ///
    /// # Errors
    /// The database's refusal.
    pub async fn on_every_sqlite_connection(&self, sql: &str) -> Result<()> {
        self.on_sqlite_writer(sql).await?;
        let mut held = Vec::new();
        for pool in self.sqlite_pools() {
            for _ in 0..pool.options().get_max_connections() {
                let mut connection = pool.acquire().await?;
                sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
                    .execute(&mut *connection)
                    .await?;
                held.push(connection);
            }
        }
        Ok(())
    }

    /// Closes every connection the SQLite store's pools hold idle, and the
    /// group commit's own, so that the next query (and the next batch) opens
    /// a new one. Nothing on Postgres.
    pub async fn close_idle_sqlite_connections(&self) {
        self.close_sqlite_writer();
        for pool in self.sqlite_pools() {
            while let Some(connection) = pool.try_acquire() {
                let _ = connection.close().await;
            }
        }
    }
}
