//! A whole run: the nodes on a fresh database; an organiser who makes a
//! club, a class of pupils (who choose their passwords) and a 1+0 arena
//! for the club; the pupils join and play it out; half-way one node is
//! killed with SIGKILL (the one pairing the arena, when there are several)
//! and started again; at the end every node's standings are read and the
//! stored rows audited.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chess_server::tournament::director::{LEASE_MS, TICK};
use serde_json::{Value, json};
use tokio::task::JoinSet;
use tokio::time::Instant;
use uuid::Uuid;

use crate::arena::audit::{self, Outage};
use crate::arena::config::Config;
use crate::arena::player::{Arena, Doors, PlayerLog, Pupil, attend, unix_ms};
use crate::arena::report::Report;
use crate::client::{Api, CallError, Person};
use crate::crash::audit::read_only;
use crate::server::{Backend, Database, ServerError, ServerProcess};

/// How long after the pupils are ready the arena starts (they join first).
const START_AFTER_MS: i64 = 10_000;
/// When in the arena the node is killed, as a share of its length.
const KILL_AT: f64 = 0.45;

/// Why a run could not be made (findings are in the report instead).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Server(#[from] ServerError),
    #[error("setting up the arena: {0}")]
    Setup(String),
    #[error("reading the stored rows: {0}")]
    Audit(String),
}

impl From<CallError> for RunError {
    fn from(error: CallError) -> RunError {
        RunError::Setup(error.0)
    }
}

/// Runs the arena of `config` and returns what was found.
///
/// # Errors
/// A [`RunError`] when the nodes, the class or the arena cannot be set up.
pub async fn run(config: &Config) -> Result<Report, RunError> {
    let folder = std::env::temp_dir().join(format!("chess-arena-{}", Uuid::new_v4()));
    std::fs::create_dir_all(&folder).map_err(|source| ServerError::Folder {
        path: folder.clone(),
        source,
    })?;
    let database = Database::create(config.backend, &folder, None).await?;
    let outcome = run_on(config, &folder, &database.url).await;
    let failed = outcome
        .as_ref()
        .map_or(true, |report| !report.findings.is_empty());
    if config.keep || failed {
        eprintln!(
            "arena: kept {} (server logs) and database {}",
            folder.display(),
            if database.name().is_empty() {
                &database.url
            } else {
                database.name()
            }
        );
    } else {
        database.remove().await;
        let _ = std::fs::remove_dir_all(&folder);
    }
    outcome
}

async fn run_on(config: &Config, folder: &Path, database_url: &str) -> Result<Report, RunError> {
    let started = Instant::now();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|error| RunError::Setup(error.to_string()))?;
    let mut nodes = start_nodes(config, folder, database_url, &http).await?;
    let apis: Arc<Vec<Api>> = Arc::new(
        nodes
            .iter()
            .map(|node| Api::new(http.clone(), node.base_url()))
            .collect(),
    );
    let mut report = Report::new(format!(
        "{} pupils, a {}-minute 1+0 arena on {} node{} on {}{}",
        config.players,
        config.minutes,
        config.nodes,
        if config.nodes == 1 { "" } else { "s" },
        match config.backend {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "Postgres",
        },
        if config.kill {
            ", one killed half-way"
        } else {
            ""
        }
    ));

    let (organiser, club) = organiser_and_club(&apis[0]).await?;
    let pupils = class(&apis, &organiser, &club, config.players).await?;
    let arena = create_arena(&apis[0], &organiser, &club, config.minutes).await?;
    join(&apis, &arena, &pupils).await?;

    let mut players = JoinSet::new();
    for (index, pupil) in pupils.into_iter().enumerate() {
        let doors = Doors::new(apis.clone(), index);
        let seed = config.seed.wrapping_mul(1_000).wrapping_add(index as u64);
        players.spawn(attend(arena.clone(), doors, pupil, seed));
    }
    let mut outages = Vec::new();
    if config.kill {
        let length = arena.ends_at - arena.starts_at;
        let kill_at = arena.starts_at + (length as f64 * KILL_AT) as i64;
        tokio::time::sleep(Duration::from_millis(
            u64::try_from(kill_at - unix_ms()).unwrap_or(0),
        ))
        .await;
        outages.push(kill_one(config, &mut nodes, database_url, &http, &mut report).await?);
    }
    let mut logs: Vec<PlayerLog> = Vec::new();
    while let Some(log) = players.join_next().await {
        logs.push(log.map_err(|error| RunError::Setup(format!("a pupil's task: {error}")))?);
    }
    report.add(
        "games_played_by_pupils",
        logs.iter().map(|log| log.games.len() as u64).sum(),
    );

    let mut standings = Vec::new();
    for api in apis.iter() {
        standings.push(all_standings(api, &organiser, &arena.id).await?);
    }
    for (index, node) in nodes.iter_mut().enumerate() {
        for line in node.panics_logged() {
            report.fail("panic", format!("node {index}: {line}"));
        }
        if !node.is_running() {
            report.fail("panic", format!("node {index} exited by itself"));
        }
    }
    let stored = audit::check(database_url, &logs, &standings, &outages, &mut report)
        .await
        .map_err(RunError::Audit)?;
    if stored.status != "finished" {
        report.fail(
            "unfinished",
            format!("the arena is {} after its end", stored.status),
        );
    }
    report.elapsed = started.elapsed();
    Ok(report)
}

