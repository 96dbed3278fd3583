-- every change of a game rewrites its row, and the row's list of recent
-- events (about 1.7 kb of json, the largest column) is compressed again each
-- time: pglz took about 2% of the whole machine, in the writer's backend, in
-- every profile of docs/performance.md's tenth pass. lz4 compresses several
-- times faster, a little less tightly. only where the server has it
-- (postgres 14 and later built with lz4, as debian's packages and the
-- postgres docker image are); elsewhere the columns keep the default. rows
-- already written stay as they are: each value says how it was compressed.
do $$
begin
    if current_setting('server_version_num')::int >= 140000 then
        execute 'alter table games alter column recent_events set compression lz4, '
            || 'alter column state set compression lz4';
    end if;
exception when feature_not_supported then
    raise notice 'lz4 is not available here: games keep the default compression';
end
$$;
