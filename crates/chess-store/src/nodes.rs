//! The nodes sharing the database, and the games whose timers are due.

use uuid::Uuid;

use chess_live::UnixMs;

use crate::{Result, Store};

impl Store {
    /// Registers node `id` named `name` (its listening address), removing the
    /// rows of earlier runs under the same name: a restarted node's premoves
    /// die with its previous run.
    ///
    /// # Errors
    /// The database error.
    pub async fn register_node(&self, id: Uuid, name: &str, now_ms: UnixMs) -> Result<()> {
        let mut tx = self.begin().await?;
        with_conn!(tx, conn => {
            sqlx::query("delete from nodes where name = $1 or id = $2")
                .bind(name)
                .bind(id.to_string())
                .execute(&mut *conn)
                .await?;
            sqlx::query("insert into nodes (id, name, heartbeat_at) values ($1, $2, $3)")
                .bind(id.to_string())
                .bind(name)
                .bind(now_ms.to_stored())
                .execute(&mut *conn)
                .await?;
        });
        tx.commit().await
    }

    /// Node `id` is alive at `now_ms`; the ids of every node seen alive
    /// since `alive_since_ms` (this one included).
    ///
    /// # Errors
    /// The database error.
    pub async fn heartbeat(
        &self,
        id: Uuid,
        name: &str,
        now_ms: UnixMs,
        alive_since_ms: UnixMs,
    ) -> Result<Vec<Uuid>> {
        let ids: Vec<(String,)> = with_conn!(self.writes(), conn => {
            sqlx::query(
                "insert into nodes (id, name, heartbeat_at) values ($1, $2, $3) \
                 on conflict (id) do update set heartbeat_at = excluded.heartbeat_at",
            )
            .bind(id.to_string())
            .bind(name)
            .bind(now_ms.to_stored())
            .execute(&mut *conn)
            .await?;
            sqlx::query_as("select id from nodes where heartbeat_at >= $1")
                .bind(alive_since_ms.to_stored())
                .fetch_all(&mut *conn)
                .await?
        });
        Ok(ids
            .into_iter()
            .filter_map(|(id,)| Uuid::parse_str(&id).ok())
            .collect())
    }

    /// Removes node `id` (a clean shutdown).
    ///
    /// # Errors
    /// The database error.
    pub async fn remove_node(&self, id: Uuid) -> Result<()> {
        with_conn!(self.writes(), conn => {
            sqlx::query("delete from nodes where id = $1")
                .bind(id.to_string())
                .execute(&mut *conn)
                .await?;
        });
        Ok(())
    }

    /// Games in play whose timer deadline is at or before `now_ms`, earliest
    /// first.
    ///
    /// # Errors
    /// The database error or a corrupt id.
    pub async fn due_games(&self, now_ms: UnixMs, limit: i64) -> Result<Vec<Uuid>> {
        let ids: Vec<(String,)> = with_conn!(self, conn => {
            sqlx::query_as(
                "select id from games where status = 'playing' and deadline_at is not null \
                 and deadline_at <= $1 order by deadline_at limit $2",
            )
            // Planned at every sweep for the table as it is (as
            // `Store::games_where`).
            .persistent(false)
            .bind(now_ms.to_stored())
            .bind(limit)
            .fetch_all(&mut *conn)
            .await?
        });
        ids.into_iter()
            .map(|(id,)| {
                Uuid::parse_str(&id)
                    .map_err(|_| crate::StoreError::Corrupt(format!("not a uuid: {id:?}")))
            })
            .collect()
    }

    /// Corrects the stored timer deadline of game `id` at `version` (derived
    /// data: the version stays); `false` if the game moved on meanwhile.
    ///
    /// # Errors
    /// The database error.
    pub async fn set_deadline(
        &self,
        id: Uuid,
        version: i64,
        deadline_at: Option<UnixMs>,
    ) -> Result<bool> {
        let updated = with_conn!(self.writes(), conn => {
            sqlx::query("update games set deadline_at = $3 where id = $1 and version = $2")
                .bind(id.to_string())
                .bind(version)
                .bind(deadline_at.map(UnixMs::to_stored))
                .execute(&mut *conn)
                .await?
                .rows_affected()
        });
        Ok(updated == 1)
    }
}
