//! A whole run: the server up, `games` slots each playing game after game
//! until the time is over, the figures, the server down.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::config::Config;
use crate::game::{Api, Failure, Rules, play_game};
use crate::report::{Recorder, Report};
use crate::server::{Server, ServerError};

/// How long games in flight may take to finish after the duration, before the
/// run stops them.
const GRACE: Duration = Duration::from_secs(60);

/// Runs the load described by `config` and returns its figures.
///
/// # Errors
/// A [`ServerError`] when the server cannot be started (or a spawned one
/// ends with an error). Failures during the games are counted in the report.
pub async fn run(config: &Config) -> Result<Report, ServerError> {
    let server = Server::start(&config.target).await?;
    let api = Api::new(reqwest::Client::new(), server.base_url.clone());
    let recorder = Arc::new(Recorder::default());
    let started = Instant::now();
    drive(&api, config, &recorder).await;
    let elapsed = started.elapsed();
    let label = format!(
        "{}, {} concurrent games, up to {} plies, think {} ms, {} s",
        server.label(),
        config.games,
        config.moves,
        config.think.as_millis(),
        config.duration.as_secs()
    );
    server.stop().await?;
    Ok(recorder.report(label, elapsed))
}

/// Plays games in `config.games` parallel slots until the duration is over
/// (or `total_games` have started), then lets the games in flight finish.
async fn drive(api: &Api, config: &Config, recorder: &Arc<Recorder>) {
    let stop_starting = Instant::now() + config.duration;
    let games_left = Arc::new(AtomicU32::new(config.total_games.unwrap_or(u32::MAX)));
    let rules = Rules {
        max_plies: usize::try_from(config.moves).unwrap_or(usize::MAX),
        think: config.think,
    };
    let mut slots = JoinSet::new();
    for _ in 0..config.games {
        let api = api.clone();
        let recorder = Arc::clone(recorder);
        let games_left = Arc::clone(&games_left);
        slots.spawn(async move {
            if let Err(Failure(code)) =
                play_slot(&api, rules, stop_starting, &games_left, &recorder).await
            {
                recorder.error(&code);
            }
        });
    }
    // Dropping the set aborts whatever is still running at the hard deadline.
    let all_done = async { while slots.join_next().await.is_some() {} };
    if tokio::time::timeout_at(stop_starting + GRACE, all_done)
        .await
        .is_err()
    {
        recorder.error("run_deadline_passed");
    }
}

/// One slot: games one after another, each between two new guests. New
/// people for every game, as on a real server: the same two would soon meet
/// the server's limit on games created per player and minute.
async fn play_slot(
    api: &Api,
    rules: Rules,
    stop_starting: Instant,
    games_left: &AtomicU32,
    recorder: &Recorder,
) -> Result<(), Failure> {
    while Instant::now() < stop_starting && take_one(games_left) {
        let white = api.new_guest().await?;
        let black = api.new_guest().await?;
        play_game(api, &white, &black, rules, recorder).await;
    }
    Ok(())
}

/// Takes one game from the budget, if any is left.
fn take_one(games_left: &AtomicU32) -> bool {
    games_left
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
            left.checked_sub(1)
        })
        .is_ok()
}
