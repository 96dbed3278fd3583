-- glicko-2 ratings of accounts, one per perf (lichess's speeds, ultrabullet
-- counted as bullet; crates/chess-server/src/ratings). a row appears with an
-- account's first rated game of that speed; until then the account has the
-- starting 1500 / 350 / 0.06. written only in the transaction that stores a
-- rated game's result (crates/chess-server/src/store/ratings.rs).
create table ratings (
    player_id text not null references players (id),
    perf text not null
        check (perf in ('bullet', 'blitz', 'rapid', 'classical', 'correspondence')),
    rating double precision not null,                     -- glicko r
    deviation double precision not null,                  -- glicko rd, as of rated_at
    volatility double precision not null,                 -- glicko-2 sigma
    games bigint not null default 0,             -- rated games counted
    rated_at bigint,                            -- unix ms of the last rated game; null before it
    primary key (player_id, perf)
);

-- every rating change, one row per player per rated game: the player page's
-- history and the +n / -n shown at the end. the primary key is what makes a
-- game change ratings at most once, whatever node or retry writes its end.
create table rating_history (
    game_id text not null references games (id),
    player_id text not null references players (id),
    perf text not null,
    rating_before double precision not null,
    rating_after double precision not null,
    deviation_after double precision not null,
    change bigint not null,                     -- rounded after minus rounded before, as shown
    ended_at bigint not null,                       -- unix ms: when the game ended
    primary key (game_id, player_id)
);
create index rating_history_player on rating_history (player_id, perf, ended_at);

-- a seek's choices: rated (only between two accounts), and the range of
-- ratings (in the seek's perf) of the opponents it pairs with; null: any.
alter table seeks add column rated boolean not null default false;
alter table seeks add column rating_min bigint;
alter table seeks add column rating_max bigint;

-- a lichess-api challenge's choice: rated (between two accounts that are
-- not bots) or casual.
alter table api_challenges add column rated boolean not null default false;
