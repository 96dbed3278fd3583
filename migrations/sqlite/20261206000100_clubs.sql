-- clubs: accounts that organise play together. a club has leaders (at least
-- one, kept so by the store's statements) and members, and admits newcomers
-- openly, on request (a leader accepts), or through an invitation link.
create table clubs (
    id text primary key not null,               -- url-safe id made from the name at creation
    name text not null,                         -- as typed, shown to others
    name_key text not null unique,              -- lowercase name: names are unique case-insensitively
    description text not null,
    admission text not null check (admission in ('open', 'request', 'invitation')),
    invite_code text,                           -- the invitation link's secret; null unless 'invitation'
    created_by text not null references accounts (player_id),
    created_at integer not null                 -- unix ms
);

-- one row per member; leaders are members with leader set.
create table club_members (
    club_id text not null references clubs (id),
    player_id text not null references accounts (player_id),
    leader integer not null default 0,
    joined_at integer not null,                 -- unix ms
    primary key (club_id, player_id)
);
create index club_members_player on club_members (player_id);

-- requests to join a club that admits on request, until a leader answers.
create table club_requests (
    club_id text not null references clubs (id),
    player_id text not null references accounts (player_id),
    message text not null,
    created_at integer not null,                -- unix ms
    primary key (club_id, player_id)
);
