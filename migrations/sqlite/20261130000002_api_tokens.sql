-- personal access tokens for the lichess-compatible api (docs/lichess-api.md):
-- scripts and third-party clients send one as `authorization: bearer ...`.
-- the token itself is 32 random bytes shown once at creation; only its sha-256
-- is kept (a fast hash is enough for a secret of that entropy: nothing to
-- guess, and a stolen table reveals no usable token).
create table api_tokens (
    id text primary key not null,               -- uuid, named in the revoke route
    player_id text not null references accounts (player_id), -- the account the token acts for
    token_hash text not null unique,            -- lowercase hex sha-256 of the token text
    description text not null,                  -- what the owner wrote, to tell tokens apart
    scopes text not null,                       -- space-separated: board:play bot:play challenge:read challenge:write
    created_at bigint not null,                 -- unix ms
    last_used_at bigint,                        -- unix ms, refreshed at most once a minute; null if never used
    revoked_at bigint                           -- unix ms; null while the token works
);
create index api_tokens_player on api_tokens (player_id, created_at);

-- a bot account plays through the bot api (an engine, not a person): marked as
-- a bot to everyone, and games with a bot on either side pay no reward.
-- an account becomes a bot once, before its first game, and never goes back.
alter table accounts add column bot boolean not null default false;
