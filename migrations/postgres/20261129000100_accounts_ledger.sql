-- accounts (issue 5): a player of kind 'account' with a username and a password.
-- a guest who signs up becomes an account under the same player id, keeping
-- their games.
create table accounts (
    player_id text primary key not null references players (id), -- the player this account is
    username text not null,                     -- as typed, shown to others
    username_key text not null unique,          -- lowercase username: names are unique case-insensitively
    password_hash text not null,                -- argon2id phc string (salt and parameters inside); never leaves the server
    created_at bigint not null,                -- unix ms
    password_changed_at bigint not null        -- unix ms of the last sign-up or password change
);

-- one row per sign-in; tokens carry its id (`sid`), so signing out or changing
-- the password ends sessions that a stateless token alone could not.
create table account_sessions (
    id text primary key not null,               -- uuid, the tokens' `sid`
    player_id text not null references accounts (player_id),
    created_at bigint not null,                -- unix ms of the password check
    ended_at bigint                            -- unix ms of sign-out; null while valid
);
create index account_sessions_player on account_sessions (player_id) where ended_at is null;

-- the reward ledger (issue 5, docs/rewards.md): $1 per decisive win between two
-- different accounts, at most $5 per account per utc day, each game paid once.
-- no foreign keys to players or games on purpose: the ledger is a financial
-- record that must outlive any clean-up of games or players.

-- one row per rewarded game, written in the transaction that stores the result.
create table reward_entries (
    id bigint generated always as identity primary key, -- write order, for auditing
    game_id text not null unique,               -- uuid of the game won: a game pays at most once
    account_id text not null,                   -- uuid of the winning account (players.id)
    amount_cents bigint not null,               -- 100 when credited, 0 over the cap; integer cents, never floats
    day text not null,                          -- utc day the win counts towards, yyyy-mm-dd
    status text not null check (status in ('credited', 'over_cap')),
    created_at bigint not null,                 -- unix ms when written
    check ((status = 'credited' and amount_cents = 100) or (status = 'over_cap' and amount_cents = 0))
);
create index reward_entries_account on reward_entries (account_id, created_at);

-- the running total per account and day; only ever raised by
-- `total_cents = total_cents + 100 ... where total_cents + 100 <= 500`.
create table reward_days (
    account_id text not null,                   -- uuid of the account
    day text not null,                          -- utc day, yyyy-mm-dd
    total_cents bigint not null check (total_cents between 0 and 500), -- credited that day: the cap, twice
    primary key (account_id, day)
);

-- append-only: a written entry can never change or disappear.
create function reward_entries_append_only() returns trigger language plpgsql as $$
begin
    raise exception 'reward_entries is append-only: % refused', lower(tg_op);
end;
$$;
create trigger reward_entries_no_change before update or delete on reward_entries
    for each row execute function reward_entries_append_only();
create trigger reward_entries_no_truncate before truncate on reward_entries
    for each statement execute function reward_entries_append_only();

-- a day's total only grows, and never vanishes.
create function reward_days_only_grow() returns trigger language plpgsql as $$
begin
    if tg_op <> 'UPDATE' or new.total_cents < old.total_cents
        or new.account_id <> old.account_id or new.day <> old.day then
        raise exception 'reward_days totals only grow';
    end if;
    return new;
end;
$$;
create trigger reward_days_no_shrink before update or delete on reward_days
    for each row execute function reward_days_only_grow();
create trigger reward_days_no_truncate before truncate on reward_days
    for each statement execute function reward_days_only_grow();
