//! The server under test as a separate process: a fresh database made for the
//! run, a fixed port, started and killed (SIGKILL) again and again on the
//! same data.

use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use chess_store::testing::{create_postgres_database, drop_postgres_database};
use tokio::time::Instant;
use uuid::Uuid;

/// The database under the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// `target/<profile>/chess-server`, next to the running tool (both are
/// binaries of the workspace, built into the same folder).
pub fn default_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    exe.parent()
        .map(|profile| profile.join("chess-server"))
        .unwrap_or_else(|| PathBuf::from("chess-server"))
}

/// Where Postgres databases are created when `TEST_POSTGRES_URL` is unset.
const DEFAULT_POSTGRES_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";
/// Longest a start may take (migrations and the recovery of every unfinished
/// game included) before the run gives up.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Why the server could not be run.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("data folder {path}: {source}")]
    Folder {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("Postgres at {admin_url}: {source}")]
    Postgres {
        admin_url: String,
        source: chess_store::StoreError,
    },
    #[error("no free port: {0}")]
    Port(std::io::Error),
    #[error("cannot start {binary}: {source}")]
    Spawn {
        binary: PathBuf,
        source: std::io::Error,
    },
    #[error("the server exited while starting ({status}); its log is {log}")]
    Exited { status: String, log: PathBuf },
    #[error("the server did not answer /healthz within {START_TIMEOUT:?}; its log is {0}")]
    NotHealthy(PathBuf),
}

/// The database made for one run.
#[derive(Debug)]
pub struct Database {
    /// What the server is given as `DATABASE_URL`.
    pub url: String,
    backend: Backend,
    admin_url: String,
    name: String,
}

impl Database {
    /// A new empty database; SQLite files go in `folder`.
    ///
    /// # Errors
    /// [`ServerError::Postgres`] when the Postgres database cannot be made.
    /// Postgres databases are made at `admin_url`, default `TEST_POSTGRES_URL`.
    pub async fn create(
        backend: Backend,
        folder: &Path,
        admin_url: Option<String>,
    ) -> Result<Database, ServerError> {
        let admin_url = admin_url.unwrap_or_else(|| {
            std::env::var("TEST_POSTGRES_URL")
                .unwrap_or_else(|_| DEFAULT_POSTGRES_ADMIN_URL.to_owned())
        });
        match backend {
            Backend::Sqlite => Ok(Database {
                url: format!("sqlite://{}", folder.join("chess.db").display()),
                backend,
                admin_url,
                name: String::new(),
            }),
            Backend::Postgres => {
                let name = format!("chess_crash_{}", Uuid::new_v4().simple());
                let url = create_postgres_database(&admin_url, &name)
                    .await
                    .map_err(|source| ServerError::Postgres {
                        admin_url: admin_url.clone(),
                        source,
                    })?;
                Ok(Database {
                    url,
                    backend,
                    admin_url,
                    name,
                })
            }
        }
    }

    /// The Postgres database's name (empty for SQLite).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Drops a Postgres database (an SQLite file goes with its folder);
    /// failures are reported on stderr, not fatal.
    pub async fn remove(self) {
        if self.backend == Backend::Postgres
            && let Err(error) = drop_postgres_database(&self.admin_url, &self.name).await
        {
            eprintln!("crash: could not drop database {}: {error}", self.name);
        }
    }
}

/// The `chess-server` process, restarted on the same port and data.
#[derive(Debug)]
pub struct ServerProcess {
    binary: PathBuf,
    folder: PathBuf,
    database_url: String,
    port: u16,
    child: Option<Child>,
    /// More settings (environment variables) for the server.
    extra_env: Vec<(String, String)>,
}

impl ServerProcess {
    /// A server that will run `binary` on `database_url` with its data
    /// (generated secret, logs) in `folder`, on a free port.
    ///
    /// # Errors
    /// [`ServerError::Port`] when no port is free.
    pub fn new(
        binary: PathBuf,
        folder: PathBuf,
        database_url: String,
    ) -> Result<ServerProcess, ServerError> {
        // The port stays the same across restarts, as a real deployment's
        // would: clients reconnect to the same address.
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map_err(ServerError::Port)?
            .port();
        Ok(ServerProcess {
            binary,
            folder,
            database_url,
            port,
            child: None,
            extra_env: Vec::new(),
        })
    }

