//! A whole run: the open-file limit raised, the server(s) up, `games` slots
//! each playing game after game until the time is over (the slots start on a
//! ramp), the figures, the server down.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::load::config::{ApiKind, Config, ConfigError};
use crate::load::game::{Api, Guest, Rules, Table, play_game};
use crate::load::lichess::{Account, Pair};
use crate::load::process::{self, ProcessError};
use crate::load::report::{Ending, Recorder, Report, ServerUse};
use crate::load::server::{Server, ServerError};

/// How long games in flight may take to finish after the duration, on top of
/// the longest a game can think in all, before the run stops them.
const GRACE: Duration = Duration::from_secs(60);
/// Games being set up (guests, challenge, join, sockets) at once, in all the
/// load processes of a run together: bounds the HTTP connections and the
/// connection bursts the server sees, and stays within the server's default
/// cap on creations in flight (`MAX_CONCURRENT_CREATIONS`, 64), past which
/// it answers `429 busy`.
const SETUP_CONCURRENCY: usize = 64;
/// Pause after a game that failed before its slot starts the next one, so a
/// server that is down is not hammered.
const FAILURE_BACKOFF: Duration = Duration::from_secs(1);
/// How often the server processes are read during the run.
const SAMPLE_EVERY: Duration = Duration::from_secs(1);

