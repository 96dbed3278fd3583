//! A whole run: the server process up on a fresh database, then cycles of
//! (top up the games, check and resume every game, play, SIGKILL, restart),
//! a last check after the last restart, the ledger and the ratings, the figures.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use tokio::task::JoinSet;
use tokio::time::Instant;
use uuid::Uuid;

use crate::client::{Api, CallError, Person};
use crate::crash::cluster::Cluster;
use crate::crash::config::{Backend, Config, Fault};
use crate::crash::game::{Behaviour, COLORS, Seat, Tracked};
use crate::crash::report::{Recorder, Report};
use crate::crash::{ledger, ratings, verify};
use crate::server::{Database, ServerError, ServerProcess};

/// Accounts made at the start; wins between them go through the ledger.
/// Four, because the server allows five sign-ups per address and hour.
const ACCOUNTS: usize = 4;
/// Share of the games played between two accounts (the others by guests).
const ACCOUNT_GAME_SHARE: f64 = 0.5;
/// Chance that a restart is itself killed during start-up (recovery included).
const STARTUP_KILL_CHANCE: f64 = 0.15;
/// Longest the server may take to acknowledge moves again after the
/// database came back.
const RECOVERY_WITHIN: Duration = Duration::from_secs(10);
/// The tmpfs under the cluster of `--fault disk-full`: a fresh cluster takes
/// about 40 MB (16 MB of it the first WAL segment), so this leaves room
/// for the run's games and a WAL segment or two between the faults.
const DISK_FULL_TMPFS: &str = "256m";
/// Longest the seats may take to notice the kill.
const SEATS_STOP_WITHIN: Duration = Duration::from_secs(30);

/// Why a run could not be made (findings are in the report instead).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Server(#[from] ServerError),
    #[error("setting up the run: {0}")]
    Setup(String),
    #[error("the run's own Postgres cluster: {0}")]
    Cluster(#[from] crate::crash::cluster::ClusterError),
}

/// Runs the cycles described by `config` and returns what was found.
///
/// # Errors
/// A [`RunError`] when the server cannot be started or the players set up.
pub async fn run(config: &Config) -> Result<Report, RunError> {
    let folder = std::env::temp_dir().join(format!("chess-crash-{}", Uuid::new_v4()));
    std::fs::create_dir_all(&folder).map_err(|source| ServerError::Folder {
        path: folder.clone(),
        source,
    })?;
    // Database faults need a cluster of the run's own: the shared one is
    // never restarted.
    let cluster = match config.fault {
        Fault::KillServer => None,
        Fault::RestartDatabase | Fault::TerminateBackends => Some(Cluster::start(&folder)?),
        Fault::DiskFull => Some(Cluster::start_on_tmpfs(&folder, DISK_FULL_TMPFS)?),
    };
    let admin_url = cluster.as_ref().map(|cluster| cluster.url("postgres"));
    let database = Database::create(config.backend, &folder, admin_url).await?;
    let recorder = Arc::new(Recorder::default());
    let started = Instant::now();
    let faults = Faults {
        cluster: cluster.as_ref(),
        database: database.name(),
    };
    let outcome = cycles(config, &folder, &database.url, faults, &recorder).await;
    let label = format!(
        "{} ({}), {} cycles, {} games at once, seed {}, {:?} {}..{} ms after resuming, think up to {} ms",
        match config.backend {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        },
        config.server.display(),
        config.cycles,
        config.games,
        config.seed,
        config.fault,
        config.kill_after.0.as_millis(),
        config.kill_after.1.as_millis(),
        config.think.as_millis()
    );
    let report = recorder.report(label, &config.tolerate, started.elapsed());
    if config.keep || outcome.is_err() || !report.failures().is_empty() {
        eprintln!(
            "crash: kept the server's data and log in {} (database {})",
            folder.display(),
            database.url
        );
    } else {
        database.remove().await;
        drop(cluster);
        let _ = std::fs::remove_dir_all(&folder);
    }
    outcome.map(|()| report)
}

/// The run's own Postgres cluster and the server's database in it, for the
/// database faults.
#[derive(Clone, Copy, Debug)]
struct Faults<'a> {
    cluster: Option<&'a Cluster>,
    database: &'a str,
}

