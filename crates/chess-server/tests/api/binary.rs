//! The `chess-server` binary on its own: copied nowhere near the repository
//! (started in an empty temporary folder), it serves the web client built
//! into it, and its logs suit a file or a log collector.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use uuid::Uuid;

use crate::helpers::header;

/// A running `chess-server` process, killed (by its own id) and its folder
/// removed on drop.
pub(crate) struct Server {
    child: Child,
    folder: PathBuf,
    url: String,
    lines: mpsc::Receiver<String>,
}

impl Server {
    /// Starts the binary in a new empty folder with `env` set; every setting
    /// not given falls back to its default (the environment of the test run
    /// is cleared of the server's variables first).
    pub(crate) fn start(env: &[(&str, &str)]) -> Server {
        let folder = std::env::temp_dir().join(format!("chess-binary-{}", Uuid::new_v4()));
        std::fs::create_dir_all(&folder).expect("an empty folder");
        let mut command = Command::new(env!("CARGO_BIN_EXE_chess-server"));
        command.current_dir(&folder);
        for name in [
            "HOST",
            "DATABASE_URL",
            "CHESS_DATA_DIR",
            "CHESS_SECRET",
            "SESSION_KEYS",
            "WEB_DIR",
            "ALLOWED_ORIGINS",
            "LOG_FORMAT",
            "RUST_LOG",
            "NO_COLOR",
        ] {
            command.env_remove(name);
        }
        command.env("PORT", "0");
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the binary starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Server {
            child,
            folder,
            url: String::new(),
            lines,
        };
        server.url = server
            .wait_for_line(|line| line.contains("chess-server: open "))
            .rsplit(' ')
            .next()
            .expect("a URL")
            .trim_end_matches('/')
            .to_owned();
        server
    }

    /// Kills the process with SIGKILL, as a crash would: nothing of it runs
    /// after (no shutdown, no cleanup).
    pub(crate) fn kill9(&mut self) {
        self.child.kill().expect("SIGKILL");
        let _ = self.child.wait();
    }

