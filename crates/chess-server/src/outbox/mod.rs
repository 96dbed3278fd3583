//! Delivering reward requests to the host platform: the deliverer that posts
//! the ledger's outbox ([`chess_store::RewardRequest`], one row per
//! credited entry, written with the entry) to `REWARD_WEBHOOK_URL`, and the
//! signed reconciliation API ([`routes`]) the platform checks it against.
//! `docs/rewards.md` is the receiver's side: wire format, signature, retry
//! schedule, reconciliation.
//!
//! Why an outbox and not a request sent when the game ends: the ledger
//! entry commits with the game's result, and a request sent before the
//! commit could pay a win that never happened, one sent after it could be
//! lost to a crash in between. The row commits with the entry; the deliverer
//! sends what is committed, as often as it takes.
//!
//! - **At least once on the wire, exactly once for a receiver that honours
//!   the key.** A request is done only on a 2xx. A node killed while
//!   sending holds its claim until the lease runs out
//!   ([`DeliverySettings::lease`], longer than a request may take), then the
//!   request is sent again, with the same `Idempotency-Key` (the entry id)
//!   and the same fields; only the `timestamp` differs.
//! - **One node at a time.** Nodes claim due requests with
//!   `for update skip locked` on Postgres; on SQLite one server holds the
//!   file ([`chess_store::claim_sqlite_file`]).
//! - **Retries** back off exponentially with full jitter, from
//!   [`RetrySchedule::first`] doubling to [`RetrySchedule::max`]: a random
//!   delay between 0 and the attempt's ceiling, so a platform coming back
//!   after an outage is not met by every request at once. A `Retry-After`
//!   (429, 503) that asks for longer is honoured, up to the ceiling.
//! - **Permanent refusal**: a 4xx other than 408 and 429 says the platform
//!   will never take this request; it is recorded, with the status and the
//!   start of the reply's body as the reason, and not sent again.
//! - **Promptly**: the store wakes the deliverer when a batch that credited
//!   a win commits ([`chess_store::Store::outbox_wake`]); it also polls,
//!   for other nodes' wins and for retries that come due.

pub mod routes;
pub mod signature;
pub mod wire;

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, RETRY_AFTER};
use tokio::sync::watch;

use crate::metrics::Metrics;
use crate::settings::Secret;
use chess_store::{RewardRequest, Store};
use signature::{IDEMPOTENCY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, sign};

/// Requests one round sends at once, at most.
const ROUND: u32 = 16;

/// The most of a refusing reply's body kept as the reason.
const REASON_CHARS: usize = 500;

/// When failed requests are tried again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetrySchedule {
    /// The first retry's ceiling.
    pub first: Duration,
    /// The ceiling's cap: no retry waits longer.
    pub max: Duration,
}

impl RetrySchedule {
    /// The ceiling of the wait after the `attempts`-th failed attempt:
    /// `first`, doubling, capped at `max`.
    pub fn ceiling(self, attempts: i64) -> Duration {
        let doublings = u32::try_from(attempts.saturating_sub(1).clamp(0, 40)).unwrap_or(40);
        self.first
            .checked_mul(1_u32 << doublings.min(31))
            .map_or(self.max, |ceiling| ceiling.min(self.max))
    }

    /// The wait after the `attempts`-th failed attempt: full jitter, a
    /// uniformly random part of the ceiling; `at_least` (a `Retry-After`)
    /// raises it, up to `max`.
    pub fn delay(self, attempts: i64, at_least: Option<Duration>) -> Duration {
        let ceiling = self.ceiling(attempts);
        let jittered = ceiling.mul_f64(rand::random::<f64>());
        match at_least {
            Some(asked) => jittered.max(asked.min(self.max)),
            None => jittered,
        }
    }
}

/// How the deliverer runs.
#[derive(Clone, Debug)]
pub struct DeliverySettings {
    pub url: reqwest::Url,
    pub secret: Secret,
    pub retry: RetrySchedule,
    /// How long one request may take before it counts as failed.
    pub timeout: Duration,
    /// How long a claim holds a request: longer than a request may take, so
    /// a live node's claim never runs out under it.
    pub lease: Duration,
    /// How often to look for due requests without being woken.
    pub poll: Duration,
}

/// What one attempt came to.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Delivered(u16),
    Retry {
        status: Option<u16>,
        error: String,
        at_least: Option<Duration>,
    },
    Refused {
        status: u16,
        reason: String,
    },
}

