-- chess_commit_batch runs only the statements its batch needs. every
-- statement is planned at every call: the node's connections set
-- plan_cache_mode = force_custom_plan (store/connect.rs: a generic plan made
-- while the games table was small scanned it whole long after it grew), and
-- pl/pgsql's statements follow it. forcing generic plans on this function
-- alone was tried: `id = any(array)` became a sequential scan of games.
-- planning was a quarter of the writer's backend, 7% of the whole machine,
-- in the 1-3 s thinking row (docs/performance.md, "tenth pass"); most
-- batches hold moves only, and now skip planning the players', games' and
-- claims' statements and the reward check. the body is otherwise that of
-- 20261202000002_commit_batch.sql. the node never passes a null array, and
-- cardinality of an empty one is 0.
create or replace function chess_commit_batch(
    -- new players (an existing id is left as it is)
    player_ids text[], player_kinds text[], player_names text[], player_created_ats bigint[],
    -- new games
    new_game_ids text[], new_modes text[], new_white_ids text[], new_black_ids text[],
    new_computer_levels bigint[], new_time_controls text[], new_statuses text[],
    new_results text[], new_states text[], new_versions bigint[], new_rematch_ofs text[],
    new_rematch_ids text[], new_created_ats bigint[], new_updated_ats bigint[],
    new_deadline_ats bigint[], new_event_lists text[], new_premove_node_lists text[],
    -- seats taken, each with the notice sent if it takes its seat
    claim_game_ids text[], claim_whites boolean[], claim_players text[], claim_states text[],
    claim_ats bigint[], claim_deadline_ats bigint[], claim_notices text[],
    -- changes to games, each a compare-and-set on its version
    game_ids text[], expected_versions bigint[], white_ids text[], black_ids text[],
    statuses text[], results text[], states text[], versions bigint[], rematch_ids text[],
    updated_ats bigint[], deadline_ats bigint[], event_lists text[], premove_node_lists text[],
    -- the winners of the endings among them that settle a reward
    settling_winners text[],
    -- the changes' new moves
    move_game_ids text[], plies bigint[], ucis text[], sans text[], clocks_ms bigint[],
    played_ats bigint[], records text[],
    -- the notices of the changes, sent as they are
    channel text, notices text[])
returns boolean[]
language plpgsql
as $$
declare
    updated integer;
    taken integer;
    claimed boolean[] := '{}';
begin
    if cardinality(settling_winners) > 0 and exists (
            select 1 from players where id = any(settling_winners) and kind = 'account') then
        raise exception using errcode = 'CS002', message = 'an ending may pay a reward';
    end if;
    -- rows locked in id order, as the statement-by-statement path does, so
    -- two nodes' batches wait for each other rather than deadlock.
    if cardinality(game_ids) + cardinality(claim_game_ids) > 0 then
        perform 1 from games where id = any(game_ids || claim_game_ids) order by id for update;
    end if;
    if cardinality(player_ids) > 0 then
        insert into players (id, kind, name, created_at)
            select * from unnest(player_ids, player_kinds, player_names, player_created_ats)
                as p(id, kind, name, created_at)
            order by id
            on conflict (id) do nothing;
    end if;
    if cardinality(new_game_ids) > 0 then
        insert into games (id, mode, white_id, black_id, computer_level, time_control, status,
                result, state, version, rematch_of, rematch_id, created_at, updated_at,
                deadline_at, recent_events, premove_nodes)
            select * from unnest(new_game_ids, new_modes, new_white_ids, new_black_ids,
                new_computer_levels, new_time_controls, new_statuses, new_results, new_states,
                new_versions, new_rematch_ofs, new_rematch_ids, new_created_ats,
                new_updated_ats, new_deadline_ats, new_event_lists, new_premove_node_lists);
    end if;
    -- one by one: two claims on one seat may share a batch, and each needs
    -- its own answer.
    for i in 1 .. coalesce(cardinality(claim_game_ids), 0) loop
        if claim_whites[i] then
            update games set white_id = claim_players[i], state = claim_states[i],
                status = 'playing', updated_at = claim_ats[i], deadline_at = claim_deadline_ats[i]
                where id = claim_game_ids[i] and white_id is null and status = 'open';
        else
            update games set black_id = claim_players[i], state = claim_states[i],
                status = 'playing', updated_at = claim_ats[i], deadline_at = claim_deadline_ats[i]
                where id = claim_game_ids[i] and black_id is null and status = 'open';
        end if;
        get diagnostics taken = row_count;
        claimed := claimed || (taken = 1);
        if taken = 1 and claim_notices[i] is not null then
            perform pg_notify(channel, claim_notices[i]);
        end if;
    end loop;
    if cardinality(game_ids) > 0 then
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
    end if;
    if cardinality(move_game_ids) > 0 then
        insert into moves (game_id, ply, uci, san, clock_ms, played_at, record)
            select * from unnest(move_game_ids, plies, ucis, sans, clocks_ms, played_ats,
                records);
    end if;
    if cardinality(notices) > 0 then
        perform pg_notify(channel, payload) from unnest(notices) as payload;
    end if;
    return claimed;
end
$$;
