//! What nodes sharing one database tell each other of live games: the
//! format of change and presence notices (the server's listener carries
//! them, on Postgres with `LISTEN/NOTIFY`).
//!
//! Every batch the writer commits carries a notice naming the games it
//! changed and their new versions, sent in the batch's transaction: it goes
//! out exactly when the batch commits, and names only the changes that
//! landed. A node hosting a game it did not change follows the change and
//! replays its events to its connections, in order. A change usually
//! travels whole in the notice (its new state, moves and events, about a
//! kilobyte), so the owner follows it without reading the store; when it
//! does not (a seat taken, moves taken back, a rematch, a change too big),
//! or the owner does not hold the version it was made over, the owner
//! rereads the row. A payload stays under Postgres's 8,000-byte limit by
//! splitting a large batch over several notices.
//!
//! Presence notices say which colours of a game have a connection on a
//! node, so every node knows whether a player is connected anywhere.

use std::borrow::Cow;

use chess_game::Event;
use chess_rules::ByColor;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::clock::UnixMs;
use crate::model::GameStage;
use crate::rows::MoveRow;

/// The channel of game changes.
pub const GAMES_CHANNEL: &str = "chess_games";
/// The channel of players' presence: which colours of a game have a socket
/// or an API stream open on a node.
pub const PRESENCE_CHANNEL: &str = "chess_presence";
/// Largest payload written (Postgres refuses 8,000 bytes and more).
const MAX_PAYLOAD: usize = 7_900;

/// Changed games as one node announced them: the payload of a notice on
/// [`GAMES_CHANNEL`], `{"node":…,"games":[…]}`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct GameNotice {
    /// The node that made the changes (it ignores its own notices).
    pub node: Uuid,
    /// Each game changed.
    pub games: Vec<ChangeNotice<'static>>,
}

/// One game's change in a notice.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeNotice<'a> {
    pub id: Uuid,
    /// The game's version after the change.
    pub version: i64,
    /// What a node holding the version before needs to follow the change
    /// without reading the store; absent when the change must be reread
    /// (a seat taken, moves taken back, a rematch, or too big a change).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<GameChange<'a>>,
}

/// One game's change as the node that made it wrote it: the row's new
/// fields, the moves it added and the events it broadcast. Borrowed when
/// written (no copy of the state or the moves), owned when read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameChange<'a> {
    /// The version the change was written over (its compare-and-set).
    pub from_version: i64,
    /// The seats it was written with: a node holding other seats rereads.
    pub white_id: Option<Uuid>,
    pub black_id: Option<Uuid>,
    pub status: GameStage,
    pub result: Option<Cow<'a, str>>,
    /// The `games.state` JSON after the change.
    pub state: Cow<'a, str>,
    pub updated_at: UnixMs,
    pub deadline_at: Option<UnixMs>,
    /// The node whose connection set each side's premove.
    pub premove_nodes: ByColor<Option<Uuid>>,
    /// The moves the change played, in ply order.
    pub moves: Cow<'a, [MoveRow]>,
    /// The events the change broadcast, in order.
    pub events: Cow<'a, [Event]>,
}

