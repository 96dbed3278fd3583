//! A Postgres cluster of the run's own (initdb into the run's folder, a free
//! port), so the database can be restarted and its backends killed without
//! touching any shared server.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use chess_store::testing::Connection;

/// Where Debian puts the Postgres 15 programs; `PG_BIN` overrides it.
const DEFAULT_PG_BIN: &str = "/usr/lib/postgresql/15/bin";

/// Why the cluster could not be run.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("`{command}` failed: {output}")]
    Command { command: String, output: String },
    #[error("Postgres: {0}")]
    Sql(#[from] chess_store::StoreError),
}

/// A running cluster with trust authentication for the `postgres` user.
#[derive(Debug)]
pub struct Cluster {
    bin: PathBuf,
    data: PathBuf,
    pub port: u16,
    /// The tmpfs mounted at `data`, for `--fault disk-full`: unmounted last.
    tmpfs: bool,
}

impl Cluster {
    /// Initialises a cluster in `folder/pgdata` and starts it. As root the
    /// programs run as the `postgres` user (initdb refuses root).
    ///
    /// # Errors
    /// A [`ClusterError`] when a program fails.
    pub fn start(folder: &Path) -> Result<Cluster, ClusterError> {
        let bin =
            std::env::var_os("PG_BIN").map_or_else(|| PathBuf::from(DEFAULT_PG_BIN), PathBuf::from);
        let data = folder.join("pgdata");
        std::fs::create_dir_all(&data)?;
        if crate::server::is_root() {
            // The server refuses a data folder it does not own; the run's
            // folder must be reachable for it too.
            chown_to_postgres(folder)?;
            chown_to_postgres(&data)?;
        }
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let cluster = Cluster {
            bin,
            data,
            port,
            tmpfs: false,
        };
        cluster.run(
            "initdb",
            &[
                "-D",
                &cluster.data_str(),
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
            ],
        )?;
        cluster.pg_ctl(&["start", "-w"])?;
        Ok(cluster)
    }

    /// Like [`Cluster::start`], with the data folder on a tmpfs of `size`
    /// (`256m`) mounted for it, so that the disk under the database can be
    /// filled without touching the machine's own (needs root).
    ///
    /// # Errors
    /// A [`ClusterError`] when the mount or a program fails.
    pub fn start_on_tmpfs(folder: &Path, size: &str) -> Result<Cluster, ClusterError> {
        let data = folder.join("pgdata");
        std::fs::create_dir_all(&data)?;
        let output = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(&data)
            .output()?;
        if !output.status.success() {
            return Err(ClusterError::Command {
                command: format!("mount -t tmpfs -o size={size} tmpfs {}", data.display()),
                output: String::from_utf8_lossy(&output.stderr).into_owned(),
            });
        }
        match Cluster::start(folder) {
            Ok(mut cluster) => {
                cluster.tmpfs = true;
                Ok(cluster)
            }
            Err(error) => {
                let _ = Command::new("umount").arg("-l").arg(&data).status();
                Err(error)
            }
        }
    }

    /// Fills what is left of the data folder's filesystem with a file (in
    /// the data folder, which Postgres ignores); removing the file gives the
    /// space back.
    ///
    /// # Errors
    /// A [`ClusterError`] when the file cannot be created.
    pub fn fill_disk(&self) -> Result<PathBuf, ClusterError> {
        use std::io::Write;
        let filler = self.data.join("filler");
        let mut file = std::fs::File::create(&filler)?;
        let block = vec![0u8; 64 * 1024];
        while file.write_all(&block).is_ok() {}
        // The last few pages, smaller than a block.
        let small = [0u8; 512];
        while file.write_all(&small).is_ok() {}
        Ok(filler)
    }

    /// `postgres://postgres@127.0.0.1:<port>/<database>`.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// Stops the cluster at once (`-m immediate`: like a crash, recovery on
    /// the next start).
    ///
    /// # Errors
    /// A [`ClusterError`] when `pg_ctl` fails.
    pub fn stop_immediately(&self) -> Result<(), ClusterError> {
        self.pg_ctl(&["stop", "-m", "immediate", "-w"])
    }

    /// Starts the stopped cluster and waits until it accepts connections.
    ///
    /// # Errors
    /// A [`ClusterError`] when `pg_ctl` fails.
    pub fn start_again(&self) -> Result<(), ClusterError> {
        self.pg_ctl(&["start", "-w"])
    }

    /// Terminates every backend connected to `database`; how many.
    ///
    /// # Errors
    /// The database error.
    pub async fn terminate_backends(&self, database: &str) -> Result<u64, ClusterError> {
        // `database` is a name of ours, never user input.
        let mut connection = Connection::open(&self.url("postgres")).await?;
        let killed = connection
            .rows(&format!(
                "select pg_terminate_backend(pid) from pg_stat_activity \
                 where datname = '{database}' and pid <> pg_backend_pid()"
            ))
            .await;
        connection.close().await;
        Ok(killed?
            .iter()
            .filter(|row| row.first() == Some(&Some("true".to_owned())))
            .count() as u64)
    }

    fn data_str(&self) -> String {
        self.data.display().to_string()
    }

    fn pg_ctl(&self, args: &[&str]) -> Result<(), ClusterError> {
        let log = self.data.join("postgres.log").display().to_string();
        // Its own port, and its socket in the data folder, never the shared one's.
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1",
            self.port,
            self.data_str()
        );
        let mut all = vec![
            "-D",
            self.data.to_str().unwrap_or_default(),
            "-l",
            &log,
            "-o",
            &options,
        ];
        all.extend_from_slice(args);
        self.run("pg_ctl", &all)
    }

    fn run(&self, program: &str, args: &[&str]) -> Result<(), ClusterError> {
        let path = self.bin.join(program);
        let mut command = if crate::server::is_root() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(&path);
            command
        } else {
            Command::new(&path)
        };
        let output = command.args(args).output()?;
        if output.status.success() {
            return Ok(());
        }
        Err(ClusterError::Command {
            command: format!("{program} {}", args.join(" ")),
            output: format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ),
        })
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.stop_immediately();
        if self.tmpfs {
            let _ = Command::new("umount").arg("-l").arg(&self.data).status();
        }
    }
}

fn chown_to_postgres(path: &Path) -> Result<(), ClusterError> {
    let output = Command::new("chown")
        .arg("postgres:postgres")
        .arg(path)
        .output()?;
    if output.status.success() {
        Ok(())
    } else {
        Err(ClusterError::Command {
            command: format!("chown postgres {}", path.display()),
            output: String::from_utf8_lossy(&output.stderr).into_owned(),
        })
    }
}
