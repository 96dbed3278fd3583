-- each statement of a group commit is written once, as a function of its
-- own, and both of the node's writer paths call it: chess_commit_batch (the
-- batch in one round trip, redefined below to call them) and the
-- statement-by-statement path (crates/chess-server/src/store/batch.rs: a
-- take-back, a rematch, a reward to settle, a game another node moved on).
-- the calls are in crates/chess-server/src/store/sql/postgres.rs. until now
-- chess_commit_batch held its own copies of the statements the node sent.
--
-- rows come in as one array per column, as chess_commit_batch's do; the
-- node never passes a null array. the parameters are named so that none is
-- a column's name (pl/pgsql refuses such an ambiguous reference).
--
-- pl/pgsql rather than sql functions: pl/pgsql keeps each statement's
-- prepared plan for the connection's life, where a sql function's
-- statements are planned again at every call. the functions carry no
-- settings of their own: called from chess_commit_batch they run under its
-- (plans kept, no sequential scans; 20261202000006_commit_batch_plans_kept.sql),
-- called by the node under its writer connection's (every execution
-- planned for the tables as they are, store/connect.rs).

-- the rows of the games `ids` locked in id order: every writer locks its
-- games this way before writing them, so two batches that share rows wait
-- for each other rather than deadlock.
create function chess_lock_games(ids text[])
returns void
language plpgsql
as $$
begin
    perform 1 from games where id = any(ids) order by id for update;
end
$$;

-- new players, in id order (for the same reason); an existing id is left
-- as it is.
create function chess_insert_players(
    player_ids text[], player_kinds text[], player_names text[], player_created_ats bigint[])
returns void
language plpgsql
as $$
begin
    insert into players (id, kind, name, created_at)
        select * from unnest(player_ids, player_kinds, player_names, player_created_ats)
            as p(id, kind, name, created_at)
        order by id
        on conflict (id) do nothing;
end
$$;

-- new games, whole rows.
create function chess_insert_games(
    new_game_ids text[], new_modes text[], new_white_ids text[], new_black_ids text[],
    new_computer_levels bigint[], new_time_controls text[], new_statuses text[],
    new_results text[], new_states text[], new_versions bigint[], new_rematch_ofs text[],
    new_rematch_ids text[], new_created_ats bigint[], new_updated_ats bigint[],
    new_deadline_ats bigint[], new_event_lists text[], new_premove_node_lists text[])
returns void
language plpgsql
as $$
begin
    insert into games (id, mode, white_id, black_id, computer_level, time_control, status,
            result, state, version, rematch_of, rematch_id, created_at, updated_at,
            deadline_at, recent_events, premove_nodes)
        select * from unnest(new_game_ids, new_modes, new_white_ids, new_black_ids,
            new_computer_levels, new_time_controls, new_statuses, new_results, new_states,
            new_versions, new_rematch_ofs, new_rematch_ids, new_created_ats, new_updated_ats,
            new_deadline_ats, new_event_lists, new_premove_node_lists);
end
$$;

-- seats taken in open challenges; whether each claim took its seat, in the
-- claims' order. one by one: two claims on one seat may share a batch, and
-- each needs its own answer.
create function chess_claim_seats(
    claim_game_ids text[], claim_whites boolean[], claim_players text[], claim_states text[],
    claim_ats bigint[], claim_deadline_ats bigint[])
returns boolean[]
language plpgsql
as $$
declare
    taken integer;
    claimed boolean[] := '{}';
begin
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
    end loop;
    return claimed;
end
$$;

-- changes to games, each a compare-and-set on its version: a game whose
-- stored version is no longer the expected one is left as it is. returns
-- the ids of the games changed (empty, not null, when none was).
create function chess_update_games(
    game_ids text[], expected_versions bigint[], white_ids text[], black_ids text[],
    statuses text[], results text[], states text[], versions bigint[], rematch_ids text[],
    updated_ats bigint[], deadline_ats bigint[], event_lists text[], premove_node_lists text[])
returns text[]
language plpgsql
as $$
declare
    changed_ids text[];
