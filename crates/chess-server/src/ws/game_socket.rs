//! One game WebSocket: reads client messages (parsed in one place), sends
//! them to the game as its player's commands, and writes what its
//! [`Viewer`] sees of the game, rendered for this connection's seat. Pings
//! measure the round-trip time and find connections that died without a
//! close (a phone that lost its signal): one that stays silent too long is
//! closed like any other lost connection.

use std::time::{Duration, Instant};

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use chess_game::{EventKind, PremoveCancelReason};
use chess_live::view::{Outgoing, PremoveView, StateView};
use chess_live::{Applied, Command, Received, Refusal, Seat, Seen, Viewer, now_ms};
use futures_util::SinkExt;
use tokio::sync::watch;

use crate::metrics::{Metrics, SocketClose};
use crate::ws::protocol::{ClientMsg, Incoming, PremoveReason, ProtocolError, ServerMsg};

/// Limits of one game socket.
#[derive(Clone, Copy, Debug)]
pub struct SocketLimits {
    pub max_message_bytes: usize,
    pub rate_per_second: u32,
    pub burst: u32,
    /// A connection that sends nothing (not even a pong) for this long is
    /// taken as lost.
    pub silence_timeout: Duration,
}

/// How often the server pings to measure the round trip (and to hear from
/// the client), at most: every socket pings, so at 20,000 sockets each
/// second of cadence is 20,000 frames each way.
const PING_AT_MOST_EVERY: Duration = Duration::from_secs(2);

/// The oldest round-trip sample a connection that is heard from anyway may
/// keep before it is pinged again: premoves are charged with it.
const RTT_REFRESH: Duration = Duration::from_secs(10);

/// Close code of a socket whose account session ended (signed out, password
/// changed, expired): it no longer speaks for the account (`docs/protocol.md`).
pub(crate) const CLOSE_SESSION_ENDED: u16 = 4001;

/// Close code of a connection the server took as lost: nothing, not even a
/// pong, arrived for the silence timeout (`docs/protocol.md`).
const CLOSE_SILENT: u16 = 4002;

/// Close code of the sockets of a server that is stopping (WebSocket's
/// "service restart"): the client reconnects.
const CLOSE_RESTARTING: u16 = 1012;

/// Longest wait to hand that close frame to a connection that is likely dead.
const SILENT_CLOSE_WAIT: Duration = Duration::from_secs(1);

/// A close frame with `code` and `reason` (the codes: `docs/protocol.md`).
pub(crate) fn close_frame(code: u16, reason: &'static str) -> Message {
    Message::Close(Some(CloseFrame {
        code,
        reason: Utf8Bytes::from_static(reason),
    }))
}

/// The ping cadence for `silence_timeout`: a live client is heard from at
/// least three times before it could be taken as silent.
fn ping_every(silence_timeout: Duration) -> Duration {
    (silence_timeout / 3).clamp(Duration::from_millis(100), PING_AT_MOST_EVERY)
}

/// Whether a tick of the ping cadence `every` sends a ping. A client heard
/// from since the last tick (a message, a pong) is known to be alive, and
/// needs one only when its round-trip sample is missing or older than
/// [`RTT_REFRESH`]. Pings were two thirds of all frames at 20,000 sockets
/// of players thinking 1–3 s; this halves them or better, and a silent
/// connection is still pinged on every tick.
fn ping_due(heard_ago: Duration, rtt_sampled_ago: Option<Duration>, every: Duration) -> bool {
    let heard_lately = heard_ago < every;
    let rtt_fresh = rtt_sampled_ago.is_some_and(|ago| ago < RTT_REFRESH);
    !(heard_lately && rtt_fresh)
}

/// A token bucket: `burst` messages at once, refilled at `rate` per second.
#[derive(Debug)]
struct RateLimit {
    tokens: f64,
    capacity: f64,
    per_second: f64,
    last: Instant,
}

impl RateLimit {
    fn new(limits: SocketLimits) -> RateLimit {
        RateLimit {
            tokens: f64::from(limits.burst),
            capacity: f64::from(limits.burst),
            per_second: f64::from(limits.rate_per_second),
            last: Instant::now(),
        }
    }

