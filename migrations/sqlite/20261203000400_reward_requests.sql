-- reward requests (issue 34, docs/rewards.md "Delivery to the host platform"):
-- the outbox of the reward ledger. every credited entry gets one row, written
-- in the transaction that writes the entry, so a payment owed is never lost
-- between the ledger and the webhook; a deliverer posts each row to
-- REWARD_WEBHOOK_URL until the platform answers 2xx or refuses it for good.
-- rows are written whether or not a webhook is configured, so reconciliation
-- and a webhook configured later see every request owed. over-cap entries
-- (nothing owed) get none.
create table reward_requests (
    entry_id integer primary key not null references reward_entries (id), -- the entry, and the idempotency key
    account_id text not null,                   -- uuid of the winning account
    platform_subject text,                      -- the host platform's `sub` of it at the win; null for a local account
    username text,                              -- its username at the win (null if no account row)
    amount_cents integer not null check (amount_cents > 0), -- integer cents, never floats
    currency text not null,                     -- iso 4217, 'USD'
    game_id text not null unique,               -- uuid of the game won
    winner text not null,                       -- 'white' or 'black'
    reason text not null,                       -- how the game ended ('checkmate', 'resignation'...)
    day text not null,                          -- utc day the win counts towards, yyyy-mm-dd
    created_at integer not null,                 -- unix ms, the entry's
    state text not null default 'pending' check (state in ('pending', 'delivered', 'refused')),
    attempts integer not null default 0,        -- deliveries started (claims)
    next_attempt_at integer not null,            -- unix ms before which no node tries it again
    claimed_until integer,                       -- unix ms: a node is delivering it until then (its lease)
    claim text,                                 -- the claim's random token: only its holder records a failure
    last_status integer,                        -- the http status of the last answer (null: no answer)
    last_error text,                            -- why the last attempt failed, or why it was refused
    finished_at integer                          -- unix ms when delivered or refused
);
-- the deliverer's scan: pending requests in entry order.
create index reward_requests_pending on reward_requests (entry_id) where state = 'pending';
-- the account page: an account's newest requests.
create index reward_requests_account on reward_requests (account_id, entry_id);