/// Why a run could not take place.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("cannot raise the open-file limit: {0}")]
    Limit(std::io::Error),
    #[error(transparent)]
    Server(#[from] ServerError),
    #[error(transparent)]
    Process(#[from] ProcessError),
    #[error("lichess accounts: {0}")]
    Accounts(String),
}

/// Two accounts per concurrent game: from `--lichess-tokens`, or signed up
/// (for `--api lichess`, or `--api web --accounts`).
async fn lichess_accounts(config: &Config, base_urls: &[String]) -> Result<Vec<Account>, RunError> {
    let needed = usize::try_from(config.games).unwrap_or(usize::MAX) * 2;
    let accounts = match &config.lichess_tokens {
        Some(path) => {
            crate::load::lichess::read_tokens(path, base_urls).map_err(RunError::Accounts)?
        }
        None => crate::load::lichess::sign_up(needed, base_urls)
            .await
            .map_err(|failure| RunError::Accounts(failure.0))?,
    };
    if accounts.len() < needed {
        return Err(RunError::Accounts(format!(
            "{} games need {needed} accounts, got {}",
            config.games,
            accounts.len()
        )));
    }
    Ok(accounts)
}

/// Runs the load described by `config` and returns its figures.
///
/// # Errors
/// A [`RunError`] when the run cannot fit under the open-file limit, the
/// server cannot be started (or a spawned one ends with an error) or a
/// `--server-pid` cannot be read. Failures during the games are counted in
/// the report.
pub async fn run(config: &Config) -> Result<Report, RunError> {
    raise_open_file_limit(config)?;
    let server = Server::start(&config.target).await?;
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(SETUP_CONCURRENCY)
        .build()
        .map_err(|error| ServerError::Run(error.to_string()))?;
    let nodes: Vec<Api> = server
        .base_urls
        .iter()
        .map(|url| Api::new(http.clone(), url.clone()))
        .collect();
    let recorder = Arc::new(Recorder::default());
    // Before the servers' first reading: signing up hashes passwords
    // (Argon2, 19 MiB each), which leaves the allocator holding memory that
    // is no part of the games measured.
    let accounts = if config.api == ApiKind::Lichess || config.accounts {
        lichess_accounts(config, &server.base_urls).await?
    } else {
        Vec::new()
    };
    let watch = ServerWatch::start(&config.server_pids, &recorder, config.load_processes)?;
    let started = Instant::now();
    let steady = drive(&nodes, config, &recorder, &http, accounts).await;
    let elapsed = started.elapsed();
    let servers = watch.finish(elapsed)?;
    let label = format!(
        "{}{}, {} concurrent games, {} spectators each, up to {} plies, think {}, {} s, ramp {} games/s",
        server.label(),
        match (config.api, config.accounts) {
            (ApiKind::Web, false) => "",
            (ApiKind::Web, true) => ", accounts",
            (ApiKind::Lichess, _) => ", lichess Board API",
        },
        config.games,
        config.spectators,
        config.moves,
        config.think,
        config.duration.as_secs(),
        config.ramp_per_s
    );
    server.stop().await?;
    let mut report = recorder.report(label, elapsed, steady);
    report.servers = servers;
    Ok(report)
}

/// Raises the soft open-file limit to the hard one and checks the run fits.
fn raise_open_file_limit(config: &Config) -> Result<(), RunError> {
    let (_, hard) = rlimit::Resource::NOFILE.get().map_err(RunError::Limit)?;
    config.check_fits(hard)?;
    rlimit::increase_nofile_limit(hard).map_err(RunError::Limit)?;
    Ok(())
}

/// Plays games in `config.games` parallel slots until the duration is over
/// (or `total_games` have started), then lets the games in flight finish.
/// Slot `k` starts `k / ramp_per_s` seconds in. Returns the steady window,
/// if there was one: from the start of the last slot until the first slot
/// stopped or the duration was over.
async fn drive(
    nodes: &[Api],
    config: &Config,
    recorder: &Arc<Recorder>,
    http: &reqwest::Client,
    accounts: Vec<Account>,
) -> Option<(Instant, Instant)> {
    let mut accounts = accounts.into_iter();
    let start = Instant::now();
    let stop_starting = start + config.duration;
    let ramp_step = Duration::from_secs(1) / config.ramp_per_s;
    let ramp_end = start + ramp_step * config.games.saturating_sub(1);
    let games_left = Arc::new(AtomicU32::new(config.total_games.unwrap_or(u32::MAX)));
    let numbers = Arc::new(AtomicU64::new(0));
    // Each of the run's load processes takes its share.
    let setup_share = SETUP_CONCURRENCY / usize::try_from(config.load_processes).unwrap_or(1);
    let setups = Arc::new(Semaphore::new(setup_share.max(1)));
    let nodes: Arc<[Api]> = nodes.into();
    let rules = Rules {
        max_plies: usize::try_from(config.moves).unwrap_or(usize::MAX),
        think: config.think,
    };
    let spectators = config.spectators;
    let mut slots = JoinSet::new();
    for slot in 0..config.games {
        let recorder = Arc::clone(recorder);
        let games_left = Arc::clone(&games_left);
        let numbers = Arc::clone(&numbers);
        let setups = Arc::clone(&setups);
        let nodes = Arc::clone(&nodes);
        let first_game_at = start + ramp_step * slot;
        if config.api == ApiKind::Lichess {
            let (Some(first), Some(second)) = (accounts.next(), accounts.next()) else {
                break;
            };
            let http = http.clone();
            slots.spawn(async move {
                tokio::time::sleep_until(first_game_at).await;
                let permit = setups.acquire().await;
                let pair = Pair::new(http, [first, second]).await;
                drop(permit);
                let mut pair = match pair {
                    Ok(pair) => pair,
                    Err(failure) => {
                        recorder.error(&failure.0);
                        return Instant::now();
                    }
                };
                while Instant::now() < stop_starting && take_one(&games_left) {
                    if pair.play_game(rules, &recorder).await == Ending::Failed {
                        tokio::time::sleep(FAILURE_BACKOFF).await;
                    }
                }
                Instant::now()
            });
            continue;
        }
        // With `--accounts`, the slot's two accounts play all its games,
        // taking turns with white (who creates the game: games created are
        // limited per player and minute).
        let mut people = if config.accounts {
            let pair = (accounts.next(), accounts.next());
            let (Some(first), Some(second)) = pair else {
                break;
            };
            let cookie = |account: Account| account.cookie.map(Guest::with_cookie);
            match (cookie(first), cookie(second)) {
                (Some(first), Some(second)) => Some([first, second]),
                _ => break,
            }
        } else {
            None
        };
        slots.spawn(async move {
            tokio::time::sleep_until(first_game_at).await;
            let table = Table {
                nodes: &nodes,
                spectators,
                setups: &setups,
            };
            while Instant::now() < stop_starting && take_one(&games_left) {
                let number = numbers.fetch_add(1, Ordering::Relaxed);
                let ending = play_game(&table, number, people.as_ref(), rules, &recorder).await;
                if ending == Ending::Failed {
                    tokio::time::sleep(FAILURE_BACKOFF).await;
                }
                if let Some(people) = &mut people {
                    people.swap(0, 1);
                }
            }
            Instant::now()
        });
    }
    // A game may think up to `moves` times the longest pause.
    let longest_game = rules.think.max() * config.moves;
    // From the first slot that stops (out of games or time), not every slot plays.
    let mut first_stopped = None;
    // Dropping the set aborts whatever is still running at the hard deadline.
    let all_done = async {
        while let Some(stopped) = slots.join_next().await {
            if let Ok(at) = stopped {
                first_stopped.get_or_insert(at);
            }
        }
    };
    if tokio::time::timeout_at(stop_starting + longest_game + GRACE, all_done)
        .await
        .is_err()
    {
        recorder.error("run_deadline_passed");
    }
    let steady_end = first_stopped.map_or(stop_starting, |at: Instant| at.min(stop_starting));
    (ramp_end < steady_end).then_some((ramp_end, steady_end))
}

/// Takes one game from the budget, if any is left.
fn take_one(games_left: &AtomicU32) -> bool {
    games_left
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
            left.checked_sub(1)
        })
        .is_ok()
}

