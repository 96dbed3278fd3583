//! Accounts in the database: the `accounts` and `account_sessions` tables.
//!
//! Reads run on the [`Store`]; writes run in a [`Transaction`], so the
//! account endpoints group them (a sign-up and its first session, a new
//! password and the end of the other sessions) and commit them together.

use uuid::Uuid;

mod password_hash;
mod username;

pub use password_hash::PasswordHash;
pub use username::{MAX_USERNAME_LEN, MIN_USERNAME_LEN, Username, UsernameError};

use crate::{Result, Store, StoreError, Transaction};

/// A stored account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountRow {
    /// The account's player id.
    pub player_id: Uuid,
    /// The username as typed at sign-up.
    pub username: String,
    /// The current password hash.
    pub password_hash: PasswordHash,
    /// A class account whose password was handed out (made by its club's
    /// leaders, or given anew by them): it signs in only by choosing its own.
    pub must_change_password: bool,
}

/// Why a sign-up was not stored.
#[derive(Debug, thiserror::Error)]
pub enum SignUpError {
    /// Another account has this username (in any letter case).
    #[error("that username is taken")]
    UsernameTaken,
    /// The player signing up is already an account (or the computer).
    #[error("this player already has an account")]
    AlreadyAnAccount,
    /// The database failed.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
}

/// The columns of an [`AccountRow`], in the order [`account_row`] reads them.
pub(crate) const ACCOUNT_COLUMNS: &str = "player_id, username, password_hash, must_change_password";

pub(crate) type AccountTuple = (String, String, String, bool);

pub(crate) fn account_row(
    (player_id, username, password_hash, must_change_password): AccountTuple,
) -> Result<AccountRow> {
    Ok(AccountRow {
        player_id: Uuid::parse_str(&player_id)
            .map_err(|e| StoreError::Corrupt(format!("account id {player_id:?}: {e}")))?,
        username,
        password_hash: PasswordHash::from_stored(password_hash),
        must_change_password,
    })
}

impl Store {
    /// The account whose username has this key (see [`Username::key`]).
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn account_by_username(&self, username: &Username) -> Result<Option<AccountRow>> {
        let row: Option<AccountTuple> = with_conn!(self, conn => {
            sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "select {ACCOUNT_COLUMNS} from accounts where username_key = $1"
            )))
            .bind(username.key())
            .fetch_optional(&mut *conn)
            .await?
        });
        row.map(account_row).transpose()
    }

    /// The account with this player id.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn account_by_id(&self, player_id: Uuid) -> Result<Option<AccountRow>> {
        let row: Option<AccountTuple> = with_conn!(self, conn => {
            sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "select {ACCOUNT_COLUMNS} from accounts where player_id = $1"
            )))
            .bind(player_id.to_string())
            .fetch_optional(&mut *conn)
            .await?
        });
        row.map(account_row).transpose()
    }

    /// Whether `session_id` is a sign-in of `player_id` that has not been
    /// ended. Both must match: a token naming one account and another
    /// account's live session is no session at all.
    ///
    /// # Errors
    /// The database error.
    pub async fn session_is_active(&self, session_id: Uuid, player_id: Uuid) -> Result<bool> {
        let found: Option<String> = with_conn!(self, conn => {
            sqlx::query_scalar(
                "select id from account_sessions \
                 where id = $1 and player_id = $2 and ended_at is null",
            )
            .bind(session_id.to_string())
            .bind(player_id.to_string())
            .fetch_optional(&mut *conn)
            .await?
        });
        Ok(found.is_some())
    }
}

impl Transaction {
    /// Makes `player_id` a player of kind `account` named `username`, the
    /// first step of every sign-up (local or with the host platform): a
    /// guest keeps its id, so their games stay theirs; a new visitor's row
    /// is created. `false`, and nothing changes, when the player is already
    /// an account (or the computer).
    pub(super) async fn claim_account_player(
        &mut self,
        player_id: Uuid,
        username: &Username,
        now_ms: i64,
    ) -> std::result::Result<bool, sqlx::Error> {
        let converted = with_conn!(self, conn => {
            sqlx::query(
                "insert into players (id, kind, name, created_at) values ($1, 'account', $2, $3) \
                 on conflict (id) do update set kind = 'account', name = excluded.name \
                 where players.kind = 'guest'",
            )
            .bind(player_id.to_string())
            .bind(username.as_str())
            .bind(now_ms)
            .execute(&mut *conn)
            .await?
            .rows_affected()
        });
        Ok(converted == 1)
    }

