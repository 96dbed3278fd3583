//! Read-only SQL for the audits at the end of a run (the reward ledger, the
//! ratings): each query's rows with every column as text, on either dialect.

use std::str::FromStr;

use sqlx::postgres::PgConnectOptions;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{AssertSqlSafe, ConnectOptions, Connection, Executor, Row};

/// One row: its columns in select order, as text (`null` as an empty string).
pub type TextRow = Vec<String>;

/// Runs each of `queries` on a read-only connection to `database_url`: the
/// rows of each. The queries cast every column to text (Postgres keeps ids
/// as uuid and days as date), so the same text runs on both dialects.
///
/// # Errors
/// The database error.
pub async fn read_only(
    database_url: &str,
    queries: &[&'static str],
) -> Result<Vec<Vec<TextRow>>, sqlx::Error> {
    let mut results = Vec::with_capacity(queries.len());
    if database_url.starts_with("sqlite:") {
        let mut conn = SqliteConnectOptions::from_str(database_url)?
            .read_only(true)
            .connect()
            .await?;
        for query in queries {
            let rows = conn.fetch_all(*query).await?;
            results.push(rows.iter().map(text_row).collect::<Result<_, _>>()?);
        }
        conn.close().await?;
    } else {
        let mut conn = PgConnectOptions::from_str(database_url)?.connect().await?;
        conn.execute(AssertSqlSafe(
            "set session characteristics as transaction read only".to_owned(),
        ))
        .await?;
        for query in queries {
            let rows = conn.fetch_all(*query).await?;
            results.push(rows.iter().map(text_row).collect::<Result<_, _>>()?);
        }
        conn.close().await?;
    }
    Ok(results)
}

fn text_row<R: Row>(row: &R) -> Result<TextRow, sqlx::Error>
where
    for<'r> Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    usize: sqlx::ColumnIndex<R>,
{
    (0..row.len())
        .map(|index| Ok(row.try_get::<Option<String>, _>(index)?.unwrap_or_default()))
        .collect()
}
