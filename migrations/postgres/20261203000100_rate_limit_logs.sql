-- failed sign-ins and sign-ups counted in the database, so that every node
-- sharing it counts the same attempts: each node counting in its own memory,
-- n nodes allowed n times the attempts (crates/chess-server/src/auth/
-- account_limits.rs says what is counted where). a limit is a sliding log per
-- key, as auth/rate_limit.rs keeps in memory on sqlite: the instants of the
-- newest events, so that it holds exactly, with no burst at a window's edge.
-- each count is one call of a function below (one round trip), its rows
-- locked so that attempts on one key take turns, on every node.
create table rate_limit_logs (
    -- which limit: 'sign_in_account_address', 'sign_in_address',
    -- 'sign_in_account' or 'sign_up_address'
    kind text not null,
    -- whose: a client address ('198.51.100.7', or an ipv6 client's /64 such
    -- as '2001:db8:1:2::/64'), a username's key ('magnus'), or both
    -- ('magnus@198.51.100.7')
    key text not null,
    -- unix ms of the newest events, oldest first; never more than the limit
    -- counts, so a row stays small however often its key is tried
    events bigint[] not null,
    -- unix ms from which no event here counts any more (the newest plus the
    -- window): the row may be deleted then
    expires_at bigint not null,
    primary key (kind, key)
);

-- the logs to prune, oldest first.
create index rate_limit_logs_expires_at on rate_limit_logs (expires_at);

-- the events of one log newer than since_ms, oldest first, with its row
-- locked until the transaction ends. a key never seen gets an empty row,
-- expired from the start. the parameters are named so that none is a
-- column's name.
create function chess_rate_limit_log(log_kind text, log_key text, since_ms bigint)
returns bigint[]
language plpgsql
as $$
declare
    logged bigint[];
begin
    insert into rate_limit_logs as stored (kind, key, events, expires_at)
    values (log_kind, log_key, '{}', 0)
    on conflict (kind, key) do update set expires_at = stored.expires_at
    returning stored.events into logged;
    return array(select event from unnest(logged) as event where event > since_ms order by event);
end
$$;

-- logged_events with new_event, the newest kept_count only, oldest first.
create function chess_rate_limit_push(logged_events bigint[], new_event bigint, kept_count integer)
returns bigint[]
language sql
immutable
as $$
    select coalesce(array_agg(newest.event order by newest.event), '{}')
    from (select event from unnest(logged_events || new_event) as event
          order by event desc limit kept_count) as newest
$$;

-- logged_events without one occurrence of old_event (unchanged if none).
create function chess_rate_limit_drop(logged_events bigint[], old_event bigint)
returns bigint[]
language sql
immutable
as $$
    select case
        when array_position(logged_events, old_event) is null then logged_events
        else logged_events[:array_position(logged_events, old_event) - 1]
            || logged_events[array_position(logged_events, old_event) + 1:]
    end
$$;

-- deletes a few logs whose events no longer count, never waiting for a row
-- another attempt holds. each count that records deletes up to 16 and adds
-- at most 3 rows, so the table holds about the keys tried within the last
-- window, however many were tried before.
create function chess_rate_limit_prune(now_ms bigint)
returns void
language sql
as $$
    delete from rate_limit_logs
    where (kind, key) in (
        select kind, key from rate_limit_logs where expires_at < now_ms
        order by expires_at limit 16 for update skip locked)
$$;

-- one event of log_kind for log_key at now_ms, if fewer than max_events lie
-- within window_ms before it: 0 when counted, otherwise the milliseconds
-- until the oldest of them leaves the window (nothing counted then).
create function chess_rate_limit_hit(
    log_kind text, log_key text, now_ms bigint, max_events integer, window_ms bigint)
returns bigint
language plpgsql
as $$
declare
    logged bigint[];
begin
    logged := chess_rate_limit_log(log_kind, log_key, now_ms - window_ms);
    if cardinality(logged) >= max_events then
        return logged[cardinality(logged) - max_events + 1] + window_ms - now_ms;
    end if;
    update rate_limit_logs
    set events = chess_rate_limit_push(logged, now_ms, max_events),
        expires_at = now_ms + window_ms
    where kind = log_kind and key = log_key;
    perform chess_rate_limit_prune(now_ms);
    return 0;
