-- one-screen games in their player's archive (issue 44): a game played by
-- two people on one screen, or by one person against themselves, is played
-- from a signed-in player's browser and uploaded (`POST
-- /api/games/played-here`), and the player wants it in their archive and
-- export beside their other games. it is no win, draw or loss of theirs (they
-- held both seats), so its one row has the outcome `both_sides`, is in no
-- count and has no opponent.
alter table player_games drop constraint player_games_outcome_check;
alter table player_games add constraint player_games_outcome_check
    check (outcome in ('win', 'draw', 'loss', 'aborted', 'both_sides'));

-- as in 20261203000600_player_archive, less the exclusion of local games:
-- they give one row, for the white seat (the player held both).
create or replace view player_game_rows as
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
            when g.mode = 'local' then 'both_sides'
            when res ->> 'winner' is null then 'draw'
            when res ->> 'winner' = seat.color then 'win'
            else 'loss' end as outcome,
       case when g.mode = 'local' then null else seat.opponent_id end as opponent_id,
       coalesce(res ->> 'reason', '') as reason,
       g.time_control
from games g
cross join lateral (values (chess_try_jsonb(g.time_control), chess_try_jsonb(g.result))) as parsed (tc, res)
cross join lateral (values (g.white_id, 'white', g.black_id), (g.black_id, 'black', g.white_id))
    as seat (player_id, color, opponent_id)
where g.status = 'finished' and seat.player_id is not null
  and (g.mode <> 'local' or seat.color = 'white')
  and jsonb_typeof(parsed.tc) = 'object' and jsonb_typeof(parsed.res) = 'object';

drop trigger games_archive_insert on games;
drop trigger games_archive_update on games;
create trigger games_archive_insert after insert on games for each row
    when (new.status = 'finished')
    execute function chess_archive_game();
create trigger games_archive_update after update on games for each row
    when (new.status = 'finished' and old.status <> 'finished')
    execute function chess_archive_game();

-- the one-screen games finished before this migration.
insert into player_games (player_id, game_id, finished_at, color, speed, outcome,
                          opponent_id, reason, time_control)
select r.player_id, r.game_id, r.finished_at, r.color, r.speed, r.outcome, r.opponent_id, r.reason,
       r.time_control
from player_game_rows r
join games g on g.id = r.game_id
where g.mode = 'local'
on conflict do nothing;
