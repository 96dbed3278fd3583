-- one-screen games in their player's archive (issue 44): a game played by
-- two people on one screen, or by one person against themselves, is played
-- from a signed-in player's browser and uploaded (`POST
-- /api/games/played-here`), and the player wants it in their archive and
-- export beside their other games. it is no win, draw or loss of theirs (they
-- held both seats), so its one row has the outcome `both_sides`, is in no
-- count and has no opponent.
--
-- sqlite cannot change a check constraint in place: the table is built again
-- with the wider check, its rows copied, and the view and triggers (which
-- name it) dropped first and written again without the exclusion of local
-- games.
drop trigger games_archive_insert;
drop trigger games_archive_update;
drop view player_game_rows;

create table player_games_widened (
    player_id text not null references players (id),
    game_id text not null references games (id),
    finished_at integer not null,               -- unix ms: the game's updated_at when it finished
    color text not null check (color in ('white', 'black')), -- the seat this player held (white for both_sides)
    speed text not null,                        -- chess_game::Speed::code of the time control
    outcome text not null check (outcome in ('win', 'draw', 'loss', 'aborted', 'both_sides')), -- from this player's side
    opponent_id text references players (id),  -- the other seat's player; null for both_sides
    reason text not null,                       -- the result's reason code (docs/protocol.md)
    time_control text not null,                 -- json, as games.time_control
    primary key (player_id, game_id)
);
insert into player_games_widened (player_id, game_id, finished_at, color, speed, outcome,
                                  opponent_id, reason, time_control)
select player_id, game_id, finished_at, color, speed, outcome, opponent_id, reason, time_control
from player_games;
drop table player_games;
alter table player_games_widened rename to player_games;
create index player_games_archive on player_games (player_id, finished_at, game_id);
create index player_games_speed on player_games (player_id, speed, finished_at, game_id);
create index player_games_outcome on player_games (player_id, outcome, finished_at, game_id);
create index player_games_opponent on player_games (player_id, opponent_id, finished_at, game_id);

-- as in 20261203000600_player_archive, less the exclusion of local games:
-- they give one row, for the white seat (the player held both).
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
            when g.mode = 'local' then 'both_sides'
            when json_extract(g.result, '$.winner') is null then 'draw'
            when json_extract(g.result, '$.winner') = seat.color then 'win'
            else 'loss' end as outcome,
       case when g.mode = 'local' then null
            when seat.color = 'white' then g.black_id else g.white_id end as opponent_id,
       coalesce(json_extract(g.result, '$.reason'), '') as reason,
       g.time_control
from games g
cross join (select 'white' as color union all select 'black') as seat
where g.status = 'finished'
  and (case seat.color when 'white' then g.white_id else g.black_id end) is not null
  and (g.mode <> 'local' or seat.color = 'white')
  and json_valid(g.time_control) and json_valid(g.result)
  and json_type(g.time_control) = 'object' and json_type(g.result) = 'object';

-- only the change that finishes a game: a finished game's later changes (a
-- rematch offered) leave its archive rows as they are.
create trigger games_archive_insert after insert on games
when new.status = 'finished'
begin
    insert or ignore into player_games (player_id, game_id, finished_at, color, speed, outcome,
                                        opponent_id, reason, time_control)
    select player_id, game_id, finished_at, color, speed, outcome, opponent_id, reason, time_control
    from player_game_rows where game_id = new.id;
end;
create trigger games_archive_update after update on games
when new.status = 'finished' and old.status <> 'finished'
begin
    insert or ignore into player_games (player_id, game_id, finished_at, color, speed, outcome,
                                        opponent_id, reason, time_control)
    select player_id, game_id, finished_at, color, speed, outcome, opponent_id, reason, time_control
    from player_game_rows where game_id = new.id;
end;

-- the one-screen games finished before this migration.
insert or ignore into player_games (player_id, game_id, finished_at, color, speed, outcome,
                                    opponent_id, reason, time_control)
select r.player_id, r.game_id, r.finished_at, r.color, r.speed, r.outcome, r.opponent_id, r.reason,
       r.time_control
from player_game_rows r
join games g on g.id = r.game_id
where g.mode = 'local';
