//! The ratings' tables: `ratings` (one row per account and perf) and
//! `rating_history` (one row per player per rated game).
//!
//! A rated game's end changes both players' ratings in the transaction that
//! stores its result, like the reward ledger, and exactly once whatever
//! races, restarts or nodes:
//!
//! - a rated ending never goes through the batch's one-go paths
//!   ([`crate::batch::fits_one_go`]): it is written statement by statement,
//!   where [`Transaction::rate_endings`] runs after the game's
//!   compare-and-set landed (a second node writing the same ending loses
//!   that compare-and-set and rates nothing);
//! - `rating_history`'s primary key (game, player) is the backstop: the
//!   first history row of a game is inserted `on conflict do nothing`
//!   before any rating moves, and a game already there changes nothing;
//! - the ratings rows a batch touches are locked (an upsert that returns
//!   the row) in (player, perf) order, all before any is written, after the
//!   batch locked its games: two batches sharing players wait for each
//!   other instead of deadlocking. On SQLite the transaction holds the
//!   write lock from its start.
//!
//! Whether a game is rated is its spec's (`chess_game::GameSpec::rated`,
//! chosen when it was created); here it is checked again against the
//! database: both seats must be accounts that are not bots, and an abort
//! rates nothing.

use std::collections::{BTreeMap, BTreeSet};

use chess_game::EndReason;
use chess_live::{GameMode, GameWrite};
use chess_rules::Color;
use uuid::Uuid;

use crate::ratings::glicko2::{self, Rating};
use crate::ratings::{PERFS, Perf};
use crate::rows::uuid;
use crate::{Result, Store, StoreError, Transaction};

/// A batch's write that ends a rated game, before the seats are checked.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RatedEnding {
    pub game_id: Uuid,
    pub white: Uuid,
    pub black: Uuid,
    pub perf: Perf,
    /// White's score: 1, ½ or 0.
    pub white_score: f64,
    pub ended_at: i64,
}

/// The rated ending `write` makes, if it makes one: a game between two
/// people (not the computer, not one screen) that was created rated ends
/// with a result other than an abort.
pub(crate) fn rated_ending(write: &GameWrite) -> Option<RatedEnding> {
    let result = write.settle.as_ref()?;
    if result.reason == EndReason::Aborted || write.row.mode != GameMode::Online {
        return None;
    }
    let spec = chess_live::stored::spec_of(&write.row.state).ok()?;
    if !spec.rated() {
        return None;
    }
    Some(RatedEnding {
        game_id: write.row.id,
        white: write.row.white_id?,
        black: write.row.black_id?,
        perf: Perf::of(spec.time_control().speed()),
        white_score: match result.winner {
            Some(Color::White) => 1.0,
            Some(Color::Black) => 0.0,
            None => 0.5,
        },
        ended_at: write.row.updated_at.to_stored(),
    })
}

/// One player's change in one game.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlayerChange {
    pub player_id: Uuid,
    pub before: f64,
    pub after: f64,
    /// As shown: the rounded rating after minus the rounded one before.
    pub change: i64,
}

/// What a rated game changed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GameRatingChange {
    pub game_id: Uuid,
    pub perf: Perf,
    pub white: PlayerChange,
    pub black: PlayerChange,
}

/// A rating as stored.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StoredRating {
    pub rating: Rating,
    /// Rated games counted.
    pub games: i64,
    /// When the last rated game ended (unix ms), if any.
    pub rated_at: Option<i64>,
}

impl StoredRating {
    /// A rating nobody played yet.
    pub const NEW: StoredRating = StoredRating {
        rating: glicko2::DEFAULT,
        games: 0,
        rated_at: None,
    };

    /// The rating as of `now_ms`: the deviation grown by the time since the
    /// last rated game.
    pub fn as_of(&self, now_ms: i64) -> Rating {
        match self.rated_at {
            Some(at) => self.rating.after_inactivity(now_ms - at),
            None => self.rating,
        }
    }
}

/// One point of a player's history.
#[derive(Clone, Debug, PartialEq)]
pub struct HistoryPoint {
    pub game_id: Uuid,
    pub perf: Perf,
    pub rating: f64,
    pub at_ms: i64,
}

const LOCK_RATING: &str = "insert into ratings \
    (player_id, perf, rating, deviation, volatility, games, rated_at) \
    values ($1, $2, $3, $4, $5, 0, null) \
    on conflict (player_id, perf) do update set games = ratings.games \
    returning rating, deviation, volatility, games, rated_at";

const INSERT_HISTORY: &str = "insert into rating_history \
    (game_id, player_id, perf, rating_before, rating_after, deviation_after, change, ended_at) \
    values ($1, $2, $3, $4, $5, $6, $7, $8) \
    on conflict (game_id, player_id) do nothing";

const UPDATE_RATING: &str = "update ratings set rating = $3, deviation = $4, volatility = $5, \
    games = games + 1, rated_at = $6 where player_id = $1 and perf = $2";

