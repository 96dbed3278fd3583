//! Tournaments (`tournaments`, `tournament_players`, `tournament_pairings`):
//! the events a club or any account runs, their players and their games.
//!
//! What makes a tournament run exactly once, on any number of nodes:
//! - **One director at a time.** A node pairs a tournament only while it
//!   holds the tournament's lease (`lease_node`, `lease_until`), which it
//!   claims and renews with a conditional update
//!   ([`Store::claim_tournaments`]) the way reward requests are claimed. A
//!   node that dies stops renewing, and another takes the tournament over
//!   once the lease has run out.
//! - **Pairings commit with their games, under the lease.** A pass's games
//!   and pairing rows are written in one transaction that first re-checks
//!   the lease with an update of the tournament's row (a row lock on
//!   Postgres, SQLite's write lock anyway) and that neither player is still
//!   in a game of the tournament; a node whose lease ran out, or a pass
//!   repeated after a crash, writes nothing ([`Store::pair_tournament_games`]).
//! - **Standings are not stored.** They are computed from the games the
//!   pairings point at ([`Store::tournament_games`]): a game's ending is
//!   written once, by the game's own compare-and-set, so a result can be
//!   neither lost nor counted twice, and every node computes the same table.

use chess_live::GameRow;
use uuid::Uuid;

use crate::batch::insert_games;
use crate::clubs::club_role;
use crate::rows::uuid;
use crate::{Result, Store, StoreError, Transaction};

/// Where a tournament stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TournamentStatus {
    /// Players may join; it has not started.
    Created,
    /// Running: players are paired.
    Started,
    /// Over (its time ran out, or it was terminated): the standings are final.
    Finished,
}

impl TournamentStatus {
    /// The stored code.
    pub const fn code(self) -> &'static str {
        match self {
            TournamentStatus::Created => "created",
            TournamentStatus::Started => "started",
            TournamentStatus::Finished => "finished",
        }
    }

    fn parse(code: &str) -> Result<TournamentStatus> {
        match code {
            "created" => Ok(TournamentStatus::Created),
            "started" => Ok(TournamentStatus::Started),
            "finished" => Ok(TournamentStatus::Finished),
            other => Err(StoreError::Corrupt(format!("tournament status {other:?}"))),
        }
    }
}

/// A stored arena. Times are unix milliseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TournamentRow {
    /// Short and url-safe.
    pub id: String,
    pub name: String,
    pub created_by: Uuid,
    /// Only this club's members may join (and only its leaders create it).
    pub club_id: Option<String>,
    /// The games' clock.
    pub clock_base_s: i64,
    pub clock_increment_s: i64,
    pub starts_at: i64,
    /// When it ends: `starts_at` plus its duration, or the moment it was
    /// terminated. Games that end later do not count.
    pub ends_at: i64,
    pub rated: bool,
    pub berserkable: bool,
    /// Whether two wins in a row put a player on fire.
    pub streaks: bool,
    /// Players rated below may not join.
    pub min_rating: Option<i64>,
    /// Players rated above may not join.
    pub max_rating: Option<i64>,
    pub status: TournamentStatus,
    pub created_at: i64,
}

/// A player of a tournament.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TournamentPlayer {
    pub player_id: Uuid,
    pub username: String,
    /// Their rating when they joined: the first pairing's order.
    pub rating: i64,
    pub joined_at: i64,
    /// Withdrawn players keep their games and points but are not paired.
    pub withdrawn: bool,
    /// Their pauses (see [`PauseRecord`]).
    pub pauses: PauseRecord,
    /// When they last showed they are there (on the tournament page, or
    /// through an API client's event stream); the pool is the players seen
    /// lately ([`Store::mark_tournament_presence`]).
    pub seen_at: Option<i64>,
}

/// A player's pauses as stored: how many lately, when the last was, and
/// until when the pool leaves them out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PauseRecord {
    pub count: i64,
    pub last_at: Option<i64>,
    /// `None`: not paused.
    pub until: Option<i64>,
}

