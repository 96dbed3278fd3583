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
pub const SEAT_HOLDER: &str = "select p.kind, coalesce(a.bot, false), a.platform_subject is not null from players p \
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

/// The outbox: a credited entry's reward request (`$1` the game, `$2` the
/// winner's colour, `$3` how the game ended, `$4` the currency), written
/// with the entry in its transaction; the account's platform subject and
/// username as they are now. Nothing for an over-cap entry.
pub const INSERT_REWARD_REQUEST: &str = "insert into reward_requests (entry_id, account_id, \
    platform_subject, username, amount_cents, currency, game_id, winner, reason, day, \
    created_at, next_attempt_at) \
    select e.id, e.account_id, a.platform_subject, a.username, e.amount_cents, $4, e.game_id, \
    $2, $3, e.day, e.created_at, e.created_at from reward_entries e \
    left join accounts a on a.player_id = e.account_id \
    where e.game_id = $1 and e.status = 'credited'";

/// The outbox: claims up to `$4` pending requests that are due at `$1` and
/// nobody holds, in entry order, for this node until `$2` under the claim
/// `$3`. `skip locked` passes over the rows another node is claiming at the
/// same moment instead of waiting for them, so each request goes to one
/// node; the lease (`claimed_until`) hands it on if that node dies.
pub const CLAIM_REWARD_REQUESTS: &str = "update reward_requests \
    set claimed_until = $2, claim = $3, attempts = attempts + 1 \
    where entry_id in (select entry_id from reward_requests \
    where state = 'pending' and next_attempt_at <= $1 \
    and (claimed_until is null or claimed_until <= $1) \
    order by entry_id limit $4 for update skip locked) \
    returning entry_id, account_id, platform_subject, username, amount_cents, currency, \
    game_id, winner, reason, day, created_at, state, attempts, last_status, last_error, \
    finished_at";

/// The outbox: request `$1` delivered at `$2` with status `$3`, whoever
/// held it (a delivery is a fact).
pub const REWARD_REQUEST_DELIVERED: &str = "update reward_requests set state = 'delivered', \
    finished_at = $2, last_status = $3, last_error = null, claimed_until = null, claim = null \
    where entry_id = $1 and state = 'pending'";

/// The outbox: request `$1`, held under claim `$2`, failed (status `$4`,
/// null without an answer, because `$5`) and is due again at `$3`.
pub const REWARD_REQUEST_RETRY: &str = "update reward_requests set next_attempt_at = $3, \
    last_status = $4, last_error = $5, claimed_until = null, claim = null \
    where entry_id = $1 and claim = $2 and state = 'pending'";

/// The outbox: request `$1`, held under claim `$2`, refused for good at
/// `$3` (status `$4`, reason `$5`).
pub const REWARD_REQUEST_REFUSED: &str = "update reward_requests set state = 'refused', \
    finished_at = $3, last_status = $4, last_error = $5, claimed_until = null, claim = null \
    where entry_id = $1 and claim = $2 and state = 'pending'";

/// The outbox: gives back the requests of claim `$1` (a node stopping).
pub const RELEASE_REWARD_CLAIM: &str =
    "update reward_requests set claimed_until = null, claim = null where claim = $1";

/// The outbox: up to `$2` requests after entry `$1`, in entry order (the
/// reconciliation API's page).
pub const REWARD_REQUESTS_AFTER: &str = "select entry_id, account_id, platform_subject, \
    username, amount_cents, currency, game_id, winner, reason, day, created_at, state, attempts, \
    last_status, last_error, finished_at from reward_requests where entry_id > $1 \
    order by entry_id limit $2";

/// The outbox: the delivery of an account's newest `$2` requests (the
/// account page).
pub const ACCOUNT_REWARD_DELIVERIES: &str = "select game_id, state, last_error \
    from reward_requests where account_id = $1 order by entry_id desc limit $2";

/// The outbox: requests per state, and the oldest pending one's creation.
pub const REWARD_REQUEST_STATS: &str = "select state, count(*), min(created_at) \
    from reward_requests group by state";
