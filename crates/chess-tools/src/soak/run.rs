//! A whole soak: a `chess-server` process on a fresh database, `games`
//! slots playing game after game (the load tool's games: two guests, random
//! moves, think time) until the duration is over, a reading every
//! `sample_every` into the CSV, then the wait for the server to come back to
//! idle and the verdict.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::future::join_all;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::load::config::Think;
use crate::load::game::{Api, Rules, Table, play_game};
use crate::load::report::{Ending, Percentiles, Recorder, Report};
use crate::server::{Database, ServerProcess};
use crate::soak::plan::Plan;
use crate::soak::samples::{Csv, Sample, descriptors_and_threads, mib, scrape};
use crate::soak::verdict::{Growth, findings, growth, is_idle};

/// Games being set up at once (guests, challenge, join, sockets).
const SETUP_CONCURRENCY: usize = 16;
/// Slots start this far apart, so the games do not all move in step.
const RAMP_STEP: Duration = Duration::from_millis(50);
/// Pause after a failed game before its slot starts the next one.
const FAILURE_BACKOFF: Duration = Duration::from_secs(1);
/// Longest wait for the server to come back to idle after the load.
const IDLE_WAIT: Duration = Duration::from_secs(90);

/// What a soak found.
#[derive(Debug)]
pub struct Outcome {
    pub samples: Vec<Sample>,
    /// The reading before the load.
    pub idle_before: Sample,
    /// The first reading back at the idle level after the load, if any.
    pub idle_after: Option<Sample>,
    pub growth: Option<Growth>,
    /// The players' side of the load, over the whole run.
    pub report: Report,
    /// Why the soak failed; empty when it passed.
    pub findings: Vec<String>,
    /// The run's folder (database, server log), kept when it failed.
    pub folder: PathBuf,
}

