//! Read-only SQL for the audits at the end of a run (the reward ledger, the
//! ratings): each query's rows with every column as text, on either dialect.

use chess_store::StoreError;
use chess_store::testing::Connection;

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
) -> Result<Vec<Vec<TextRow>>, StoreError> {
    let mut connection = Connection::open_read_only(database_url).await?;
    let mut results = Vec::with_capacity(queries.len());
    for query in queries {
        let rows = connection.rows(query).await?;
        results.push(
            rows.into_iter()
                .map(|row| row.into_iter().map(Option::unwrap_or_default).collect())
                .collect(),
        );
    }
    connection.close().await;
    Ok(results)
}