const SEAT_KIND: &str = "select p.kind, coalesce(a.bot, false) from players p \
    left join accounts a on a.player_id = p.id where p.id = $1";

type RatingTuple = (f64, f64, f64, i64, Option<i64>);

fn stored((rating, deviation, volatility, games, rated_at): RatingTuple) -> StoredRating {
    StoredRating {
        rating: Rating {
            rating,
            deviation,
            volatility,
        },
        games,
        rated_at,
    }
}

impl Transaction {
    /// Rates `endings` (games whose ending this transaction has just
    /// written), in order: both players' ratings in the game's perf move by
    /// Glicko-2 and a history row is added for each. A game whose seats are
    /// not both accounts (bots count as the computer) or that was rated
    /// already changes nothing. Returns what changed.
    ///
    /// # Errors
    /// The database error; the transaction should then be rolled back.
    pub(crate) async fn rate_endings(
        &mut self,
        endings: &[RatedEnding],
    ) -> Result<Vec<GameRatingChange>> {
        let mut rated = Vec::with_capacity(endings.len());
        for ending in endings {
            if self.is_rated_account(ending.white).await?
                && self.is_rated_account(ending.black).await?
            {
                rated.push(*ending);
            }
        }
        let keys: BTreeSet<(Uuid, Perf)> = rated
            .iter()
            .flat_map(|ending| [(ending.white, ending.perf), (ending.black, ending.perf)])
            .collect();
        let mut held = BTreeMap::new();
        for (player, perf) in keys {
            let row: RatingTuple = with_conn!(self, conn => {
                sqlx::query_as(LOCK_RATING)
                    .bind(player.to_string())
                    .bind(perf.code())
                    .bind(glicko2::DEFAULT.rating)
                    .bind(glicko2::DEFAULT.deviation)
                    .bind(glicko2::DEFAULT.volatility)
                    .fetch_one(&mut *conn)
                    .await?
            });
            held.insert((player, perf), stored(row));
        }
        let mut changes = Vec::new();
        for ending in rated {
            let white = held[&(ending.white, ending.perf)];
            let black = held[&(ending.black, ending.perf)];
            let (white_after, black_after) = glicko2::rate_game(
                white.as_of(ending.ended_at),
                black.as_of(ending.ended_at),
                ending.white_score,
            );
            let change = |player_id, before: &StoredRating, after: &Rating| PlayerChange {
                player_id,
                before: before.rating.rating,
                after: after.rating,
                change: shown(after.rating) - shown(before.rating.rating),
            };
            let white_change = change(ending.white, &white, &white_after);
            let black_change = change(ending.black, &black, &black_after);
            // The first history row decides: a game rated before stops here.
            if !self
                .insert_history(&ending, white_change, &white_after)
                .await?
            {
                continue;
            }
            if !self
                .insert_history(&ending, black_change, &black_after)
                .await?
            {
                return Err(StoreError::Corrupt(format!(
                    "game {} has a rating change for black alone",
                    ending.game_id
                )));
            }
            for (player, after) in [(ending.white, white_after), (ending.black, black_after)] {
                self.update_rating(player, ending.perf, &after, ending.ended_at)
                    .await?;
                let entry = held
                    .get_mut(&(player, ending.perf))
                    .ok_or_else(|| StoreError::Corrupt(format!("rating of {player} not held")))?;
                entry.rating = after;
                entry.games += 1;
                entry.rated_at = Some(ending.ended_at);
            }
            changes.push(GameRatingChange {
                game_id: ending.game_id,
                perf: ending.perf,
                white: white_change,
                black: black_change,
            });
        }
        Ok(changes)
    }

    /// Whether `player` may be rated: an account that is not a bot.
    async fn is_rated_account(&mut self, player: Uuid) -> Result<bool> {
        let kind: Option<(String, bool)> = with_conn!(self, conn => {
            sqlx::query_as(SEAT_KIND)
                .bind(player.to_string())
                .fetch_optional(&mut *conn)
                .await?
        });
        Ok(matches!(kind, Some((kind, false)) if kind == "account"))
    }

    /// Adds a history row; `false` if the game has one for that player.
    async fn insert_history(
        &mut self,
        ending: &RatedEnding,
        change: PlayerChange,
        after: &Rating,
    ) -> Result<bool> {
        let inserted = with_conn!(self, conn => {
            sqlx::query(INSERT_HISTORY)
                .bind(ending.game_id.to_string())
                .bind(change.player_id.to_string())
                .bind(ending.perf.code())
                .bind(change.before)
                .bind(change.after)
                .bind(after.deviation)
                .bind(change.change)
                .bind(ending.ended_at)
                .execute(&mut *conn)
                .await?
                .rows_affected()
        });
        Ok(inserted == 1)
    }

    async fn update_rating(
        &mut self,
        player: Uuid,
        perf: Perf,
        after: &Rating,
        at: i64,
    ) -> Result<()> {
        with_conn!(self, conn => {
            sqlx::query(UPDATE_RATING)
                .bind(player.to_string())
                .bind(perf.code())
                .bind(after.rating)
                .bind(after.deviation)
                .bind(after.volatility)
                .bind(at)
                .execute(&mut *conn)
                .await?;
        });
        Ok(())
    }
}

