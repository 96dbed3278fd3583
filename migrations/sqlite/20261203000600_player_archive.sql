-- every player's archive of finished games (issue 35): one row per seat of a
-- finished game, kept by the database itself from `games` (the triggers
-- below), whichever way a game is written (the group commit's connection, its
-- statements one by one, a rematch), so no writer has to remember it. the
-- row holds what the archive filters and shows, so paging through it reads
-- this table's indexes only, never the games.
create table player_games (
    player_id text not null references players (id),
    game_id text not null references games (id),
    finished_at integer not null,               -- unix ms: the game's updated_at when it finished
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

-- the archive rows of finished games: the one definition the triggers and the
-- backfill below read. the speed is lichess's (chess_game::TimeControl::speed):
-- initial time plus forty increments, in seconds. local games (two people on
-- one screen, one player in both seats) are nobody's record, and neither is a
-- game whose time control or result does not read as json (a corrupt column
-- leaves its game out rather than failing the write that finishes it).
create view player_game_rows as
select case seat.color when 'white' then g.white_id else g.black_id end as player_id,
       g.id as game_id,
       g.updated_at as finished_at,
       seat.color,
       case when json_extract(g.time_control, '$.kind') = 'clock' then
           case when (json_extract(g.time_control, '$.initial_ms') + 40 * json_extract(g.time_control, '$.increment_ms')) / 1000 < 30 then 'ultra_bullet'
                when (json_extract(g.time_control, '$.initial_ms') + 40 * json_extract(g.time_control, '$.increment_ms')) / 1000 < 180 then 'bullet'
                when (json_extract(g.time_control, '$.initial_ms') + 40 * json_extract(g.time_control, '$.increment_ms')) / 1000 < 480 then 'blitz'
                when (json_extract(g.time_control, '$.initial_ms') + 40 * json_extract(g.time_control, '$.increment_ms')) / 1000 < 1500 then 'rapid'
                else 'classical' end
           else 'correspondence' end as speed,
       case when json_extract(g.result, '$.reason') = 'aborted' then 'aborted'
            when json_extract(g.result, '$.winner') is null then 'draw'
            when json_extract(g.result, '$.winner') = seat.color then 'win'
            else 'loss' end as outcome,
       case seat.color when 'white' then g.black_id else g.white_id end as opponent_id,
       coalesce(json_extract(g.result, '$.reason'), '') as reason,
       g.time_control
from games g
cross join (select 'white' as color union all select 'black') as seat
where g.status = 'finished' and g.mode <> 'local'
  and (case seat.color when 'white' then g.white_id else g.black_id end) is not null
  and json_valid(g.time_control) and json_valid(g.result)
  and json_type(g.time_control) = 'object' and json_type(g.result) = 'object';

-- only the change that finishes a game: a finished game's later changes (a
-- rematch offered) leave its archive rows as they are.
create trigger games_archive_insert after insert on games
when new.status = 'finished' and new.mode <> 'local'
begin
    insert or ignore into player_games (player_id, game_id, finished_at, color, speed, outcome,
                                        opponent_id, reason, time_control)
    select player_id, game_id, finished_at, color, speed, outcome, opponent_id, reason, time_control
    from player_game_rows where game_id = new.id;
end;
create trigger games_archive_update after update on games
when new.status = 'finished' and old.status <> 'finished' and new.mode <> 'local'
begin
    insert or ignore into player_games (player_id, game_id, finished_at, color, speed, outcome,
                                        opponent_id, reason, time_control)
    select player_id, game_id, finished_at, color, speed, outcome, opponent_id, reason, time_control
    from player_game_rows where game_id = new.id;
end;

-- the games finished before this migration.
insert or ignore into player_games (player_id, game_id, finished_at, color, speed, outcome,
                                    opponent_id, reason, time_control)
select player_id, game_id, finished_at, color, speed, outcome, opponent_id, reason, time_control
from player_game_rows;