    fn allow(&mut self) -> bool {
        let now = Instant::now();
        let refill = now.duration_since(self.last).as_secs_f64() * self.per_second;
        self.tokens = (self.tokens + refill).min(self.capacity);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// A client message that was not acted on: unreadable, or refused by the game.
enum Rejected<'a> {
    Frame(&'a ProtocolError),
    Command(&'a Refusal),
}

/// One connection's state.
struct Connection {
    socket: WebSocket,
    viewer: Viewer,
    limits: SocketLimits,
    rate: RateLimit,
    /// Smoothed round-trip time from Ping/Pong frames.
    rtt_ms: Option<u64>,
    /// When the last round-trip sample arrived.
    rtt_sampled: Option<Instant>,
    ping_sent: Option<Instant>,
    /// When the client last sent anything.
    last_heard: Instant,
    /// When the server first asked the client for a sign of life (a ping)
    /// since it last heard from it: silence counts from then, not from the
    /// last message, since a client cannot answer what it was not asked,
    /// however late a busy server was to ask.
    asked: Option<Instant>,
}

/// Completes when the account session a socket was opened with ends (see
/// `Accounts::session_watch`); never for guests and spectators.
pub type SessionEnds = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Serves one game socket through `viewer` until the client leaves or goes
/// silent, the server stops (`shutdown`) or the player's account session
/// ends; counts how it ended in `metrics`.
pub async fn serve(
    socket: WebSocket,
    viewer: Viewer,
    limits: SocketLimits,
    shutdown: watch::Receiver<bool>,
    session_ends: SessionEnds,
    metrics: Metrics,
) {
    let mut connection = Connection {
        socket,
        viewer,
        limits,
        rate: RateLimit::new(limits),
        rtt_ms: None,
        rtt_sampled: None,
        ping_sent: None,
        last_heard: Instant::now(),
        asked: None,
    };
    tracing::info!(seat = ?connection.viewer.seat(), "socket opened");
    let reason = connection.run(shutdown, session_ends).await;
    let seat = connection.viewer.seat();
    // Dropping the viewer counts the connection out.
    drop(connection);
    metrics.game_socket_closed(reason);
    tracing::info!(?seat, ?reason, "socket closed");
}

impl Connection {
    /// Serves the connection; returns why it ended.
    async fn run(
        &mut self,
        mut shutdown: watch::Receiver<bool>,
        mut session_ends: SessionEnds,
    ) -> SocketClose {
        let every = ping_every(self.limits.silence_timeout);
        let mut ping = tokio::time::interval(every);
        // Silence is counted from when the connection starts reading.
        self.last_heard = Instant::now();
        loop {
            tokio::select! {
                incoming = self.socket.recv() => {
                    match incoming {
                        Some(Ok(Message::Close(_))) | None => return SocketClose::Client,
                        Some(Ok(message)) => {
                            if !self.on_frame(message).await {
                                return SocketClose::Error;
                            }
                        }
                        Some(Err(_)) => return SocketClose::Error,
                    }
                    if let Err(close) = self.send_waiting().await {
                        return close;
                    }
                }
                received = self.viewer.recv() => {
                    if let Err(close) = self.on_received(received).await {
                        return close;
                    }
                    if let Err(close) = self.send_waiting().await {
                        return close;
                    }
                }
                _ = ping.tick() => {
                    if self.asked.is_some_and(|asked| asked.elapsed() > self.limits.silence_timeout) {
                        match self.unread_answer() {
                            // The client did answer: the server was late to
                            // read it (busy with a commit, short of CPU).
                            Some(Some(Ok(message))) => {
                                if !self.on_frame(message).await {
                                    return SocketClose::Error;
                                }
                                if let Err(close) = self.send_waiting().await {
                                    return close;
                                }
                                continue;
                            }
                            Some(None) => return SocketClose::Client,
                            Some(Some(Err(_))) => return SocketClose::Error,
                            None => {
                                // Asked, and nothing came back: the connection
                                // is gone even though no close arrived. Say
                                // so, in case the client is only slow (it then
                                // knows why and reconnects); a dead peer cannot
                                // hold the task past a short wait.
                                tracing::info!("the client went silent; closing its socket");
                                let close = self.socket.send(close_frame(CLOSE_SILENT, "no answer to pings"));
                                let _ = tokio::time::timeout(SILENT_CLOSE_WAIT, close).await;
                                return SocketClose::Silent;
                            }
                        }
                    }
                    let rtt_sampled_ago = self.rtt_sampled.map(|at| at.elapsed());
                    if ping_due(self.last_heard.elapsed(), rtt_sampled_ago, every) {
                        let now = Instant::now();
                        self.ping_sent = Some(now);
                        self.asked.get_or_insert(now);
                        if self.socket.send(Message::Ping(Vec::new().into())).await.is_err() {
                            return SocketClose::Error;
                        }
                    }
                }
                () = &mut session_ends => {
                    // Signed out, password changed or token expired: the
                    // socket no longer speaks for the account.
                    let _ = self.socket.send(close_frame(CLOSE_SESSION_ENDED, "session ended")).await;
                    return SocketClose::SessionEnded;
                }
                _ = shutdown.changed() => {
                    let _ = self.socket.send(close_frame(CLOSE_RESTARTING, "server restarting")).await;
                    return SocketClose::ServerStopping;
                }
            }
        }
    }

    /// A frame the client sent that the connection has not read yet, if one
    /// is waiting (`None`: nothing is). While a frame or a broadcast is
    /// handled the connection reads nothing (a move waits for its commit, a
    /// full state for the game's owner), and a server short of CPU runs the
    /// connection late: what the client sent meanwhile, its pongs too, is
    /// unread, not missing.
    fn unread_answer(&mut self) -> Option<Option<Result<Message, axum::Error>>> {
        futures_util::FutureExt::now_or_never(self.socket.recv())
    }

    /// Queues `message` on the connection; it leaves with the next flush
    /// ([`Connection::send_waiting`]), together with whatever else is ready.
    async fn send(&mut self, message: &ServerMsg<'_>) -> bool {
        self.socket
            .feed(Message::Text(message.to_json().into()))
            .await
            .is_ok()
    }

    /// Shows one broadcast of the game as this connection's viewer sees it.
    async fn on_received(&mut self, received: Received) -> Result<(), SocketClose> {
        let sent = match self.viewer.see(received).await {
            None => true,
            Some(seen) => self.show(seen).await?,
        };
        if sent {
            Ok(())
        } else {
            Err(SocketClose::Error)
        }
    }

    /// Renders what the viewer sees (`Err` when the game is gone), without
    /// flushing: `false` when the socket failed.
    async fn show(&mut self, seen: Seen) -> Result<bool, SocketClose> {
        Ok(match seen {
            Seen::Event(outgoing) => self.send_event(&outgoing).await,
            Seen::State(state) => self.send_full(*state).await,
            // Too far behind: start over with the full state.
            Seen::Behind => self.send_state().await,
            // The web page does not show whether the opponent is connected.
            Seen::Presence { .. } => true,
            Seen::Redirect { game_id } => {
                self.send(&ServerMsg::Redirect {
                    game_id,
                    url: format!("/game/{game_id}"),
                })
                .await
            }
            Seen::Closed => return Err(SocketClose::GameGone),
        })
    }

    /// Renders the broadcasts already waiting, then writes everything queued
    /// in one go. A move's `ack` and its own `event` (broadcast before the
    /// owner answers) leave in one write, and the client reads them in one
    /// read: a third fewer writes per move on the server.
    async fn send_waiting(&mut self) -> Result<(), SocketClose> {
        while let Some(received) = self.viewer.try_recv() {
            self.on_received(received).await?;
        }
        self.socket.flush().await.map_err(|_| SocketClose::Error)
    }

    /// Answers a message that was not acted on with its stable code (the
    /// one place refusals become `error` messages).
    async fn reject(&mut self, error: Rejected<'_>, in_reply_to: Option<String>) -> bool {
        let (code, message) = match error {
            Rejected::Frame(error) => (error.code(), error.to_string()),
            Rejected::Command(refusal) => (refusal.code(), refusal.to_string()),
        };
        self.send(&ServerMsg::Error {
            code,
            message,
            in_reply_to,
        })
        .await
    }

    /// Handles one frame; `false` ends the connection.
    async fn on_frame(&mut self, message: Message) -> bool {
        self.last_heard = Instant::now();
        self.asked = None;
        match message {
            Message::Text(text) => self.on_text(text.as_str()).await,
            Message::Binary(_) => {
                self.reject(Rejected::Frame(&ProtocolError::Binary), None)
                    .await
            }
            Message::Pong(_) => {
                if let Some(sent) = self.ping_sent.take() {
                    let sample = u64::try_from(sent.elapsed().as_millis()).unwrap_or(u64::MAX);
                    // Smooth out one slow round trip; the first sample stands alone.
                    self.rtt_ms = Some(match self.rtt_ms {
                        Some(previous) => (previous * 3 + sample) / 4,
                        None => sample,
                    });
                    self.rtt_sampled = Some(Instant::now());
                }
                true
            }
            Message::Ping(_) => true,
            Message::Close(_) => false,
        }
    }

    async fn on_text(&mut self, text: &str) -> bool {
        if !self.rate.allow() {
            return self
                .reject(Rejected::Frame(&ProtocolError::RateLimited), None)
                .await;
        }
        let Incoming { kind, message } = match ClientMsg::parse(text, self.limits.max_message_bytes)
        {
            Ok(incoming) => incoming,
            Err(error) => {
                let in_reply_to = error.in_reply_to().map(str::to_owned);
                return self.reject(Rejected::Frame(&error), in_reply_to).await;
            }
        };
        let mut command = match message {
            ClientMsg::Hello { version } => return self.hello(version).await,
            ClientMsg::Ping { t } => {
                let pong = ServerMsg::Pong {
                    t,
                    server_time: now_ms().millis(),
                    rtt_ms: self.rtt_ms,
                };
                return self.send(&pong).await;
            }
            ClientMsg::Command(command) => command,
        };
        if let Command::Premove { charge_ms, .. } = &mut command {
            *charge_ms = u32::try_from(self.rtt_ms.unwrap_or(0)).unwrap_or(u32::MAX);
        }
        let outcome = match self.viewer.command(command, now_ms()).await {
            Ok(outcome) => outcome,
            // The owner cannot unload under a viewer; if it stopped, the
            // server is stopping.
            Err(_gone) => return false,
        };
        match outcome {
            Ok(Applied::Ack { ply, uci, version }) => {
                let ack = ServerMsg::Ack {
                    ply,
                    uci: uci.to_string(),
                    version,
                };
                self.send(&ack).await
            }
            Ok(Applied::Done) => true,
            Err(refusal) => {
                self.reject(Rejected::Command(&refusal), Some(kind.to_owned()))
                    .await
            }
        }
    }

    /// `hello`: what the client missed since `version`, or the whole game.
    async fn hello(&mut self, version: Option<u64>) -> bool {
        for seen in self.viewer.resume(version).await {
            match self.show(seen).await {
                Ok(true) => {}
                Ok(false) | Err(_) => return false,
            }
        }
        true
    }

    /// The whole game again, up to date with the store.
    async fn send_state(&mut self) -> bool {
        match self.viewer.state().await {
            Some(state) => self.send_full(state).await,
            None => false,
        }
    }

    async fn send_full(&mut self, state: StateView) -> bool {
        self.send(&ServerMsg::State(Box::new(state))).await
    }

    /// Renders an event for this connection's seat: its public part, and
    /// the seat's private messages.
    async fn send_event(&mut self, outgoing: &Outgoing) -> bool {
        let Outgoing::Event {
            version,
            kind,
            public,
            situation,
        } = outgoing
        else {
            return true;
        };
        let seat = self.viewer.seat();
        if let Some(event) = public
            && !self
                .send(&ServerMsg::Event {
                    version: *version,
                    event,
                    situation: situation.for_seat(seat),
                })
                .await
        {
            return false;
        }
        for message in private_messages(seat, *version, kind) {
            if !self.send(&message).await {
                return false;
            }
        }
        true
    }
}

/// The private messages `seat` gets for `kind`: its own premove's changes,
/// and the acknowledgement of its premove when it is played.
fn private_messages(seat: Seat, version: u64, kind: &EventKind) -> Vec<ServerMsg<'static>> {
    let (color, reason) = match kind {
        EventKind::PremoveSet { color, .. } => (*color, PremoveReason::Set),
        EventKind::PremoveCancelled { color, reason } => (
            *color,
            match reason {
                PremoveCancelReason::Cancelled => PremoveReason::Cancelled,
                PremoveCancelReason::Disconnected => PremoveReason::Disconnected,
            },
        ),
        EventKind::PremoveDropped { color, .. } => (*color, PremoveReason::DroppedIllegal),
        EventKind::Move {
            color,
            premove: true,
            ..
        } => (*color, PremoveReason::Played),
        _ => return Vec::new(),
    };
    if seat != Seat::of(color) {
        return Vec::new();
    }
    let premove = match kind {
        EventKind::PremoveSet { uci, .. } => Some(PremoveView { uci: uci.clone() }),
        _ => None,
    };
    let mut messages = vec![ServerMsg::Premove {
        version,
        premove,
        reason,
    }];
    if let EventKind::Move { ply, uci, .. } = kind {
        messages.push(ServerMsg::Ack {
            ply: *ply,
            uci: uci.clone(),
            version,
        });
    }
    messages
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The size of the future `make` returns, without running it.
    fn future_size<A, F: std::future::Future>(_make: impl Fn(A) -> F) -> usize {
        std::mem::size_of::<F>()
    }

    /// Every socket's task is allocated at this size for its whole life.
    #[test]
    fn the_socket_task_is_small() {
        type Args = (
            WebSocket,
            Viewer,
            SocketLimits,
            watch::Receiver<bool>,
            SessionEnds,
            Metrics,
        );
        let task = future_size(|(socket, viewer, limits, shutdown, ends, metrics): Args| {
            serve(socket, viewer, limits, shutdown, ends, metrics)
        });
        eprintln!(
            "socket task future {task} B (WebSocket {} B, Connection {} B)",
            std::mem::size_of::<WebSocket>(),
            std::mem::size_of::<Connection>()
        );
        assert!(task <= 8192, "the socket task is {task} bytes");
    }

    #[test]
    fn a_live_client_is_pinged_three_times_per_silence_window() {
        assert_eq!(ping_every(Duration::from_secs(5)).as_millis(), 1_666);
        assert_eq!(ping_every(Duration::from_secs(2)).as_millis(), 666);
        // Never more often than every 100 ms, never less than every 2 s.
        assert_eq!(
            ping_every(Duration::from_millis(30)),
            Duration::from_millis(100)
        );
        assert_eq!(ping_every(Duration::from_secs(120)), PING_AT_MOST_EVERY);
    }

    #[test]
    fn a_client_heard_from_since_the_last_tick_is_pinged_only_for_a_stale_round_trip() {
        let every = Duration::from_millis(1_666);
        let fresh = Some(Duration::from_secs(3));
        let stale = Some(RTT_REFRESH + Duration::from_millis(1));
        // Heard from lately, round trip fresh: no ping needed.
        assert!(!ping_due(Duration::from_millis(400), fresh, every));
        // Nothing heard since the last tick: pinged, however fresh the sample.
        assert!(ping_due(every, fresh, every));
        assert!(ping_due(Duration::from_secs(4), fresh, every));
        // Heard from, but no sample yet or an old one: pinged for the round trip.
        assert!(ping_due(Duration::from_millis(400), None, every));
        assert!(ping_due(Duration::from_millis(400), stale, every));
    }
}
