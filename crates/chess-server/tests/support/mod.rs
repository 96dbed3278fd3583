//! Test databases shared by the integration tests: a migrated SQLite file
//! and a fresh Postgres database per test, both removed on drop.
//!
//! Postgres is at `TEST_POSTGRES_URL` (default
//! `postgres://postgres@127.0.0.1:5432/postgres`); an unreachable server
//! fails the tests unless `CHESS_SKIP_POSTGRES_TESTS=1`.

#![allow(dead_code)] // Each test binary uses a part.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use sqlx::{AssertSqlSafe, ConnectOptions, Connection, Executor};
use uuid::Uuid;

pub fn migrations(dialect: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../migrations")
        .join(dialect)
}

/// A migrated SQLite database in a temporary file, deleted on drop.
pub struct SqliteDb {
    pub pool: SqlitePool,
    path: std::path::PathBuf,
}

impl SqliteDb {
    pub async fn new() -> SqliteDb {
        let path = std::env::temp_dir().join(format!("chess-ledger-{}.db", Uuid::new_v4()));
        let options = SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // 50 writers queue for the lock: let them wait rather than fail.
            .busy_timeout(Duration::from_secs(60))
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(options)
            .await
            .expect("open a temporary SQLite database");
        Migrator::new(migrations("sqlite"))
            .await
            .expect("read the SQLite migrations")
            .run(&pool)
            .await
            .expect("apply the SQLite migrations");
        SqliteDb { pool, path }
    }
}

impl Drop for SqliteDb {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut file = self.path.clone().into_os_string();
            file.push(suffix);
            let _ = std::fs::remove_file(file);
        }
    }
}

/// A fresh, migrated Postgres database with a random name, dropped on drop.
pub struct PostgresDb {
    pub pool: PgPool,
    admin: PgConnectOptions,
    name: String,
}

impl PostgresDb {
    /// `None` when Postgres tests are switched off.
    pub async fn new() -> Option<PostgresDb> {
        if std::env::var("CHESS_SKIP_POSTGRES_TESTS").is_ok_and(|v| v == "1") {
            eprintln!("skipping a Postgres test: CHESS_SKIP_POSTGRES_TESTS=1");
            return None;
        }
        let url = std::env::var("TEST_POSTGRES_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
        let admin = PgConnectOptions::from_str(&url).expect("TEST_POSTGRES_URL is a postgres URL");
        let name = format!("chess_ledger_{}", Uuid::new_v4().simple());
        let mut conn = admin.connect().await.unwrap_or_else(|e| {
            panic!(
                "cannot reach Postgres at {url} ({e}); start it, set TEST_POSTGRES_URL, \
                 or set CHESS_SKIP_POSTGRES_TESTS=1 to skip the Postgres tests"
            )
        });
        // The name is ours (a uuid), never user input.
        conn.execute(AssertSqlSafe(format!("create database {name}")))
            .await
            .expect("create the test database");
        conn.close().await.ok();
        let pool = PgPoolOptions::new()
            .max_connections(20)
            .connect_with(admin.clone().database(&name))
            .await
            .expect("connect to the test database");
        Migrator::new(migrations("postgres"))
            .await
            .expect("read the Postgres migrations")
            .run(&pool)
            .await
            .expect("apply the Postgres migrations");
        Some(PostgresDb { pool, admin, name })
    }
}

impl Drop for PostgresDb {
    fn drop(&mut self) {
        // Drop cannot await, and the test's runtime may be shutting down:
        // drop the database from a thread with its own small runtime.
        let (admin, name) = (self.admin.clone(), self.name.clone());
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime to drop the test database");
            runtime.block_on(async move {
                let mut conn = admin.connect().await?;
                conn.execute(AssertSqlSafe(format!(
                    "drop database if exists {name} with (force)"
                )))
                .await?;
                conn.close().await
            })
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            eprintln!("could not drop test database {}: {dropped:?}", self.name);
        }
    }
}

/// The pool type of each test database, so the macro can name it.
pub trait Pooled {
    type Pool;
}
impl Pooled for SqliteDb {
    type Pool = SqlitePool;
}
impl Pooled for PostgresDb {
    type Pool = PgPool;
}