end
$$;

-- a sign-in attempt at now_ms, checked as auth::rate_limit::SignInLimits
-- checks one (the address's failures, then this account's from this
-- address, then the account's growing delay after its latest failure):
-- 0 when it may go on, and it is then counted as a failure already, in all
-- three logs, so that attempts running at once on any node count each
-- other; chess_sign_in_succeeded takes it back if the password was right.
-- otherwise the milliseconds to wait, and nothing is counted.
create function chess_sign_in_attempt(
    account_address_key text, address_key text, account_key text, now_ms bigint,
    account_address_max integer, account_address_window_ms bigint,
    address_max integer, address_window_ms bigint,
    -- the account's delays (auth::rate_limit::Backoff), and how many of its
    -- failures are kept: past those the delay is at its longest anyway
    account_free integer, account_window_ms bigint, first_delay_ms bigint,
    max_delay_ms bigint, account_kept integer)
returns bigint
language plpgsql
as $$
declare
    by_account_address bigint[];
    by_address bigint[];
    by_account bigint[];
    failures integer;
    wait_ms bigint := 0;
begin
    -- locked in this order everywhere (chess_sign_in_succeeded too), so
    -- that attempts wait for each other, never in a circle.
    by_account_address := chess_rate_limit_log(
        'sign_in_account_address', account_address_key, now_ms - account_address_window_ms);
    by_address := chess_rate_limit_log('sign_in_address', address_key, now_ms - address_window_ms);
    by_account := chess_rate_limit_log('sign_in_account', account_key, now_ms - account_window_ms);
    failures := cardinality(by_account);
    if cardinality(by_address) >= address_max then
        wait_ms := by_address[cardinality(by_address) - address_max + 1]
            + address_window_ms - now_ms;
    elsif cardinality(by_account_address) >= account_address_max then
        wait_ms := by_account_address[cardinality(by_account_address) - account_address_max + 1]
            + account_address_window_ms - now_ms;
    elsif failures >= account_free then
        -- Backoff::delay_after: doubling from the first failure past the
        -- free ones, never longer than the maximum.
        wait_ms := by_account[failures]
            + least(first_delay_ms << least(failures - account_free, 16), max_delay_ms)
            - now_ms;
    end if;
    if wait_ms > 0 then
        -- the rows made only to be locked (and any whose events no longer
        -- count) go: a refusal leaves nothing behind.
        delete from rate_limit_logs
        where (kind, key) in (('sign_in_account_address', account_address_key),
                              ('sign_in_address', address_key),
                              ('sign_in_account', account_key))
          and expires_at <= now_ms;
        return wait_ms;
    end if;
    update rate_limit_logs
    set events = chess_rate_limit_push(by_account_address, now_ms, account_address_max),
        expires_at = now_ms + account_address_window_ms
    where kind = 'sign_in_account_address' and key = account_address_key;
    update rate_limit_logs
    set events = chess_rate_limit_push(by_address, now_ms, address_max),
        expires_at = now_ms + address_window_ms
    where kind = 'sign_in_address' and key = address_key;
    update rate_limit_logs
    set events = chess_rate_limit_push(by_account, now_ms, account_kept),
        expires_at = now_ms + account_window_ms
    where kind = 'sign_in_account' and key = account_key;
    perform chess_rate_limit_prune(now_ms);
    return 0;
end
$$;

-- the attempt chess_sign_in_attempt counted at attempt_ms had the right
-- password: the account's failures from this address are forgiven (the
-- owner's typos), and the attempt is taken back from the address's and the
-- account's logs, whose other failures stay (someone else's guesses, or a
-- spraying budget that owning one account must not reset).
create function chess_sign_in_succeeded(
    account_address_key text, address_key text, account_key text, attempt_ms bigint)
returns void
language plpgsql
as $$
begin
    delete from rate_limit_logs
    where kind = 'sign_in_account_address' and key = account_address_key;
    update rate_limit_logs set events = chess_rate_limit_drop(events, attempt_ms)
    where kind = 'sign_in_address' and key = address_key;
    update rate_limit_logs set events = chess_rate_limit_drop(events, attempt_ms)
    where kind = 'sign_in_account' and key = account_key;
end
$$;
