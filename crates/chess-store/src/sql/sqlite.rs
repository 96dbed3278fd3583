//! SQLite's statements of a batch and of the reward ledger, run by the group
//! commit's rusqlite connection and by sqlx alike.
//!
//! Every parameter is numbered, `?1`, `?2`..., SQLite's own syntax, because
//! the two libraries bind differently: rusqlite binds its n-th value to the
//! parameter SQLite numbers n, sqlx binds to each parameter the value its
//! name numbers (`?3` or `$3` takes the third). SQLite numbers `?NNN` as
//! written, so both agree. A `$3`, the placeholder the store's other queries
//! share with Postgres, is a *named* parameter to SQLite, numbered where it
//! first appears: rusqlite would bind `$3` the first value if it came first.
//! The tests below hold every statement here to that.

/// Declares the statements, and for the tests the list of all of them.
macro_rules! statements {
    ($($(#[$doc:meta])* $name:ident = $text:expr;)+) => {
        $($(#[$doc])* pub const $name: &str = $text;)+

        /// Every statement of the module, with its name.
        #[cfg(test)]
        pub const ALL: &[(&str, &str)] = &[$((stringify!($name), $name)),+];
    };
}

statements! {
    // Each statement of a batch numbers its parameters in the order of its
    // values in `super::columns!` (`PlayerColumns`, `NewGameColumns`,
    // `ClaimColumns`, `GameColumns`, `MoveColumns`), which binds them.

    /// A new player; an existing id is left as it is.
    INSERT_PLAYER = "insert into players (id, kind, name, created_at) \
        values (?1, ?2, ?3, ?4) on conflict (id) do nothing";

    /// A new game, the whole row.
    INSERT_GAME = "insert into games (id, mode, white_id, black_id, computer_level, \
        time_control, status, result, state, version, rematch_of, rematch_id, created_at, \
        updated_at, deadline_at, recent_events, premove_nodes) \
        values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)";

    /// A player (`?3`) takes a seat of an open challenge, the white one if
    /// `?2` else the black one, and starts it; no row if the seat was taken
    /// first. (It assigns the other seat its own value: SQLite then
    /// rewrites that seat's index entry too, once per game started.)
    CLAIM_SEAT = "update games set white_id = iif(?2, ?3, white_id), \
        black_id = iif(?2, black_id, ?3), state = ?4, status = 'playing', updated_at = ?5, \
        deadline_at = ?6 where id = ?1 and status = 'open' and iif(?2, white_id, black_id) is null";

    /// A game's change as a compare-and-set on its version (`?2`, the one
    /// expected): no row if it moved on.
    UPDATE_GAME = "update games set white_id = ?3, black_id = ?4, status = ?5, result = ?6, \
        state = ?7, version = ?8, rematch_id = ?9, updated_at = ?10, deadline_at = ?11, \
        recent_events = ?12, premove_nodes = ?13 where id = ?1 and version = ?2";

    /// [`UPDATE_GAME`] for a change that keeps the game's seats, status,
    /// result and rematch (a move, an offer): it writes only the columns
    /// such a change changes, because SQLite rewrites an index entry
    /// whenever its column is assigned, even to the value it had. A change
    /// it leaves (no row: one of those columns changed, or the version
    /// moved on) goes to [`UPDATE_GAME`]. The group commit's own connection
    /// runs it first; the statement-by-statement path, which takes the rare
    /// batches, runs [`UPDATE_GAME`] alone.
    UPDATE_PLAY = "update games set state = ?7, version = ?8, updated_at = ?10, \
        deadline_at = ?11, recent_events = ?12, premove_nodes = ?13 \
        where id = ?1 and version = ?2 and white_id is ?3 and black_id is ?4 and status = ?5 \
        and result is ?6 and rematch_id is ?9";

    /// A new move; a ply already stored fails it (the primary key).
    INSERT_MOVE = "insert into moves (game_id, ply, uci, san, clock_ms, played_at, record) \
        values (?1, ?2, ?3, ?4, ?5, ?6, ?7)";

    /// A take-back: the game's moves from ply `?2` on.
    DELETE_MOVES_FROM = "delete from moves where game_id = ?1 and ply >= ?2";

    /// A player's kind: the group commit's own connection hands back a
    /// batch whose ending an account wins, for the ledger to settle.
    PLAYER_KIND = "select kind from players where id = ?1";

    /// The ledger: the account's row for the day, at zero if it has none.
    INSERT_REWARD_DAY = "insert into reward_days (account_id, day, total_cents) \
        values (?1, ?2, 0) on conflict (account_id, day) do nothing";

    /// The ledger: the day's total raised by `?3` only while it stays
    /// within the cap `?4` (no row over the cap).
    RAISE_REWARD_DAY = "update reward_days set total_cents = total_cents + ?3 \
        where account_id = ?1 and day = ?2 and total_cents + ?3 <= ?4";

    /// The ledger: a game's entry; none if the game has one already.
    INSERT_REWARD_ENTRY = "insert into reward_entries \
        (game_id, account_id, amount_cents, day, status, created_at) \
        values (?1, ?2, ?3, ?4, ?5, ?6) on conflict (game_id) do nothing";

    /// The ledger: who holds a seat, a player's kind, whether it is a bot's
    /// account and whether it is an account of the host platform.
    SEAT_HOLDER = "select p.kind, coalesce(a.bot, false), a.platform_subject is not null from players p \
        left join accounts a on a.player_id = p.id where p.id = ?1";

    /// The ledger: a game's entry.
    REWARD_ENTRY_OF_GAME = "select game_id, account_id, amount_cents, day, status, created_at \
        from reward_entries where game_id = ?1";

    /// The ledger: an account's total for a day.
    REWARD_TOTAL = "select total_cents from reward_days where account_id = ?1 and day = ?2";

    /// The ledger: an account's newest `?2` entries, newest first.
    REWARD_ENTRIES = "select game_id, account_id, amount_cents, day, status, created_at \
        from reward_entries where account_id = ?1 order by created_at desc, id desc limit ?2";

    /// The outbox: a credited entry's reward request (`?1` the game, `?2` the
    /// winner's colour, `?3` how the game ended, `?4` the currency), written
    /// with the entry in its transaction; the account's platform subject and
    /// username as they are now. Nothing for an over-cap entry.
    INSERT_REWARD_REQUEST = "insert into reward_requests (entry_id, account_id, \
        platform_subject, username, amount_cents, currency, game_id, winner, reason, day, \
        created_at, next_attempt_at) \
        select e.id, e.account_id, a.platform_subject, a.username, e.amount_cents, ?4, e.game_id, \
        ?2, ?3, e.day, e.created_at, e.created_at from reward_entries e \
        left join accounts a on a.player_id = e.account_id \
        where e.game_id = ?1 and e.status = 'credited'";

    /// The outbox: claims up to `?4` pending requests that are due at `?1` and
    /// nobody holds, in entry order, for this node until `?2` under the claim
    /// `?3`. The writer's one connection runs one statement at a time, so
    /// two claims never overlap (and one server holds the file anyway); the
    /// lease (`claimed_until`) hands a request on if the server is killed
    /// while delivering it.
    CLAIM_REWARD_REQUESTS = "update reward_requests \
        set claimed_until = ?2, claim = ?3, attempts = attempts + 1 \
        where entry_id in (select entry_id from reward_requests \
        where state = 'pending' and next_attempt_at <= ?1 \
        and (claimed_until is null or claimed_until <= ?1) \
        order by entry_id limit ?4) \
        returning entry_id, account_id, platform_subject, username, amount_cents, currency, \
        game_id, winner, reason, day, created_at, state, attempts, last_status, last_error, \
        finished_at";

    /// The outbox: request `?1` delivered at `?2` with status `?3`, whoever
    /// held it (a delivery is a fact).
    REWARD_REQUEST_DELIVERED = "update reward_requests set state = 'delivered', \
        finished_at = ?2, last_status = ?3, last_error = null, claimed_until = null, claim = null \
        where entry_id = ?1 and state = 'pending'";

    /// The outbox: request `?1`, held under claim `?2`, failed (status `?4`,
    /// null without an answer, because `?5`) and is due again at `?3`.
    REWARD_REQUEST_RETRY = "update reward_requests set next_attempt_at = ?3, \
        last_status = ?4, last_error = ?5, claimed_until = null, claim = null \
        where entry_id = ?1 and claim = ?2 and state = 'pending'";

    /// The outbox: request `?1`, held under claim `?2`, refused for good at
    /// `?3` (status `?4`, reason `?5`).
    REWARD_REQUEST_REFUSED = "update reward_requests set state = 'refused', \
        finished_at = ?3, last_status = ?4, last_error = ?5, claimed_until = null, claim = null \
        where entry_id = ?1 and claim = ?2 and state = 'pending'";

    /// The outbox: gives back the requests of claim `?1` (a node stopping).
    RELEASE_REWARD_CLAIM =
        "update reward_requests set claimed_until = null, claim = null where claim = ?1";

    /// The outbox: up to `?2` requests after entry `?1`, in entry order (the
    /// reconciliation API's page).
    REWARD_REQUESTS_AFTER = "select entry_id, account_id, platform_subject, \
        username, amount_cents, currency, game_id, winner, reason, day, created_at, state, attempts, \
        last_status, last_error, finished_at from reward_requests where entry_id > ?1 \
        order by entry_id limit ?2";

    /// The outbox: the delivery of an account's newest `?2` requests (the
    /// account page).
    ACCOUNT_REWARD_DELIVERIES = "select game_id, state, last_error \
        from reward_requests where account_id = ?1 order by entry_id desc limit ?2";
}

/// The outbox: requests per state, and the oldest pending one's creation.
/// (Outside `statements!`: it takes no parameter.)
pub const REWARD_REQUEST_STATS: &str = "select state, count(*), min(created_at) \
    from reward_requests group by state";

#[cfg(test)]
mod tests {
    use sqlx::{Connection as _, Row as _};

    use super::ALL;

    /// A connection with the server's schema, for rusqlite to prepare the
    /// statements against.
    fn schema() -> rusqlite::Connection {
        let connection = rusqlite::Connection::open_in_memory().expect("opens");
        for migration in sqlx::migrate!("../../migrations/sqlite").iter() {
            connection
                .execute_batch(migration.sql.as_str())
                .expect("the migration applies");
        }
        connection
    }

    #[test]
    fn every_parameter_is_numbered_as_written() {
        let connection = schema();
        for (name, text) in ALL {
            let statement = connection
                .prepare(text)
                .unwrap_or_else(|error| panic!("{name} does not prepare: {error}"));
            let count = statement.parameter_count();
            assert!(count > 0, "{name} takes no parameter");
            for index in 1..=count {
                assert_eq!(
                    statement.parameter_name(index),
                    Some(format!("?{index}").as_str()),
                    "{name}: parameter {index} must be written ?{index}"
                );
            }
        }
    }

    /// Out of order and used twice, a numbered parameter takes the same
    /// value in both libraries; a `$n` one does not.
    #[tokio::test]
    async fn both_libraries_bind_numbered_parameters_alike() {
        const NUMBERED: &str = "select ?2, ?1, ?2 || ?1";
        const DOLLARS: &str = "select $2, $1";
        let rusqlite = rusqlite::Connection::open_in_memory().expect("opens");
        let mut sqlx = sqlx::SqliteConnection::connect("sqlite::memory:")
            .await
            .expect("opens");

        let by_rusqlite: (String, String, String) = rusqlite
            .query_row(NUMBERED, ["a", "b"], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })
            .expect("runs");
        let by_sqlx: (String, String, String) = sqlx::query_as(NUMBERED)
            .bind("a")
            .bind("b")
            .fetch_one(&mut sqlx)
            .await
            .expect("runs");
        let expected = ("b".to_owned(), "a".to_owned(), "ba".to_owned());
        assert_eq!(by_rusqlite, expected);
        assert_eq!(by_sqlx, expected);

        // sqlx reads the number in `$2`; SQLite numbers it 1, where it first
        // appears, and rusqlite binds it the first value.
        let by_rusqlite: (String, String) = rusqlite
            .query_row(DOLLARS, ["a", "b"], |row| Ok((row.get(0)?, row.get(1)?)))
            .expect("runs");
        let by_sqlx = sqlx::query(DOLLARS)
            .bind("a")
            .bind("b")
            .fetch_one(&mut sqlx)
            .await
            .expect("runs");
        assert_eq!(by_rusqlite, ("a".to_owned(), "b".to_owned()));
        assert_eq!(
            (by_sqlx.get::<String, _>(0), by_sqlx.get::<String, _>(1)),
            ("b".to_owned(), "a".to_owned())
        );
    }
}