/// A game to start as a tournament's pairing, stored with its game.
#[derive(Clone, Debug)]
pub struct NewPairing {
    /// The game's row, ready to play; its seats are the two players.
    pub game: GameRow,
    pub white: Uuid,
    pub black: Uuid,
}

/// A tournament game with what its scoring needs from the game's row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TournamentGame {
    pub game_id: Uuid,
    pub white: Uuid,
    pub black: Uuid,
    pub paired_at: i64,
    /// Whether the game is over.
    pub finished: bool,
    /// The result's JSON once finished.
    pub result: Option<String>,
    /// Plies played.
    pub plies: i64,
    /// When the game's row last changed: once finished, when it ended.
    pub updated_at: i64,
    /// The game's state JSON (berserk is recorded there).
    pub state: String,
}

/// Why a tournament change was refused.
#[derive(Debug, thiserror::Error)]
pub enum TournamentError {
    #[error("a tournament with that id exists")]
    IdTaken,
    #[error("no such tournament")]
    NoSuchTournament,
    #[error("the tournament is over")]
    Finished,
    #[error("only the club's leaders may create its tournaments")]
    NotAClubLeader,
    #[error("only members of the club may join")]
    NotAClubMember,
    #[error("your rating is outside the tournament's range")]
    RatingOutOfRange,
    #[error("only the tournament's creator (or the club's leaders) may do that")]
    NotTheOrganiser,
    #[error("that account has not joined the tournament")]
    NotAPlayer,
    #[error("this node no longer runs the tournament")]
    LeaseLost,
    #[error("a player of that pairing is still playing in the tournament")]
    PlayerBusy,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for TournamentError {
    fn from(error: sqlx::Error) -> TournamentError {
        TournamentError::Store(error.into())
    }
}

type Outcome<T> = std::result::Result<T, TournamentError>;

/// A player's presence is written at most this often.
pub const PRESENCE_WRITE_EVERY_MS: i64 = 5_000;

type TournamentTuple = (
    String,
    String,
    String,
    Option<String>,
    i64,
    i64,
    i64,
    i64,
    bool,
    bool,
    bool,
    Option<i64>,
    Option<i64>,
    String,
    i64,
);

/// Unqualified: `returning` takes no table names on SQLite, and no column
/// of `tournament_players` shares a name with these.
const TOURNAMENT_COLUMNS: &str = "id, name, created_by, club_id, clock_base_s, \
     clock_increment_s, starts_at, ends_at, rated, berserkable, streaks, min_rating, \
     max_rating, status, created_at";

fn tournament_row(
    (
        id,
        name,
        created_by,
        club_id,
        clock_base_s,
        clock_increment_s,
        starts_at,
        ends_at,
        rated,
        berserkable,
        streaks,
        min_rating,
        max_rating,
        status,
        created_at,
    ): TournamentTuple,
) -> Result<TournamentRow> {
    Ok(TournamentRow {
        id,
        name,
        created_by: uuid(&created_by)?,
        club_id,
        clock_base_s,
        clock_increment_s,
        starts_at,
        ends_at,
        rated,
        berserkable,
        streaks,
        min_rating,
        max_rating,
        status: TournamentStatus::parse(&status)?,
        created_at,
    })
}

/// Which tournaments a listing shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listing {
    /// Not started yet, soonest first.
    Upcoming,
    /// Running, earliest started first.
    Running,
    /// Over, latest ended first.
    Finished,
}

impl Listing {
    fn clause(self) -> &'static str {
        match self {
            Listing::Upcoming => "status = 'created' order by starts_at, id",
            Listing::Running => "status = 'started' order by starts_at, id",
            Listing::Finished => "status = 'finished' order by ends_at desc, id",
        }
    }
}