    /// Sets one more environment variable for every start.
    pub fn set_env(&mut self, key: &str, value: &str) {
        self.extra_env.push((key.to_owned(), value.to_owned()));
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `127.0.0.1:<port>`, for a proxy in front.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The log of every start so far.
    pub fn log_path(&self) -> PathBuf {
        self.folder.join("server.log")
    }

    /// Starts the process without waiting for it to answer.
    ///
    /// # Errors
    /// [`ServerError::Spawn`] when the binary cannot be run.
    pub fn spawn(&mut self) -> Result<(), ServerError> {
        let log = File::options()
            .create(true)
            .append(true)
            .open(self.log_path())
            .map_err(|source| ServerError::Folder {
                path: self.log_path(),
                source,
            })?;
        let log_err = log.try_clone().map_err(|source| ServerError::Folder {
            path: self.log_path(),
            source,
        })?;
        let child = Command::new(&self.binary)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOST", "127.0.0.1")
            .env("PORT", self.port.to_string())
            .env("DATABASE_URL", &self.database_url)
            // The secret is generated into the data folder on the first
            // start and read back on every restart, so cookies stay valid.
            .env("CHESS_DATA_DIR", &self.folder)
            .env("WEB_DIR", &self.folder)
            // Games wait through many restarts for a first move: the
            // first-move abort is not what this tool checks.
            .env("FIRST_MOVE_DEADLINE_MS", "3600000")
            // Every game brings new guests from one address: without this,
            // a server that is not restarted (the database faults) refuses
            // the 61st guest of the hour.
            .env("NEW_GUESTS_PER_ADDRESS_PER_HOUR", "100000000")
            // `TEST_LOG=warn,chess_server=info` puts more of the server's story
            // (sockets closed, batches failed) in its kept log.
            .env(
                "RUST_LOG",
                std::env::var("TEST_LOG").unwrap_or_else(|_| "warn,chess_server=warn".to_owned()),
            )
            .envs(self.extra_env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .spawn()
            .map_err(|source| ServerError::Spawn {
                binary: self.binary.clone(),
                source,
            })?;
        self.child = Some(child);
        Ok(())
    }

    /// Waits until `/healthz` answers 200.
    ///
    /// # Errors
    /// [`ServerError::Exited`] when the process ends first,
    /// [`ServerError::NotHealthy`] after [`START_TIMEOUT`].
    pub async fn wait_healthy(&mut self, http: &reqwest::Client) -> Result<(), ServerError> {
        let deadline = Instant::now() + START_TIMEOUT;
        let url = format!("{}/healthz", self.base_url());
        while Instant::now() < deadline {
            if let Some(child) = &mut self.child
                && let Ok(Some(status)) = child.try_wait()
            {
                self.child = None;
                return Err(ServerError::Exited {
                    status: status.to_string(),
                    log: self.log_path(),
                });
            }
            let answer = http.get(&url).timeout(Duration::from_secs(2)).send().await;
            if answer.is_ok_and(|response| response.status().is_success()) {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Err(ServerError::NotHealthy(self.log_path()))
    }

    /// Kills the process with SIGKILL (no shutdown code runs) and reaps it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            // `Child::kill` sends SIGKILL on Unix.
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops the process with SIGTERM, as an operator does, and waits for it
    /// to exit: how long it took, or `None` when it was still running after
    /// `timeout` (it is then killed with SIGKILL).
    pub async fn terminate(&mut self, timeout: Duration) -> Option<Duration> {
        let mut child = self.child.take()?;
        let started = Instant::now();
        let sent = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .is_ok_and(|status| status.success());
        while sent && started.elapsed() < timeout {
            if let Ok(Some(_)) = child.try_wait() {
                return Some(started.elapsed());
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    }

    /// The running process's id.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|child| matches!(child.try_wait(), Ok(None)))
    }

    /// Lines of the server's log that report a panic.
    pub fn panics_logged(&self) -> Vec<String> {
        std::fs::read_to_string(self.log_path())
            .unwrap_or_default()
            .lines()
            .filter(|line| line.contains("panicked"))
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Whether the tool runs as root (initdb refuses root; nginx's workers would
/// drop to `nobody`).
pub fn is_root() -> bool {
    // The effective user's name; no libc call needed for this one question.
    std::env::var("USER").is_ok_and(|user| user == "root")
        || Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|output| output.stdout.starts_with(b"0\n"))
}
