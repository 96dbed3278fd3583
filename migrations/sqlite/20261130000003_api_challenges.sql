-- challenges between accounts made through the lichess-compatible api
-- (docs/lichess-api.md). a challenge is shared by every node and survives a
-- restart: the challenged account's event stream may be on another node.
-- an answer moves `status` away from 'created' exactly once (the update's
-- `where status = 'created'` decides between racing answers); rows stay
-- a while after their answer so other nodes can read what was answered, and
-- every row is deleted once older than the challenge lifetime.
create table api_challenges (
    id text primary key not null,              -- uuid, named in the api's routes
    challenger_id text not null references accounts (player_id),
    dest_id text not null references accounts (player_id),
    time_control text not null,                -- as games store it: `minutes+seconds` or `correspondence`
    color text not null,                       -- the challenger's choice: white, black or random
    status text not null default 'created',    -- created, accepted, declined, canceled
    decline_reason text,                       -- the reason key of a declined challenge
    created_at bigint not null                 -- unix ms; older than the lifetime counts as expired
);
create index api_challenges_dest on api_challenges (dest_id, status);
create index api_challenges_challenger on api_challenges (challenger_id, status);
create index api_challenges_created on api_challenges (created_at);
