//! One game WebSocket: reads client messages (parsed in one place), sends
//! them to the game's owner task, and writes the game's broadcasts rendered
//! for this connection's seat. Pings measure the round-trip time and find
//! connections that died without a close (a phone that lost its signal):
//! one that stays silent too long is closed like any other lost connection.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use chess_game::{EventKind, PremoveCancelReason};
use futures_util::SinkExt;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use uuid::Uuid;

use crate::clock::now_ms;
use crate::games::hub::Hub;
use crate::games::live::{Applied, Outgoing, Refusal};
use crate::games::model::Seat;
use crate::games::owner::{GameHandle, Gone};
use crate::games::view::SeatSituation;
use crate::metrics::SocketClose;
use crate::ws::protocol::{
    ClientMsg, Command, Incoming, PremoveReason, PremoveView, ProtocolError, ServerMsg,
};

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
/// of players thinking 1–3 s; this halves them or better
/// (docs/performance.md, "Ninth pass"), and a silent connection is still
/// pinged on every tick.
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
    hub: Arc<Hub>,
    game: GameHandle,
    viewer: Option<Uuid>,
    seat: Seat,
    limits: SocketLimits,
    rate: RateLimit,
    /// Highest event version this connection was sent (later duplicates are skipped).
    sent_version: u64,
    /// Smoothed round-trip time from Ping/Pong frames.
    rtt_ms: Option<u64>,
    /// When the last round-trip sample arrived.
    rtt_sampled: Option<Instant>,
    ping_sent: Option<Instant>,
    /// When the client last sent anything.
    last_heard: Instant,
}

/// Completes when the account session a socket was opened with ends (see
/// `Accounts::session_watch`); never for guests and spectators.
pub type SessionEnds = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Serves one game socket until the client leaves or goes silent, the
/// server stops or the player's account session ends.
pub async fn serve(
    socket: WebSocket,
    hub: Arc<Hub>,
    game: GameHandle,
    viewer: Option<Uuid>,
    limits: SocketLimits,
    session_ends: SessionEnds,
) {
    let mut connection = Connection {
        socket,
        hub,
        game,
        viewer,
        seat: Seat::None,
        limits,
        rate: RateLimit::new(limits),
        sent_version: 0,
        rtt_ms: None,
        rtt_sampled: None,
        ping_sent: None,
        last_heard: Instant::now(),
    };
    // Subscribed before the seat is counted, so the owner never unloads
    // under a socket.
    let Some(outbox) = connection.attach().await else {
        tracing::warn!("the game could not be reached; closing the socket");
        return;
    };
    tracing::info!(seat = ?connection.seat, "socket opened");
    let reason = connection.run(outbox, session_ends).await;
    let Connection {
        game, seat, hub, ..
    } = connection;
    game.disconnected(seat).await;
    hub.metrics().game_socket_closed(reason);
    tracing::info!(?seat, ?reason, "socket closed");
}

impl Connection {
    /// Subscribes to the game and counts this socket's seat, loading the game
    /// again if its owner unloaded meanwhile; `None` if it cannot be reached.
    async fn attach(&mut self) -> Option<broadcast::Receiver<Arc<Outgoing>>> {
        for _ in 0..3 {
            let outbox = self.game.subscribe();
            let viewer = self.viewer;
            match self.game.inspect(move |entry| entry.seat_of(viewer)).await {
                Ok(seat) => {
                    self.seat = seat;
                    self.game.connected(seat).await;
                    return Some(outbox);
                }
                Err(Gone) => {
                    self.game = self.hub.get(self.game.id).await.ok()??;
                }
            }
        }
        None
    }