/// Starts the deliverer; it stops when `shutdown` turns true, giving back
/// the requests it was sending.
pub fn start(
    store: Store,
    settings: DeliverySettings,
    metrics: Metrics,
    shutdown: watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    let deliverer = Deliverer {
        client: crate::outbound::client(),
        store,
        settings: Arc::new(settings),
        metrics,
    };
    tokio::spawn(deliverer.run(shutdown))
}

struct Deliverer {
    client: reqwest::Client,
    store: Store,
    settings: Arc<DeliverySettings>,
    metrics: Metrics,
}

impl Deliverer {
    async fn run(self, mut shutdown: watch::Receiver<bool>) {
        let wake = self.store.outbox_wake();
        // The counts are a scan of the table: refreshed every few polls, not
        // on every one.
        let stats_every = (self.settings.poll * 5).min(Duration::from_secs(5));
        let mut stats_at = tokio::time::Instant::now();
        tracing::info!(url = %self.settings.url.origin().ascii_serialization(), "reward deliverer started");
        loop {
            if *shutdown.borrow() {
                break;
            }
            let claim = uuid::Uuid::new_v4().to_string();
            let now = unix_ms();
            let lease = i64::try_from(self.settings.lease.as_millis()).unwrap_or(i64::MAX);
            let claimed = match self
                .store
                .claim_reward_requests(now, now.saturating_add(lease), &claim, ROUND)
                .await
            {
                Ok(requests) => requests,
                Err(error) => {
                    tracing::warn!(error = %error, "cannot claim reward requests");
                    Vec::new()
                }
            };
            let full = claimed.len() == ROUND as usize;
            if !claimed.is_empty() {
                let round = join_all(claimed.iter().map(|request| self.deliver(request, &claim)));
                tokio::select! {
                    _ = round => {}
                    _ = shutdown.changed() => {
                        // Stopping mid-round: what is unfinished is given
                        // back for the next node (or start) to send again.
                        if let Err(error) = self.store.release_reward_claim(&claim).await {
                            tracing::warn!(error = %error, "cannot release reward requests; their lease will");
                        }
                        break;
                    }
                }
            }
            if tokio::time::Instant::now() >= stats_at {
                self.refresh_stats().await;
                stats_at = tokio::time::Instant::now() + stats_every;
            }
            if full {
                continue;
            }
            tokio::select! {
                () = wake.notified() => {}
                () = tokio::time::sleep(self.settings.poll) => {}
                // Only `true` is ever sent; a dropped sender stops it too.
                _ = shutdown.changed() => break,
            }
        }
        tracing::info!("reward deliverer stopped");
    }

    async fn refresh_stats(&self) {
        match self.store.outbox_stats().await {
            Ok(stats) => {
                let waited = stats
                    .oldest_pending_ms
                    .map_or(0, |oldest| unix_ms() - oldest);
                self.metrics.reward_requests_counted(
                    stats.pending,
                    stats.delivered,
                    stats.refused,
                    Duration::from_millis(u64::try_from(waited).unwrap_or(0)),
                );
            }
            Err(error) => tracing::warn!(error = %error, "cannot count reward requests"),
        }
    }

    /// Sends one claimed request and records what came of it.
    async fn deliver(&self, request: &RewardRequest, claim: &str) {
        let outcome = self.attempt(request).await;
        let now = unix_ms();
        let entry = request.entry_id;
        let recorded = match &outcome {
            Outcome::Delivered(status) => {
                tracing::info!(
                    entry,
                    status,
                    attempts = request.attempts,
                    "reward request delivered"
                );
                self.metrics.reward_delivery("delivered");
                self.store
                    .reward_request_delivered(entry, now, *status)
                    .await
            }
            Outcome::Retry {
                status,
                error,
                at_least,
            } => {
                let delay = self.settings.retry.delay(request.attempts, *at_least);
                tracing::warn!(entry, ?status, %error, attempts = request.attempts, retry_in_ms = delay.as_millis(), "reward request not delivered");
                self.metrics.reward_delivery("retried");
                let next = now.saturating_add(i64::try_from(delay.as_millis()).unwrap_or(i64::MAX));
                self.store
                    .reward_request_retry(entry, claim, next, *status, error)
                    .await
            }
            Outcome::Refused { status, reason } => {
                tracing::error!(entry, status, %reason, "reward request refused by the platform");
                self.metrics.reward_delivery("refused");
                self.store
                    .reward_request_refused(entry, claim, now, *status, reason)
                    .await
            }
        };
        if let Err(error) = recorded {
            // The claim's lease runs out and the request is sent again: at
            // least once, the same key.
            tracing::warn!(entry, error = %error, "cannot record a reward request's delivery");
        }
    }

