//! Live play across nodes on Postgres itself: `LISTEN/NOTIFY`.
//!
//! Every batch the writer commits carries a notice naming the games it
//! changed and their new versions (`NOTIFY` is transactional: the notice goes
//! out exactly when the batch commits). Each node listens; for a game it hosts
//! and did not change itself, its owner rereads the row and replays the new
//! events to its sockets, in order. A notice's payload stays under Postgres's
//! 8,000-byte limit by splitting a large batch over several notices.
//!
//! A dropped listener connection may have lost notices: after reconnecting,
//! every hosted game rereads its row, so no socket misses a change.

use std::sync::Arc;
use std::time::Duration;

use chess_rules::ByColor;
use sqlx::postgres::{PgListener, PgPool};
use tokio::sync::watch;
use uuid::Uuid;

use super::hub::Hub;

/// The channel of game changes.
pub const GAMES_CHANNEL: &str = "chess_games";
/// The channel of lobby changes.
pub const LOBBY_CHANNEL: &str = "chess_lobby";
/// The channel of the lichess-compatible API's challenges and games
/// (`lichess::notices`).
pub const API_CHANNEL: &str = "chess_api";
/// The channel of players' presence: which colours of a game have a socket
/// or an API stream open on a node.
pub const PRESENCE_CHANNEL: &str = "chess_presence";
/// Largest payload written (Postgres refuses 8,000 bytes and more).
const MAX_PAYLOAD: usize = 7_900;
/// Wait before reconnecting a failed listener.
const RECONNECT_AFTER: Duration = Duration::from_millis(500);

/// Changed games as one node announced them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameNotice {
    /// The node that made the changes (it ignores its own notices).
    pub node: Uuid,
    /// Each game changed and its version after the change.
    pub changes: Vec<(Uuid, i64)>,
}

/// The payloads announcing `changes` by `node`: `node|id:version,id:version`,
/// split so that none exceeds the payload limit.
pub fn game_notices(node: Uuid, changes: impl Iterator<Item = (Uuid, i64)>) -> Vec<String> {
    let prefix = format!("{node}|");
    let mut notices = Vec::new();
    let mut current = prefix.clone();
    for (game, version) in changes {
        let item = format!("{game}:{version}");
        if current.len() > prefix.len() && current.len() + 1 + item.len() > MAX_PAYLOAD {
            notices.push(std::mem::replace(&mut current, prefix.clone()));
        }
        if current.len() > prefix.len() {
            current.push(',');
        }
        current.push_str(&item);
    }
    if current.len() > prefix.len() {
        notices.push(current);
    }
    notices
}

