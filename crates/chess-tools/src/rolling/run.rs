//! A whole run: two nodes on a fresh Postgres database (and nginx in front
//! when asked), the games, then each stop: play, stop a node at a random
//! moment, wait for every player to be back, check the games and clocks,
//! start the node again. At the end White resigns every game, and both nodes
//! must show the same, complete games.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use tokio::task::JoinSet;
use tokio::time::Instant;
use uuid::Uuid;

use crate::client::Api;
use crate::rolling::config::{Config, Signal};
use crate::rolling::proxy::{Proxy, ProxyError};
use crate::rolling::report::{Report, Shared};
use crate::rolling::seat::{COLORS, Game, Seat};
use crate::server::{Backend, Database, ServerError, ServerProcess};

/// 10+5: blitz long enough that every stop falls inside running games.
const TIME_CONTROL_MS: (u64, u64) = (600_000, 5_000);
/// Longest the players may take to be back and settled after a stop.
const BACK_WITHIN: Duration = Duration::from_secs(20);
/// A clock may differ this much from the time that passed (the server's
/// clocks are computed to the millisecond from stored times).
const CLOCK_TOLERANCE_MS: u64 = 50;
/// Longest the games may take to end once White resigns.
const FINISH_WITHIN: Duration = Duration::from_secs(30);

/// Why a run could not be made (findings are in the report instead).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Server(#[from] ServerError),
    #[error(transparent)]
    Proxy(#[from] ProxyError),
    #[error("setting up the run: {0}")]
    Setup(String),
}

/// Runs the stops of `config` and returns what was found.
///
/// # Errors
/// A [`RunError`] when the nodes, the proxy or the games cannot be set up.
pub async fn run(config: &Config) -> Result<Report, RunError> {
    let folder = std::env::temp_dir().join(format!("chess-rolling-{}", Uuid::new_v4()));
    std::fs::create_dir_all(&folder).map_err(|source| ServerError::Folder {
        path: folder.clone(),
        source,
    })?;
    let database = Database::create(Backend::Postgres, &folder, None).await?;
    let outcome = run_on(config, &folder, &database.url).await;
    if config.keep
        || outcome
            .as_ref()
            .is_ok_and(|report| !report.findings.is_empty())
    {
        eprintln!(
            "rolling: kept {} and database {}",
            folder.display(),
            database.name()
        );
    } else {
        database.remove().await;
        let _ = std::fs::remove_dir_all(&folder);
    }
    outcome
}

