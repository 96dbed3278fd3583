//! The server under load: nodes already running, or one started in this
//! process on a fresh database that is removed again at the end.

use std::path::PathBuf;

use chess_server::{Application, Settings};
use chess_store::testing::{create_postgres_database, drop_postgres_database};
use tokio::sync::oneshot;
use uuid::Uuid;

use crate::load::config::{Backend, Target};

/// Where Postgres databases are created when `TEST_POSTGRES_URL` is unset.
const DEFAULT_POSTGRES_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// Why the server under load could not be started or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("temporary folder {path}: {source}")]
    TempFolder {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("Postgres at {admin_url}: {source}")]
    Postgres {
        admin_url: String,
        source: chess_store::StoreError,
    },
    #[error("the server could not start: {0}")]
    Startup(#[from] chess_server::StartupError),
    #[error("the server stopped with an error: {0}")]
    Run(String),
}

/// The server the load runs against.
#[derive(Debug)]
pub struct Server {
    /// `http://host:port` of every node, no trailing slash.
    pub base_urls: Vec<String>,
    spawned: Option<Spawned>,
}

/// A server running in this process and its throw-away database.
#[derive(Debug)]
struct Spawned {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
    database: Database,
}

/// A database made for one run.
#[derive(Debug)]
enum Database {
    Sqlite { folder: PathBuf },
    Postgres { admin_url: String, name: String },
}

impl Server {
    /// Uses the server at `target`, starting it first for [`Target::Spawn`].
    ///
    /// # Errors
    /// A [`ServerError`] when the database cannot be made or the server does
    /// not start (the database is removed again then).
    pub async fn start(target: &Target) -> Result<Server, ServerError> {
        let backend = match target {
            Target::Nodes(urls) => {
                return Ok(Server {
                    base_urls: urls.clone(),
                    spawned: None,
                });
            }
            Target::Spawn(backend) => *backend,
        };
        let (database, database_url) = Database::create(backend).await?;
        let mut settings = Settings::defaults();
        settings.port = 0;
        settings.host = std::net::Ipv4Addr::LOCALHOST.into();
        settings.database_url = database_url;
        settings.allowed_origins = Vec::new();
        // Every game brings two new guests, all from this one address.
        settings.new_guests_per_address_per_hour = usize::MAX;
        // A fresh secret per run: the cookies of this run are worthless elsewhere.
        settings.secret = Some(
            format!("{}{}", Uuid::new_v4().simple(), Uuid::new_v4().simple())
                .parse()
                .map_err(|reason: String| ServerError::Run(reason))?,
        );
        let app = match Application::build(settings).await {
            Ok(app) => app,
            Err(error) => {
                database.remove().await;
                return Err(error.into());
            }
        };
        let base_url = format!("http://127.0.0.1:{}", app.port());
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(app.run_until_stopped(async {
            let _ = stopped.await;
        }));
        Ok(Server {
            base_urls: vec![base_url],
            spawned: Some(Spawned {
                stop,
                task,
                database,
            }),
        })
    }

    /// A short description for the report: `sqlite (spawned)` or the URLs.
    pub fn label(&self) -> String {
        match &self.spawned {
            Some(Spawned {
                database: Database::Sqlite { .. },
                ..
            }) => "sqlite (spawned in-process)".to_owned(),
            Some(Spawned {
                database: Database::Postgres { .. },
                ..
            }) => "postgres (spawned in-process)".to_owned(),
            None => self.base_urls.join(" + "),
        }
    }

    /// Stops a spawned server gracefully and removes its database; nothing
    /// for a server that was already running.
    ///
    /// # Errors
    /// [`ServerError::Run`] when the spawned server ended with an error (its
    /// database is removed all the same).
    pub async fn stop(self) -> Result<(), ServerError> {
        let Some(spawned) = self.spawned else {
            return Ok(());
        };
        let _ = spawned.stop.send(());
        let outcome = spawned.task.await;
        spawned.database.remove().await;
        match outcome {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(ServerError::Run(error.to_string())),
            Err(error) => Err(ServerError::Run(error.to_string())),
        }
    }
}

impl Database {
    /// A new empty database for `backend` and its URL.
    async fn create(backend: Backend) -> Result<(Database, String), ServerError> {
        match backend {
            Backend::Sqlite => {
                let folder = std::env::temp_dir().join(format!("chess-load-{}", Uuid::new_v4()));
                std::fs::create_dir_all(&folder).map_err(|source| ServerError::TempFolder {
                    path: folder.clone(),
                    source,
                })?;
                let url = format!("sqlite://{}", folder.join("chess.db").display());
                Ok((Database::Sqlite { folder }, url))
            }
            Backend::Postgres => {
                let admin_url = std::env::var("TEST_POSTGRES_URL")
                    .unwrap_or_else(|_| DEFAULT_POSTGRES_ADMIN_URL.to_owned());
                let name = format!("chess_load_{}", Uuid::new_v4().simple());
                let url = match create_postgres_database(&admin_url, &name).await {
                    Ok(url) => url,
                    Err(source) => return Err(ServerError::Postgres { admin_url, source }),
                };
                Ok((Database::Postgres { admin_url, name }, url))
            }
        }
    }

    /// Removes the database; failures are reported on stderr, not fatal.
    async fn remove(self) {
        match self {
            Database::Sqlite { folder } => {
                if let Err(error) = std::fs::remove_dir_all(&folder) {
                    eprintln!("load: could not remove {}: {error}", folder.display());
                }
            }
            Database::Postgres { admin_url, name } => {
                if let Err(error) = drop_postgres_database(&admin_url, &name).await {
                    eprintln!("load: could not drop database {name}: {error}");
                }
            }
        }
    }
}