/// The nodes, each with its own name and all signing cookies alike (a pupil
/// sent to another node stays signed in).
async fn start_nodes(
    config: &Config,
    folder: &Path,
    database_url: &str,
    http: &reqwest::Client,
) -> Result<Vec<ServerProcess>, RunError> {
    let secret = Uuid::new_v4().simple().to_string().repeat(2);
    let mut nodes = Vec::new();
    for index in 0..config.nodes {
        let node_folder = folder.join(node_name(index));
        std::fs::create_dir_all(&node_folder).map_err(|source| ServerError::Folder {
            path: node_folder.clone(),
            source,
        })?;
        let mut node =
            ServerProcess::new(config.server.clone(), node_folder, database_url.to_owned())?;
        node.set_env("NODE_NAME", &node_name(index));
        node.set_env("CHESS_SECRET", &secret);
        node.spawn()?;
        nodes.push(node);
    }
    for node in &mut nodes {
        node.wait_healthy(http).await?;
    }
    Ok(nodes)
}

fn node_name(index: usize) -> String {
    format!("node-{index}")
}

/// The organiser's account and their club (by invitation: the class is
/// its only way in).
async fn organiser_and_club(api: &Api) -> Result<(Person, String), RunError> {
    let organiser = api.sign_up("organiser", "the organiser's password").await?;
    let club = api
        .post(
            "/api/clubs",
            &organiser,
            &json!({ "name": "Class 7B", "admission": "invitation" }),
        )
        .await?;
    let club = club["id"]
        .as_str()
        .ok_or_else(|| RunError::Setup(format!("a club without an id: {club}")))?
        .to_owned();
    Ok((organiser, club))
}

/// The class of `count` accounts; each pupil chooses their password, on
/// the node they are sent to, all at once, as a classroom does.
async fn class(
    apis: &Arc<Vec<Api>>,
    organiser: &Person,
    club: &str,
    count: usize,
) -> Result<Vec<Pupil>, RunError> {
    let sheet = apis[0]
        .post(
            &format!("/api/clubs/{club}/class"),
            organiser,
            &json!({ "count": count }),
        )
        .await?;
    let accounts = sheet["accounts"].as_array().cloned().unwrap_or_default();
    if accounts.len() != count {
        return Err(RunError::Setup(format!(
            "a class of {count} made {} accounts",
            accounts.len()
        )));
    }
    let mut signing_in = JoinSet::new();
    for (index, account) in accounts.into_iter().enumerate() {
        let api = apis[index % apis.len()].clone();
        signing_in.spawn(async move {
            let username = account["username"].as_str().unwrap_or_default().to_owned();
            let password = account["password"].as_str().unwrap_or_default().to_owned();
            let chosen = format!("{username}'s own password");
            let (person, answer) = api.first_password(&username, &password, &chosen).await?;
            Ok::<Pupil, CallError>(Pupil {
                id: answer["id"].as_str().unwrap_or_default().to_owned(),
                username: answer["username"].as_str().unwrap_or(&username).to_owned(),
                person,
            })
        });
    }
    let mut pupils = Vec::with_capacity(count);
    while let Some(pupil) = signing_in.join_next().await {
        let pupil = pupil.map_err(|error| RunError::Setup(error.to_string()))??;
        pupils.push(pupil);
    }
    pupils.sort_by(|a, b| a.username.cmp(&b.username));
    Ok(pupils)
}