/// Runs the soak of `plan`.
///
/// # Errors
/// A message when the server cannot be started or read (a failure of the
/// setting, not a finding).
pub async fn soak(plan: &Plan) -> Result<Outcome, String> {
    if let Ok((_, hard)) = rlimit::Resource::NOFILE.get() {
        let _ = rlimit::increase_nofile_limit(hard);
    }
    let folder = std::env::temp_dir().join(format!("chess-soak-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&folder).map_err(|error| format!("{}: {error}", folder.display()))?;
    let database = Database::create(plan.backend, &folder, None)
        .await
        .map_err(|error| error.to_string())?;
    let result = soak_on(plan, &folder, &database.url).await;
    database.remove().await;
    if result
        .as_ref()
        .is_ok_and(|outcome| outcome.findings.is_empty())
    {
        let _ = std::fs::remove_dir_all(&folder);
    }
    result
}

async fn soak_on(
    plan: &Plan,
    folder: &std::path::Path,
    database_url: &str,
) -> Result<Outcome, String> {
    let mut server = ServerProcess::new(
        plan.server.clone(),
        folder.to_owned(),
        database_url.to_owned(),
    )
    .map_err(|error| error.to_string())?;
    let metrics_address = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map_err(|error| format!("no free port: {error}"))?
        .to_string();
    server.set_env("METRICS_LISTEN", &metrics_address);
    // Every game is two new guests from this one address.
    server.set_env("NEW_GUESTS_PER_ADDRESS_PER_HOUR", "100000000");
    server.set_env("RUST_LOG", "warn");
    // The reader's own client: its one connection to the metrics listener
    // stays open the whole run, before the load and after it alike.
    let reader = reqwest::Client::new();
    server.spawn().map_err(|error| error.to_string())?;
    server
        .wait_healthy(&reader)
        .await
        .map_err(|error| error.to_string())?;
    let pid = server.pid().ok_or("the server is not running")?;
    let mut csv =
        Csv::create(&plan.csv).map_err(|error| format!("{}: {error}", plan.csv.display()))?;

    let recorder = Arc::new(Recorder::default());
    let mut window = Window::default();
    let idle_before = read(pid, &reader, &metrics_address, 0.0, &recorder, &mut window).await?;
    eprintln!(
        "soak: server pid {pid} on {}, idle: {:.1} MiB, {} descriptors; samples to {}",
        server.base_url(),
        mib(idle_before.rss_bytes),
        idle_before.fds,
        plan.csv.display()
    );

    let started = Instant::now();
    let load = tokio::spawn(drive(
        server.base_url(),
        plan.clone(),
        started + plan.duration,
        Arc::clone(&recorder),
    ));
    let mut samples = Vec::new();
    let mut problems = Vec::new();
    let mut every = tokio::time::interval_at(started + plan.sample_every, plan.sample_every);
    while !load.is_finished() {
        every.tick().await;
        if !server.is_running() {
            problems.push("the server process ended during the load".to_owned());
            load.abort();
            break;
        }
        let elapsed = started.elapsed().as_secs_f64();
        let sample = read(
            pid,
            &reader,
            &metrics_address,
            elapsed,
            &recorder,
            &mut window,
        )
        .await?;
        csv.write(&sample).map_err(|error| error.to_string())?;
        eprintln!("{}", progress(&sample));
        samples.push(sample);
    }
    let elapsed = started.elapsed();

    // The load's connections are closed with its client: the server should
    // drop every socket and descriptor it opened for them.
    let mut idle_after = None;
    let deadline = Instant::now() + IDLE_WAIT;
    while problems.is_empty() && Instant::now() < deadline {
        let at = started.elapsed().as_secs_f64();
        let sample = read(pid, &reader, &metrics_address, at, &recorder, &mut window).await?;
        if is_idle(&idle_before, &sample) {
            csv.write(&sample).map_err(|error| error.to_string())?;
            idle_after = Some(sample);
            break;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }

    let growth = growth(&samples, plan.duration.as_secs_f64());
    let mut found = findings(
        growth.as_ref(),
        plan.max_rss_growth_mib_per_hour,
        plan.max_fd_growth_per_hour,
        &idle_before,
        idle_after.as_ref(),
    );
    found.extend(problems);
    if !server.is_running() {
        found.push("the server process ended by itself".to_owned());
    }
    server.kill();
    found.extend(
        server
            .panics_logged()
            .into_iter()
            .map(|line| format!("panic in the server's log: {line}")),
    );
    let label = format!(
        "chess-server process, {:?}, {} concurrent games, up to {} plies, think {}",
        plan.backend,
        plan.games,
        plan.moves,
        Think::from(plan.think_ms)
    );
    Ok(Outcome {
        samples,
        idle_before,
        idle_after,
        growth,
        report: recorder.report(label, elapsed, None),
        findings: found,
        folder: folder.to_owned(),
    })
}

/// How many latencies earlier readings already took.
#[derive(Debug, Default)]
struct Window {
    acks: usize,
    broadcasts: usize,
}

/// One reading of the server and of the players' latencies since the last.
async fn read(
    pid: u32,
    http: &reqwest::Client,
    metrics_address: &str,
    elapsed_s: f64,
    recorder: &Recorder,
    window: &mut Window,
) -> Result<Sample, String> {
    let gauges = scrape(http, metrics_address).await?;
    let process = crate::load::process::sample(pid).map_err(|error| error.to_string())?;
    let (fds, threads) =
        descriptors_and_threads(pid).map_err(|error| format!("/proc/{pid}: {error}"))?;
    let (mut acks, mut broadcasts) = recorder.latencies_after(window.acks, window.broadcasts);
    window.acks += acks.len();
    window.broadcasts += broadcasts.len();
    acks.sort_unstable();
    broadcasts.sort_unstable();
    Ok(Sample {
        elapsed_s,
        rss_bytes: process.rss_bytes,
        fds,
        threads,
        live_games: gauges.live_games,
        game_sockets: gauges.game_sockets,
        lobby_sockets: gauges.lobby_sockets,
        moves_committed: gauges.moves_committed,
        acks: acks.len(),
        ack: Percentiles::of_sorted(&acks),
        opponent: Percentiles::of_sorted(&broadcasts),
        errors: recorder.errors_total(),
        closes: gauges.closes,
    })
}

fn progress(sample: &Sample) -> String {
    let p99 = |p: Option<Percentiles>| {
        p.map_or_else(
            || "-".to_owned(),
            |p| format!("{:.1} ms", p.p99.as_secs_f64() * 1000.0),
        )
    };
    format!(
        "{:>6.0} s  rss {:>7.1} MiB  fds {:>5}  threads {:>3}  games {:>5}  sockets {:>5}  \
         acks {:>6}  ack p99 {}  opponent p99 {}  errors {}",
        sample.elapsed_s,
        mib(sample.rss_bytes),
        sample.fds,
        sample.threads,
        sample.live_games,
        sample.game_sockets,
        sample.acks,
        p99(sample.ack),
        p99(sample.opponent),
        sample.errors
    )
}

/// Plays games in `plan.games` slots until `until`, then lets the games in
/// flight finish.
async fn drive(base_url: String, plan: Plan, until: Instant, recorder: Arc<Recorder>) {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(SETUP_CONCURRENCY)
        .build()
        .unwrap_or_default();
    let nodes = [Api::new(http, base_url)];
    let setups = Semaphore::new(SETUP_CONCURRENCY);
    let table = Table {
        nodes: &nodes,
        spectators: 0,
        setups: &setups,
    };
    let rules = Rules {
        max_plies: usize::try_from(plan.moves).unwrap_or(usize::MAX),
        think: Think::from(plan.think_ms),
    };
    let numbers = AtomicU64::new(0);
    join_all((0..plan.games).map(|slot| {
        let (table, numbers, recorder) = (&table, &numbers, &recorder);
        async move {
            tokio::time::sleep(RAMP_STEP * slot).await;
            while Instant::now() < until {
                let number = numbers.fetch_add(1, Ordering::Relaxed);
                if play_game(table, number, None, rules, recorder).await == Ending::Failed {
                    tokio::time::sleep(FAILURE_BACKOFF).await;
                }
            }
        }
    }))
    .await;
}

/// The summary printed at the end.
pub fn summary(plan: &Plan, outcome: &Outcome) -> String {
    let loaded: Vec<&Sample> = outcome
        .samples
        .iter()
        .filter(|s| s.elapsed_s <= plan.duration.as_secs_f64())
        .collect();
    let max_rss = loaded.iter().map(|s| s.rss_bytes).max().unwrap_or(0);
    let max_fds = loaded.iter().map(|s| s.fds).max().unwrap_or(0);
    let last = loaded.last();
    let mut text = format!(
        "soak:        {} s of load, {} games at once, think {}, up to {} plies, {:?}\n",
        plan.duration.as_secs(),
        plan.games,
        Think::from(plan.think_ms),
        plan.moves,
        plan.backend
    );
    text += &format!(
        "samples:     {} every {} s in {}\n",
        outcome.samples.len(),
        plan.sample_every.as_secs(),
        plan.csv.display()
    );
    text += &format!(
        "memory:      {:.1} MiB idle, {:.1} MiB at the last sample under load, {:.1} MiB at most\n",
        mib(outcome.idle_before.rss_bytes),
        last.map_or(0.0, |s| mib(s.rss_bytes)),
        mib(max_rss)
    );
    text += &format!(
        "descriptors: {} idle, {} at the last sample under load, {} at most, {} after the load\n",
        outcome.idle_before.fds,
        last.map_or(0, |s| s.fds),
        max_fds,
        outcome
            .idle_after
            .as_ref()
            .map_or_else(|| "not idle".to_owned(), |s| s.fds.to_string())
    );
    if let Some(growth) = &outcome.growth {
        text += &format!(
            "growth:      {:+.1} MiB/h (limit {}), {:+.1} descriptors/h (limit {}), over the last {} samples under load\n",
            growth.rss_mib_per_hour,
            plan.max_rss_growth_mib_per_hour,
            growth.fds_per_hour,
            plan.max_fd_growth_per_hour,
            growth.samples
        );
    }
    let report = outcome.report.to_string();
    text += &report;
    if !report.ends_with('\n') {
        text.push('\n');
    }
    if outcome.findings.is_empty() {
        text += "findings:    none\n";
    } else {
        text += "findings:\n";
        for finding in &outcome.findings {
            text += &format!("  {finding}\n");
        }
        text += &format!("kept:        {}\n", outcome.folder.display());
    }
    text
}
