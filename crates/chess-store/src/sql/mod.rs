//! The statements of a batch and of the reward ledger, each written once
//! per dialect: [`sqlite`] and [`postgres`].
//!
//! A batch is written in one go when it can: on Postgres one call of the
//! `chess_commit_batch` function, on SQLite through the group commit's own
//! rusqlite connection ([`super::sqlite_writer`]). Otherwise it goes
//! statement by statement through sqlx ([`super::batch`]), where the ledger
//! settles rewards. Both paths run the statements of this module, so a
//! game's compare-and-set, an insert or a seat claim is the same whichever
//! way its batch went:
//!
//! - [`sqlite`] holds the texts, run by rusqlite and sqlx alike, each
//!   library binding a row's values from the one declaration of their
//!   order below (`columns!`).
//! - [`postgres`] holds calls of one SQL function per statement of a batch
//!   (migration `20261203000200_batch_statements_once.sql`), the functions
//!   `chess_commit_batch` itself calls, bound from the same declaration as
//!   one array per column, and the statements only the
//!   statement-by-statement path runs (a take-back, the ledger).
//!
//! A statement both dialects run with the same values has the same name in
//! both modules: [`with_conn!`]'s `conn, sql =>` form names the dialect's
//! module `sql` in its body, so one body binds once for both.

pub mod postgres;
pub mod sqlite;

use chess_live::{GameRow, GameWrite, MoveRow, PlayerRow, SeatClaim, UnixMs};
use uuid::Uuid;

/// A statement for Postgres, its parameters bound so far.
pub type PgQuery<'q> = sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>;

/// A statement for SQLite through sqlx, its parameters bound so far.
pub type SqliteQuery<'q> = sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments>;

/// Declares the values a batch's statement takes, in the order of its
/// parameters, once for every way the store binds them:
///
/// - on Postgres, one array per column (a struct of one `Vec` per column,
///   `of` to fill it from the rows, `bind` to bind the arrays as the next
///   parameters of a statement): a function of [`postgres`] takes a whole
///   batch's rows in one call, and the node writes no JSON for the database
///   to parse (parsing a batch's JSON, every game's state and events escaped
///   inside it, cost more of the machine than writing the rows);
/// - on SQLite, one row at a time, as the parameters `?1`, `?2`... of the
///   statement of [`sqlite`]: `bind_sqlite` for sqlx, `execute_sqlite` for
///   rusqlite (the group commit's own connection).
macro_rules! columns {
    ($(
        $(#[$meta:meta])*
        struct $name:ident<$a:lifetime> of $row:ty {
            $($column:ident: $type:ty = |$item:ident| $value:expr,)+
        }
    )+) => {$(
        $(#[$meta])*
        #[derive(Default)]
        pub struct $name<$a> {
            $($column: Vec<$type>,)+
        }

        impl<$a> $name<$a> {
            /// The rows' values, one array per column.
            pub fn of(rows: impl IntoIterator<Item = $row>) -> $name<$a> {
                let mut columns = $name::default();
                for row in rows {
                    $(columns.$column.push({
                        let $item = row;
                        $value
                    });)+
                }
                columns
            }

            /// Binds the arrays, in the order declared, as the next
            /// parameters of a Postgres statement.
            pub fn bind<'q>(self, query: PgQuery<'q>) -> PgQuery<'q> {
                query$(.bind(self.$column))+
            }

            /// Binds one row's values, in the order declared, as the next
            /// parameters of a SQLite statement run by sqlx.
            pub fn bind_sqlite<'q>(row: $row, query: SqliteQuery<'q>) -> SqliteQuery<'q> {
                query$(.bind({
                    let $item = row;
                    $value
                }))+
            }

            /// Runs a SQLite statement through rusqlite with one row's
            /// values, in the order declared; the rows it changed.
            ///
            /// # Errors
            /// SQLite's error.
            pub fn execute_sqlite(
                row: $row,
                statement: &mut rusqlite::Statement<'_>,
            ) -> rusqlite::Result<usize> {
                statement.execute(rusqlite::params![$({
                    let $item = row;
                    $value
                }),+])
            }
        }
    )+};
}

