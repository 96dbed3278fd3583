//! SQLite's disk faults: the disk full and a read-only database. A write the
//! database cannot take is refused with a clear code (`unavailable` on the
//! socket, `503 unavailable` over HTTP), nothing half-written is left, reads
//! go on, and the server recovers by itself once the fault is gone.
//!
//! The faults are made on the server's own connections, so they work
//! unprivileged on any machine: `PRAGMA max_page_count` set to the file's
//! current size makes any growth fail with `SQLITE_FULL` (what a full disk
//! gives), and `PRAGMA query_only` makes every write fail with
//! `SQLITE_READONLY` (what a read-only file gives). Both pragmas belong to a
//! connection, so they are set on every connection of the pool.
//!
//! A real full disk fails differently: SQLite writes the log at `COMMIT`,
//! so the commit itself fails. The last test makes one on a small tmpfs
//! when it may mount one (root with `CAP_SYS_ADMIN`), and skips otherwise.

use chess_rules::Position;
use serde_json::{Value, json};

use crate::helpers::{
    Backend, Guest, Socket, TestApp, clock, spawn_app, spawn_app_with, start, test_settings,
};

async fn sqlite_app() -> TestApp {
    spawn_app(Backend::Sqlite)
        .await
        .expect("SQLite tests always run")
}

/// Runs `pragma` on every connection of the server's pools (the shared one
/// and the writer's): all of them are held at once, so each one gets it.
/// And on the group commit's own connection, which is in no pool.
async fn on_every_connection(app: &TestApp, pragma: &str) {
    assert_eq!(app.backend, Backend::Sqlite, "an SQLite store");
    app.store
        .on_every_sqlite_connection(pragma)
        .await
        .expect("the pragma runs on every connection");
}

/// `move` at `ply` on `socket`: `"ack"` or the refusal's code.
async fn try_move(socket: &mut Socket, uci: &str, ply: u32) -> String {
    socket
        .send(json!({ "type": "move", "uci": uci, "ply": ply }))
        .await;
    loop {
        let message = socket.recv().await;
        match message["type"].as_str() {
            Some("ack") => return "ack".to_owned(),
            Some("error") => return message["code"].as_str().unwrap_or_default().to_owned(),
            _ => {}
        }
    }
}

/// `POST /api/games/local`: (status, `Retry-After`, body).
async fn create_local(app: &TestApp, guest: &Guest) -> (u16, Option<String>, Value) {
    let response = app
        .request(
            "POST",
            "/api/games/local",
            &[("cookie", guest.cookie.as_str())],
            Some(json!({ "time_control": clock(600_000, 0) })),
        )
        .await;
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    (status, retry_after, response.json().await.expect("json"))
}

fn assert_unavailable(status: u16, retry_after: Option<&str>, body: &Value) {
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "unavailable", "{body}");
    assert!(
        retry_after.is_some_and(|seconds| seconds.parse::<u32>().is_ok_and(|s| s >= 1)),
        "a Retry-After in seconds: {retry_after:?}"
    );
}

