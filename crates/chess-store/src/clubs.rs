//! Clubs (`clubs`, `club_members`, `club_requests`): accounts that organise
//! play together.
//!
//! A club always has a leader. Every change that could take the last one
//! away (a leader leaving, removed, or no longer a leader) runs in a
//! transaction that first locks the club's row (a no-op update: a row lock
//! on Postgres, the write lock SQLite's transactions take anyway) and then
//! counts the leaders, so two leaders stepping down at once on two nodes
//! cannot both succeed. Leaders' rights are checked in the same statements
//! that act, never read first and trusted later.

use uuid::Uuid;

use crate::rows::uuid;
use crate::{Result, Store, StoreError, Transaction};

/// How a club admits newcomers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Anyone with an account joins at once.
    Open,
    /// A leader accepts each request.
    Request,
    /// Only through the invitation link (its code).
    Invitation,
}

impl Admission {
    /// The stored code.
    pub const fn code(self) -> &'static str {
        match self {
            Admission::Open => "open",
            Admission::Request => "request",
            Admission::Invitation => "invitation",
        }
    }

    fn parse(code: &str) -> Result<Admission> {
        match code {
            "open" => Ok(Admission::Open),
            "request" => Ok(Admission::Request),
            "invitation" => Ok(Admission::Invitation),
            other => Err(StoreError::Corrupt(format!("club admission {other:?}"))),
        }
    }
}

/// A stored club.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClubRow {
    pub id: String,
    pub name: String,
    pub description: String,
    pub admission: Admission,
    /// The invitation link's secret, for [`Admission::Invitation`].
    pub invite_code: Option<String>,
    pub created_by: Uuid,
    pub created_at: i64,
}

/// A member of a club.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClubMember {
    pub player_id: Uuid,
    pub username: String,
    pub leader: bool,
    pub joined_at: i64,
}

/// A request to join, waiting for a leader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinRequest {
    pub player_id: Uuid,
    pub username: String,
    pub message: String,
    pub created_at: i64,
}

/// Why a club change was refused.
#[derive(Debug, thiserror::Error)]
pub enum ClubError {
    #[error("a club with that name or id exists")]
    NameTaken,
    #[error("no such club")]
    NoSuchClub,
    #[error("only a leader of the club may do that")]
    NotALeader,
    #[error("that account is not a member of the club")]
    NotAMember,
    #[error("the club needs at least one leader")]
    LastLeader,
    #[error("that invitation is not valid")]
    WrongInvitation,
    #[error("the username {0} is taken")]
    UsernameTaken(String),
    #[error("that account is not one of the club's class accounts")]
    NotInClass,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for ClubError {
    fn from(error: sqlx::Error) -> ClubError {
        ClubError::Store(error.into())
    }
}

/// What a request to join did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Joined {
    /// The account is now a member.
    Member,
    /// The request waits for a leader.
    Requested,
    /// The account already was a member.
    AlreadyMember,
}

type ClubTuple = (String, String, String, String, Option<String>, String, i64);

const CLUB_COLUMNS: &str = "id, name, description, admission, invite_code, created_by, created_at";

fn club_row(
    (id, name, description, admission, invite_code, created_by, created_at): ClubTuple,
) -> Result<ClubRow> {
    Ok(ClubRow {
        id,
        name,
        description,
        admission: Admission::parse(&admission)?,
        invite_code,
        created_by: uuid(&created_by)?,
        created_at,
    })
}

type Outcome<T> = std::result::Result<T, ClubError>;

impl Store {
    /// Creates `club`, with its creator as its first leader.
    ///
    /// # Errors
    /// [`ClubError::NameTaken`] when the id or the name (in any letter
    /// case) is in use; the database error.
    pub async fn create_club(&self, club: &ClubRow) -> Outcome<()> {
        let mut tx = self.begin().await?;
        with_conn!(tx, conn => {
            let inserted = sqlx::query(
                "insert into clubs (id, name, name_key, description, admission, invite_code, \
                 created_by, created_at) values ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(&club.id)
            .bind(&club.name)
            .bind(club.name.to_lowercase())
            .bind(&club.description)
            .bind(club.admission.code())
            .bind(&club.invite_code)
            .bind(club.created_by.to_string())
            .bind(club.created_at)
            .execute(&mut *conn)
            .await;
            match inserted {
                Ok(_) => {}
                Err(sqlx::Error::Database(error)) if error.is_unique_violation() => {
                    return Err(ClubError::NameTaken);
                }
                Err(error) => return Err(error.into()),
            }
            sqlx::query(
                "insert into club_members (club_id, player_id, leader, joined_at) \
                 values ($1, $2, true, $3)",
            )
            .bind(&club.id)
            .bind(club.created_by.to_string())
            .bind(club.created_at)
            .execute(&mut *conn)
            .await?;
        });
        tx.commit().await?;
        Ok(())
    }

    /// Club `id`, if there is one.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn club(&self, id: &str) -> Result<Option<ClubRow>> {
        let sql = format!("select {CLUB_COLUMNS} from clubs where id = $1");
        let row: Option<ClubTuple> = with_conn!(self, conn => {
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .bind(id)
                .fetch_optional(&mut *conn)
                .await?
        });
        row.map(club_row).transpose()
    }