/// Reads a payload of [`game_notices`]; `None` if it is not one.
pub fn parse_game_notice(payload: &str) -> Option<GameNotice> {
    let (node, list) = payload.split_once('|')?;
    let node = Uuid::parse_str(node).ok()?;
    let changes = list
        .split(',')
        .map(|item| {
            let (game, version) = item.split_once(':')?;
            Some((Uuid::parse_str(game).ok()?, version.parse().ok()?))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(GameNotice { node, changes })
}

/// What a node says of its own connections to one game: which colours have
/// a socket or an API stream open there. Sent when that changes, and with
/// `asks` when a node starts hosting the game (or lost notices), so that the
/// nodes hosting it answer with their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PresenceNotice {
    pub node: Uuid,
    pub game: Uuid,
    pub present: ByColor<bool>,
    /// The other nodes hosting the game answer with their presence.
    pub asks: bool,
}

impl PresenceNotice {
    /// `node|game|white|black|here` (or `ask`), with `1`/`0` for each colour.
    pub fn payload(&self) -> String {
        let flag = |present: bool| if present { '1' } else { '0' };
        format!(
            "{}|{}|{}|{}|{}",
            self.node,
            self.game,
            flag(self.present.white),
            flag(self.present.black),
            if self.asks { "ask" } else { "here" }
        )
    }

    /// Reads a payload of [`PresenceNotice::payload`]; `None` if it is not one.
    pub fn parse(payload: &str) -> Option<PresenceNotice> {
        let mut parts = payload.split('|');
        let node = Uuid::parse_str(parts.next()?).ok()?;
        let game = Uuid::parse_str(parts.next()?).ok()?;
        let flag = |part: Option<&str>| match part? {
            "1" => Some(true),
            "0" => Some(false),
            _ => None,
        };
        let white = flag(parts.next())?;
        let black = flag(parts.next())?;
        let asks = match parts.next()? {
            "ask" => true,
            "here" => false,
            _ => return None,
        };
        if parts.next().is_some() {
            return None;
        }
        Some(PresenceNotice {
            node,
            game,
            present: ByColor { white, black },
            asks,
        })
    }
}

/// Listens for other nodes' changes until shutdown, reconnecting after a
/// dropped connection and then asking every hosted game to catch up.
pub async fn listen(pool: PgPool, hub: Arc<Hub>, mut shutdown: watch::Receiver<bool>) {
    let node = hub.node_id();
    loop {
        let mut listener = match connect(&pool).await {
            Ok(listener) => listener,
            Err(error) => {
                tracing::warn!(%error, "the change listener cannot connect; retrying");
                tokio::select! {
                    () = tokio::time::sleep(RECONNECT_AFTER) => continue,
                    _ = shutdown.changed() => return,
                }
            }
        };
        // Whatever changed while no one listened: catch up from the store,
        // and ask again who is connected where.
        hub.catch_up_all();
        hub.resync_presence_all();
        loop {
            let received = tokio::select! {
                received = listener.try_recv() => received,
                _ = shutdown.changed() => return,
            };
            match received {
                Ok(Some(notification)) => match notification.channel() {
                    GAMES_CHANNEL => match parse_game_notice(notification.payload()) {
                        Some(notice) if notice.node != node => {
                            hub.metrics().notification_received();
                            for (game, _version) in notice.changes {
                                hub.changed_elsewhere(game);
                            }
                        }
                        Some(_) => {}
                        None => tracing::warn!(
                            payload = notification.payload(),
                            "an unreadable game notice"
                        ),
                    },
                    LOBBY_CHANNEL => hub.lobby_changed_elsewhere(notification.payload()),
                    API_CHANNEL => hub.api_changed_elsewhere(notification.payload()),
                    PRESENCE_CHANNEL => match PresenceNotice::parse(notification.payload()) {
                        Some(notice) if notice.node != node => hub.presence_elsewhere(notice),
                        Some(_) => {}
                        None => tracing::warn!(
                            payload = notification.payload(),
                            "an unreadable presence notice"
                        ),
                    },
                    _ => {}
                },
                // The connection dropped; notices may be lost.
                Ok(None) => {
                    tracing::warn!("the change listener lost its connection; catching up");
                    hub.catch_up_all();
                    hub.resync_presence_all();
                }
                Err(error) => {
                    tracing::warn!(%error, "the change listener failed; reconnecting");
                    break;
                }
            }
        }
        tokio::select! {
            () = tokio::time::sleep(RECONNECT_AFTER) => {}
            _ = shutdown.changed() => return,
        }
    }
}

async fn connect(pool: &PgPool) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener
        .listen_all([GAMES_CHANNEL, LOBBY_CHANNEL, API_CHANNEL, PRESENCE_CHANNEL])
        .await?;
    Ok(listener)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_round_trip() {
        let node = Uuid::new_v4();
        let changes = vec![(Uuid::new_v4(), 3), (Uuid::new_v4(), 41)];
        let notices = game_notices(node, changes.clone().into_iter());
        assert_eq!(notices.len(), 1);
        assert_eq!(
            parse_game_notice(&notices[0]),
            Some(GameNotice { node, changes })
        );
    }

    #[test]
    fn a_large_batch_is_split_under_the_payload_limit() {
        let node = Uuid::new_v4();
        let changes: Vec<(Uuid, i64)> = (0..1_000).map(|i| (Uuid::new_v4(), i)).collect();
        let notices = game_notices(node, changes.clone().into_iter());
        assert!(notices.len() > 1);
        assert!(notices.iter().all(|notice| notice.len() <= MAX_PAYLOAD));
        let parsed: Vec<(Uuid, i64)> = notices
            .iter()
            .flat_map(|notice| parse_game_notice(notice).expect("parses").changes)
            .collect();
        assert_eq!(parsed, changes);
    }

    #[test]
    fn no_changes_no_notice() {
        assert!(game_notices(Uuid::new_v4(), std::iter::empty()).is_empty());
    }

    #[test]
    fn presence_notices_round_trip() {
        for (white, black, asks) in [
            (true, false, false),
            (false, true, true),
            (false, false, false),
        ] {
            let notice = PresenceNotice {
                node: Uuid::new_v4(),
                game: Uuid::new_v4(),
                present: ByColor { white, black },
                asks,
            };
            assert_eq!(PresenceNotice::parse(&notice.payload()), Some(notice));
        }
    }

    #[test]
    fn garbage_is_not_a_presence_notice() {
        let (node, game) = (Uuid::new_v4(), Uuid::new_v4());
        for payload in [
            String::new(),
            format!("{node}|{game}|1|0"),
            format!("{node}|{game}|1|2|here"),
            format!("{node}|{game}|1|0|maybe"),
            format!("{node}|{game}|1|0|here|"),
            format!("{node}|x|1|0|here"),
        ] {
            assert_eq!(PresenceNotice::parse(&payload), None, "{payload:?}");
        }
    }

    #[test]
    fn garbage_is_not_a_notice() {
        for payload in [
            "",
            "|",
            "x|y:1",
            &format!("{}|{}:x", Uuid::nil(), Uuid::nil()),
        ] {
            assert_eq!(parse_game_notice(payload), None, "{payload:?}");
        }
    }
}