async fn run_on(config: &Config, folder: &std::path::Path, url: &str) -> Result<Report, RunError> {
    let started = Instant::now();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|error| RunError::Setup(error.to_string()))?;
    let secret = Uuid::new_v4().simple().to_string().repeat(2);
    let mut nodes = Vec::new();
    for name in ["a", "b"] {
        let node_folder = folder.join(format!("node-{name}"));
        std::fs::create_dir_all(&node_folder).map_err(|source| ServerError::Folder {
            path: node_folder.clone(),
            source,
        })?;
        let mut node = ServerProcess::new(config.server.clone(), node_folder, url.to_owned())?;
        node.set_env("NODE_NAME", name);
        // Every node signs cookies with the same secret: a player's cookie
        // works on whichever node the proxy picks.
        node.set_env("CHESS_SECRET", &secret);
        node.set_env("TRUSTED_PROXIES", "127.0.0.1");
        node.spawn()?;
        nodes.push(node);
    }
    for node in &mut nodes {
        node.wait_healthy(&http).await?;
    }
    let proxy = match &config.proxy_config {
        Some(path) => {
            let addresses = [nodes[0].address(), nodes[1].address()];
            Some(
                Proxy::start(
                    &config.nginx,
                    path,
                    [&addresses[0], &addresses[1]],
                    folder,
                    &http,
                )
                .await?,
            )
        }
        None => None,
    };
    let entrances: Vec<Api> = match &proxy {
        Some(proxy) => vec![Api::new(http.clone(), proxy.base_url())],
        None => nodes
            .iter()
            .map(|node| Api::new(http.clone(), node.base_url()))
            .collect(),
    };
    let entrances = Arc::new(entrances);
    let label = format!(
        "two nodes on Postgres{}, {} games of 10+5",
        if proxy.is_some() {
            " behind nginx"
        } else {
            ", players try node A then node B"
        },
        config.games
    );

    let shared = Arc::new(Shared::default());
    let mut rng = StdRng::seed_from_u64(config.seed);
    let (games, mut seats) = start_games(config, &entrances, &shared, &mut rng).await?;

    for switch in &config.switches {
        shared.hold.store(false, Ordering::SeqCst);
        let play = config.play.mul_f64(rng.random_range(0.5..=1.0));
        tokio::time::sleep(play).await;

        // The stop, and the hold a moment later: players keep moving (and
        // resend what the stop swallowed) around it.
        shared.stopped_now();
        let node = &mut nodes[switch.node];
        match switch.signal {
            Signal::Term => {
                shared.count("stops_term");
                match node.terminate(Duration::from_secs(30)).await {
                    Some(took) => shared.node_stopped_in(took),
                    None => shared.fail("protocol", "-", "a node ignored SIGTERM for 30 s"),
                }
            }
            Signal::Kill => {
                shared.count("stops_kill");
                node.kill();
            }
        }
        tokio::time::sleep(Duration::from_millis(rng.random_range(100..=600))).await;
        shared.hold.store(true, Ordering::SeqCst);

        wait_settled(&games, &shared).await;
        let survivor = &entrances_for(&entrances, proxy.is_some(), 1 - switch.node);
        check_games(&games, survivor, &shared).await;
        tokio::time::sleep(config.down).await;
        // The stopped node comes back; clocks kept running meanwhile.
        check_games(&games, survivor, &shared).await;
        let node = &mut nodes[switch.node];
        node.spawn()?;
        node.wait_healthy(&http).await?;
    }

    // The end: a last stretch of play, then White resigns everywhere.
    shared.hold.store(false, Ordering::SeqCst);
    tokio::time::sleep(config.play).await;
    shared.finish.store(true, Ordering::SeqCst);
    let finished = tokio::time::timeout(FINISH_WITHIN, async {
        while seats.join_next().await.is_some() {}
    })
    .await;
    if finished.is_err() {
        let waiting: Vec<String> = games
            .iter()
            .filter(|game| !game.unsettled().is_empty())
            .map(|game| format!("{} ({})", game.id, game.unsettled()))
            .collect();
        shared.fail(
            "result",
            "-",
            format!(
                "games did not end within 30 s of the resignations: {}",
                waiting.join(", ")
            ),
        );
        seats.abort_all();
    }
    for node in &nodes {
        let api = Api::new(http.clone(), node.base_url());
        check_results(&games, &api, &shared).await;
    }
    for node in &nodes {
        for panic in node.panics_logged() {
            shared.fail("protocol", "-", format!("a node panicked: {panic}"));
        }
    }
    drop(proxy);
    Ok(shared.report(label, started.elapsed()))
}

/// The entrances that reach node `up` while the other is stopped: the proxy,
/// or that node itself.
fn entrances_for(entrances: &[Api], proxied: bool, up: usize) -> Api {
    if proxied {
        entrances[0].clone()
    } else {
        entrances[up].clone()
    }
}

/// Creates the games (two guests each) and starts their players.
async fn start_games(
    config: &Config,
    entrances: &Arc<Vec<Api>>,
    shared: &Arc<Shared>,
    rng: &mut StdRng,
) -> Result<(Vec<Arc<Game>>, JoinSet<()>), RunError> {
    let api = &entrances[0];
    let setup = |what: &str, error: crate::client::CallError| {
        RunError::Setup(format!("{what}: {}", error.0))
    };
    let time_control = json!({
        "kind": "clock",
        "initial_ms": TIME_CONTROL_MS.0,
        "increment_ms": TIME_CONTROL_MS.1,
    });
    let mut games = Vec::new();
    let mut seats = JoinSet::new();
    for _ in 0..config.games {
        let white = api.new_guest().await.map_err(|e| setup("a guest", e))?;
        let black = api.new_guest().await.map_err(|e| setup("a guest", e))?;
        let id = api
            .create_game(&white, &black, &time_control, false)
            .await
            .map_err(|e| setup("a game", e))?;
        let game = Arc::new(Game::new(id));
        for (color, person) in [white, black].into_iter().enumerate() {
            let seat = Seat::new(
                Arc::clone(&game),
                color,
                person,
                Arc::clone(entrances),
                Arc::clone(shared),
                rng.random(),
                config.think_ms,
            );
            seats.spawn(seat.play());
        }
        games.push(game);
    }
    Ok((games, seats))
}

