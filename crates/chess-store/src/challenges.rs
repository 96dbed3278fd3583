//! Challenges made through the lichess-compatible API (`api_challenges`):
//! shared by every node and kept across restarts.
//!
//! A challenge is answered once: accept, decline and cancel each move its
//! status away from `created` with an update that only matches a waiting
//! challenge, so of two racing answers (on one node or two) exactly one
//! wins. Challenges older than the lifetime the caller gives are treated as
//! gone by every read and deleted when new challenges are stored.

use uuid::Uuid;

use crate::rows::uuid;
use crate::{Result, Store};

/// A stored challenge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChallengeRow {
    pub id: Uuid,
    pub challenger_id: Uuid,
    pub dest_id: Uuid,
    /// As games store it: `minutes+seconds` or `correspondence`.
    pub time_control: String,
    /// The challenger's choice: `white`, `black` or `random`.
    pub color: String,
    /// `created` (waiting), `accepted`, `declined` or `canceled`.
    pub status: String,
    pub decline_reason: Option<String>,
    pub created_at: i64,
    /// Rated (both accounts people, not bots) or casual.
    pub rated: bool,
}

/// An answer to a waiting challenge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChallengeAnswer {
    /// By the challenged account.
    Accepted,
    /// By the challenged account.
    Declined,
    /// By the challenger.
    Canceled,
}

impl ChallengeAnswer {
    /// The status the answer leaves.
    pub const fn status(self) -> &'static str {
        match self {
            ChallengeAnswer::Accepted => "accepted",
            ChallengeAnswer::Declined => "declined",
            ChallengeAnswer::Canceled => "canceled",
        }
    }
}

type ChallengeTuple = (
    String,
    String,
    String,
    String,
    String,
    String,
    Option<String>,
    i64,
    bool,
);

const COLUMNS: &str =
    "id, challenger_id, dest_id, time_control, color, status, decline_reason, created_at, rated";

fn challenge_row(
    (id, challenger_id, dest_id, time_control, color, status, decline_reason, created_at, rated): ChallengeTuple,
) -> Result<ChallengeRow> {
    Ok(ChallengeRow {
        id: uuid(&id)?,
        challenger_id: uuid(&challenger_id)?,
        dest_id: uuid(&dest_id)?,
        time_control,
        color,
        status,
        decline_reason,
        created_at,
        rated,
    })
}

impl Store {
    /// Stores `row` (status `created`) unless its challenger already has
    /// `max_outgoing` challenges waiting that were made after
    /// `expired_before`; `false` if refused for that. Deletes every
    /// challenge made before `expired_before` first, in the same transaction.
    ///
    /// The count and the insert are one statement; two challenges sent at
    /// the same moment by one account on two Postgres nodes may both pass
    /// the count, so the limit can be exceeded by the few that race.
    ///
    /// # Errors
    /// The database error.
    pub async fn insert_challenge(
        &self,
        row: &ChallengeRow,
        max_outgoing: i64,
        expired_before: i64,
    ) -> Result<bool> {
        // One transaction, so the sweep costs no commit of its own.
        let mut tx = self.begin().await?;
        let inserted = with_conn!(tx, conn => {
            sqlx::query("delete from api_challenges where created_at < $1")
                .bind(expired_before)
                .execute(&mut *conn)
                .await?;
            sqlx::query(
                "insert into api_challenges \
                 (id, challenger_id, dest_id, time_control, color, status, created_at, rated) \
                 select $1, $2, $3, $4, $5, 'created', $6, $9 \
                 where (select count(*) from api_challenges \
                        where challenger_id = $2 and status = 'created' and created_at >= $7) < $8",
            )
            .bind(row.id.to_string())
            .bind(row.challenger_id.to_string())
            .bind(row.dest_id.to_string())
            .bind(&row.time_control)
            .bind(&row.color)
            .bind(row.created_at)
            .bind(expired_before)
            .bind(max_outgoing)
            .bind(row.rated)
            .execute(&mut *conn)
            .await?
            .rows_affected()
        });
        tx.commit().await?;
        Ok(inserted == 1)
    }

    /// Challenge `id` whatever its status, unless expired; `None` if there
    /// is none.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn challenge(&self, id: Uuid, expired_before: i64) -> Result<Option<ChallengeRow>> {
        let sql =
            format!("select {COLUMNS} from api_challenges where id = $1 and created_at >= $2");
        let row: Option<ChallengeTuple> = with_conn!(self, conn => {
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(id.to_string())
            .bind(expired_before)
            .fetch_optional(&mut *conn)
            .await?
        });
        row.map(challenge_row).transpose()
    }

    /// The challenges waiting for `player`'s answer, oldest first.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn challenges_to(
        &self,
        player: Uuid,
        expired_before: i64,
    ) -> Result<Vec<ChallengeRow>> {
        let sql = format!(
            "select {COLUMNS} from api_challenges \
             where dest_id = $1 and status = 'created' and created_at >= $2 \
             order by created_at, id"
        );
        let rows: Vec<ChallengeTuple> = with_conn!(self, conn => {
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(player.to_string())
            .bind(expired_before)
            .fetch_all(&mut *conn)
            .await?
        });
        rows.into_iter().map(challenge_row).collect()
    }

    /// Answers challenge `id` if it is still waiting, not expired, and
    /// `player` may give `answer` (the challenged account accepts or
    /// declines, the challenger cancels). Returns the answered row, or
    /// `None` if there is no such waiting challenge for `player`: of two
    /// racing answers, exactly one gets the row.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn answer_challenge(
        &self,
        id: Uuid,
        player: Uuid,
        answer: ChallengeAnswer,
        decline_reason: Option<&str>,
        expired_before: i64,
    ) -> Result<Option<ChallengeRow>> {
        let who = match answer {
            ChallengeAnswer::Accepted | ChallengeAnswer::Declined => "dest_id",
            ChallengeAnswer::Canceled => "challenger_id",
        };
        // `who` is one of two column names above, never input.
        let sql = format!(
            "update api_challenges set status = $1, decline_reason = $2 \
             where id = $3 and {who} = $4 and status = 'created' and created_at >= $5 \
             returning {COLUMNS}"
        );
        let row: Option<ChallengeTuple> = with_conn!(self.writes(), conn => {
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(answer.status())
            .bind(decline_reason)
            .bind(id.to_string())
            .bind(player.to_string())
            .bind(expired_before)
            .fetch_optional(&mut *conn)
            .await?
        });
        row.map(challenge_row).transpose()
    }
}