begin
    with changed as (
        update games set white_id = w.white_id, black_id = w.black_id,
            status = w.status, result = w.result, state = w.state, version = w.version,
            rematch_id = w.rematch_id, updated_at = w.updated_at, deadline_at = w.deadline_at,
            recent_events = w.recent_events, premove_nodes = w.premove_nodes
            from unnest(game_ids, expected_versions, white_ids, black_ids, statuses, results,
                states, versions, rematch_ids, updated_ats, deadline_ats, event_lists,
                premove_node_lists)
                as w(id, expected, white_id, black_id, status, result, state, version,
                rematch_id, updated_at, deadline_at, recent_events, premove_nodes)
            where games.id = w.id and games.version = w.expected
            returning games.id)
    select coalesce(array_agg(changed.id), '{}') into changed_ids from changed;
    return changed_ids;
end
$$;

-- new moves. a ply already stored fails the statement (the primary key),
-- and with it the whole batch.
create function chess_insert_moves(
    move_game_ids text[], plies bigint[], ucis text[], sans text[], clocks_ms bigint[],
    played_ats bigint[], records text[])
returns void
language plpgsql
as $$
begin
    insert into moves (game_id, ply, uci, san, clock_ms, played_at, record)
        select * from unnest(move_game_ids, plies, ucis, sans, clocks_ms, played_ats, records);
end
$$;

-- the batch in one round trip, as in 20261202000003 (what it hands back by
-- raising, cs001 and cs002, is described in 20261202000002), now through
-- the functions above. each is called only when its arrays hold rows, so a
-- batch of moves alone plans and runs nothing for players, games or claims.
-- the settings of 20261202000006 are said again here: `create or replace`
-- drops a function's settings. they last until it returns, so the
-- functions it calls run under them too.
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
set plan_cache_mode = force_generic_plan
set enable_seqscan = off
as $$
declare
    claimed boolean[] := '{}';
    changed_ids text[];
begin
    if cardinality(settling_winners) > 0 and exists (
            select 1 from players where id = any(settling_winners) and kind = 'account') then
        raise exception using errcode = 'CS002', message = 'an ending may pay a reward';
    end if;
    if cardinality(game_ids) + cardinality(claim_game_ids) > 0 then
        perform chess_lock_games(game_ids || claim_game_ids);
    end if;
    if cardinality(player_ids) > 0 then
        perform chess_insert_players(player_ids, player_kinds, player_names, player_created_ats);
    end if;
    if cardinality(new_game_ids) > 0 then
        perform chess_insert_games(new_game_ids, new_modes, new_white_ids, new_black_ids,
            new_computer_levels, new_time_controls, new_statuses, new_results, new_states,
            new_versions, new_rematch_ofs, new_rematch_ids, new_created_ats, new_updated_ats,
            new_deadline_ats, new_event_lists, new_premove_node_lists);
    end if;
    if cardinality(claim_game_ids) > 0 then
        claimed := chess_claim_seats(claim_game_ids, claim_whites, claim_players, claim_states,
            claim_ats, claim_deadline_ats);
        -- a claim's notice goes out only if it took its seat.
        for i in 1 .. cardinality(claimed) loop
            if claimed[i] and claim_notices[i] is not null then
                perform pg_notify(channel, claim_notices[i]);
            end if;
        end loop;
    end if;
    if cardinality(game_ids) > 0 then
        changed_ids := chess_update_games(game_ids, expected_versions, white_ids, black_ids,
            statuses, results, states, versions, rematch_ids, updated_ats, deadline_ats,
            event_lists, premove_node_lists);
        -- every change lands, or the batch goes back to the node, which
        -- refuses the stale games alone, statement by statement.
        if cardinality(changed_ids) <> cardinality(game_ids) then
            raise exception using errcode = 'CS001', message = 'a game''s version moved on';
        end if;
    end if;
    if cardinality(move_game_ids) > 0 then
        perform chess_insert_moves(move_game_ids, plies, ucis, sans, clocks_ms, played_ats,
            records);
    end if;
    if cardinality(notices) > 0 then
        perform pg_notify(channel, payload) from unnest(notices) as payload;
    end if;
    return claimed;
end
$$;