/// Waits until every player is connected with nothing in flight; a player
/// still away after [`BACK_WITHIN`] is a finding.
async fn wait_settled(games: &[Arc<Game>], shared: &Shared) {
    // The players of a stopped node notice at once; give them that moment.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let deadline = Instant::now() + BACK_WITHIN;
    while Instant::now() < deadline {
        if games.iter().all(|game| game.is_settled()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for game in games.iter().filter(|game| !game.is_settled()) {
        shared.fail(
            "not_back",
            &game.id,
            format!(
                "not back and settled {BACK_WITHIN:?} after a stop: {}",
                game.unsettled()
            ),
        );
    }
}

/// Every game as a node shows it: every move a player was told of is there,
/// and, when no move was played since the clocks the players saw last, the
/// side on move lost exactly the time that passed since then.
async fn check_games(games: &[Arc<Game>], api: &Api, shared: &Shared) {
    for game in games {
        let state = match api.state(&game.id, None).await {
            Ok(state) => state,
            Err(error) => {
                shared.fail("protocol", &game.id, format!("GET state: {}", error.0));
                continue;
            }
        };
        shared.count("states_checked");
        check_moves(game, &state, shared);
        let Some((plies, seen)) = game.known_clocks() else {
            continue;
        };
        let stored_plies = state["moves"].as_array().map_or(0, Vec::len);
        if stored_plies != plies || state["status"] != "playing" {
            continue; // a move since, or the end: the next check covers it
        }
        let clocks = &state["clocks"];
        let elapsed = clocks["as_of"]
            .as_u64()
            .unwrap_or(0)
            .saturating_sub(seen["as_of"].as_u64().unwrap_or(0));
        let mut error_ms = 0;
        for color in COLORS {
            let key = format!("{color}_ms");
            let before = seen[&key].as_u64().unwrap_or(0);
            let running = clocks["running"] == color;
            let expected = if running {
                before.saturating_sub(elapsed)
            } else {
                before
            };
            error_ms = error_ms.max(clocks[&key].as_u64().unwrap_or(0).abs_diff(expected));
        }
        shared.clock_checked(error_ms);
        if error_ms > CLOCK_TOLERANCE_MS {
            shared.fail(
                "clock",
                &game.id,
                format!("clocks {clocks} after {seen} ({elapsed} ms later): {error_ms} ms off"),
            );
        }
    }
}

/// Every move a player was told of is in `state`, at its ply.
fn check_moves(game: &Game, state: &Value, shared: &Shared) {
    let stored: Vec<&str> = state["moves"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["uci"].as_str())
        .collect();
    for (ply, uci) in game.known_moves() {
        if stored.get(ply) != Some(&uci.as_str()) {
            shared.fail(
                "move_lost",
                &game.id,
                format!("ply {ply} was {uci}, the node has {:?}", stored.get(ply)),
            );
        }
    }
}

/// At the end, on one node: every game is over, by White's resignation or
/// by the board (never a timeout or an abort), with every move.
async fn check_results(games: &[Arc<Game>], api: &Api, shared: &Shared) {
    for game in games {
        let Ok(state) = api.state(&game.id, None).await else {
            shared.fail("protocol", &game.id, "GET state failed at the end");
            continue;
        };
        check_moves(game, &state, shared);
        let reason = state["result"]["reason"].as_str().unwrap_or("none");
        let resigned = reason == "resignation" && state["result"]["winner"] == "black";
        let by_the_board = [
            "checkmate",
            "stalemate",
            "insufficient_material",
            "threefold_repetition",
            "fifty_moves",
        ]
        .contains(&reason);
        if state["status"] != "finished" || !(resigned || by_the_board) {
            shared.fail(
                "result",
                &game.id,
                format!("status {} result {}", state["status"], state["result"]),
            );
        }
        shared.count("results_checked");
    }
}