impl ChangeNotice<'_> {
    /// The notice's JSON, to be sent when the change commits.
    pub fn to_json(&self) -> String {
        // Plain data with string keys: serialising cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The payloads announcing `changes` by `node`, each change either its
/// [`ChangeNotice`] JSON or, when it has none, only its id and version. A
/// change too big to share a payload goes as id and version only (the
/// receivers reread it), and payloads are split so that none exceeds
/// Postgres's limit.
pub fn game_notices<'a>(
    node: Uuid,
    changes: impl Iterator<Item = (Uuid, i64, Option<&'a str>)>,
) -> Vec<String> {
    let prefix = notice_prefix(node);
    const SUFFIX: &str = "]}";
    let mut notices = Vec::new();
    let mut current = prefix.clone();
    for (id, version, json) in changes {
        let bare;
        let item = match json {
            Some(json) if prefix.len() + json.len() + SUFFIX.len() <= MAX_PAYLOAD => json,
            _ => {
                bare = ChangeNotice {
                    id,
                    version,
                    change: None,
                }
                .to_json();
                &bare
            }
        };
        if current.len() > prefix.len()
            && current.len() + 1 + item.len() + SUFFIX.len() > MAX_PAYLOAD
        {
            current.push_str(SUFFIX);
            notices.push(std::mem::replace(&mut current, prefix.clone()));
        }
        if current.len() > prefix.len() {
            current.push(',');
        }
        current.push_str(item);
    }
    if current.len() > prefix.len() {
        current.push_str(SUFFIX);
        notices.push(current);
    }
    notices
}

/// How every game notice of `node` begins: a node skips its own notices
/// without parsing them (they are most of what it hears).
pub fn notice_prefix(node: Uuid) -> String {
    format!("{{\"node\":\"{node}\",\"games\":[")
}

/// Reads a payload of [`game_notices`]; `None` if it is not one.
pub fn parse_game_notice(payload: &str) -> Option<GameNotice> {
    serde_json::from_str(payload).ok()
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

    /// This notice sent instead of `earlier` (of the same game, not sent
    /// yet): its presence, and a request for answers if either made one.
    fn replacing(self, earlier: PresenceNotice) -> PresenceNotice {
        PresenceNotice {
            asks: self.asks || earlier.asks,
            ..self
        }
    }
}

/// This node's presence notices waiting to be sent: the latest per game.
///
/// Only a game's last presence matters to the other nodes, so a burst of
/// sockets arriving and leaving goes out as one statement however long the
/// database takes to answer, and nothing is dropped for want of room (one
/// entry per hosted game at most). Keeping one per game also keeps the
/// payloads sent together distinct: Postgres delivers only one of identical
/// payloads sent in one transaction, and a game that went present, absent,
/// present would otherwise lose its last state.
#[derive(Debug, Default)]
pub struct PresenceOutbox {
    waiting: std::sync::Mutex<std::collections::HashMap<Uuid, PresenceNotice>>,
    ready: tokio::sync::Notify,
}

impl PresenceOutbox {
    /// Queues `notice` in place of the game's waiting one, keeping that
    /// one's request for answers.
    pub fn push(&self, notice: PresenceNotice) {
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting
                .entry(notice.game)
                .and_modify(|earlier| *earlier = notice.replacing(*earlier))
                .or_insert(notice);
        }
        self.ready.notify_one();
    }

    /// Waits until notices wait, then takes them all.
    pub async fn take(&self) -> Vec<PresenceNotice> {
        loop {
            let taken = self
                .waiting
                .lock()
                .map(|mut waiting| std::mem::take(&mut *waiting))
                .unwrap_or_default();
            if !taken.is_empty() {
                return taken.into_values().collect();
            }
            self.ready.notified().await;
        }
    }

    /// Puts back notices that could not be sent, behind any newer notice of
    /// the same game (which keeps their request for answers).
    pub fn put_back(&self, notices: Vec<PresenceNotice>) {
        if let Ok(mut waiting) = self.waiting.lock() {
            for notice in notices {
                waiting
                    .entry(notice.game)
                    .and_modify(|newer| *newer = newer.replacing(notice))
                    .or_insert(notice);
            }
        }
        self.ready.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use chess_game::{Game, GameSettings, GameSpec};
    use chess_rules::Color;

    use crate::stored;

    /// A real change: 1. e4 in a blitz game, as the owner announces it.
    fn a_move(from_version: i64) -> (GameChange<'static>, Uuid) {
        let mut game = Game::new(
            GameSpec::standard("3+2".parse().expect("preset")),
            GameSettings::default(),
            1_000,
        );
        let events = game
            .play_uci(Color::White, "e2e4", Some(0), 2_000)
            .expect("legal");
        let change = GameChange {
            from_version,
            white_id: Some(Uuid::new_v4()),
            black_id: Some(Uuid::new_v4()),
            status: GameStage::Playing,
            result: None,
            state: Cow::Owned(stored::state_json(&game)),
            updated_at: UnixMs::from_millis(2_000),
            deadline_at: Some(UnixMs::from_millis(182_000)),
            premove_nodes: ByColor::default(),
            moves: Cow::Owned(vec![stored::move_row(&game, 0).expect("played")]),
            events: Cow::Owned(events),
        };
        (change, Uuid::new_v4())
    }

    fn notice(
        id: Uuid,
        version: i64,
        change: Option<GameChange<'static>>,
    ) -> ChangeNotice<'static> {
        ChangeNotice {
            id,
            version,
            change,
        }
    }

    fn announce(node: Uuid, notices: &[ChangeNotice<'_>]) -> Vec<String> {
        let json: Vec<Option<String>> = notices
            .iter()
            .map(|notice| notice.change.is_some().then(|| notice.to_json()))
            .collect();
        game_notices(
            node,
            notices
                .iter()
                .zip(&json)
                .map(|(notice, json)| (notice.id, notice.version, json.as_deref())),
        )
    }

    #[test]
    fn notices_round_trip_with_and_without_the_change() {
        let node = Uuid::new_v4();
        let (change, id) = a_move(0);
        let games = vec![
            notice(id, 1, Some(change)),
            notice(Uuid::new_v4(), 41, None),
        ];
        let notices = announce(node, &games);
        assert_eq!(notices.len(), 1);
        assert_eq!(
            parse_game_notice(&notices[0]),
            Some(GameNotice { node, games })
        );
    }

    #[test]
    fn a_move_travels_in_about_a_kilobyte() {
        let (change, id) = a_move(0);
        let json = notice(id, 1, Some(change)).to_json();
        // Several games' moves share one notice.
        assert!(json.len() < MAX_PAYLOAD / 4, "{} bytes: {json}", json.len());
    }

    #[test]
    fn a_large_batch_is_split_under_the_payload_limit() {
        let node = Uuid::new_v4();
        let games: Vec<ChangeNotice<'static>> = (0..1_000)
            .map(|i| {
                let (change, id) = a_move(i);
                notice(id, i + 1, (i % 3 != 0).then_some(change))
            })
            .collect();
        let notices = announce(node, &games);
        assert!(notices.len() > 1);
        assert!(notices.iter().all(|notice| notice.len() <= MAX_PAYLOAD));
        // The node knows its own notices without parsing them.
        assert!(
            notices
                .iter()
                .all(|notice| notice.starts_with(&notice_prefix(node)))
        );
        assert!(!notices[0].starts_with(&notice_prefix(Uuid::new_v4())));
        let parsed: Vec<ChangeNotice<'static>> = notices
            .iter()
            .flat_map(|notice| parse_game_notice(notice).expect("parses").games)
            .collect();
        assert_eq!(parsed, games);
    }

    #[test]
    fn a_change_too_big_for_a_notice_goes_as_its_id_and_version() {
        let node = Uuid::new_v4();
        let (mut change, id) = a_move(0);
        change.state = Cow::Owned("x".repeat(MAX_PAYLOAD));
        let big = notice(id, 1, Some(change));
        let notices = announce(node, std::slice::from_ref(&big));
        assert_eq!(notices.len(), 1);
        assert!(notices[0].len() <= MAX_PAYLOAD);
        assert_eq!(
            parse_game_notice(&notices[0]),
            Some(GameNotice {
                node,
                games: vec![notice(id, 1, None)]
            })
        );
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

    fn presence(game: Uuid, white: bool, black: bool, asks: bool) -> PresenceNotice {
        PresenceNotice {
            node: Uuid::from_u128(7),
            game,
            present: ByColor { white, black },
            asks,
        }
    }

    fn sorted(mut notices: Vec<PresenceNotice>) -> Vec<PresenceNotice> {
        notices.sort_by_key(|notice| notice.game);
        notices
    }

    #[tokio::test]
    async fn the_presence_outbox_sends_each_games_latest_and_keeps_its_ask() {
        let outbox = PresenceOutbox::default();
        let (game, other) = (Uuid::from_u128(1), Uuid::from_u128(2));
        outbox.push(presence(game, false, false, true));
        outbox.push(presence(game, true, false, false));
        outbox.push(presence(other, false, true, false));
        outbox.push(presence(game, false, false, false));
        outbox.push(presence(game, true, false, false));
        assert_eq!(
            sorted(outbox.take().await),
            vec![
                presence(game, true, false, true),
                presence(other, false, true, false)
            ]
        );
        // Taken: the next take waits for the next push.
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(50), outbox.take());
        assert!(waiting.await.is_err(), "nothing waits");
        outbox.push(presence(other, false, false, false));
        assert_eq!(
            outbox.take().await,
            vec![presence(other, false, false, false)]
        );
    }

    #[tokio::test]
    async fn presence_put_back_yields_to_newer_notices() {
        let outbox = PresenceOutbox::default();
        let (game, other) = (Uuid::from_u128(1), Uuid::from_u128(2));
        outbox.push(presence(game, false, true, false));
        outbox.push(presence(other, true, true, true));
        let unsent = outbox.take().await;
        outbox.push(presence(game, false, false, false));
        outbox.put_back(unsent);
        assert_eq!(
            sorted(outbox.take().await),
            vec![
                presence(game, false, false, false),
                presence(other, true, true, true)
            ]
        );
        // An ask put back stays with the newer state.
        outbox.push(presence(other, false, false, false));
        outbox.put_back(vec![presence(other, true, true, true)]);
        assert_eq!(
            outbox.take().await,
            vec![presence(other, false, false, true)]
        );
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
        let node = Uuid::new_v4();
        for payload in [
            String::new(),
            "|".to_owned(),
            // The format before changes travelled in notices.
            format!("{node}|{}:3", Uuid::new_v4()),
            format!(r#"{{"node":"{node}"}}"#),
            format!(r#"{{"node":"{node}","games":[{{"id":"x","version":1}}]}}"#),
            format!(r#"{{"node":"{node}","games":[{{"id":"{node}","version":"1"}}]}}"#),
        ] {
            assert_eq!(parse_game_notice(&payload), None, "{payload:?}");
        }
    }
}