impl Store {
    /// Creates `tournament`. A club's tournament is created by one of the
    /// club's leaders only.
    ///
    /// # Errors
    /// [`TournamentError::IdTaken`], [`TournamentError::NotAClubLeader`];
    /// the database error.
    pub async fn create_tournament(&self, tournament: &TournamentRow) -> Outcome<()> {
        let mut tx = self.begin().await?;
        if let Some(club) = &tournament.club_id
            && !is_club_leader(&mut tx, club, tournament.created_by).await?
        {
            return Err(TournamentError::NotAClubLeader);
        }
        with_conn!(tx, conn => {
            let inserted = sqlx::query(
                "insert into tournaments (id, kind, name, created_by, club_id, clock_base_s, \
                 clock_increment_s, starts_at, ends_at, rated, berserkable, streaks, \
                 min_rating, max_rating, status, created_at) values \
                 ($1, 'arena', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
            )
            .bind(&tournament.id)
            .bind(&tournament.name)
            .bind(tournament.created_by.to_string())
            .bind(&tournament.club_id)
            .bind(tournament.clock_base_s)
            .bind(tournament.clock_increment_s)
            .bind(tournament.starts_at)
            .bind(tournament.ends_at)
            .bind(tournament.rated)
            .bind(tournament.berserkable)
            .bind(tournament.streaks)
            .bind(tournament.min_rating)
            .bind(tournament.max_rating)
            .bind(tournament.status.code())
            .bind(tournament.created_at)
            .execute(&mut *conn)
            .await;
            match inserted {
                Ok(_) => {}
                Err(sqlx::Error::Database(error)) if error.is_unique_violation() => {
                    return Err(TournamentError::IdTaken);
                }
                Err(error) => return Err(error.into()),
            }
        });
        tx.commit().await?;
        Ok(())
    }