/// A rating as shown: rounded to the unit.
pub fn shown(rating: f64) -> i64 {
    rating.round() as i64
}

impl Store {
    /// `player`'s rating in every perf (the starting one where they have
    /// played no rated game), in [`PERFS`] order.
    ///
    /// # Errors
    /// The database error.
    pub async fn ratings_of(&self, player: Uuid) -> Result<Vec<(Perf, StoredRating)>> {
        let rows: Vec<(String, f64, f64, f64, i64, Option<i64>)> = with_conn!(self, conn => {
            sqlx::query_as(
                "select perf, rating, deviation, volatility, games, rated_at \
                 from ratings where player_id = $1",
            )
            .bind(player.to_string())
            .fetch_all(&mut *conn)
            .await?
        });
        let mut found = BTreeMap::new();
        for (perf, rating, deviation, volatility, games, rated_at) in rows {
            let perf = Perf::from_code(&perf)
                .ok_or_else(|| StoreError::Corrupt(format!("rating perf {perf:?}")))?;
            found.insert(
                perf,
                stored((rating, deviation, volatility, games, rated_at)),
            );
        }
        Ok(PERFS
            .into_iter()
            .map(|perf| (perf, found.get(&perf).copied().unwrap_or(StoredRating::NEW)))
            .collect())
    }

    /// `player`'s rating in `perf`.
    ///
    /// # Errors
    /// The database error.
    pub async fn rating_of(&self, player: Uuid, perf: Perf) -> Result<StoredRating> {
        let row: Option<RatingTuple> = with_conn!(self, conn => {
            sqlx::query_as(
                "select rating, deviation, volatility, games, rated_at \
                 from ratings where player_id = $1 and perf = $2",
            )
            .bind(player.to_string())
            .bind(perf.code())
            .fetch_optional(&mut *conn)
            .await?
        });
        Ok(row.map_or(StoredRating::NEW, stored))
    }

    /// The ratings in `perf` of both `players` (in that order), in one read:
    /// what the two seats of a game or a challenge show.
    ///
    /// # Errors
    /// The database error or a row that does not decode.
    pub async fn ratings_of_pair(
        &self,
        players: [Uuid; 2],
        perf: Perf,
    ) -> Result<[StoredRating; 2]> {
        let rows: Vec<(String, f64, f64, f64, i64, Option<i64>)> = with_conn!(self, conn => {
            sqlx::query_as(
                "select player_id, rating, deviation, volatility, games, rated_at \
                 from ratings where perf = $1 and player_id in ($2, $3)",
            )
            .bind(perf.code())
            .bind(players[0].to_string())
            .bind(players[1].to_string())
            .fetch_all(&mut *conn)
            .await?
        });
        let mut found = [StoredRating::NEW; 2];
        for (player, rating, deviation, volatility, games, rated_at) in rows {
            let player = uuid(&player)?;
            for (slot, wanted) in found.iter_mut().zip(players) {
                if wanted == player {
                    *slot = stored((rating, deviation, volatility, games, rated_at));
                }
            }
        }
        Ok(found)
    }

    /// Every rating `player` had after a rated game, oldest first.
    ///
    /// # Errors
    /// The database error or a row that does not decode.
    pub async fn rating_history(&self, player: Uuid) -> Result<Vec<HistoryPoint>> {
        let rows: Vec<(String, String, f64, i64)> = with_conn!(self, conn => {
            sqlx::query_as(
                "select game_id, perf, rating_after, ended_at from rating_history \
                 where player_id = $1 order by ended_at, game_id",
            )
            .bind(player.to_string())
            .fetch_all(&mut *conn)
            .await?
        });
        rows.into_iter()
            .map(|(game_id, perf, rating, at_ms)| {
                Ok(HistoryPoint {
                    game_id: uuid(&game_id)?,
                    perf: Perf::from_code(&perf)
                        .ok_or_else(|| StoreError::Corrupt(format!("rating perf {perf:?}")))?,
                    rating,
                    at_ms,
                })
            })
            .collect()
    }

    /// What `game_id` changed, per player: (player, rating before, after,
    /// change as shown). Empty for a casual game or one not over.
    ///
    /// # Errors
    /// The database error or a row that does not decode.
    pub async fn rating_changes_of_game(&self, game_id: Uuid) -> Result<Vec<PlayerChange>> {
        let rows: Vec<(String, f64, f64, i64)> = with_conn!(self, conn => {
            sqlx::query_as(
                "select player_id, rating_before, rating_after, change from rating_history \
                 where game_id = $1",
            )
            .bind(game_id.to_string())
            .fetch_all(&mut *conn)
            .await?
        });
        rows.into_iter()
            .map(|(player, before, after, change)| {
                Ok(PlayerChange {
                    player_id: uuid(&player)?,
                    before,
                    after,
                    change,
                })
            })
            .collect()
    }
}