    /// The clubs `player` is a member of, by name.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn clubs_of(&self, player: Uuid) -> Result<Vec<ClubRow>> {
        let sql = "select c.id, c.name, c.description, c.admission, c.invite_code, \
                   c.created_by, c.created_at from clubs c \
                   join club_members m on m.club_id = c.id \
                   where m.player_id = $1 order by c.name_key";
        let rows: Vec<ClubTuple> = with_conn!(self, conn => {
            sqlx::query_as(sql)
                .bind(player.to_string())
                .fetch_all(&mut *conn)
                .await?
        });
        rows.into_iter().map(club_row).collect()
    }

    /// The members of club `id`: leaders first, then by username.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn club_members(&self, id: &str) -> Result<Vec<ClubMember>> {
        let rows: Vec<(String, String, bool, i64)> = with_conn!(self, conn => {
            sqlx::query_as(
                "select m.player_id, a.username, m.leader, m.joined_at from club_members m \
                 join accounts a on a.player_id = m.player_id where m.club_id = $1 \
                 order by m.leader desc, a.username_key",
            )
            .bind(id)
            .fetch_all(&mut *conn)
            .await?
        });
        rows.into_iter()
            .map(|(player_id, username, leader, joined_at)| {
                Ok(ClubMember {
                    player_id: uuid(&player_id)?,
                    username,
                    leader,
                    joined_at,
                })
            })
            .collect()
    }

    /// The requests to join club `id` waiting for a leader, oldest first.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn club_requests(&self, id: &str) -> Result<Vec<JoinRequest>> {
        let rows: Vec<(String, String, String, i64)> = with_conn!(self, conn => {
            sqlx::query_as(
                "select r.player_id, a.username, r.message, r.created_at from club_requests r \
                 join accounts a on a.player_id = r.player_id where r.club_id = $1 \
                 order by r.created_at, r.player_id",
            )
            .bind(id)
            .fetch_all(&mut *conn)
            .await?
        });
        rows.into_iter()
            .map(|(player_id, username, message, created_at)| {
                Ok(JoinRequest {
                    player_id: uuid(&player_id)?,
                    username,
                    message,
                    created_at,
                })
            })
            .collect()
    }

    /// `player` asks to join club `id`: an open club takes them at once, a
    /// club by invitation when `invite_code` is its code, a club on request
    /// records the request (`message`) for its leaders.
    ///
    /// # Errors
    /// [`ClubError::NoSuchClub`], [`ClubError::WrongInvitation`]; the
    /// database error.
    pub async fn join_club(
        &self,
        id: &str,
        player: Uuid,
        invite_code: Option<&str>,
        message: &str,
        now: i64,
    ) -> Outcome<Joined> {
        let club = self.club(id).await?.ok_or(ClubError::NoSuchClub)?;
        let admitted = match club.admission {
            Admission::Open => true,
            Admission::Invitation => {
                if club.invite_code.is_none() || club.invite_code.as_deref() != invite_code {
                    return Err(ClubError::WrongInvitation);
                }
                true
            }
            Admission::Request => false,
        };
        let mut tx = self.begin().await?;
        let joined = with_conn!(tx, conn => {
            let member: Option<(String,)> = sqlx::query_as(
                "select player_id from club_members where club_id = $1 and player_id = $2",
            )
            .bind(id)
            .bind(player.to_string())
            .fetch_optional(&mut *conn)
            .await?;
            if member.is_some() {
                Joined::AlreadyMember
            } else if admitted {
                sqlx::query(
                    "insert into club_members (club_id, player_id, leader, joined_at) \
                     values ($1, $2, false, $3) on conflict do nothing",
                )
                .bind(id)
                .bind(player.to_string())
                .bind(now)
                .execute(&mut *conn)
                .await?;
                Joined::Member
            } else {
                sqlx::query(
                    "insert into club_requests (club_id, player_id, message, created_at) \
                     values ($1, $2, $3, $4) \
                     on conflict (club_id, player_id) do update set message = excluded.message",
                )
                .bind(id)
                .bind(player.to_string())
                .bind(message)
                .bind(now)
                .execute(&mut *conn)
                .await?;
                Joined::Requested
            }
        });
        tx.commit().await?;
        Ok(joined)
    }

    /// `leader` answers `player`'s request to join club `id`: accepted, they
    /// are a member; either way the request is gone. `false` when there was
    /// no such request.
    ///
    /// # Errors
    /// [`ClubError::NotALeader`]; the database error.
    pub async fn answer_club_request(
        &self,
        id: &str,
        leader: Uuid,
        player: Uuid,
        accept: bool,
        now: i64,
    ) -> Outcome<bool> {
        let mut tx = self.begin().await?;
        lock_club(&mut tx, id).await?;
        require_leader(&mut tx, id, leader).await?;
        let answered = with_conn!(tx, conn => {
            let removed = sqlx::query(
                "delete from club_requests where club_id = $1 and player_id = $2",
            )
            .bind(id)
            .bind(player.to_string())
            .execute(&mut *conn)
            .await?
            .rows_affected();
            if removed == 1 && accept {
                sqlx::query(
                    "insert into club_members (club_id, player_id, leader, joined_at) \
                     values ($1, $2, false, $3) on conflict do nothing",
                )
                .bind(id)
                .bind(player.to_string())
                .bind(now)
                .execute(&mut *conn)
                .await?;
            }
            removed == 1
        });
        tx.commit().await?;
        Ok(answered)
    }

    /// `by` takes `member` out of club `id`: a leader may remove anyone, any
    /// member may leave. Never the last leader.
    ///
    /// # Errors
    /// [`ClubError::NotALeader`], [`ClubError::NotAMember`],
    /// [`ClubError::LastLeader`]; the database error.
    pub async fn remove_club_member(&self, id: &str, by: Uuid, member: Uuid) -> Outcome<()> {
        let mut tx = self.begin().await?;
        lock_club(&mut tx, id).await?;
        if by != member {
            require_leader(&mut tx, id, by).await?;
        }
        let was_leader = club_role(&mut tx, id, member)
            .await?
            .ok_or(ClubError::NotAMember)?;
        if was_leader && leaders(&mut tx, id).await? <= 1 {
            return Err(ClubError::LastLeader);
        }
        with_conn!(tx, conn => {
            sqlx::query("delete from club_members where club_id = $1 and player_id = $2")
                .bind(id)
                .bind(member.to_string())
                .execute(&mut *conn)
                .await?;
        });
        tx.commit().await?;
        Ok(())
    }

    /// `leader` makes `member` of club `id` a leader, or no longer one
    /// (a leader may step down themselves). Never the last leader.
    ///
    /// # Errors
    /// [`ClubError::NotALeader`], [`ClubError::NotAMember`],
    /// [`ClubError::LastLeader`]; the database error.
    pub async fn set_club_leader(
        &self,
        id: &str,
        leader: Uuid,
        member: Uuid,
        is_leader: bool,
    ) -> Outcome<()> {
        let mut tx = self.begin().await?;
        lock_club(&mut tx, id).await?;
        require_leader(&mut tx, id, leader).await?;
        let was_leader = club_role(&mut tx, id, member)
            .await?
            .ok_or(ClubError::NotAMember)?;
        if was_leader && !is_leader && leaders(&mut tx, id).await? <= 1 {
            return Err(ClubError::LastLeader);
        }
        with_conn!(tx, conn => {
            sqlx::query("update club_members set leader = $3 where club_id = $1 and player_id = $2")
                .bind(id)
                .bind(member.to_string())
                .bind(is_leader)
                .execute(&mut *conn)
                .await?;
        });
        tx.commit().await?;
        Ok(())
    }
}

