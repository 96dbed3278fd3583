//! The lobby: open seeks, pairing, and the changes lobby sockets
//! (`ws::lobby_socket`) render, relayed between nodes.

use std::collections::HashMap;
use std::sync::Arc;

use chess_game::{GameSpec, TimeControl};
use chess_live::time_control;
use chess_live::view::PlayerView;
use chess_live::{GameMode, NewGame, PlayerKind, PlayerRow, Registry, UnixMs, now_ms};
use chess_rules::Color;
use serde::{Deserialize, Serialize};
use tokio::sync::{Mutex, broadcast};
use uuid::Uuid;

use crate::cluster::{LOBBY_CHANNEL, NodeNotices};
use chess_store::ratings::Perf;
use chess_store::{SeekRow, Store, StoreError, shown};

/// The colour a player asks for when creating a game or seek.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ColorChoice {
    White,
    Black,
    Random,
}

impl ColorChoice {
    /// The stored and wire form.
    pub const fn as_str(self) -> &'static str {
        match self {
            ColorChoice::White => "white",
            ColorChoice::Black => "black",
            ColorChoice::Random => "random",
        }
    }
}

impl std::str::FromStr for ColorChoice {
    type Err = chess_live::model::UnknownValue;

    fn from_str(text: &str) -> Result<ColorChoice, Self::Err> {
        match text {
            "white" => Ok(ColorChoice::White),
            "black" => Ok(ColorChoice::Black),
            "random" => Ok(ColorChoice::Random),
            _ => Err(chess_live::model::UnknownValue(text.to_owned())),
        }
    }
}

impl ColorChoice {
    /// The colour this choice gives, drawing one for `Random`.
    pub fn resolve(self) -> Color {
        match self {
            ColorChoice::White => Color::White,
            ColorChoice::Black => Color::Black,
            ColorChoice::Random => {
                if rand::random::<bool>() {
                    Color::White
                } else {
                    Color::Black
                }
            }
        }
    }

    /// Whether a seek with this choice and one with `other` can be paired.
    pub const fn compatible(self, other: ColorChoice) -> bool {
        !matches!(
            (self, other),
            (ColorChoice::White, ColorChoice::White) | (ColorChoice::Black, ColorChoice::Black)
        )
    }
}

/// A seek as the API shows it.
#[derive(Clone, Debug, Serialize)]
pub struct SeekView {
    pub id: Uuid,
    pub player: PlayerView,
    pub time_control: serde_json::Value,
    pub color: ColorChoice,
    pub created_at: UnixMs,
    pub is_yours: bool,
    /// Whether its game is rated.
    pub rated: bool,
    /// The opponents' ratings it pairs with (`[min, max]`), if it limits them.
    pub rating_range: Option<[i64; 2]>,
    /// The creator's rating in the seek's speed; `None` for a guest.
    pub rating: Option<RatingView>,
}

/// A rating as pages show it: rounded, and whether it is provisional
/// (shown with a `?`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RatingView {
    pub rating: i64,
    pub provisional: bool,
}

/// What a seek asks for beyond its clock and colour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SeekTerms {
    /// Rated: only accounts may create or take it.
    pub rated: bool,
    /// It pairs only with players whose rating in its speed is within
    /// (both ends included).
    pub rating_range: Option<(i64, i64)>,
}

/// Whether `rating` is inside `range` (no range: anyone; no rating, a
/// guest: only without a range).
fn within(range: Option<(i64, i64)>, rating: Option<RatingView>) -> bool {
    match (range, rating) {
        (None, _) => true,
        (Some((min, max)), Some(rating)) => (min..=max).contains(&rating.rating),
        (Some(_), None) => false,
    }
}

/// A lobby change as nodes tell each other (`LISTEN/NOTIFY` on Postgres):
/// ids only; the receiving node reads what it shows from the store.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum LobbyNotice {
    Added {
        seek_id: Uuid,
    },
    Removed {
        seek_id: Uuid,
    },
    Started {
        seek_id: Option<Uuid>,
        game_id: Uuid,
        owner: Uuid,
    },
}

/// A [`LobbyNotice`] with the node that sent it.
#[derive(Debug, Serialize, Deserialize)]
struct NodeNotice {
    node: Uuid,
    notice: LobbyNotice,
}

/// A change in the lobby, before rendering for a watcher.
#[derive(Clone, Debug)]
pub enum LobbyEvent {
    Added(OpenSeek),
    Removed(Uuid),
    /// A game started from `owner`'s seek, or from their challenge link or
    /// a tournament's pairing (`seek_id` is then `None`): `owner` is taken
    /// to it.
    Started {
        seek_id: Option<Uuid>,
        game_id: Uuid,
        owner: Uuid,
    },
}