/// The `--server-pid` processes, read at the start, every second while the
/// games run (keeping the reading with the most live games) and at the end.
#[derive(Debug)]
struct ServerWatch {
    pids: Vec<u32>,
    first: Vec<process::Sample>,
    /// Per process: the resident size at the reading with the most live games.
    busiest: Arc<std::sync::Mutex<Vec<(u64, u64)>>>,
    sampler: Option<tokio::task::JoinHandle<()>>,
    /// Load processes playing alike side by side: the servers host this
    /// many times the live games this process counts.
    load_processes: u32,
}

impl ServerWatch {
    fn start(
        pids: &[u32],
        recorder: &Arc<Recorder>,
        load_processes: u32,
    ) -> Result<ServerWatch, ProcessError> {
        let first = pids
            .iter()
            .map(|&pid| process::sample(pid))
            .collect::<Result<Vec<_>, _>>()?;
        let busiest = Arc::new(std::sync::Mutex::new(
            first
                .iter()
                .map(|sample| (sample.rss_bytes, 0))
                .collect::<Vec<_>>(),
        ));
        let sampler = (!pids.is_empty()).then(|| {
            let pids = pids.to_vec();
            let busiest = Arc::clone(&busiest);
            let recorder = Arc::clone(recorder);
            tokio::spawn(async move {
                let mut every = tokio::time::interval(SAMPLE_EVERY);
                loop {
                    every.tick().await;
                    let live = recorder.seated_games();
                    let mut busiest = busiest
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    for (pid, best) in pids.iter().zip(busiest.iter_mut()) {
                        // A process that vanished mid-run is reported at the end.
                        if let Ok(sample) = process::sample(*pid)
                            && live >= best.1
                        {
                            *best = (sample.rss_bytes, live);
                        }
                    }
                }
            })
        });
        Ok(ServerWatch {
            pids: pids.to_vec(),
            first,
            busiest,
            sampler,
            load_processes,
        })
    }

    /// The use of every process over a run that took `elapsed`.
    fn finish(self, elapsed: Duration) -> Result<Vec<ServerUse>, ProcessError> {
        if let Some(sampler) = &self.sampler {
            sampler.abort();
        }
        let busiest = self
            .busiest
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let mut uses = Vec::with_capacity(self.pids.len());
        for ((&pid, first), (rss_busiest, live_games_busiest)) in
            self.pids.iter().zip(&self.first).zip(busiest)
        {
            let last = process::sample(pid)?;
            let cpu = last.cpu.saturating_sub(first.cpu);
            uses.push(ServerUse {
                pid,
                cpu_percent: 100.0 * cpu.as_secs_f64() / elapsed.as_secs_f64().max(1e-9),
                rss_start: first.rss_bytes,
                rss_end: last.rss_bytes,
                rss_busiest,
                live_games_busiest: live_games_busiest * u64::from(self.load_processes),
            });
        }
        Ok(uses)
    }
}
