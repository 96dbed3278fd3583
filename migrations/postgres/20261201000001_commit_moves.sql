-- the group commit's common batch in one statement, so one round trip: moves
-- (and other changes) of many games, each a compare-and-set on its version,
-- their new move rows and the notices to the other nodes, all or nothing.
-- when a game's version moved on (another node won) it raises 'CS001' and
-- nothing is written: the node then writes the batch statement by
-- statement, which refuses that game alone. batches that set games up,
-- take moves back, start a rematch or settle a reward always go statement
-- by statement (crates/chess-server/src/store/batch.rs). the update below is
-- the same as that file's `POSTGRES.update_games`: keep them in step.
create function chess_commit_moves(updates json, new_moves json, channel text, notices text[])
returns void
language plpgsql
as $$
declare
    expected integer := json_array_length(updates);
    updated integer;
begin
    -- rows locked in id order, as the statement-by-statement path does, so
    -- two nodes' batches wait for each other rather than deadlock.
    perform 1 from games
        where id in (select w.id from json_to_recordset(updates) as w(id text))
        order by id
        for update;
    update games set white_id = w.white_id, black_id = w.black_id,
        status = w.status, result = w.result, state = w.state, version = w.version,
        rematch_id = w.rematch_id, updated_at = w.updated_at, deadline_at = w.deadline_at,
        recent_events = w.recent_events, premove_nodes = w.premove_nodes
        from json_to_recordset(updates) as w(id text, expected bigint, white_id text,
        black_id text, status text, result text, state text, version bigint, rematch_id text,
        updated_at bigint, deadline_at bigint, recent_events text, premove_nodes text)
        where games.id = w.id and games.version = w.expected;
    get diagnostics updated = row_count;
    if updated <> expected then
        raise exception using errcode = 'CS001', message = 'a game''s version moved on';
    end if;
    insert into moves (game_id, ply, uci, san, clock_ms, played_at, record)
        select game_id, ply, uci, san, clock_ms, played_at, record
        from json_to_recordset(new_moves) as m(game_id text, ply bigint, uci text, san text,
        clock_ms bigint, played_at bigint, record text);
    perform pg_notify(channel, payload) from unnest(notices) as payload;
end
$$;
