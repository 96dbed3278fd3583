-- tournaments: events a club or any account runs (arenas for now). the
-- standings are not stored: they are computed from the games the pairings
-- point at, so a result can be neither lost nor counted twice.
create table tournaments (
    id text primary key not null,               -- short url-safe id
    kind text not null check (kind in ('arena')),
    name text not null,
    created_by text not null references accounts (player_id),
    club_id text references clubs (id),         -- only this club's members may join; null: anyone
    clock_base_s integer not null,              -- the games' clock: base seconds
    clock_increment_s integer not null,         -- and increment seconds
    starts_at integer not null,                 -- unix ms
    ends_at integer not null,                   -- unix ms; moved to now when terminated early
    rated integer not null,
    berserkable integer not null,
    streaks integer not null,
    min_rating integer,                         -- players rated below may not join
    max_rating integer,                         -- players rated above may not join
    status text not null check (status in ('created', 'started', 'finished')),
    lease_node text,                            -- the node that runs it (pairs its players) ...
    lease_until integer,                        -- ... until this unix ms, unless it renews
    created_at integer not null                 -- unix ms
);
create index tournaments_status on tournaments (status, starts_at);
create index tournaments_club on tournaments (club_id, starts_at) where club_id is not null;

-- the players who joined; a withdrawn player keeps their row (and games).
create table tournament_players (
    tournament_id text not null references tournaments (id),
    player_id text not null references accounts (player_id),
    rating integer not null,                    -- when they joined: the first pairing's order
    joined_at integer not null,                 -- unix ms
    withdrawn integer not null default 0,
    paused_until integer,                       -- unix ms; null: not paused
    pauses integer not null default 0,          -- recent pauses: each makes the next wait longer
    last_pause_at integer,                      -- unix ms; pauses are forgotten after a while
    primary key (tournament_id, player_id)
);
create index tournament_players_player on tournament_players (player_id);

-- one row per tournament game; the game's row holds its result.
create table tournament_pairings (
    game_id text primary key not null references games (id),
    tournament_id text not null references tournaments (id),
    white_id text not null references accounts (player_id),
    black_id text not null references accounts (player_id),
    paired_at integer not null                  -- unix ms
);
create index tournament_pairings_tournament on tournament_pairings (tournament_id, paired_at);
create index tournament_pairings_white on tournament_pairings (white_id);
create index tournament_pairings_black on tournament_pairings (black_id);
