//! Notices from the other nodes on one Postgres (`LISTEN/NOTIFY`): a
//! connection of its own that hears the channels it was asked for. What the
//! notices mean is the caller's; SQLite has one node and no listener.

use sqlx::postgres::PgListener;

use crate::{Backend, Result, Store};

/// A listening connection ([`Store::listen`]).
#[derive(Debug)]
pub struct NoticeListener(PgListener);

/// One notice as sent: its channel and payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    pub channel: String,
    pub payload: String,
}

impl Store {
    /// A new connection listening on `channels`; `None` on SQLite.
    ///
    /// # Errors
    /// The database error if it cannot connect or listen.
    pub async fn listen(&self, channels: &[&str]) -> Result<Option<NoticeListener>> {
        let Backend::Postgres(pool) = &self.pool else {
            return Ok(None);
        };
        let mut listener = PgListener::connect_with(pool).await?;
        listener.listen_all(channels.iter().copied()).await?;
        Ok(Some(NoticeListener(listener)))
    }
}

impl NoticeListener {
    /// The next notice. `Ok(None)` when the connection dropped: notices sent
    /// meanwhile may be lost, and the next call connects and listens again.
    ///
    /// # Errors
    /// The database error if it cannot reconnect.
    pub async fn next(&mut self) -> Result<Option<Notice>> {
        let notification = self.0.try_recv().await?;
        Ok(notification.map(|notification| Notice {
            channel: notification.channel().to_owned(),
            payload: notification.payload().to_owned(),
        }))
    }
}