    /// Serves the connection; returns why it ended.
    async fn run(
        &mut self,
        mut outbox: broadcast::Receiver<Arc<Outgoing>>,
        mut session_ends: SessionEnds,
    ) -> SocketClose {
        let mut shutdown = self.hub.shutdown_signal();
        let every = ping_every(self.limits.silence_timeout);
        let mut ping = tokio::time::interval(every);
        // Silence is counted from when the connection starts reading.
        self.last_heard = Instant::now();
        loop {
            tokio::select! {
                incoming = self.socket.recv() => {
                    let handling = Instant::now();
                    match incoming {
                        Some(Ok(Message::Close(_))) | None => return SocketClose::Client,
                        Some(Ok(message)) => {
                            if !self.on_frame(message).await {
                                return SocketClose::Error;
                            }
                        }
                        Some(Err(_)) => return SocketClose::Error,
                    }
                    if let Err(close) = self.send_waiting(&mut outbox).await {
                        return close;
                    }
                    self.not_silent_while_busy(handling);
                }
                outgoing = outbox.recv() => {
                    let handling = Instant::now();
                    if let Err(close) = self.on_broadcast(outgoing).await {
                        return close;
                    }
                    if let Err(close) = self.send_waiting(&mut outbox).await {
                        return close;
                    }
                    self.not_silent_while_busy(handling);
                }
                _ = ping.tick() => {
                    if self.last_heard.elapsed() > self.limits.silence_timeout {
                        // No pong, no message: the connection is gone even
                        // though no close arrived. Say so, in case the client
                        // is only slow (it then knows why and reconnects);
                        // a dead peer cannot hold the task past a short wait.
                        tracing::info!("the client went silent; closing its socket");
                        let close = self.socket.send(close_frame(CLOSE_SILENT, "no answer to pings"));
                        let _ = tokio::time::timeout(SILENT_CLOSE_WAIT, close).await;
                        return SocketClose::Silent;
                    }
                    let rtt_sampled_ago = self.rtt_sampled.map(|at| at.elapsed());
                    if ping_due(self.last_heard.elapsed(), rtt_sampled_ago, every) {
                        self.ping_sent = Some(Instant::now());
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

    /// Stops the silence clock for the time since `handling` began. While
    /// a frame or a broadcast is handled the connection reads nothing (a
    /// move waits for its commit, as long as the database takes; a full
    /// state waits for the game's owner): what the client sent meanwhile,
    /// its pongs too, is unread, not missing.
    fn not_silent_while_busy(&mut self, handling: Instant) {
        self.last_heard = (self.last_heard + handling.elapsed()).min(Instant::now());
    }

    /// Queues `message` on the connection; it leaves with the next flush
    /// ([`Connection::send_waiting`]), together with whatever else is ready.
    async fn send(&mut self, message: &ServerMsg<'_>) -> bool {
        self.socket
            .feed(Message::Text(message.to_json().into()))
            .await
            .is_ok()
    }

    /// Renders one broadcast of the game's owner for this seat.
    async fn on_broadcast(
        &mut self,
        received: Result<Arc<Outgoing>, RecvError>,
    ) -> Result<(), SocketClose> {
        let sent = match received {
            Ok(outgoing) => self.on_outgoing(&outgoing).await,
            // Too far behind: start over with the full state.
            Err(RecvError::Lagged(_)) => self.send_state().await,
            Err(RecvError::Closed) => return Err(SocketClose::GameGone),
        };
        if sent {
            Ok(())
        } else {
            Err(SocketClose::Error)
        }
    }

    /// Renders the broadcasts already waiting, then writes everything queued
    /// in one go. A move's `ack` and its own `event` (broadcast before the
    /// owner answers) leave in one write, and the client reads them in one
    /// read: a third fewer writes per move on the server (docs/performance.md,
    /// "Eleventh pass").
    async fn send_waiting(
        &mut self,
        outbox: &mut broadcast::Receiver<Arc<Outgoing>>,
    ) -> Result<(), SocketClose> {
        loop {
            match outbox.try_recv() {
                Ok(outgoing) => self.on_broadcast(Ok(outgoing)).await?,
                Err(TryRecvError::Lagged(missed)) => {
                    self.on_broadcast(Err(RecvError::Lagged(missed))).await?;
                }
                Err(TryRecvError::Closed) => {
                    // Send what was rendered; the next `recv` ends the socket.
                    break;
                }
                Err(TryRecvError::Empty) => break,
            }
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
            *charge_ms = self.rtt_ms.unwrap_or(0);
        }
        let outcome = match self.game.command(self.seat, command, now_ms()).await {
            Ok(outcome) => outcome,
            // The owner cannot unload under a subscribed socket; if it
            // stopped, the server is stopping.
            Err(Gone) => return false,
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

    async fn hello(&mut self, version: Option<u64>) -> bool {
        let missed = match version {
            Some(version) => self
                .game
                .inspect(move |entry| entry.events_after(version))
                .await
                .ok()
                .flatten(),
            None => None,
        };
        match missed {
            Some(missed) => {
                for outgoing in missed {
                    if !self.on_outgoing(&outgoing).await {
                        return false;
                    }
                }
                true
            }
            None => self.send_state().await,
        }
    }

    async fn send_state(&mut self) -> bool {
        let viewer = self.viewer;
        let Ok((seat, state)) = self
            .game
            .inspect_fresh(move |entry| (entry.seat_of(viewer), entry.state_for(viewer, now_ms())))
            .await
        else {
            return false;
        };
        self.seat = seat;
        self.sent_version = state.version;
        self.send(&ServerMsg::State(Box::new(state))).await
    }

    /// Renders a broadcast for this connection's seat.
    async fn on_outgoing(&mut self, outgoing: &Outgoing) -> bool {
        match outgoing {
            Outgoing::Resync => {
                let before = self.seat;
                let sent = self.send_state().await;
                if self.seat != before {
                    // Joined a challenge on this socket: count the new seat.
                    self.game.disconnected(before).await;
                    self.game.connected(self.seat).await;
                }
                sent
            }
            // The web page does not show whether the opponent is connected.
            Outgoing::Presence { .. } => true,
            Outgoing::Redirect { game_id } => {
                self.send(&ServerMsg::Redirect {
                    game_id: *game_id,
                    url: format!("/game/{game_id}"),
                })
                .await
            }
            Outgoing::Event {
                version,
                kind,
                public,
                situation,
            } => {
                if *version <= self.sent_version {
                    return true;
                }
                self.sent_version = *version;
                if let Some(event) = public
                    && !self
                        .send(&ServerMsg::Event {
                            version: *version,
                            event,
                            situation: SeatSituation {
                                shared: situation,
                                seat: self.seat,
                            },
                        })
                        .await
                {
                    return false;
                }
                for message in self.private_messages(*version, kind) {
                    if !self.send(&message).await {
                        return false;
                    }
                }
                true
            }
        }
    }

    /// The private messages this seat gets for `kind`: its own premove's
    /// changes, and the acknowledgement of its premove when it is played.
    fn private_messages(&self, version: u64, kind: &EventKind) -> Vec<ServerMsg<'static>> {
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
        if self.seat != Seat::of(color) {
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
            Arc<Hub>,
            GameHandle,
            Option<Uuid>,
            SocketLimits,
            SessionEnds,
        );
        let task = future_size(|(socket, hub, game, viewer, limits, ends): Args| {
            serve(socket, hub, game, viewer, limits, ends)
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