/// Locks club `id`'s row for the rest of `tx` (see the module's note).
pub(crate) async fn lock_club(tx: &mut Transaction, id: &str) -> Outcome<()> {
    let locked = with_conn!(tx, conn => {
        sqlx::query("update clubs set name = name where id = $1")
            .bind(id)
            .execute(&mut *conn)
            .await?
            .rows_affected()
    });
    if locked == 1 {
        Ok(())
    } else {
        Err(ClubError::NoSuchClub)
    }
}

/// Whether `player` is a leader of club `id`; `None` if not a member.
pub(crate) async fn club_role(
    tx: &mut Transaction,
    id: &str,
    player: Uuid,
) -> Result<Option<bool>> {
    let row: Option<(bool,)> = with_conn!(tx, conn => {
        sqlx::query_as("select leader from club_members where club_id = $1 and player_id = $2")
            .bind(id)
            .bind(player.to_string())
            .fetch_optional(&mut *conn)
            .await?
    });
    Ok(row.map(|(leader,)| leader))
}

pub(crate) async fn require_leader(tx: &mut Transaction, id: &str, player: Uuid) -> Outcome<()> {
    match club_role(tx, id, player).await? {
        Some(true) => Ok(()),
        _ => Err(ClubError::NotALeader),
    }
}

async fn leaders(tx: &mut Transaction, id: &str) -> Outcome<i64> {
    let (count,): (i64,) = with_conn!(tx, conn => {
        sqlx::query_as("select count(*) from club_members where club_id = $1 and leader")
            .bind(id)
            .fetch_one(&mut *conn)
            .await?
    });
    Ok(count)
}