    /// Makes `player_id` an account named `username`. A guest keeps their
    /// id, so their games stay theirs; a new visitor's id is created. On an
    /// error, roll the transaction back.
    ///
    /// # Errors
    /// [`SignUpError::UsernameTaken`] if the name's key is in use,
    /// [`SignUpError::AlreadyAnAccount`] if the player is not a guest.
    pub async fn sign_up(
        &mut self,
        player_id: Uuid,
        username: &Username,
        hash: &PasswordHash,
        now_ms: i64,
    ) -> std::result::Result<(), SignUpError> {
        if !self
            .claim_account_player(player_id, username, now_ms)
            .await?
        {
            return Err(SignUpError::AlreadyAnAccount);
        }
        with_conn!(self, conn => {
            let inserted = sqlx::query(
                "insert into accounts (player_id, username, username_key, password_hash, \
                 created_at, password_changed_at) values ($1, $2, $3, $4, $5, $5)",
            )
            .bind(player_id.to_string())
            .bind(username.as_str())
            .bind(username.key())
            .bind(hash.as_str())
            .bind(now_ms)
            .execute(&mut *conn)
            .await;
            match inserted {
                Ok(_) => Ok(()),
                Err(sqlx::Error::Database(error)) if error.is_unique_violation() => {
                    Err(SignUpError::UsernameTaken)
                }
                Err(error) => Err(error.into()),
            }
        })
    }

    /// Replaces the account's password hash (a change of password, or an
    /// upgrade to current Argon2 parameters on sign-in). The password is the
    /// account's own from now on: a class account no longer has to change it.
    ///
    /// # Errors
    /// The database error.
    pub async fn set_password_hash(
        &mut self,
        player_id: Uuid,
        hash: &PasswordHash,
        now_ms: i64,
    ) -> Result<()> {
        with_conn!(self, conn => {
            sqlx::query(
                "update accounts set password_hash = $2, password_changed_at = $3, \
                 must_change_password = false where player_id = $1",
            )
            .bind(player_id.to_string())
            .bind(hash.as_str())
            .bind(now_ms)
            .execute(&mut *conn)
            .await?;
        });
        Ok(())
    }

    /// Records a new sign-in `session_id` of the account.
    ///
    /// # Errors
    /// The database error.
    pub async fn start_session(
        &mut self,
        session_id: Uuid,
        player_id: Uuid,
        now_ms: i64,
    ) -> Result<()> {
        with_conn!(self, conn => {
            sqlx::query("insert into account_sessions (id, player_id, created_at) values ($1, $2, $3)")
                .bind(session_id.to_string())
                .bind(player_id.to_string())
                .bind(now_ms)
                .execute(&mut *conn)
                .await?;
        });
        Ok(())
    }

    /// Ends one sign-in (sign-out).
    ///
    /// # Errors
    /// The database error.
    pub async fn end_session(&mut self, session_id: Uuid, now_ms: i64) -> Result<()> {
        with_conn!(self, conn => {
            sqlx::query("update account_sessions set ended_at = $2 where id = $1 and ended_at is null")
                .bind(session_id.to_string())
                .bind(now_ms)
                .execute(&mut *conn)
                .await?;
        });
        Ok(())
    }

    /// Ends every sign-in of the account except `keep` (after a password
    /// change, other devices must sign in again); how many it ended.
    ///
    /// # Errors
    /// The database error.
    pub async fn end_other_sessions(
        &mut self,
        player_id: Uuid,
        keep: Option<Uuid>,
        now_ms: i64,
    ) -> Result<u64> {
        let ended = with_conn!(self, conn => {
            sqlx::query(
                "update account_sessions set ended_at = $3 \
                 where player_id = $1 and ended_at is null and id <> $2",
            )
            .bind(player_id.to_string())
            .bind(keep.map(|id| id.to_string()).unwrap_or_default())
            .bind(now_ms)
            .execute(&mut *conn)
            .await?
            .rows_affected()
        });
        Ok(ended)
    }
}
