-- people who play: guests now, accounts later (issue 5), and the computer.
create table players (
    id text primary key not null,               -- uuid, also the `sub` of identity tokens
    kind text not null check (kind in ('guest', 'account', 'computer')),
    name text not null,                         -- shown to others; unique only for accounts (later)
    created_at integer not null                 -- unix ms
);

-- one row per game; the row is the truth, in-memory games are a cache.
create table games (
    id text primary key not null,               -- uuid
    mode text not null check (mode in ('online', 'local', 'computer')),
    white_id text references players (id),      -- null: the empty seat of an open challenge
    black_id text references players (id),
    computer_level integer,                     -- 1 or 2 when the computer holds a seat
    time_control text not null,                 -- json, as in docs/protocol.md
    status text not null check (status in ('open', 'playing', 'finished')),
    result text,                                -- json {winner, reason} once finished
    state text not null,                        -- json record the game crate rebuilds a game from
    version integer not null,                   -- bumped by every change: compare-and-set guard
    rematch_of text references games (id),      -- the game this one is a rematch of
    rematch_id text references games (id),      -- the rematch started from this game
    created_at integer not null,                -- unix ms
    updated_at integer not null                 -- unix ms of the last change
);
create index games_unfinished on games (status) where status <> 'finished';
create index games_white on games (white_id, updated_at);
create index games_black on games (black_id, updated_at);

-- one row per ply: the primary key makes writing a move twice impossible.
create table moves (
    game_id text not null references games (id),
    ply integer not null,                       -- 0 for white's first move
    uci text not null,
    san text not null,
    clock_ms integer,                           -- mover's remaining time after the move; null untimed
    record text not null,                       -- json of the game crate's saved move (times, clocks, premove flag)
    played_at integer not null,                 -- unix ms (server clock)
    primary key (game_id, ply)
);

-- open seeks in the lobby; a seek is deleted when it is taken or cancelled.
create table seeks (
    id text primary key not null,               -- uuid
    player_id text not null references players (id),
    time_control text not null,                 -- json, as in docs/protocol.md
    time_control_key text not null,             -- canonical form used to match equal seeks
    color text not null check (color in ('white', 'black', 'random')), -- the creator's colour
    created_at integer not null                 -- unix ms
);
create index seeks_match on seeks (time_control_key, created_at);