columns! {
    /// New players: `chess_insert_players`, [`sqlite::INSERT_PLAYER`].
    struct PlayerColumns<'a> of &'a PlayerRow {
        id: String = |player| player.id.to_string(),
        kind: &'static str = |player| player.kind.as_str(),
        name: &'a str = |player| &player.name,
        created_at: i64 = |player| player.created_at.to_stored(),
    }

    /// New games: `chess_insert_games`, [`sqlite::INSERT_GAME`].
    struct NewGameColumns<'a> of &'a GameRow {
        id: String = |game| game.id.to_string(),
        mode: &'static str = |game| game.mode.as_str(),
        white_id: Option<String> = |game| game.white_id.map(|id| id.to_string()),
        black_id: Option<String> = |game| game.black_id.map(|id| id.to_string()),
        computer_level: Option<i64> = |game| game.computer_level,
        time_control: &'a str = |game| &game.time_control,
        status: &'static str = |game| game.status.as_str(),
        result: Option<&'a str> = |game| game.result.as_deref(),
        state: &'a str = |game| &game.state,
        version: i64 = |game| game.version,
        rematch_of: Option<String> = |game| game.rematch_of.map(|id| id.to_string()),
        rematch_id: Option<String> = |game| game.rematch_id.map(|id| id.to_string()),
        created_at: i64 = |game| game.created_at.to_stored(),
        updated_at: i64 = |game| game.updated_at.to_stored(),
        deadline_at: Option<i64> = |game| game.deadline_at.map(UnixMs::to_stored),
        recent_events: &'a str = |game| &game.recent_events,
        premove_nodes: Option<String> = |game| game.premove_nodes_json(),
    }

    /// Seats taken: `chess_claim_seats`, [`sqlite::CLAIM_SEAT`].
    struct ClaimColumns<'a> of &'a SeatClaim {
        game: String = |claim| claim.game.to_string(),
        white: bool = |claim| claim.white,
        player: String = |claim| claim.player.to_string(),
        state: &'a str = |claim| &claim.state,
        now: i64 = |claim| claim.now.to_stored(),
        deadline_at: Option<i64> = |claim| claim.deadline_at.map(UnixMs::to_stored),
    }

    /// Games' changes, each a compare-and-set on its version:
    /// `chess_update_games`, [`sqlite::UPDATE_GAME`] and
    /// [`sqlite::UPDATE_PLAY`].
    struct GameColumns<'a> of &'a GameUpdate<'a> {
        id: String = |update| update.id.to_string(),
        expected: i64 = |update| update.expected,
        white_id: Option<String> = |update| update.white_id.map(|id| id.to_string()),
        black_id: Option<String> = |update| update.black_id.map(|id| id.to_string()),
        status: &'static str = |update| update.status,
        result: Option<&'a str> = |update| update.result,
        state: &'a str = |update| update.state,
        version: i64 = |update| update.version,
        rematch_id: Option<String> = |update| update.rematch_id.map(|id| id.to_string()),
        updated_at: i64 = |update| update.updated_at,
        deadline_at: Option<i64> = |update| update.deadline_at,
        recent_events: &'a str = |update| update.recent_events,
        premove_nodes: Option<&'a str> = |update| update.premove_nodes.as_deref(),
    }

    /// New moves: `chess_insert_moves`, [`sqlite::INSERT_MOVE`].
    struct MoveColumns<'a> of &'a MoveInsert<'a> {
        game_id: String = |mv| mv.game_id.to_string(),
        ply: i64 = |mv| mv.ply,
        uci: &'a str = |mv| mv.uci,
        san: &'a str = |mv| mv.san,
        clock_ms: Option<i64> = |mv| mv.clock_ms,
        played_at: i64 = |mv| mv.played_at,
        record: &'a str = |mv| mv.record,
    }
}

/// One game's compare-and-set: a row of [`GameColumns`].
pub struct GameUpdate<'a> {
    id: Uuid,
    expected: i64,
    white_id: Option<Uuid>,
    black_id: Option<Uuid>,
    status: &'static str,
    result: Option<&'a str>,
    state: &'a str,
    version: i64,
    rematch_id: Option<Uuid>,
    updated_at: i64,
    deadline_at: Option<i64>,
    recent_events: &'a str,
    premove_nodes: Option<String>,
}

impl<'a> GameUpdate<'a> {
    pub fn of(write: &'a GameWrite) -> GameUpdate<'a> {
        let game = &write.row;
        GameUpdate {
            id: game.id,
            expected: write.expected_version,
            white_id: game.white_id,
            black_id: game.black_id,
            status: game.status.as_str(),
            result: game.result.as_deref(),
            state: &game.state,
            version: game.version,
            rematch_id: game.rematch_id,
            updated_at: game.updated_at.to_stored(),
            deadline_at: game.deadline_at.map(UnixMs::to_stored),
            recent_events: &game.recent_events,
            premove_nodes: game.premove_nodes_json(),
        }
    }
}

/// One new move: a row of [`MoveColumns`].
pub struct MoveInsert<'a> {
    game_id: Uuid,
    ply: i64,
    uci: &'a str,
    san: &'a str,
    clock_ms: Option<i64>,
    played_at: i64,
    record: &'a str,
}

impl<'a> MoveInsert<'a> {
    /// The new moves of `writes`, in their order.
    pub fn all_of(writes: impl IntoIterator<Item = &'a GameWrite>) -> Vec<MoveInsert<'a>> {
        writes
            .into_iter()
            .flat_map(|write| {
                write
                    .new_moves
                    .iter()
                    .map(|mv| MoveInsert::of(write.row.id, mv))
            })
            .collect()
    }

    pub fn of(game_id: Uuid, mv: &'a MoveRow) -> MoveInsert<'a> {
        MoveInsert {
            game_id,
            ply: mv.ply,
            uci: &mv.uci,
            san: &mv.san,
            clock_ms: mv.clock_ms,
            played_at: mv.played_at.to_stored(),
            record: &mv.record,
        }
    }
}