/// A game the lobby started: from `owner`'s seek, or from their challenge
/// link (`seek_id` is then `None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StartedGame {
    pub seek_id: Option<Uuid>,
    pub game_id: Uuid,
    pub owner: Uuid,
}

/// The games the lobby starts from now on, on any node (for the lichess
/// API's event streams and open seeks).
#[derive(Debug)]
pub struct StartedGames(broadcast::Receiver<LobbyEvent>);

impl StartedGames {
    /// The next game started; `None` once the lobby is gone. Starts missed
    /// by a receiver that fell behind are skipped.
    pub async fn next(&mut self) -> Option<StartedGame> {
        loop {
            match self.0.recv().await {
                Ok(LobbyEvent::Started {
                    seek_id,
                    game_id,
                    owner,
                }) => {
                    return Some(StartedGame {
                        seek_id,
                        game_id,
                        owner,
                    });
                }
                Ok(_) => {}
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "missed lobby changes while following started games");
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

/// A seek with its creator.
#[derive(Clone, Debug)]
pub struct OpenSeek {
    row: SeekRow,
    player: PlayerRow,
    /// The creator's rating in the seek's speed (accounts only).
    rating: Option<RatingView>,
}

impl OpenSeek {
    pub fn view(&self, viewer: Option<Uuid>) -> SeekView {
        SeekView {
            id: self.row.id,
            player: PlayerView {
                id: self.player.id,
                name: self.player.name.clone(),
                kind: self.player.kind,
                level: None,
                is_you: viewer == Some(self.player.id),
            },
            time_control: serde_json::from_str(&self.row.time_control)
                .unwrap_or(serde_json::Value::Null),
            color: self.row.color.parse().unwrap_or(ColorChoice::Random),
            created_at: self.row.created_at,
            is_yours: viewer == Some(self.player.id),
            rated: self.row.rated,
            rating_range: self.row.rating_range.map(|(min, max)| [min, max]),
            rating: self.rating,
        }
    }
}

/// What creating a seek did.
#[derive(Debug)]
pub enum SeekOutcome {
    /// A new (or the caller's identical existing) seek is open.
    Created(SeekView),
    /// A matching seek of someone else was joined.
    Joined(Uuid),
}

/// Why joining or cancelling a seek failed.
#[derive(Debug, thiserror::Error)]
pub enum SeekError {
    #[error("no open seek with that id")]
    NotFound,
    #[error("you cannot join your own seek")]
    Own,
    #[error("this seek is someone else's")]
    NotYours,
    #[error("rated games are for signed-in accounts")]
    RatedNeedsAccount,
    #[error("your rating is outside the range this seek asks for")]
    OutOfRange,
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Starting the game failed.
    #[error(transparent)]
    Game(#[from] chess_live::StoreError),
}

/// The lobby of this node.
#[derive(Debug)]
pub struct Lobby {
    registry: Arc<Registry>,
    store: Store,
    events: broadcast::Sender<LobbyEvent>,
    /// Pairing reads then writes: one at a time on this node (the database's
    /// delete-once still decides between nodes).
    pairing: Mutex<()>,
    /// Open lobby sockets per player: when a player's last one closes, their
    /// real-time seeks go (nobody is there to play them).
    watchers: std::sync::Mutex<HashMap<Uuid, usize>>,
    /// The moves in the games of players with a lobby socket here.
    turns: crate::turns::Turns,
}

impl Lobby {
    /// Relays the lobby changes other nodes announce to this node's lobby
    /// sockets, until shutdown.
    pub fn start(self: &Arc<Self>, notices: &NodeNotices) {
        let lobby = Arc::clone(self);
        let mut notices = notices.lobby();
        let mut shutdown = self.registry.shutdown_signal();
        tokio::spawn(async move {
            loop {
                let payload = tokio::select! {
                    received = notices.recv() => match received {
                        Ok(payload) => payload,
                        Err(broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(broadcast::error::RecvError::Closed) => return,
                    },
                    _ = shutdown.changed() => return,
                };
                match serde_json::from_str::<NodeNotice>(&payload) {
                    Ok(notice) if notice.node != lobby.registry.node_id() => {
                        lobby.relay(notice.notice).await;
                    }
                    Ok(_) => {}
                    Err(error) => tracing::warn!(%error, payload, "an unreadable lobby notice"),
                }
            }
        });
    }

    /// Shows another node's change on this node's lobby sockets.
    async fn relay(&self, notice: LobbyNotice) {
        let event = match notice {
            LobbyNotice::Added { seek_id } => {
                let seeks = match self.open_seeks().await {
                    Ok(seeks) => seeks,
                    Err(error) => {
                        tracing::warn!(%error, "reading a seek another node added failed");
                        return;
                    }
                };
                match seeks.into_iter().find(|seek| seek.row.id == seek_id) {
                    Some(seek) => LobbyEvent::Added(seek),
                    // Taken or cancelled meanwhile: its removal follows.
                    None => return,
                }
            }
            LobbyNotice::Removed { seek_id } => LobbyEvent::Removed(seek_id),
            LobbyNotice::Started {
                seek_id,
                game_id,
                owner,
            } => LobbyEvent::Started {
                seek_id,
                game_id,
                owner,
            },
        };
        let _ = self.events.send(event);
    }

    /// Shows `event` on this node's lobby sockets and tells the other nodes.
    async fn publish(&self, event: LobbyEvent) {
        let notice = match &event {
            LobbyEvent::Added(seek) => LobbyNotice::Added {
                seek_id: seek.row.id,
            },
            LobbyEvent::Removed(seek_id) => LobbyNotice::Removed { seek_id: *seek_id },
            LobbyEvent::Started {
                seek_id,
                game_id,
                owner,
            } => LobbyNotice::Started {
                seek_id: *seek_id,
                game_id: *game_id,
                owner: *owner,
            },
        };
        let _ = self.events.send(event);
        let payload = NodeNotice {
            node: self.registry.node_id(),
            notice,
        };
        let payload = serde_json::to_string(&payload).unwrap_or_default();
        if let Err(error) = self.store.notify(LOBBY_CHANNEL, &payload).await {
            tracing::warn!(%error, "telling other nodes of a lobby change failed");
        }
    }

    /// An empty lobby over `store` (open seeks live in the database),
    /// starting its games in `registry`.
    pub fn new(registry: Arc<Registry>, store: Store) -> Lobby {
        let (events, _) = broadcast::channel(256);
        Lobby {
            registry,
            store,
            events,
            pairing: Mutex::new(()),
            watchers: std::sync::Mutex::new(HashMap::new()),
            turns: crate::turns::Turns::default(),
        }
    }

    /// The lobby with `turns` telling its sockets of their players' moves
    /// (the same the store and the cluster listener tell).
    pub fn with_turns(mut self, turns: crate::turns::Turns) -> Lobby {
        self.turns = turns;
        self
    }

    /// Who hears of the moves in their games.
    pub fn turns(&self) -> &crate::turns::Turns {
        &self.turns
    }

    /// Follows the games started from now on.
    pub fn started_games(&self) -> StartedGames {
        StartedGames(self.events.subscribe())
    }

    async fn open_seeks(&self) -> Result<Vec<OpenSeek>, StoreError> {
        let rows = self.store.seeks().await?;
        let mut seeks = Vec::with_capacity(rows.len());
        for row in rows {
            if let Some(player) = self.store.player(row.player_id).await? {
                let perf = seek_perf(&row)?;
                let rating = self.rating_of(&player, perf).await?;
                seeks.push(OpenSeek {
                    row,
                    player,
                    rating,
                });
            }
        }
        Ok(seeks)
    }

    /// `player`'s rating in `perf` as of now; `None` for anyone but an
    /// account.
    async fn rating_of(
        &self,
        player: &PlayerRow,
        perf: Perf,
    ) -> Result<Option<RatingView>, StoreError> {
        if player.kind != PlayerKind::Account {
            return Ok(None);
        }
        let stored = self.store.rating_of(player.id, perf).await?;
        let rating = stored.as_of(now_ms().to_stored());
        Ok(Some(RatingView {
            rating: shown(rating.rating),
            provisional: rating.is_provisional(),
        }))
    }

    /// Every open seek as `viewer` sees it.
    ///
    /// # Errors
    /// A storage failure.
    pub async fn seeks(&self, viewer: Option<Uuid>) -> Result<Vec<SeekView>, StoreError> {
        Ok(self
            .open_seeks()
            .await?
            .iter()
            .map(|seek| seek.view(viewer))
            .collect())
    }

    /// Creates a seek, or joins a matching one of someone else instead.
    ///
    /// # Errors
    /// A storage failure.
    pub async fn create(
        &self,
        player: PlayerRow,
        tc: TimeControl,
        color: ColorChoice,
        terms: SeekTerms,
    ) -> Result<SeekOutcome, SeekError> {
        if terms.rated && player.kind != PlayerKind::Account {
            return Err(SeekError::RatedNeedsAccount);
        }
        let _pairing = self.pairing.lock().await;
        let key = tc.to_string();
        let seeks = self.open_seeks().await?;
        let mine = self.rating_of(&player, Perf::of(tc.speed())).await?;
        let matching = seeks.iter().find(|seek| {
            seek.row.time_control_key == key
                && seek.player.id != player.id
                && seek.row.rated == terms.rated
                && within(seek.row.rating_range, mine)
                && within(terms.rating_range, seek.rating)
                && seek
                    .row
                    .color
                    .parse::<ColorChoice>()
                    .is_ok_and(|theirs| theirs.compatible(color))
        });
        if let Some(seek) = matching {
            match self.take(seek, player.clone(), color).await {
                Ok(game_id) => return Ok(SeekOutcome::Joined(game_id)),
                // Taken by someone else meanwhile: fall through to creating one.
                Err(SeekError::NotFound) => {}
                Err(error) => return Err(error),
            }
        }
        if let Some(own) = seeks.iter().find(|seek| {
            seek.player.id == player.id
                && seek.row.time_control_key == key
                && seek.row.color == color.as_str()
                && seek.row.rated == terms.rated
                && seek.row.rating_range == terms.rating_range
        }) {
            return Ok(SeekOutcome::Created(own.view(Some(player.id))));
        }
        let row = SeekRow {
            id: Uuid::new_v4(),
            player_id: player.id,
            time_control: time_control::to_json(tc).to_string(),
            time_control_key: key,
            color: color.as_str().to_owned(),
            created_at: now_ms(),
            rated: terms.rated,
            rating_range: terms.rating_range,
        };
        self.store.insert_seek(&row).await?;
        let seek = OpenSeek {
            row,
            player,
            rating: mine,
        };
        let view = seek.view(Some(seek.player.id));
        self.publish(LobbyEvent::Added(seek)).await;
        Ok(SeekOutcome::Created(view))
    }

    /// `player` joins seek `id`; the game id.
    ///
    /// # Errors
    /// [`SeekError::NotFound`], [`SeekError::Own`] or a storage failure.
    pub async fn join(&self, player: PlayerRow, id: Uuid) -> Result<Uuid, SeekError> {
        let _pairing = self.pairing.lock().await;
        let seeks = self.open_seeks().await?;
        let seek = seeks
            .iter()
            .find(|seek| seek.row.id == id)
            .ok_or(SeekError::NotFound)?;
        if seek.player.id == player.id {
            return Err(SeekError::Own);
        }
        if seek.row.rated && player.kind != PlayerKind::Account {
            return Err(SeekError::RatedNeedsAccount);
        }
        let rating = self.rating_of(&player, seek_perf(&seek.row)?).await?;
        if !within(seek.row.rating_range, rating) {
            return Err(SeekError::OutOfRange);
        }
        self.take(seek, player, ColorChoice::Random).await
    }

    /// Removes `seek` (exactly once across racing joiners) and starts its game.
    async fn take(
        &self,
        seek: &OpenSeek,
        joiner: PlayerRow,
        joiner_wants: ColorChoice,
    ) -> Result<Uuid, SeekError> {
        if !self.store.delete_seek(seek.row.id).await? {
            return Err(SeekError::NotFound);
        }
        let creator_wants: ColorChoice = seek.row.color.parse().unwrap_or(ColorChoice::Random);
        let creator_color = match (creator_wants, joiner_wants) {
            (ColorChoice::Random, ColorChoice::White) => Color::Black,
            (ColorChoice::Random, ColorChoice::Black) => Color::White,
            (choice, _) => choice.resolve(),
        };
        let tc: TimeControl =
            serde_json::from_str::<time_control::TimeControlJson>(&seek.row.time_control)
                .ok()
                .and_then(|json| json.parse().ok())
                .ok_or_else(|| {
                    StoreError::Corrupt(format!("seek time control {}", seek.row.time_control))
                })?;
        let (white, black) = match creator_color {
            Color::White => (seek.player.clone(), joiner),
            Color::Black => (joiner, seek.player.clone()),
        };
        let live = self
            .registry
            .create(NewGame {
                id: Uuid::new_v4(),
                mode: GameMode::Online,
                spec: GameSpec::standard(tc).with_rated(seek.row.rated),
                white: Some(white),
                black: Some(black),
                computer_level: None,
            })
            .await?;
        self.publish(LobbyEvent::Removed(seek.row.id)).await;
        self.publish(LobbyEvent::Started {
            seek_id: Some(seek.row.id),
            game_id: live.id(),
            owner: seek.player.id,
        })
        .await;
        Ok(live.id())
    }

    /// Someone took the empty seat of `creator`'s challenge link: the creator's
    /// lobby sockets (any page of the site) are told, so they go to the game
    /// instead of waiting on a page that never hears of it.
    pub async fn challenge_accepted(&self, game_id: Uuid, creator: Uuid) {
        self.publish(LobbyEvent::Started {
            seek_id: None,
            game_id,
            owner: creator,
        })
        .await;
    }

    /// A tournament paired `players` in `game_id`: their lobby sockets (the
    /// tournament page, or the page of the game they just finished, on any
    /// node) go to it at once, and their lichess event streams get its
    /// `gameStart`, as for a game from a seek.
    pub async fn tournament_game_started(&self, game_id: Uuid, players: [Uuid; 2]) {
        for owner in players {
            self.publish(LobbyEvent::Started {
                seek_id: None,
                game_id,
                owner,
            })
            .await;
        }
    }

    /// `player` cancels their seek `id`.
    ///
    /// # Errors
    /// [`SeekError::NotFound`], [`SeekError::NotYours`] or a storage failure.
    pub async fn cancel(&self, player: Uuid, id: Uuid) -> Result<(), SeekError> {
        let _pairing = self.pairing.lock().await;
        let seeks = self.store.seeks().await?;
        let seek = seeks
            .iter()
            .find(|seek| seek.id == id)
            .ok_or(SeekError::NotFound)?;
        if seek.player_id != player {
            return Err(SeekError::NotYours);
        }
        if !self.store.delete_seek(id).await? {
            return Err(SeekError::NotFound);
        }
        self.publish(LobbyEvent::Removed(id)).await;
        Ok(())
    }

    /// The changes lobby sockets render: seeks added and removed, games
    /// started for a seek's owner.
    pub fn subscribe(&self) -> broadcast::Receiver<LobbyEvent> {
        self.events.subscribe()
    }

    /// Ends with the server's shutdown.
    pub fn shutdown_signal(&self) -> tokio::sync::watch::Receiver<bool> {
        self.registry.shutdown_signal()
    }

    /// Counts a lobby socket `player` opened.
    pub fn watcher_joined(&self, player: Uuid) {
        if let Ok(mut watchers) = self.watchers.lock() {
            *watchers.entry(player).or_default() += 1;
        }
    }

    /// Counts a lobby socket `player` closed. When it was their last one,
    /// their real-time seeks are cancelled: nobody is there to play them.
    pub async fn watcher_left(&self, player: Uuid) {
        let last = self.watchers.lock().is_ok_and(|mut watchers| {
            let count = watchers.entry(player).or_default();
            *count = count.saturating_sub(1);
            let last = *count == 0;
            if last {
                watchers.remove(&player);
            }
            last
        });
        if last && let Err(error) = self.cancel_real_time_seeks(player).await {
            tracing::error!(%error, "cancelling a departed player's seeks failed");
        }
    }

    /// Cancels `player`'s seeks that have a clock (correspondence seeks stay).
    async fn cancel_real_time_seeks(&self, player: Uuid) -> Result<(), StoreError> {
        let _pairing = self.pairing.lock().await;
        for seek in self.store.seeks().await? {
            let correspondence = seek.time_control_key == TimeControl::Correspondence.to_string();
            if seek.player_id == player
                && !correspondence
                && self.store.delete_seek(seek.id).await?
            {
                self.publish(LobbyEvent::Removed(seek.id)).await;
            }
        }
        Ok(())
    }
}

/// The perf a seek's game would be rated in.
fn seek_perf(row: &SeekRow) -> Result<Perf, StoreError> {
    serde_json::from_str::<time_control::TimeControlJson>(&row.time_control)
        .ok()
        .and_then(|json| json.parse().ok())
        .map(|tc: TimeControl| Perf::of(tc.speed()))
        .ok_or_else(|| StoreError::Corrupt(format!("seek time control {}", row.time_control)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_fixed_colour_seeks_do_not_pair() {
        assert!(!ColorChoice::White.compatible(ColorChoice::White));
        assert!(ColorChoice::White.compatible(ColorChoice::Black));
        assert!(ColorChoice::Random.compatible(ColorChoice::White));
    }

    #[test]
    fn colour_choices_round_trip_through_their_stored_form() {
        for choice in [ColorChoice::White, ColorChoice::Black, ColorChoice::Random] {
            assert_eq!(choice.as_str().parse::<ColorChoice>(), Ok(choice));
        }
        assert!("White".parse::<ColorChoice>().is_err());
    }
}