    /// Tournament `id`, if there is one.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn tournament(&self, id: &str) -> Result<Option<TournamentRow>> {
        let sql = format!("select {TOURNAMENT_COLUMNS} from tournaments where id = $1");
        let row: Option<TournamentTuple> = with_conn!(self, conn => {
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .bind(id)
                .fetch_optional(&mut *conn)
                .await?
        });
        row.map(tournament_row).transpose()
    }

    /// Up to `limit` tournaments of `listing`, of club `club` only when given.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn tournaments(
        &self,
        listing: Listing,
        club: Option<&str>,
        limit: i64,
    ) -> Result<Vec<TournamentRow>> {
        let club_clause = if club.is_some() {
            "club_id = $2 and "
        } else {
            ""
        };
        let sql = format!(
            "select {TOURNAMENT_COLUMNS} from tournaments where {club_clause}{} limit $1",
            listing.clause()
        );
        let rows: Vec<TournamentTuple> = with_conn!(self, conn => {
            let mut query = sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(limit);
            if let Some(club) = club {
                query = query.bind(club);
            }
            query.fetch_all(&mut *conn).await?
        });
        rows.into_iter().map(tournament_row).collect()
    }

    /// The tournaments `player` joined, latest start first, up to `limit`.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn tournaments_of(&self, player: Uuid, limit: i64) -> Result<Vec<TournamentRow>> {
        let sql = format!(
            "select {TOURNAMENT_COLUMNS} from tournaments \
             join tournament_players p on p.tournament_id = id \
             where p.player_id = $1 order by starts_at desc, id limit $2"
        );
        let rows: Vec<TournamentTuple> = with_conn!(self, conn => {
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .bind(player.to_string())
                .bind(limit)
                .fetch_all(&mut *conn)
                .await?
        });
        rows.into_iter().map(tournament_row).collect()
    }

    /// `player`, rated `rating` in the tournament's perf, joins tournament
    /// `id` (again, after a withdrawal). Joining twice changes nothing.
    ///
    /// # Errors
    /// [`TournamentError::NoSuchTournament`], [`TournamentError::Finished`],
    /// [`TournamentError::NotAClubMember`],
    /// [`TournamentError::RatingOutOfRange`]; the database error.
    pub async fn join_tournament(
        &self,
        id: &str,
        player: Uuid,
        rating: i64,
        now: i64,
    ) -> Outcome<()> {
        let mut tx = self.begin().await?;
        let tournament = lock_tournament(&mut tx, id).await?;
        if tournament.status == TournamentStatus::Finished {
            return Err(TournamentError::Finished);
        }
        if let Some(club) = &tournament.club_id
            && !is_club_member(&mut tx, club, player).await?
        {
            return Err(TournamentError::NotAClubMember);
        }
        let below = tournament.min_rating.is_some_and(|floor| rating < floor);
        let above = tournament
            .max_rating
            .is_some_and(|ceiling| rating > ceiling);
        if below || above {
            return Err(TournamentError::RatingOutOfRange);
        }
        with_conn!(tx, conn => {
            sqlx::query(
                "insert into tournament_players (tournament_id, player_id, rating, joined_at) \
                 values ($1, $2, $3, $4) on conflict (tournament_id, player_id) \
                 do update set withdrawn = false",
            )
            .bind(id)
            .bind(player.to_string())
            .bind(rating)
            .bind(now)
            .execute(&mut *conn)
            .await?;
        });
        tx.commit().await?;
        Ok(())
    }

    /// `player` leaves tournament `id`: before the start their entry goes;
    /// once started they keep their games and points and are no longer
    /// paired. `false` if they had not joined (or had withdrawn already).
    ///
    /// # Errors
    /// [`TournamentError::NoSuchTournament`], [`TournamentError::Finished`];
    /// the database error.
    pub async fn withdraw_from_tournament(&self, id: &str, player: Uuid) -> Outcome<bool> {
        let mut tx = self.begin().await?;
        let tournament = lock_tournament(&mut tx, id).await?;
        let sql = match tournament.status {
            TournamentStatus::Finished => return Err(TournamentError::Finished),
            TournamentStatus::Created => {
                "delete from tournament_players where tournament_id = $1 and player_id = $2"
            }
            TournamentStatus::Started => {
                "update tournament_players set withdrawn = true \
                 where tournament_id = $1 and player_id = $2 and not withdrawn"
            }
        };
        let left = with_conn!(tx, conn => {
            sqlx::query(sql)
                .bind(id)
                .bind(player.to_string())
                .execute(&mut *conn)
                .await?
                .rows_affected()
        });
        tx.commit().await?;
        Ok(left == 1)
    }

    /// The players of tournament `id`, in the order they joined.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn tournament_players(&self, id: &str) -> Result<Vec<TournamentPlayer>> {
        type PlayerTuple = (
            String,
            String,
            i64,
            i64,
            bool,
            i64,
            Option<i64>,
            Option<i64>,
            Option<i64>,
        );
        let rows: Vec<PlayerTuple> = with_conn!(self, conn => {
            sqlx::query_as(
                "select p.player_id, a.username, p.rating, p.joined_at, p.withdrawn, p.pauses, \
                 p.last_pause_at, p.paused_until, p.seen_at from tournament_players p \
                 join accounts a on a.player_id = p.player_id where p.tournament_id = $1 \
                 order by p.joined_at, p.player_id",
            )
            .bind(id)
            .fetch_all(&mut *conn)
            .await?
        });
        rows.into_iter()
            .map(
                |(
                    player_id,
                    username,
                    rating,
                    joined_at,
                    withdrawn,
                    count,
                    last_at,
                    until,
                    seen_at,
                )| {
                    Ok(TournamentPlayer {
                        player_id: uuid(&player_id)?,
                        username,
                        rating,
                        joined_at,
                        withdrawn,
                        pauses: PauseRecord {
                            count,
                            last_at,
                            until,
                        },
                        seen_at,
                    })
                },
            )
            .collect()
    }

    /// Records that `player` is there for tournament `id` at `now` (they
    /// have it open). Written at most once per [`PRESENCE_WRITE_EVERY_MS`]
    /// for each player, so a page asking every two seconds costs a write
    /// every few seconds, not each time. `false` when nothing was written
    /// (recorded lately, or not a player of a running tournament).
    ///
    /// # Errors
    /// The database error.
    pub async fn mark_tournament_presence(&self, id: &str, player: Uuid, now: i64) -> Result<bool> {
        let written = with_conn!(self.writes(), conn => {
            sqlx::query(
                "update tournament_players set seen_at = $3 \
                 where tournament_id = $1 and player_id = $2 and not withdrawn \
                 and (seen_at is null or seen_at <= $4) \
                 and exists (select 1 from tournaments t where t.id = $1 and t.status <> 'finished')",
            )
            .bind(id)
            .bind(player.to_string())
            .bind(now)
            .bind(now - PRESENCE_WRITE_EVERY_MS)
            .execute(&mut *conn)
            .await?
            .rows_affected()
        });
        Ok(written == 1)
    }

    /// Changes `player`'s pauses in tournament `id` to what `pause` makes
    /// of the stored ones, read and written in one transaction so that two
    /// nodes pausing the same player at once count two pauses.
    ///
    /// # Errors
    /// [`TournamentError::NotAPlayer`]; the database error.
    pub async fn pause_tournament_player(
        &self,
        id: &str,
        player: Uuid,
        pause: impl FnOnce(PauseRecord) -> PauseRecord + Send,
    ) -> Outcome<PauseRecord> {
        let mut tx = self.begin().await?;
        lock_tournament(&mut tx, id).await?;
        let stored: Option<(i64, Option<i64>, Option<i64>)> = with_conn!(tx, conn => {
            sqlx::query_as(
                "select pauses, last_pause_at, paused_until from tournament_players \
                 where tournament_id = $1 and player_id = $2",
            )
            .bind(id)
            .bind(player.to_string())
            .fetch_optional(&mut *conn)
            .await?
        });
        let (count, last_at, until) = stored.ok_or(TournamentError::NotAPlayer)?;
        let paused = pause(PauseRecord {
            count,
            last_at,
            until,
        });
        with_conn!(tx, conn => {
            sqlx::query(
                "update tournament_players set pauses = $3, last_pause_at = $4, \
                 paused_until = $5 where tournament_id = $1 and player_id = $2",
            )
            .bind(id)
            .bind(player.to_string())
            .bind(paused.count)
            .bind(paused.last_at)
            .bind(paused.until)
            .execute(&mut *conn)
            .await?;
        });
        tx.commit().await?;
        Ok(paused)
    }

    /// `by` ends tournament `id` now: the creator, or a leader of its club.
    /// Games still running do not count. `false` if it was over already.
    ///
    /// # Errors
    /// [`TournamentError::NoSuchTournament`],
    /// [`TournamentError::NotTheOrganiser`]; the database error.
    pub async fn terminate_tournament(&self, id: &str, by: Uuid, now: i64) -> Outcome<bool> {
        let mut tx = self.begin().await?;
        let tournament = lock_tournament(&mut tx, id).await?;
        let organiser = tournament.created_by == by
            || match &tournament.club_id {
                Some(club) => is_club_leader(&mut tx, club, by).await?,
                None => false,
            };
        if !organiser {
            return Err(TournamentError::NotTheOrganiser);
        }
        let ended = finish(&mut tx, id, now).await?;
        tx.commit().await?;
        Ok(ended)
    }

    /// Claims for `node`, until `now + lease_ms`, every tournament that is
    /// due to run (started, or created with its start time reached) and
    /// whose lease is free, ran out, or is `node`'s own (a renewal). Returns
    /// the tournaments `node` now runs.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn claim_tournaments(
        &self,
        node: Uuid,
        now: i64,
        lease_ms: i64,
    ) -> Result<Vec<TournamentRow>> {
        // Most of the time nothing is due: a read, not a write every tick
        // (on SQLite a write takes the lock the game writer needs).
        let due: Option<(String,)> = with_conn!(self, conn => {
            sqlx::query_as(
                "select id from tournaments where status <> 'finished' and starts_at <= $1 limit 1",
            )
            .bind(now)
            .fetch_optional(&mut *conn)
            .await?
        });
        if due.is_none() {
            return Ok(Vec::new());
        }
        // Postgres re-checks the condition of a row another node updated
        // meanwhile (read committed), so two nodes never both claim one.
        let sql = format!(
            "update tournaments set lease_node = $1, lease_until = $3 \
             where status <> 'finished' and starts_at <= $2 \
             and (lease_node = $1 or lease_until is null or lease_until < $2) \
             returning {TOURNAMENT_COLUMNS}"
        );
        let rows: Vec<TournamentTuple> = with_conn!(self.writes(), conn => {
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .bind(node.to_string())
                .bind(now)
                .bind(now + lease_ms)
                .fetch_all(&mut *conn)
                .await?
        });
        let mut claimed: Vec<TournamentRow> = rows
            .into_iter()
            .map(tournament_row)
            .collect::<Result<_>>()?;
        claimed.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(claimed)
    }

    /// `node` gives up tournament `id` (it shuts down): another node may
    /// take it over at once.
    ///
    /// # Errors
    /// The database error.
    pub async fn release_tournament(&self, id: &str, node: Uuid) -> Result<()> {
        with_conn!(self.writes(), conn => {
            sqlx::query(
                "update tournaments set lease_node = null, lease_until = null \
                 where id = $1 and lease_node = $2",
            )
            .bind(id)
            .bind(node.to_string())
            .execute(&mut *conn)
            .await?;
        });
        Ok(())
    }

    /// `node`, holding the lease, starts tournament `id`. `false` if it had
    /// started already.
    ///
    /// # Errors
    /// [`TournamentError::LeaseLost`]; the database error.
    pub async fn start_tournament(&self, id: &str, node: Uuid, now: i64) -> Outcome<bool> {
        let mut tx = self.begin().await?;
        hold_lease(&mut tx, id, node, now).await?;
        let started = with_conn!(tx, conn => {
            sqlx::query("update tournaments set status = 'started' where id = $1 and status = 'created'")
                .bind(id)
                .execute(&mut *conn)
                .await?
                .rows_affected()
        });
        tx.commit().await?;
        Ok(started == 1)
    }

    /// `node`, holding the lease, ends tournament `id` (its time is up).
    /// `false` if it was over already.
    ///
    /// # Errors
    /// [`TournamentError::LeaseLost`]; the database error.
    pub async fn finish_tournament(&self, id: &str, node: Uuid, now: i64) -> Outcome<bool> {
        let mut tx = self.begin().await?;
        hold_lease(&mut tx, id, node, now).await?;
        let ended = finish(&mut tx, id, now).await?;
        tx.commit().await?;
        Ok(ended)
    }

    /// `node`, holding the lease of started tournament `id`, stores a pass's
    /// `pairings` with their games: all of them, or none when the lease is
    /// lost or a player is still in a game of the tournament (a pass that
    /// is repeated, or that raced a game's ending, pairs nobody twice).
    ///
    /// # Errors
    /// [`TournamentError::LeaseLost`], [`TournamentError::PlayerBusy`]; the
    /// database error.
    pub async fn pair_tournament_games(
        &self,
        id: &str,
        node: Uuid,
        now: i64,
        pairings: &[NewPairing],
    ) -> Outcome<()> {
        let mut tx = self.begin().await?;
        if hold_lease(&mut tx, id, node, now).await? != TournamentStatus::Started {
            return Err(TournamentError::LeaseLost);
        }
        for pairing in pairings {
            let busy: Option<(String,)> = with_conn!(tx, conn => {
                sqlx::query_as(
                    "select p.game_id from tournament_pairings p join games g on g.id = p.game_id \
                     where p.tournament_id = $1 and g.status <> 'finished' \
                     and (p.white_id in ($2, $3) or p.black_id in ($2, $3)) limit 1",
                )
                .bind(id)
                .bind(pairing.white.to_string())
                .bind(pairing.black.to_string())
                .fetch_optional(&mut *conn)
                .await?
            });
            if busy.is_some() {
                return Err(TournamentError::PlayerBusy);
            }
            insert_games(&mut tx, std::slice::from_ref(&pairing.game)).await?;
            with_conn!(tx, conn => {
                sqlx::query(
                    "insert into tournament_pairings (game_id, tournament_id, white_id, \
                     black_id, paired_at) values ($1, $2, $3, $4, $5)",
                )
                .bind(pairing.game.id.to_string())
                .bind(id)
                .bind(pairing.white.to_string())
                .bind(pairing.black.to_string())
                .bind(now)
                .execute(&mut *conn)
                .await?;
            });
        }
        tx.commit().await?;
        Ok(())
    }

    /// The games of tournament `id`, in pairing order.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn tournament_games(&self, id: &str) -> Result<Vec<TournamentGame>> {
        type GameTuple = (
            String,
            String,
            String,
            i64,
            String,
            Option<String>,
            i64,
            i64,
            String,
        );
        let rows: Vec<GameTuple> = with_conn!(self, conn => {
            sqlx::query_as(
                "select p.game_id, p.white_id, p.black_id, p.paired_at, g.status, g.result, \
                 (select count(*) from moves m where m.game_id = p.game_id), g.updated_at, \
                 g.state from tournament_pairings p join games g on g.id = p.game_id \
                 where p.tournament_id = $1 order by p.paired_at, p.game_id",
            )
            .bind(id)
            .fetch_all(&mut *conn)
            .await?
        });
        rows.into_iter()
            .map(
                |(game_id, white, black, paired_at, status, result, plies, updated_at, state)| {
                    Ok(TournamentGame {
                        game_id: uuid(&game_id)?,
                        white: uuid(&white)?,
                        black: uuid(&black)?,
                        paired_at,
                        finished: status == "finished",
                        result,
                        plies,
                        updated_at,
                        state,
                    })
                },
            )
            .collect()
    }

    /// The tournament game `game` is, if it is one: its tournament's id.
    ///
    /// # Errors
    /// The database error.
    pub async fn tournament_of_game(&self, game: Uuid) -> Result<Option<String>> {
        let row: Option<(String,)> = with_conn!(self, conn => {
            sqlx::query_as("select tournament_id from tournament_pairings where game_id = $1")
                .bind(game.to_string())
                .fetch_optional(&mut *conn)
                .await?
        });
        Ok(row.map(|(id,)| id))
    }
}