    /// One POST of the request, signed.
    async fn attempt(&self, request: &RewardRequest) -> Outcome {
        let timestamp = unix_ms() / 1000;
        let body = wire::request_body(request, timestamp);
        let signature = sign(self.settings.secret.expose(), &body);
        let sent = self
            .client
            .post(self.settings.url.clone())
            .timeout(self.settings.timeout)
            .header(CONTENT_TYPE, "application/json")
            .header(IDEMPOTENCY_HEADER, request.entry_id.to_string())
            .header(TIMESTAMP_HEADER, timestamp.to_string())
            .header(SIGNATURE_HEADER, signature)
            .body(body)
            .send()
            .await;
        let reply = match sent {
            Ok(reply) => reply,
            Err(error) => {
                let error = if error.is_timeout() {
                    format!("no answer within {} ms", self.settings.timeout.as_millis())
                } else {
                    format!("cannot reach the webhook: {}", error_chain(&error))
                };
                return Outcome::Retry {
                    status: None,
                    error,
                    at_least: None,
                };
            }
        };
        let status = reply.status();
        if status.is_success() {
            return Outcome::Delivered(status.as_u16());
        }
        let retry_after = reply
            .headers()
            .get(RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = reply.text().await.unwrap_or_default();
        let text: String = text.trim().chars().take(REASON_CHARS).collect();
        let described = if text.is_empty() {
            status.to_string()
        } else {
            format!("{status}: {text}")
        };
        classify(status, described, retry_after)
    }
}

/// What an answer that is not a 2xx means: a 4xx other than 408 and 429 is
/// the platform's final word; anything else (408, 429, 5xx, a redirect,
/// which is not followed) may pass.
fn classify(status: StatusCode, described: String, retry_after: Option<Duration>) -> Outcome {
    if status.is_client_error()
        && status != StatusCode::REQUEST_TIMEOUT
        && status != StatusCode::TOO_MANY_REQUESTS
    {
        Outcome::Refused {
            status: status.as_u16(),
            reason: described,
        }
    } else {
        Outcome::Retry {
            status: Some(status.as_u16()),
            error: described,
            at_least: retry_after,
        }
    }
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEDULE: RetrySchedule = RetrySchedule {
        first: Duration::from_secs(1),
        max: Duration::from_secs(3600),
    };

    #[test]
    fn the_ceiling_doubles_from_the_first_retry_to_the_cap() {
        let ceilings: Vec<u64> = (1..=14).map(|n| SCHEDULE.ceiling(n).as_secs()).collect();
        assert_eq!(
            ceilings,
            [
                1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3600, 3600
            ]
        );
        assert_eq!(SCHEDULE.ceiling(i64::MAX), Duration::from_secs(3600));
        assert_eq!(SCHEDULE.ceiling(0), Duration::from_secs(1));
    }

    #[test]
    fn a_delay_is_within_its_ceiling_and_honours_retry_after_up_to_the_cap() {
        for attempts in 1..20 {
            assert!(SCHEDULE.delay(attempts, None) <= SCHEDULE.ceiling(attempts));
        }
        let asked = Duration::from_secs(120);
        assert!(SCHEDULE.delay(1, Some(asked)) >= asked);
        assert_eq!(
            SCHEDULE.delay(1, Some(Duration::from_secs(86_400))),
            Duration::from_secs(3600)
        );
    }

    #[test]
    fn only_a_4xx_other_than_408_and_429_is_a_refusal() {
        for (status, refused) in [
            (400, true),
            (401, true),
            (403, true),
            (404, true),
            (409, true),
            (422, true),
            (408, false),
            (429, false),
            (500, false),
            (502, false),
            (503, false),
            (302, false),
        ] {
            let status = StatusCode::from_u16(status).expect("a status");
            let outcome = classify(status, status.to_string(), None);
            assert_eq!(
                matches!(outcome, Outcome::Refused { .. }),
                refused,
                "{status}: {outcome:?}"
            );
        }
    }
}
