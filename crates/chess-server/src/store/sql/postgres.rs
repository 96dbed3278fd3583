//! Postgres's statements of a batch.
//!
//! Each statement of a batch is a function of its own in the database
//! (migration `20261203000001_batch_statements_once.sql`), taking its rows
//! as one array per column; `chess_commit_batch` calls the same functions
//! when it writes a batch in one round trip. The statement-by-statement path
//! ([`super::super::batch`]) calls them here one by one, with the arrays the
//! store binds in the order of its column structs (`PlayerColumns`,
//! `NewGameColumns`, `ClaimColumns`, `GameColumns`, `MoveColumns`).

/// The whole batch in one round trip: the columns of `PlayerColumns` (4),
/// `NewGameColumns` (17), `ClaimColumns` (6) and the claims' notices,
/// `GameColumns` (13) and the endings' winners, `MoveColumns` (7), the
/// channel and the changes' notices.
pub const COMMIT_BATCH: &str = "select chess_commit_batch($1, $2, $3, $4, \
    $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, \
    $22, $23, $24, $25, $26, $27, $28, \
    $29, $30, $31, $32, $33, $34, $35, $36, $37, $38, $39, $40, $41, $42, \
    $43, $44, $45, $46, $47, $48, $49, \
    $50, $51)";

/// Locks the rows of the games `$1` (an array of ids) in id order.
pub const LOCK_GAMES: &str = "select chess_lock_games($1)";

/// New players (`PlayerColumns`), in id order; an existing id is left as
/// it is.
pub const INSERT_PLAYERS: &str = "select chess_insert_players($1, $2, $3, $4)";

/// New games (`NewGameColumns`).
pub const INSERT_GAMES: &str = "select chess_insert_games($1, $2, $3, $4, $5, $6, $7, $8, \
    $9, $10, $11, $12, $13, $14, $15, $16, $17)";

/// Seats taken (`ClaimColumns`); returns whether each claim took its seat.
pub const CLAIM_SEATS: &str = "select chess_claim_seats($1, $2, $3, $4, $5, $6)";

/// Games' changes (`GameColumns`), each a compare-and-set on its version;
/// returns the ids of the games changed.
pub const UPDATE_GAMES: &str = "select chess_update_games($1, $2, $3, $4, $5, $6, $7, $8, \
    $9, $10, $11, $12, $13)";

/// New moves (`MoveColumns`).
pub const INSERT_MOVES: &str = "select chess_insert_moves($1, $2, $3, $4, $5, $6, $7)";

/// A take-back: the game's moves from ply `$2` on. (Only the
/// statement-by-statement path takes moves back.)
pub const DELETE_MOVES_FROM: &str = "delete from moves where game_id = $1 and ply >= $2";