/// Locks tournament `id`'s row for the rest of `tx` (a no-op update: see
/// the clubs' note) and reads it.
async fn lock_tournament(tx: &mut Transaction, id: &str) -> Outcome<TournamentRow> {
    let sql =
        format!("update tournaments set name = name where id = $1 returning {TOURNAMENT_COLUMNS}");
    let row: Option<TournamentTuple> = with_conn!(tx, conn => {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?
    });
    Ok(tournament_row(
        row.ok_or(TournamentError::NoSuchTournament)?,
    )?)
}

/// Checks, and keeps locked for the rest of `tx`, that `node` still holds
/// tournament `id`'s lease; its status if so.
async fn hold_lease(
    tx: &mut Transaction,
    id: &str,
    node: Uuid,
    now: i64,
) -> Outcome<TournamentStatus> {
    let row: Option<(String,)> = with_conn!(tx, conn => {
        sqlx::query_as(
            "update tournaments set lease_until = lease_until \
             where id = $1 and lease_node = $2 and lease_until >= $3 returning status",
        )
        .bind(id)
        .bind(node.to_string())
        .bind(now)
        .fetch_optional(&mut *conn)
        .await?
    });
    let (status,) = row.ok_or(TournamentError::LeaseLost)?;
    Ok(TournamentStatus::parse(&status)?)
}

/// Marks tournament `id` finished at `now` at the latest; `false` if it
/// was already.
async fn finish(tx: &mut Transaction, id: &str, now: i64) -> Outcome<bool> {
    let ended = with_conn!(tx, conn => {
        sqlx::query(
            "update tournaments set status = 'finished', ends_at = case when ends_at < $2 then ends_at else $2 end, \
             lease_node = null, lease_until = null where id = $1 and status <> 'finished'",
        )
        .bind(id)
        .bind(now)
        .execute(&mut *conn)
        .await?
        .rows_affected()
    });
    Ok(ended == 1)
}

async fn is_club_member(tx: &mut Transaction, club: &str, player: Uuid) -> Outcome<bool> {
    Ok(club_role(tx, club, player).await?.is_some())
}

async fn is_club_leader(tx: &mut Transaction, club: &str, player: Uuid) -> Outcome<bool> {
    Ok(club_role(tx, club, player).await? == Some(true))
}