async fn cycles(
    config: &Config,
    folder: &std::path::Path,
    database_url: &str,
    faults: Faults<'_>,
    recorder: &Arc<Recorder>,
) -> Result<(), RunError> {
    let mut server = ServerProcess::new(
        config.server.clone(),
        PathBuf::from(folder),
        database_url.to_owned(),
    )?;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(15))
        .build()
        .map_err(|error| RunError::Setup(error.to_string()))?;
    server.spawn()?;
    recorder.count("starts");
    server.wait_healthy(&http).await?;
    let api = Api::new(http.clone(), server.base_url());
    let mut accounts = Vec::new();
    for index in 0..ACCOUNTS {
        let account = api
            .sign_up(&format!("crash-player-{index}"), "crash-cycles-password")
            .await
            .map_err(|CallError(code)| RunError::Setup(format!("sign-up: {code}")))?;
        accounts.push(account);
    }
    let mut rng = StdRng::seed_from_u64(config.seed);
    let behaviour = Behaviour {
        think: config.think,
        database_faults: config.fault != Fault::KillServer,
    };
    // After a server kill every socket is gone, so premoves must be too.
    let premoves_dropped = config.fault == Fault::KillServer;
    let mut all: Vec<Arc<Tracked>> = Vec::new();
    let mut live: Vec<Arc<Tracked>> = Vec::new();
    for cycle in 0..config.cycles {
        for account in &mut accounts {
            if let Err(CallError(code)) = api.renew(account).await {
                recorder.fail("protocol", "-", format!("renewing a session: {code}"));
            }
        }
        while live.len() < config.games {
            let game = new_game(&api, &accounts, &mut rng, recorder).await?;
            all.push(Arc::clone(&game));
            live.push(game);
        }
        let seats = resume_all(&api, &live, behaviour, premoves_dropped, &mut rng, recorder).await;
        let killed = Arc::new(AtomicBool::new(false));
        let mut playing = JoinSet::new();
        for seat in seats {
            playing.spawn(seat.play(Arc::clone(&killed)));
        }
        let (min, max) = config.kill_after;
        tokio::time::sleep(rng.random_range(min..=max)).await;
        if !server.is_running() {
            recorder.fail(
                "panic",
                "-",
                "the server process ended by itself while games were played",
            );
        }
        let down_since = Instant::now();
        match (config.fault, faults.cluster) {
            (Fault::RestartDatabase, Some(cluster)) => {
                cluster.stop_immediately()?;
                tokio::time::sleep(Duration::from_millis(rng.random_range(300..=2_000))).await;
                cluster.start_again()?;
                if !recover(&mut server, &http, &mut playing, &killed, recorder).await? {
                    describe_stall(&api, &live, recorder).await;
                }
            }
            (Fault::DiskFull, Some(cluster)) => {
                // Every free byte taken for 1 to 3 s: Postgres cannot extend
                // a table or its log. Then the space comes back (the filler
                // removed), and the server must recover by itself.
                let filler = cluster.fill_disk()?;
                tokio::time::sleep(Duration::from_millis(rng.random_range(1_000..=3_000))).await;
                if !server.is_running() {
                    recorder.fail("panic", "-", "the server process ended on a full disk");
                }
                std::fs::remove_file(&filler).map_err(crate::crash::cluster::ClusterError::Io)?;
                recorder.count("disk_fills");
                if !recover(&mut server, &http, &mut playing, &killed, recorder).await? {
                    describe_stall(&api, &live, recorder).await;
                }
            }
            (Fault::TerminateBackends, Some(cluster)) => {
                // A storm: every connection of the server, ten times in a second.
                for _ in 0..10 {
                    let terminated = cluster.terminate_backends(faults.database).await?;
                    recorder.add("backends_terminated", terminated);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                if !recover(&mut server, &http, &mut playing, &killed, recorder).await? {
                    describe_stall(&api, &live, recorder).await;
                }
            }
            _ => {
                killed.store(true, Ordering::SeqCst);
                server.kill();
                let stopped = async { while playing.join_next().await.is_some() {} };
                if tokio::time::timeout(SEATS_STOP_WITHIN, stopped)
                    .await
                    .is_err()
                {
                    recorder.fail(
                        "protocol",
                        "-",
                        "players still connected long after the kill",
                    );
                }
                restart(&mut server, &http, &mut rng, recorder).await?;
            }
        }
        recorder.count("kills");
        recorder.downtime(down_since.elapsed());
        live.retain(|game| !game.is_finished());
        eprintln!(
            "crash: cycle {} of {}: {} games in play, {} findings",
            cycle + 1,
            config.cycles,
            live.len(),
            recorder.findings_count()
        );
    }
    // The last restart is checked too; nobody plays on.
    for seat in resume_all(&api, &live, behaviour, premoves_dropped, &mut rng, recorder).await {
        seat.close().await;
    }
    let mut states = Vec::new();
    for game in &all {
        match api.state(&game.id, None).await {
            Ok(state) => states.push(state),
            Err(CallError(code)) => {
                recorder.fail("protocol", &game.id, format!("final state: {code}"));
            }
        }
    }
    ledger::check(database_url, &states, recorder).await;
    ratings::check(database_url, &states, recorder).await;
    server.kill();
    for line in server.panics_logged() {
        recorder.fail("panic", "-", line);
    }
    Ok(())
}

