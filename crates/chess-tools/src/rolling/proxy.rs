//! nginx in front of the nodes, run from the shipped configuration with only
//! its addresses changed, so that the run tests the file operators copy.

use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tokio::time::Instant;

/// Why nginx could not be run.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error("{path}: {source}")]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the proxy configuration {0} has no `{1}` to replace: the run would not test that file"
    )]
    Missing(PathBuf, &'static str),
    #[error(
        "cannot start {binary} ({source}); install nginx (apt-get install nginx-light) or pass --nginx"
    )]
    Spawn {
        binary: PathBuf,
        source: std::io::Error,
    },
    #[error("nginx did not answer within 10 s; its log is {0}")]
    NotUp(PathBuf),
}

/// A running nginx (stopped when dropped).
#[derive(Debug)]
pub struct Proxy {
    child: Child,
    pub port: u16,
}

impl Proxy {
    /// Starts `nginx` with the `http`-block file `config`, its upstream
    /// `node1:8080` and `node2:8080` replaced by `nodes` and its `listen 80`
    /// by a free loopback port, with its files in `folder`.
    ///
    /// # Errors
    /// A [`ProxyError`] when the file lacks a part the run replaces, or nginx
    /// cannot start.
    pub async fn start(
        nginx: &Path,
        config: &Path,
        nodes: [&str; 2],
        folder: &Path,
        http: &reqwest::Client,
    ) -> Result<Proxy, ProxyError> {
        let file_error = |path: &Path| {
            let path = path.to_path_buf();
            move |source| ProxyError::File { path, source }
        };
        let shipped = std::fs::read_to_string(config).map_err(file_error(config))?;
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map_err(file_error(folder))?
            .port();
        let mut rendered = shipped;
        for (from, to) in [
            ("node1:8080", nodes[0].to_owned()),
            ("node2:8080", nodes[1].to_owned()),
            ("listen 80;", format!("listen 127.0.0.1:{port};")),
        ] {
            if !rendered.contains(from) {
                return Err(ProxyError::Missing(config.to_path_buf(), from));
            }
            rendered = rendered.replace(from, &to);
        }
        let site = folder.join("chess.conf");
        std::fs::write(&site, rendered).map_err(file_error(&site))?;
        for temp in ["body", "proxy", "fastcgi", "uwsgi", "scgi"] {
            let path = folder.join(format!("nginx-{temp}"));
            std::fs::create_dir_all(&path).map_err(file_error(&path))?;
        }
        // The main file a distribution would ship, with everything in the
        // run's folder; as root the workers stay root so they can use it.
        let user = if crate::server::is_root() {
            "user root;\n"
        } else {
            ""
        };
        let folder_text = folder.display();
        let main = format!(
            "{user}daemon off;\nworker_processes 1;\npid {folder_text}/nginx.pid;\n\
             error_log {folder_text}/nginx-error.log warn;\n\
             events {{ worker_connections 4096; }}\n\
             http {{\n  access_log {folder_text}/nginx-access.log;\n\
             client_body_temp_path {folder_text}/nginx-body;\n\
             proxy_temp_path {folder_text}/nginx-proxy;\n\
             fastcgi_temp_path {folder_text}/nginx-fastcgi;\n\
             uwsgi_temp_path {folder_text}/nginx-uwsgi;\n\
             scgi_temp_path {folder_text}/nginx-scgi;\n\
             include {};\n}}\n",
            site.display()
        );
        let main_path = folder.join("nginx.conf");
        std::fs::write(&main_path, main).map_err(file_error(&main_path))?;
        let log_path = folder.join("nginx-error.log");
        let log = File::create(folder.join("nginx-stderr.log")).map_err(file_error(folder))?;
        let child = Command::new(nginx)
            .arg("-p")
            .arg(folder)
            .arg("-c")
            .arg(&main_path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|source| ProxyError::Spawn {
                binary: nginx.to_path_buf(),
                source,
            })?;
        let mut proxy = Proxy { child, port };
        // Up when it answers at all: the nodes behind it may still be starting.
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if matches!(proxy.child.try_wait(), Ok(Some(_))) {
                break;
            }
            if http.get(proxy.base_url()).send().await.is_ok() {
                return Ok(proxy);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        proxy.shut_down();
        Err(ProxyError::NotUp(log_path))
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Stops nginx with SIGTERM, its fast shutdown: the master takes its
    /// workers with it (after a SIGKILL they would serve on until they
    /// noticed). Killed if it has not exited within 2 s.
    fn shut_down(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        for _ in 0..100 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shut_down();
    }
}