/// The club's 1+0 arena of `minutes`, starting shortly.
async fn create_arena(
    api: &Api,
    organiser: &Person,
    club: &str,
    minutes: u32,
) -> Result<Arc<Arena>, RunError> {
    let created = api
        .post(
            "/api/arenas",
            organiser,
            &json!({
                "name": "Class 7B arena",
                "clockTime": 1,
                "clockIncrement": 0,
                "minutes": minutes,
                "startDate": unix_ms() + START_AFTER_MS,
                "conditions.teamMember.teamId": club,
            }),
        )
        .await?;
    let (Some(id), Some(starts_at), Some(ends_at)) = (
        created["id"].as_str(),
        created["starts_at"].as_i64(),
        created["ends_at"].as_i64(),
    ) else {
        return Err(RunError::Setup(format!(
            "an arena without id, start or end: {created}"
        )));
    };
    Ok(Arc::new(Arena {
        id: id.to_owned(),
        starts_at,
        ends_at,
    }))
}

/// Every pupil joins (each on their node) before the start.
async fn join(apis: &Arc<Vec<Api>>, arena: &Arena, pupils: &[Pupil]) -> Result<(), RunError> {
    let mut joining = JoinSet::new();
    for (index, pupil) in pupils.iter().enumerate() {
        let api = apis[index % apis.len()].clone();
        let path = format!("/api/arenas/{}/join", arena.id);
        let person = pupil.person.clone();
        joining.spawn(async move { api.post(&path, &person, &json!({})).await });
    }
    while let Some(joined) = joining.join_next().await {
        joined.map_err(|error| RunError::Setup(error.to_string()))??;
    }
    Ok(())
}

/// Kills the node that pairs the arena (holds its lease; the only node
/// when there is one) with SIGKILL, leaves it down for `config.down` and
/// starts it again: the time the pairings were interrupted.
async fn kill_one(
    config: &Config,
    nodes: &mut [ServerProcess],
    database_url: &str,
    http: &reqwest::Client,
    report: &mut Report,
) -> Result<Outage, RunError> {
    const LEASE_HOLDER: &str = "select n.name from tournaments t \
         join nodes n on cast(n.id as text) = cast(t.lease_node as text)";
    let holder = if nodes.len() == 1 {
        Some(0)
    } else {
        let rows = read_only(database_url, &[LEASE_HOLDER])
            .await
            .map_err(|error| RunError::Audit(error.to_string()))?;
        let name = rows
            .first()
            .and_then(|rows| rows.first())
            .and_then(|row| row.first())
            .cloned()
            .unwrap_or_default();
        (0..nodes.len()).find(|&index| node_name(index) == name)
    };
    // No holder found (the lease between two renewals): the first node.
    let victim = holder.unwrap_or(0);
    report.add("killed_the_lease_holder", u64::from(holder.is_some()));
    let from = unix_ms();
    nodes[victim].kill();
    tokio::time::sleep(config.down).await;
    nodes[victim].spawn()?;
    nodes[victim].wait_healthy(http).await?;
    let back = unix_ms();
    report.add("kills", 1);
    report.add("downtime_ms", u64::try_from(back - from).unwrap_or(0));
    // The dead node's lease runs out LEASE_MS after its last renewal; the
    // next tick of a live node takes it over.
    let tick = i64::try_from(TICK.as_millis()).unwrap_or(1_000);
    Ok(Outage {
        from,
        to: back.max(from + LEASE_MS) + tick,
    })
}

/// Every page of the arena's standings as one node shows them.
async fn all_standings(api: &Api, person: &Person, id: &str) -> Result<Vec<Value>, RunError> {
    let mut lines = Vec::new();
    let mut page = 1;
    loop {
        let view = api
            .get(&format!("/api/arenas/{id}?page={page}"), person)
            .await?;
        lines.extend(
            view["standings"]["lines"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
        );
        let pages = view["standings"]["pages"].as_u64().unwrap_or(1);
        if page >= pages {
            return Ok(lines);
        }
        page += 1;
    }
}
