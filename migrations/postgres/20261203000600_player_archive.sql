-- every player's archive of finished games (issue 35): one row per seat of a
-- finished game, kept by the database itself from `games` (the triggers
-- below), whichever way a game is written (the group commit's function, its
-- statements one by one, a rematch), so no writer has to remember it. the
-- row holds what the archive filters and shows, so paging through it reads
-- this table's indexes only, never the games.
create table player_games (
    player_id text not null references players (id),
    game_id text not null references games (id),
    finished_at bigint not null,               -- unix ms: the game's updated_at when it finished
    color text not null check (color in ('white', 'black')), -- the seat this player held
    speed text not null,                        -- chess_game::Speed::code of the time control
    outcome text not null check (outcome in ('win', 'draw', 'loss', 'aborted')), -- from this player's side
    opponent_id text references players (id),  -- the other seat's player
    reason text not null,                       -- the result's reason code (docs/protocol.md)
    time_control text not null,                 -- json, as games.time_control
    primary key (player_id, game_id)
);
-- keyset pages, newest first: (finished_at, game_id) below the last one seen,
-- without a filter and with each filter.
create index player_games_archive on player_games (player_id, finished_at, game_id);
create index player_games_speed on player_games (player_id, speed, finished_at, game_id);
create index player_games_outcome on player_games (player_id, outcome, finished_at, game_id);
create index player_games_opponent on player_games (player_id, opponent_id, finished_at, game_id);

-- `value` as jsonb, or null when it is not json: a corrupt column leaves its
-- game out of the archive rather than failing the write that finishes it.
create function chess_try_jsonb(value text) returns jsonb language plpgsql immutable as $$
begin
    return value::jsonb;
exception when others then
    return null;
end $$;

-- the archive rows of finished games: the one definition the trigger and the
-- backfill below read. the speed is lichess's (chess_game::TimeControl::speed):
-- initial time plus forty increments, in seconds. local games (two people on
-- one screen, one player in both seats) are nobody's record, and neither is a
-- game whose time control or result does not read as json.
create view player_game_rows as
select seat.player_id,
       g.id as game_id,
       g.updated_at as finished_at,
       seat.color,
       case when tc ->> 'kind' = 'clock' then
           case when ((tc ->> 'initial_ms')::bigint + 40 * (tc ->> 'increment_ms')::bigint) / 1000 < 30 then 'ultra_bullet'
                when ((tc ->> 'initial_ms')::bigint + 40 * (tc ->> 'increment_ms')::bigint) / 1000 < 180 then 'bullet'
                when ((tc ->> 'initial_ms')::bigint + 40 * (tc ->> 'increment_ms')::bigint) / 1000 < 480 then 'blitz'
                when ((tc ->> 'initial_ms')::bigint + 40 * (tc ->> 'increment_ms')::bigint) / 1000 < 1500 then 'rapid'
                else 'classical' end
           else 'correspondence' end as speed,
       case when res ->> 'reason' = 'aborted' then 'aborted'
            when res ->> 'winner' is null then 'draw'
            when res ->> 'winner' = seat.color then 'win'
            else 'loss' end as outcome,
       seat.opponent_id,
       coalesce(res ->> 'reason', '') as reason,
       g.time_control
from games g
cross join lateral (values (chess_try_jsonb(g.time_control), chess_try_jsonb(g.result))) as parsed (tc, res)
cross join lateral (values (g.white_id, 'white', g.black_id), (g.black_id, 'black', g.white_id))
    as seat (player_id, color, opponent_id)
where g.status = 'finished' and g.mode <> 'local' and seat.player_id is not null
  and jsonb_typeof(parsed.tc) = 'object' and jsonb_typeof(parsed.res) = 'object';

create function chess_archive_game() returns trigger language plpgsql as $$
begin
    insert into player_games (player_id, game_id, finished_at, color, speed, outcome,
                              opponent_id, reason, time_control)
    select player_id, game_id, finished_at, color, speed, outcome, opponent_id, reason, time_control
    from player_game_rows where game_id = new.id
    on conflict do nothing;
    return null;
end $$;

-- only the change that finishes a game: a finished game's later changes (a
-- rematch offered) leave its archive rows as they are.
create trigger games_archive_insert after insert on games for each row
    when (new.status = 'finished' and new.mode <> 'local')
    execute function chess_archive_game();
create trigger games_archive_update after update on games for each row
    when (new.status = 'finished' and old.status <> 'finished' and new.mode <> 'local')
    execute function chess_archive_game();

-- the games finished before this migration.
insert into player_games (player_id, game_id, finished_at, color, speed, outcome,
                          opponent_id, reason, time_control)
select player_id, game_id, finished_at, color, speed, outcome, opponent_id, reason, time_control
from player_game_rows
on conflict do nothing;