    /// The first output line matching `wanted` (lines before it are dropped).
    fn wait_for_line(&self, wanted: impl Fn(&str) -> bool) -> String {
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(30))
                .expect("the expected line within 30 s");
            if wanted(&line) {
                return line;
            }
        }
    }

    /// Every output line so far.
    fn lines_so_far(&self) -> Vec<String> {
        std::iter::from_fn(|| self.lines.recv_timeout(Duration::from_millis(200)).ok()).collect()
    }

    async fn get(&self, path: &str) -> reqwest::Response {
        reqwest::get(format!("{}{path}", self.url))
            .await
            .expect("GET")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

#[tokio::test]
async fn serves_the_built_in_web_client_from_an_empty_folder() {
    let server = Server::start(&[]);
    assert!(
        !server.folder.join("web").exists(),
        "no web folder beside it"
    );
    let game_page = format!("/game/{}", Uuid::new_v4());
    let local_page = format!("/local/{}", Uuid::new_v4());
    for (path, content_type, marker) in [
        ("/", "text/html", "/js/home.js"),
        (game_page.as_str(), "text/html", "/js/game.js"),
        (local_page.as_str(), "text/html", "/js/game.js"),
        // The browser's rules and engine, built by the build script, not in `web/`.
        ("/wasm/chess_wasm.js", "javascript", "class LocalGame"),
        ("/js/game.js", "javascript", "import"),
        ("/js/board.js", "javascript", "export"),
        ("/css/style.css", "text/css", "{"),
    ] {
        let response = server.get(path).await;
        assert_eq!(response.status(), 200, "{path}");
        assert!(
            header(&response, "content-type").contains(content_type),
            "{path}: {}",
            header(&response, "content-type")
        );
        assert!(
            !header(&response, "cache-control").is_empty(),
            "{path} says how to cache it"
        );
        assert!(!header(&response, "etag").is_empty(), "{path} has an etag");
        let body = response.text().await.expect("a body");
        assert!(body.contains(marker), "{path} is the real file");
    }

    // A browser revalidating an unchanged script gets `304` and no body.
    let script = server.get("/js/game.js").await;
    let etag = header(&script, "etag");
    let revalidated = reqwest::Client::new()
        .get(format!("{}/js/game.js", server.url))
        .header("if-none-match", &etag)
        .send()
        .await
        .expect("GET");
    assert_eq!(revalidated.status(), 304);

    // The WebAssembly module is a module, typed so browsers compile it as it streams in.
    let module = server.get("/wasm/chess_wasm_bg.wasm").await;
    assert_eq!(module.status(), 200);
    assert_eq!(header(&module, "content-type"), "application/wasm");
    let etag = header(&module, "etag");
    assert!(!etag.is_empty(), "the module has an etag");
    let bytes = module.bytes().await.expect("a body");
    assert!(bytes.starts_with(b"\0asm"), "a WebAssembly binary");
    let revalidated = reqwest::Client::new()
        .get(format!("{}/wasm/chess_wasm_bg.wasm", server.url))
        .header("if-none-match", &etag)
        .send()
        .await
        .expect("GET");
    assert_eq!(revalidated.status(), 304);

    // What the web folder holds for development only is not built in.
    for path in [
        "/e2e/harness.js",
        "/test/board.test.js",
        "/package.json",
        "/node_modules/.package-lock.json",
        "/run-tests.sh",
        "/js/nothing-here.js",
    ] {
        assert_eq!(server.get(path).await.status(), 404, "{path}");
    }
}

#[tokio::test]
async fn logs_to_a_pipe_have_no_colour_codes() {
    let server = Server::start(&[]);
    assert_eq!(server.get("/healthz").await.status(), 200);
    let logs = server.lines_so_far();
    assert!(
        logs.iter().any(|line| line.contains("INFO")),
        "some log lines: {logs:?}"
    );
    for line in &logs {
        assert!(!line.contains('\u{1b}'), "an escape code in {line:?}");
    }
}

#[tokio::test]
async fn log_format_json_writes_one_json_object_per_line() {
    let server = Server::start(&[("LOG_FORMAT", "json")]);
    assert_eq!(server.get("/healthz").await.status(), 200);
    let logs: Vec<String> = server
        .lines_so_far()
        .into_iter()
        .filter(|line| !line.starts_with("chess-server: "))
        .collect();
    assert!(!logs.is_empty(), "some log lines");
    for line in &logs {
        let entry: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|error| panic!("{line:?}: {error}"));
        assert!(entry["level"].is_string(), "{line}");
        assert!(entry["timestamp"].is_string(), "{line}");
    }
}

/// A log on a full disk: every write to standard output and standard error
/// fails (`/dev/full` answers every write with "no space left"). The server
/// must start and answer every request anyway, without its log.
#[tokio::test]
async fn a_log_that_cannot_be_written_does_not_stop_the_server() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipping: no /dev/full on this system");
        return;
    };
    let folder = std::env::temp_dir().join(format!("chess-binary-{}", Uuid::new_v4()));
    std::fs::create_dir_all(&folder).expect("an empty folder");
    // A free port chosen here: the URL line the server prints goes nowhere.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_chess-server"))
        .current_dir(&folder)
        .env_remove("DATABASE_URL")
        .env_remove("CHESS_DATA_DIR")
        .env("PORT", port.to_string())
        .env("RUST_LOG", "info")
        .stdout(full.try_clone().expect("a second handle"))
        .stderr(full)
        .spawn()
        .expect("the binary starts");
    let url = format!("http://127.0.0.1:{port}");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while reqwest::get(format!("{url}/healthz")).await.is_err() {
        assert!(
            child.try_wait().expect("the process").is_none(),
            "the server exited while starting"
        );
        assert!(std::time::Instant::now() < deadline, "no answer in 30 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Every request logs a line (and a new guest more): each is answered.
    for _ in 0..5 {
        let response = reqwest::get(format!("{url}/api/me"))
            .await
            .expect("an answer, not a dropped connection");
        assert_eq!(response.status(), 200);
    }
    assert!(
        child.try_wait().expect("the process").is_none(),
        "still running"
    );
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&folder);
}
