//! Personal access tokens (`api_tokens`) and the bot flag of accounts: what
//! the lichess-compatible API needs from the database.
//!
//! Only a token's SHA-256 is stored; the text is shown to its owner once.

use uuid::Uuid;

use crate::rows::uuid;
use crate::{Result, Store};

/// A stored token, without its secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenRow {
    pub id: Uuid,
    pub player_id: Uuid,
    pub description: String,
    /// Space-separated scope names.
    pub scopes: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
    pub revoked_at: Option<i64>,
}

/// The account a working token acts for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenHolder {
    pub token_id: Uuid,
    pub player_id: Uuid,
    pub username: String,
    pub bot: bool,
    /// Space-separated scope names.
    pub scopes: String,
    pub last_used_at: Option<i64>,
}

/// An account as the lichess API names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiAccount {
    pub player_id: Uuid,
    pub username: String,
    pub bot: bool,
    pub created_at: i64,
}

type TokenTuple = (
    String,
    String,
    String,
    String,
    i64,
    Option<i64>,
    Option<i64>,
);

fn token_row(
    (id, player_id, description, scopes, created_at, last_used_at, revoked_at): TokenTuple,
) -> Result<TokenRow> {
    Ok(TokenRow {
        id: uuid(&id)?,
        player_id: uuid(&player_id)?,
        description,
        scopes,
        created_at,
        last_used_at,
        revoked_at,
    })
}

/// How long a token's `last_used_at` may lag: one write a minute at most,
/// however often the token is used.
const LAST_USED_RESOLUTION_MS: i64 = 60_000;

impl Store {
    /// Stores a new token of `row.player_id` whose text hashes to `token_hash`.
    ///
    /// # Errors
    /// The database error.
    pub async fn insert_token(&self, row: &TokenRow, token_hash: &str) -> Result<()> {
        with_conn!(self.writes(), conn => {
            sqlx::query(
                "insert into api_tokens (id, player_id, token_hash, description, scopes, created_at) \
                 values ($1, $2, $3, $4, $5, $6)",
            )
            .bind(row.id.to_string())
            .bind(row.player_id.to_string())
            .bind(token_hash)
            .bind(&row.description)
            .bind(&row.scopes)
            .bind(row.created_at)
            .execute(&mut *conn)
            .await?;
        });
        Ok(())
    }

    /// The tokens of `player` that still work, newest first.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn tokens_of(&self, player: Uuid) -> Result<Vec<TokenRow>> {
        let rows: Vec<TokenTuple> = with_conn!(self, conn => {
            sqlx::query_as(
                "select id, player_id, description, scopes, created_at, last_used_at, revoked_at \
                 from api_tokens where player_id = $1 and revoked_at is null \
                 order by created_at desc, id",
            )
            .bind(player.to_string())
            .fetch_all(&mut *conn)
            .await?
        });
        rows.into_iter().map(token_row).collect()
    }

    /// Revokes token `id` of `player`; `false` if `player` has no such
    /// working token.
    ///
    /// # Errors
    /// The database error.
    pub async fn revoke_token(&self, player: Uuid, id: Uuid, now_ms: i64) -> Result<bool> {
        let revoked = with_conn!(self.writes(), conn => {
            sqlx::query(
                "update api_tokens set revoked_at = $3 \
                 where id = $1 and player_id = $2 and revoked_at is null",
            )
            .bind(id.to_string())
            .bind(player.to_string())
            .bind(now_ms)
            .execute(&mut *conn)
            .await?
            .rows_affected()
        });
        Ok(revoked == 1)
    }

    /// The account behind the working token whose hash is `token_hash`.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn token_holder(&self, token_hash: &str) -> Result<Option<TokenHolder>> {
        let row: Option<(String, String, String, bool, String, Option<i64>)> = with_conn!(self, conn => {
            sqlx::query_as(
                "select t.id, t.player_id, a.username, a.bot, t.scopes, t.last_used_at \
                 from api_tokens t join accounts a on a.player_id = t.player_id \
                 where t.token_hash = $1 and t.revoked_at is null",
            )
            .bind(token_hash)
            .fetch_optional(&mut *conn)
            .await?
        });
        row.map(
            |(token_id, player_id, username, bot, scopes, last_used_at)| {
                Ok(TokenHolder {
                    token_id: uuid(&token_id)?,
                    player_id: uuid(&player_id)?,
                    username,
                    bot,
                    scopes,
                    last_used_at,
                })
            },
        )
        .transpose()
    }

    /// Records that token `id` was used at `now_ms`, unless it was recorded
    /// less than a minute ago (no write per request).
    ///
    /// # Errors
    /// The database error.
    pub async fn touch_token(&self, id: Uuid, now_ms: i64) -> Result<()> {
        with_conn!(self.writes(), conn => {
            sqlx::query(
                "update api_tokens set last_used_at = $2 \
                 where id = $1 and (last_used_at is null or last_used_at < $3)",
            )
            .bind(id.to_string())
            .bind(now_ms)
            .bind(now_ms - LAST_USED_RESOLUTION_MS)
            .execute(&mut *conn)
            .await?;
        });
        Ok(())
    }

    /// The account with this username key (lowercase username).
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn api_account_by_key(&self, username_key: &str) -> Result<Option<ApiAccount>> {
        self.api_account_where("a.username_key = $1", username_key)
            .await
    }

    /// The account of player `id`; `None` for guests and the computer.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn api_account(&self, id: Uuid) -> Result<Option<ApiAccount>> {
        self.api_account_where("a.player_id = $1", &id.to_string())
            .await
    }

    async fn api_account_where(&self, condition: &str, value: &str) -> Result<Option<ApiAccount>> {
        let sql = format!(
            "select a.player_id, a.username, a.bot, a.created_at from accounts a where {condition}"
        );
        let row: Option<(String, String, bool, i64)> = with_conn!(self, conn => {
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .bind(value)
                .fetch_optional(&mut *conn)
                .await?
        });
        row.map(|(player_id, username, bot, created_at)| {
            Ok(ApiAccount {
                player_id: uuid(&player_id)?,
                username,
                bot,
                created_at,
            })
        })
        .transpose()
    }

    /// Makes account `player` a bot if it has never held a seat in a game;
    /// `false` (and nothing changes) if it has.
    ///
    /// # Errors
    /// The database error.
    pub async fn make_bot(&self, player: Uuid) -> Result<bool> {
        let changed = with_conn!(self.writes(), conn => {
            sqlx::query(
                "update accounts set bot = true where player_id = $1 and not exists \
                 (select 1 from games where white_id = $1 or black_id = $1)",
            )
            .bind(player.to_string())
            .execute(&mut *conn)
            .await?
            .rows_affected()
        });
        Ok(changed == 1)
    }
}
