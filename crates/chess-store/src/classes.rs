//! Class accounts: the accounts a club's leaders make for their pupils
//! (`accounts.class_club_id`), each with a password the leader hands out and
//! the pupil replaces at the first sign-in (`accounts.must_change_password`).
//!
//! A class is made in one transaction, after the club's row is locked and
//! the leader's right checked (as every club change, `store::clubs`): all the
//! accounts and their memberships, or none. A leader may later give one of
//! them a new handed-out password, only while it is still a member of the
//! club, which also ends its sessions.

use uuid::Uuid;

use crate::accounts::{PasswordHash, Username};
use crate::clubs::{ClubError, lock_club, require_leader};
use crate::rows::uuid;
use crate::{Result, Store, StoreError};

/// An account to make for a class.
#[derive(Clone, Debug)]
pub struct NewClassAccount {
    pub player_id: Uuid,
    pub username: Username,
    /// The hash of the handed-out password.
    pub password_hash: PasswordHash,
}

/// An account a club's leaders made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassAccount {
    pub player_id: Uuid,
    pub username: String,
    /// Still on a handed-out password: the pupil has not signed in yet.
    pub must_change_password: bool,
    pub created_at: i64,
}

type Outcome<T> = std::result::Result<T, ClubError>;

impl Store {
    /// `leader` makes `accounts` for club `id`: members of the club, each to
    /// choose a password at the first sign-in. All or nothing.
    ///
    /// # Errors
    /// [`ClubError::NoSuchClub`], [`ClubError::NotALeader`],
    /// [`ClubError::UsernameTaken`] when one of the names is in use (nothing
    /// is stored: pick other names and try again); the database error.
    pub async fn create_class_accounts(
        &self,
        id: &str,
        leader: Uuid,
        accounts: &[NewClassAccount],
        now: i64,
    ) -> Outcome<()> {
        let mut tx = self.begin().await?;
        lock_club(&mut tx, id).await?;
        require_leader(&mut tx, id, leader).await?;
        for account in accounts {
            if !tx
                .claim_account_player(account.player_id, &account.username, now)
                .await?
            {
                return Err(ClubError::Store(StoreError::Corrupt(format!(
                    "the new player id {} of a class account is taken",
                    account.player_id
                ))));
            }
            with_conn!(tx, conn => {
                let inserted = sqlx::query(
                    "insert into accounts (player_id, username, username_key, password_hash, \
                     created_at, password_changed_at, must_change_password, class_club_id) \
                     values ($1, $2, $3, $4, $5, $5, true, $6) on conflict (username_key) do nothing",
                )
                .bind(account.player_id.to_string())
                .bind(account.username.as_str())
                .bind(account.username.key())
                .bind(account.password_hash.as_str())
                .bind(now)
                .bind(id)
                .execute(&mut *conn)
                .await?
                .rows_affected();
                if inserted != 1 {
                    // Dropping the transaction rolls back the accounts made so far.
                    return Err(ClubError::UsernameTaken(account.username.to_string()));
                }
                sqlx::query(
                    "insert into club_members (club_id, player_id, leader, joined_at) \
                     values ($1, $2, false, $3)",
                )
                .bind(id)
                .bind(account.player_id.to_string())
                .bind(now)
                .execute(&mut *conn)
                .await?;
            });
        }
        tx.commit().await?;
        Ok(())
    }

    /// The accounts club `id`'s leaders made that are still its members, by
    /// username (a pupil who left is no longer the leaders' to manage).
    ///
    /// # Errors
    /// The database error or a corrupt row.
    pub async fn class_accounts(&self, id: &str) -> Result<Vec<ClassAccount>> {
        let rows: Vec<(String, String, bool, i64)> = with_conn!(self, conn => {
            sqlx::query_as(
                "select a.player_id, a.username, a.must_change_password, a.created_at \
                 from accounts a join club_members m \
                 on m.club_id = a.class_club_id and m.player_id = a.player_id \
                 where a.class_club_id = $1 order by a.username_key",
            )
            .bind(id)
            .fetch_all(&mut *conn)
            .await?
        });
        rows.into_iter()
            .map(|(player_id, username, must_change_password, created_at)| {
                Ok(ClassAccount {
                    player_id: uuid(&player_id)?,
                    username,
                    must_change_password,
                    created_at,
                })
            })
            .collect()
    }

    /// `leader` gives `player`, an account club `id` made and still a
    /// member, a new handed-out password (the pupil forgot theirs): it must
    /// be changed at the next sign-in, and every session of the account ends.
    ///
    /// # Errors
    /// [`ClubError::NoSuchClub`], [`ClubError::NotALeader`],
    /// [`ClubError::NotInClass`] when the account is not one of the club's
    /// class that is still a member; the database error.
    pub async fn reset_class_password(
        &self,
        id: &str,
        leader: Uuid,
        player: Uuid,
        hash: &PasswordHash,
        now: i64,
    ) -> Outcome<()> {
        let mut tx = self.begin().await?;
        lock_club(&mut tx, id).await?;
        require_leader(&mut tx, id, leader).await?;
        let reset = with_conn!(tx, conn => {
            sqlx::query(
                "update accounts set password_hash = $3, password_changed_at = $4, \
                 must_change_password = true \
                 where player_id = $1 and class_club_id = $2 and exists (\
                   select 1 from club_members m \
                   where m.club_id = $2 and m.player_id = accounts.player_id)",
            )
            .bind(player.to_string())
            .bind(id)
            .bind(hash.as_str())
            .bind(now)
            .execute(&mut *conn)
            .await?
            .rows_affected()
        });
        if reset != 1 {
            return Err(ClubError::NotInClass);
        }
        tx.end_other_sessions(player, None, now).await?;
        tx.commit().await?;
        Ok(())
    }
}
