//! Postgres's statements of a batch and of the reward ledger.
//!
//! Each statement of a batch is a function of its own in the database
//! (migration `20261203000200_batch_statements_once.sql`), taking its rows
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

/// The ledger: the account's row for the day, at zero if it has none.
pub const INSERT_REWARD_DAY: &str = "insert into reward_days (account_id, day, total_cents) \
    values ($1, $2, 0) on conflict (account_id, day) do nothing";

/// The ledger: the day's total raised by `$3` only while it stays within
/// the cap `$4` (no row over the cap). Under read committed the update
/// waits for a concurrent one's lock on the row, then checks its condition
/// against the committed total.
pub const RAISE_REWARD_DAY: &str = "update reward_days set total_cents = total_cents + $3 \
    where account_id = $1 and day = $2 and total_cents + $3 <= $4";

/// The ledger: a game's entry; none if the game has one already.
pub const INSERT_REWARD_ENTRY: &str = "insert into reward_entries \
    (game_id, account_id, amount_cents, day, status, created_at) \
    values ($1, $2, $3, $4, $5, $6) on conflict (game_id) do nothing";

/// The ledger: who holds a seat, a player's kind and whether it is a bot's
/// account.
pub const SEAT_HOLDER: &str = "select p.kind, coalesce(a.bot, false) from players p \
    left join accounts a on a.player_id = p.id where p.id = $1";

/// The ledger: a game's entry.
pub const REWARD_ENTRY_OF_GAME: &str = "select game_id, account_id, amount_cents, day, status, \
    created_at from reward_entries where game_id = $1";

/// The ledger: an account's total for a day.
pub const REWARD_TOTAL: &str =
    "select total_cents from reward_days where account_id = $1 and day = $2";

/// The ledger: an account's newest `$2` entries, newest first.
pub const REWARD_ENTRIES: &str = "select game_id, account_id, amount_cents, day, status, \
    created_at from reward_entries where account_id = $1 order by created_at desc, id desc \
    limit $2";