/// After a database fault: the server answers `/healthz` again by itself and
/// acknowledges moves again (within [`RECOVERY_WITHIN`]); then the players
/// leave, for the games to be checked.
async fn recover(
    server: &mut ServerProcess,
    http: &reqwest::Client,
    playing: &mut JoinSet<crate::crash::game::SeatEnd>,
    killed: &AtomicBool,
    recorder: &Recorder,
) -> Result<bool, ServerError> {
    server.wait_healthy(http).await?;
    let acked = recorder.count_of("moves_acked");
    let healthy = Instant::now();
    let deadline = healthy + RECOVERY_WITHIN;
    loop {
        // Players whose games ended are done: reap them, so that only games
        // still in play are waited for.
        while playing.try_join_next().is_some() {}
        if recorder.count_of("moves_acked") != acked {
            eprintln!(
                "crash: a move was acknowledged {} ms after the database came back",
                healthy.elapsed().as_millis()
            );
            break;
        }
        if playing.is_empty() {
            break;
        }
        if Instant::now() > deadline {
            recorder.fail(
                "protocol",
                "-",
                format!("no move was acknowledged within {RECOVERY_WITHIN:?} after the database came back"),
            );
            killed.store(true, Ordering::SeqCst);
            playing.shutdown().await;
            return Ok(false);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    killed.store(true, Ordering::SeqCst);
    playing.shutdown().await;
    Ok(true)
}

/// After a stall: where each game stands, as the server and its players see it.
async fn describe_stall(api: &Api, live: &[Arc<Tracked>], recorder: &Recorder) {
    for game in live {
        let record = game.record().clone();
        let served = api.state(&game.id, None).await.unwrap_or_default();
        recorder.fail(
            "protocol",
            &game.id,
            format!(
                "stalled: {} moves stored, {} confirmed to the players, status {}, turn {}, moves awaiting an ack (white, black) {:?}, result known {}",
                served["moves"].as_array().map_or(0, Vec::len),
                record.confirmed.len(),
                served["status"],
                served["turn"],
                record.pending,
                record.result.is_some()
            ),
        );
    }
}

/// Starts the server again on the same data, sometimes killing it once more
/// during start-up first (while it migrates and recovers the games).
async fn restart(
    server: &mut ServerProcess,
    http: &reqwest::Client,
    rng: &mut StdRng,
    recorder: &Recorder,
) -> Result<(), ServerError> {
    if rng.random_bool(STARTUP_KILL_CHANCE) {
        server.spawn()?;
        recorder.count("starts");
        tokio::time::sleep(Duration::from_millis(rng.random_range(0..=300))).await;
        server.kill();
        recorder.count("startup_kills");
    }
    server.spawn()?;
    recorder.count("starts");
    server.wait_healthy(http).await
}

/// A new timed game between two guests or two different accounts.
async fn new_game(
    api: &Api,
    accounts: &[Person],
    rng: &mut StdRng,
    recorder: &Recorder,
) -> Result<Arc<Tracked>, RunError> {
    // Long enough that no clock runs out over many cycles of downtime; an
    // increment for some, so increments are stored and restored too.
    let time_control = if rng.random_bool(0.5) {
        json!({ "kind": "clock", "initial_ms": 1_800_000, "increment_ms": 0 })
    } else {
        json!({ "kind": "clock", "initial_ms": 600_000, "increment_ms": 5_000 })
    };
    let max_plies = rng.random_range(20..=120);
    if rng.random_bool(ACCOUNT_GAME_SHARE) {
        let white = rng.random_range(0..accounts.len());
        let black = (white + rng.random_range(1..accounts.len())) % accounts.len();
        let people = [accounts[white].clone(), accounts[black].clone()];
        match api
            .create_game(&people[0], &people[1], &time_control, true)
            .await
        {
            Ok(id) => {
                recorder.count("games_started");
                recorder.count("account_games");
                return Ok(Arc::new(Tracked::new(id, people, max_plies)));
            }
            // The server limits games created per player and minute: guests
            // play this one instead.
            Err(CallError(code)) if code == "too_many_requests" => {
                recorder.count("account_games_rate_limited");
            }
            Err(CallError(code)) => {
                return Err(RunError::Setup(format!("creating an account game: {code}")));
            }
        }
    }
    let guests = async { Ok::<_, CallError>([api.new_guest().await?, api.new_guest().await?]) };
    let people = guests
        .await
        .map_err(|CallError(code)| RunError::Setup(format!("new guests: {code}")))?;
    let id = api
        .create_game(&people[0], &people[1], &time_control, false)
        .await
        .map_err(|CallError(code)| RunError::Setup(format!("creating a game: {code}")))?;
    recorder.count("games_started");
    Ok(Arc::new(Tracked::new(id, people, max_plies)))
}

/// Checks every game against what its clients knew (see `verify`), then
/// reconnects both seats with `hello{version}`: the seats, ready to play.
async fn resume_all(
    api: &Api,
    games: &[Arc<Tracked>],
    behaviour: Behaviour,
    premoves_dropped: bool,
    rng: &mut StdRng,
    recorder: &Arc<Recorder>,
) -> Vec<Seat> {
    let mut resuming = JoinSet::new();
    for game in games {
        let seeds = [rng.random::<u64>(), rng.random::<u64>()];
        let (api, game, recorder) = (api.clone(), Arc::clone(game), Arc::clone(recorder));
        resuming.spawn(async move {
            resume(&api, game, seeds, behaviour, premoves_dropped, &recorder).await
        });
    }
    let mut seats = Vec::new();
    while let Some(resumed) = resuming.join_next().await {
        if let Ok(resumed) = resumed {
            seats.extend(resumed);
        }
    }
    seats
}

async fn resume(
    api: &Api,
    game: Arc<Tracked>,
    seeds: [u64; 2],
    behaviour: Behaviour,
    premoves_dropped: bool,
    recorder: &Arc<Recorder>,
) -> Vec<Seat> {
    let before = game.record().clone();
    let mut states: [Value; 2] = [Value::Null, Value::Null];
    for (seat, state) in states.iter_mut().enumerate() {
        match api.state(&game.id, Some(&game.people[seat])).await {
            Ok(served) => *state = served,
            Err(CallError(code)) => {
                recorder.fail(
                    "protocol",
                    &game.id,
                    format!("state as {}: {code}", COLORS[seat]),
                );
                return Vec::new();
            }
        }
    }
    if !before.confirmed.is_empty() {
        recorder.count("games_resumed");
    }
    verify::after_restart(&game.id, &before, &states, premoves_dropped, recorder);
    let mut seats = Vec::new();
    for (seat, state) in states.iter().enumerate() {
        let socket = match api.socket(&game.id, &game.people[seat]).await {
            Ok(socket) => socket,
            Err(CallError(code)) => {
                recorder.fail(
                    "protocol",
                    &game.id,
                    format!("socket as {}: {code}", COLORS[seat]),
                );
                continue;
            }
        };
        let mut player = Seat::new(
            Arc::clone(&game),
            seat,
            socket,
            seeds[seat],
            behaviour,
            Arc::clone(recorder),
        );
        if let Err(closed) = player.sync().await {
            recorder.fail(
                "protocol",
                &game.id,
                format!("hello as {}: {closed:?}", COLORS[seat]),
            );
            continue;
        }
        player.prime(state);
        seats.push(player);
    }
    seats
}
