-- chess_commit_moves takes its batch as one array per column, read back with
-- unnest, instead of two json documents: the node binds the arrays in
-- postgres's binary format, so nothing is written as json nor parsed here.
-- the json version parsed its updates twice per batch (the lock, then the
-- update), with every game's state and events escaped inside them: 7% of the
-- machine's cpu in the 1-3 s thinking row (docs/performance.md, "ninth
-- pass"). the parameters are named so that none is a column's name. the
-- update below is the same as crates/chess-server/src/store/batch.rs's
-- `POSTGRES.update_games`: keep them in step.
drop function chess_commit_moves(json, json, text, text[]);

create function chess_commit_moves(
    game_ids text[], expected_versions bigint[], white_ids text[], black_ids text[],
    statuses text[], results text[], states text[], versions bigint[], rematch_ids text[],
    updated_ats bigint[], deadline_ats bigint[], event_lists text[], premove_node_lists text[],
    move_game_ids text[], plies bigint[], ucis text[], sans text[], clocks_ms bigint[],
    played_ats bigint[], records text[],
    channel text, notices text[])
returns void
language plpgsql
as $$
declare
    updated integer;
begin
    -- rows locked in id order, as the statement-by-statement path does, so
    -- two nodes' batches wait for each other rather than deadlock.
    perform 1 from games where id = any(game_ids) order by id for update;
    update games set white_id = w.white_id, black_id = w.black_id,
        status = w.status, result = w.result, state = w.state, version = w.version,
        rematch_id = w.rematch_id, updated_at = w.updated_at, deadline_at = w.deadline_at,
        recent_events = w.recent_events, premove_nodes = w.premove_nodes
        from unnest(game_ids, expected_versions, white_ids, black_ids, statuses, results,
            states, versions, rematch_ids, updated_ats, deadline_ats, event_lists,
            premove_node_lists)
            as w(id, expected, white_id, black_id, status, result, state, version,
            rematch_id, updated_at, deadline_at, recent_events, premove_nodes)
        where games.id = w.id and games.version = w.expected;
    get diagnostics updated = row_count;
    if updated <> cardinality(game_ids) then
        raise exception using errcode = 'CS001', message = 'a game''s version moved on';
    end if;
    insert into moves (game_id, ply, uci, san, clock_ms, played_at, record)
        select * from unnest(move_game_ids, plies, ucis, sans, clocks_ms, played_ats, records);
    perform pg_notify(channel, payload) from unnest(notices) as payload;
end
$$;