/// The stored moves of `game` in UCI.
async fn stored_moves(app: &TestApp, game: &str, guest: &Guest) -> Vec<String> {
    let state = app.state(game, Some(guest)).await;
    state["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .filter_map(|mv| mv["uci"].as_str().map(str::to_owned))
        .collect()
}

/// A one-person game played by one socket, with the moves acknowledged so far.
struct Played {
    game: String,
    socket: Socket,
    position: Position,
    acked: Vec<String>,
}

impl Played {
    async fn start(app: &TestApp, guest: &Guest) -> Played {
        let game = app.create_local(guest, clock(600_000, 0)).await;
        let mut socket = app.socket(&game, Some(guest)).await;
        socket.hello().await;
        Played {
            game,
            socket,
            position: Position::startpos(),
            acked: Vec::new(),
        }
    }

    /// The move to play next: spread over the legal moves, one that does
    /// not end the game on the board if there is one; `None` when the game
    /// is over on the board.
    fn next_move(&self) -> Option<chess_rules::Move> {
        if self.position.ending().is_some() {
            return None;
        }
        let legal = self.position.legal_moves();
        let first = (self.acked.len() * 7 + 3) % legal.len();
        let in_turn = || legal[first..].iter().chain(&legal[..first]);
        in_turn()
            .find(|mv| {
                self.position
                    .play(mv)
                    .is_ok_and(|next| next.ending().is_none())
            })
            .or_else(|| in_turn().next())
            .cloned()
    }

    fn ply(&self) -> u32 {
        u32::try_from(self.acked.len()).expect("a short game")
    }

    /// Sends `mv`: `"ack"` (and the move is recorded) or the refusal's code.
    async fn send(&mut self, mv: &chess_rules::Move) -> String {
        let uci = mv.to_uci().to_string();
        let ply = self.ply();
        let answer = try_move(&mut self.socket, &uci, ply).await;
        if answer == "ack" {
            self.played(mv);
        }
        answer
    }

    fn played(&mut self, mv: &chess_rules::Move) {
        self.position = self.position.play(mv).expect("a legal move");
        self.acked.push(mv.to_uci().to_string());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_writes_as_unavailable_and_recovers_when_space_returns() {
    // Moves from one socket as fast as the server acks them, until a page
    // is wanted: more than a person's burst allowance, which this test is
    // not about.
    let mut app = spawn_app_with(Backend::Sqlite, |settings| settings.ws_rate_burst = 1_000)
        .await
        .expect("SQLite tests always run");
    let guest = app.guest().await;
    let mut game = Played::start(&app, &guest).await;

    // No room to grow: the free pages a migration's rebuilt table left in
    // the file are given back first, then the file's size is its most.
    app.store
        .on_sqlite_writer("vacuum")
        .await
        .expect("the database compacts");
    on_every_connection(&app, "pragma max_page_count = 1").await;

    // Moves fit in the pages already there for a while; the first one that
    // needs a new page is refused.
    let mut finished = Vec::new();
    let refused = loop {
        assert!(
            finished.len() < 20,
            "20 games played without the database filling up"
        );
        let Some(mv) = game.next_move() else {
            finished.push(std::mem::replace(
                &mut game,
                Played::start(&app, &guest).await,
            ));
            continue;
        };
        match game.send(&mv).await.as_str() {
            "ack" => {}
            // Over by repetition or the 75-move rule: a new game.
            "game_over" => {
                finished.push(std::mem::replace(
                    &mut game,
                    Played::start(&app, &guest).await,
                ));
            }
            "unavailable" => break mv,
            other => panic!("a move on a full disk refused with {other}"),
        }
    };

    // Nothing of the refused move was stored, and reading still works.
    assert_eq!(stored_moves(&app, &game.game, &guest).await, game.acked);
    let (status, _) = app.get("/healthz", None).await;
    assert_eq!(status, 200, "reads go on with the disk full");
    // A new game may or may not fit in the pages left; if it does not, the
    // answer says so clearly.
    let (status, retry_after, body) = create_local(&app, &guest).await;
    if status != 201 {
        assert_unavailable(status, retry_after.as_deref(), &body);
    }

    // Space comes back: the same move, sent again, is played, and so are more.
    on_every_connection(&app, "pragma max_page_count = 1073741823").await;
    assert_eq!(game.send(&refused).await, "ack");
    for _ in 0..4 {
        let Some(mv) = game.next_move() else { break };
        assert_eq!(game.send(&mv).await, "ack");
    }
    assert_eq!(stored_moves(&app, &game.game, &guest).await, game.acked);
    for earlier in &finished {
        assert_eq!(
            stored_moves(&app, &earlier.game, &guest).await,
            earlier.acked
        );
    }
    let (status, _, body) = create_local(&app, &guest).await;
    assert_eq!(status, 201, "{body}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_database_refuses_writes_as_unavailable_and_recovers() {
    let mut app = sqlite_app().await;
    let guest = app.guest().await;
    let mut game = Played::start(&app, &guest).await;
    for _ in 0..2 {
        let mv = game.next_move().expect("an opening move");
        assert_eq!(game.send(&mv).await, "ack");
    }
    let version = app.state(&game.game, Some(&guest)).await["version"].clone();

    on_every_connection(&app, "pragma query_only = on").await;

    let mv = game.next_move().expect("a move");
    assert_eq!(game.send(&mv).await, "unavailable");
    let (status, retry_after, body) = create_local(&app, &guest).await;
    assert_unavailable(status, retry_after.as_deref(), &body);
    // Reads go on, and the refused move left nothing behind.
    let state = app.state(&game.game, Some(&guest)).await;
    assert_eq!(state["version"], version, "{state}");
    assert_eq!(stored_moves(&app, &game.game, &guest).await, game.acked);

    on_every_connection(&app, "pragma query_only = off").await;
    assert_eq!(game.send(&mv).await, "ack");
    assert_eq!(stored_moves(&app, &game.game, &guest).await, game.acked);
    let (status, _, body) = create_local(&app, &guest).await;
    assert_eq!(status, 201, "{body}");
    app.stop().await;
}

/// A small tmpfs mounted for one test, unmounted (lazily, so a server still
/// holding files cannot keep it) when dropped.
struct SmallDisk {
    path: std::path::PathBuf,
}

impl SmallDisk {
    /// Mounts `size` (`4m`), or `None` when this process may not mount.
    fn mount(size: &str) -> Option<SmallDisk> {
        let path = std::env::temp_dir().join(format!("chess-small-disk-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&path).ok()?;
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&path)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        if !mounted {
            let _ = std::fs::remove_dir(&path);
            return None;
        }
        Some(SmallDisk { path })
    }

    /// Fills what is left of the disk with a file; removing it frees the space.
    fn fill(&self) -> std::path::PathBuf {
        use std::io::Write;
        let filler = self.path.join("filler");
        let mut file = std::fs::File::create(&filler).expect("the filler file");
        let block = vec![0u8; 4096];
        while file.write_all(&block).is_ok() {}
        let _ = file.sync_all();
        filler
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.path)
            .status();
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_refused_by_a_really_full_disk_does_not_spoil_the_connection() {
    let Some(disk) = SmallDisk::mount("4m") else {
        eprintln!("skipping: cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)");
        return;
    };
    let url = format!("sqlite://{}", disk.path.join("chess.db").display());
    let mut settings = test_settings(&url);
    // Up to 181 moves from one socket as fast as the server acks them: more
    // than a person's burst allowance, which this test is not about.
    settings.ws_rate_burst = 1_000;
    let mut app = start(settings, Backend::Sqlite).await;
    let guest = app.guest().await;
    let mut game = Played::start(&app, &guest).await;
    let opening = game.next_move().expect("a first move");
    assert_eq!(game.send(&opening).await, "ack");

    // No space left: the next commit that must grow the log is refused.
    // The commits before it may still fit: after a checkpoint SQLite writes
    // the log again from its start, in space the file already has (at most
    // the 4 MiB disk).
    let filler = disk.fill();
    let mut refused = None;
    for _ in 0..150 {
        let mv = game.next_move().expect("a move");
        match game.send(&mv).await.as_str() {
            "ack" => {}
            "unavailable" => {
                refused = Some(mv);
                break;
            }
            other => panic!("a move on a full disk refused with {other}"),
        }
    }
    let refused = refused.expect("a move refused while the disk is full");

    // Space comes back: from the first move on, every one is played. A
    // connection whose COMMIT failed must not refuse the moves after it.
    std::fs::remove_file(filler).expect("free the space");
    assert_eq!(game.send(&refused).await, "ack");
    for _ in 0..30 {
        let Some(mv) = game.next_move() else { break };
        assert_eq!(game.send(&mv).await, "ack", "after {:?}", game.acked);
    }
    assert_eq!(stored_moves(&app, &game.game, &guest).await, game.acked);
    app.stop().await;
}

/// `chattr` on the database file and its `-wal` and `-shm`: `true` when it
/// took on every one.
fn chattr(flag: &str, database: &std::path::Path) -> bool {
    let mut files = vec![database.to_path_buf()];
    for suffix in ["-wal", "-shm"] {
        let mut name = database.as_os_str().to_owned();
        name.push(suffix);
        files.push(name.into());
    }
    std::process::Command::new("chattr")
        .arg(flag)
        .args(&files)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Closes every connection the server's pools hold idle, and the group
/// commit's own, so that the next query (and the next batch) opens a new one.
async fn close_idle_connections(app: &TestApp) {
    assert_eq!(app.backend, Backend::Sqlite, "an SQLite store");
    app.store.close_idle_sqlite_connections().await;
}

/// A database file made immutable (`chattr +i`) under a running server. What
/// really happens, found by trying it (Linux 6.18, tmpfs): the flag is
/// checked when a file is opened, not at each write, so the server's open
/// connections go on writing (and checkpointing) as if nothing happened.
/// Only a connection opened afterwards meets it, and SQLite then opens the
/// file read-only rather than failing, a connection that stays read-only for
/// good. The server refuses to keep such a connection (it would refuse
/// every write it is given long after the file is writable again): the move
/// that needed it is refused `unavailable`, and once the flag is cleared the
/// same move and the next ones are played.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_file_made_immutable_refuses_new_connections_and_recovers() {
    let Some(disk) = SmallDisk::mount("16m") else {
        eprintln!("skipping: cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)");
        return;
    };
    let database = disk.path.join("chess.db");
    let url = format!("sqlite://{}", database.display());
    let mut app = start(test_settings(&url), Backend::Sqlite).await;
    let guest = app.guest().await;
    let mut game = Played::start(&app, &guest).await;
    for _ in 0..2 {
        let mv = game.next_move().expect("an opening move");
        assert_eq!(game.send(&mv).await, "ack");
    }
    if !chattr("+i", &database) {
        chattr("-i", &database);
        eprintln!("skipping: chattr +i does not work on this filesystem");
        app.stop().await;
        return;
    }

    // The open connections do not notice.
    let mv = game.next_move().expect("a move");
    assert_eq!(game.send(&mv).await, "ack", "through an open connection");
    let version = app.state(&game.game, Some(&guest)).await["version"].clone();

    // A new connection opens the file read-only: refused, and the move with it.
    close_idle_connections(&app).await;
    let refused = game.next_move().expect("a move");
    let answer = game.send(&refused).await;
    // The live game is in memory: reading it needs no connection.
    let read = app
        .request(
            "GET",
            &format!("/api/games/{}", game.game),
            &[("cookie", guest.cookie.as_str())],
            None,
        )
        .await;
    let read_status = read.status().as_u16();
    let read: Value = read.json().await.unwrap_or(Value::Null);
    // Cleared before asserting, so that a failure leaves a removable disk.
    assert!(chattr("-i", &database), "chattr -i");
    assert_eq!(answer, "unavailable", "a move needing a new connection");
    assert_eq!(read_status, 200, "{read}");
    assert_eq!(
        read["version"], version,
        "the refused move moved nothing: {read}"
    );
    let read_moves: Vec<&str> = read["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .filter_map(|mv| mv["uci"].as_str())
        .collect();
    assert_eq!(
        read_moves, game.acked,
        "the refused move is not in the game"
    );

    // Writable again: the refused move and the next ones are played, with
    // nothing lost or added.
    assert_eq!(
        game.send(&refused).await,
        "ack",
        "the refused move, sent again"
    );
    for _ in 0..10 {
        let Some(mv) = game.next_move() else { break };
        assert_eq!(game.send(&mv).await, "ack", "after {:?}", game.acked);
    }
    assert_eq!(stored_moves(&app, &game.game, &guest).await, game.acked);
    app.stop().await;
}
