//! Sign-in through the host platform's OpenID provider, in the database:
//! the sign-ins waiting for the provider's answer (`oidc_pending`) and the
//! accounts keyed by the provider's `sub` (`accounts.platform_subject`).
//!
//! A pending sign-in is taken by one `delete … returning`: whichever node
//! a callback reaches, and however often it is replayed, one of them gets
//! the row and the others find nothing.

use uuid::Uuid;

use crate::AccountRow;
use crate::accounts::PasswordHash;
use crate::accounts::Username;
use crate::accounts::{ACCOUNT_COLUMNS, AccountTuple, account_row};
use crate::{Result, Store, StoreError, Transaction};

/// A sign-in that went to the provider and has not come back.
#[derive(Clone, PartialEq, Eq)]
pub struct PendingSignIn {
    /// The `state` sent to the provider (and kept in the browser's cookie).
    pub state: String,
    /// The `nonce` the ID token must carry.
    pub nonce: String,
    /// The PKCE verifier whose hash went to the provider.
    pub code_verifier: String,
    /// The guest who started it, who keeps their games on becoming an account.
    pub guest_id: Option<Uuid>,
    /// A local path to return to.
    pub return_to: String,
    /// Unix ms.
    pub created_at_ms: i64,
}

impl std::fmt::Debug for PendingSignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingSignIn")
            .field("guest_id", &self.guest_id)
            .field("return_to", &self.return_to)
            .field("created_at_ms", &self.created_at_ms)
            .finish_non_exhaustive()
    }
}

/// Why a platform account was not created.
#[derive(Debug, thiserror::Error)]
pub enum PlatformSignUpError {
    /// The username or the subject is taken (the caller looks which).
    #[error("the username or the platform subject is taken")]
    Taken,
    /// The player is already an account (or the computer).
    #[error("this player already has an account")]
    AlreadyAnAccount,
    /// The database failed.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
}

type PendingColumns = (String, String, Option<String>, String, i64);

impl Store {
    /// The account of the provider's subject `sub`, if it signed in before.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn account_by_platform_subject(&self, subject: &str) -> Result<Option<AccountRow>> {
        let row: Option<AccountTuple> = with_conn!(self, conn => {
            sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "select {ACCOUNT_COLUMNS} from accounts where platform_subject = $1"
            )))
            .bind(subject)
            .fetch_optional(&mut *conn)
            .await?
        });
        row.map(account_row).transpose()
    }
}

impl Transaction {
    /// Records a sign-in leaving for the provider, and removes the pending
    /// sign-ins created before `stale_before_ms` (abandoned ones).
    ///
    /// # Errors
    /// The database error (a `state` collision too, which 256 random bits
    /// make impossible in practice).
    pub async fn put_pending_sign_in(
        &mut self,
        pending: &PendingSignIn,
        stale_before_ms: i64,
    ) -> Result<()> {
        with_conn!(self, conn => {
            sqlx::query("delete from oidc_pending where created_at < $1")
                .bind(stale_before_ms)
                .execute(&mut *conn)
                .await?;
            sqlx::query(
                "insert into oidc_pending \
                 (state, nonce, code_verifier, guest_id, return_to, created_at) \
                 values ($1, $2, $3, $4, $5, $6)",
            )
            .bind(&pending.state)
            .bind(&pending.nonce)
            .bind(&pending.code_verifier)
            .bind(pending.guest_id.map(|id| id.to_string()))
            .bind(&pending.return_to)
            .bind(pending.created_at_ms)
            .execute(&mut *conn)
            .await?;
        });
        Ok(())
    }

    /// Takes the pending sign-in of `state`: it is gone afterwards, for
    /// every node, once the transaction commits.
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn take_pending_sign_in(&mut self, state: &str) -> Result<Option<PendingSignIn>> {
        let row: Option<PendingColumns> = with_conn!(self, conn => {
            sqlx::query_as(
                "delete from oidc_pending where state = $1 \
                 returning nonce, code_verifier, guest_id, return_to, created_at",
            )
            .bind(state)
            .fetch_optional(&mut *conn)
            .await?
        });
        row.map(
            |(nonce, code_verifier, guest_id, return_to, created_at_ms)| {
                let guest_id = guest_id
                    .map(|id| {
                        Uuid::parse_str(&id)
                            .map_err(|e| StoreError::Corrupt(format!("pending guest {id:?}: {e}")))
                    })
                    .transpose()?;
                Ok(PendingSignIn {
                    state: state.to_owned(),
                    nonce,
                    code_verifier,
                    guest_id,
                    return_to,
                    created_at_ms,
                })
            },
        )
        .transpose()
    }

    /// Makes `player_id` (a guest, who keeps their games, or a new player)
    /// the account of the provider's `subject`, named `username`. Its
    /// password hash is one no password matches: it signs in through the
    /// provider only. On an error, roll the transaction back.
    ///
    /// # Errors
    /// [`PlatformSignUpError::Taken`] if the username's key or the subject
    /// is in use, [`PlatformSignUpError::AlreadyAnAccount`] if the player
    /// is not a guest.
    pub async fn sign_up_platform(
        &mut self,
        player_id: Uuid,
        username: &Username,
        subject: &str,
        now_ms: i64,
    ) -> std::result::Result<(), PlatformSignUpError> {
        if !self
            .claim_account_player(player_id, username, now_ms)
            .await?
        {
            return Err(PlatformSignUpError::AlreadyAnAccount);
        }
        with_conn!(self, conn => {
            let inserted = sqlx::query(
                "insert into accounts (player_id, username, username_key, password_hash, \
                 created_at, password_changed_at, platform_subject) \
                 values ($1, $2, $3, $4, $5, $5, $6)",
            )
            .bind(player_id.to_string())
            .bind(username.as_str())
            .bind(username.key())
            .bind(PasswordHash::unusable().as_str())
            .bind(now_ms)
            .bind(subject)
            .execute(&mut *conn)
            .await;
            match inserted {
                Ok(_) => Ok(()),
                Err(sqlx::Error::Database(error)) if error.is_unique_violation() => {
                    Err(PlatformSignUpError::Taken)
                }
                Err(error) => Err(error.into()),
            }
        })
    }
}
