-- a move may update its game's row in place (a heap-only tuple, hot, update):
-- no new entry in any of the games' indexes. every move changed updated_at,
-- a column of games_white and games_black, so every move wrote a new entry
-- into each of the five indexes of games (a fifth of the writer's backend in
-- docs/performance.md's thirteenth pass). a player's games are now found by
-- seat alone and sorted, as on sqlite since 20261201000002 (the lists' `or`
-- of two seats could not use the old order anyway). fillfactor leaves room
-- on each page for a row's new version beside its old one, which a hot
-- update needs; it applies to pages written from now on. a timed game's
-- move still changes deadline_at, indexed for the sweeper, and is not hot.
drop index games_white;
drop index games_black;
create index games_white on games (white_id);
create index games_black on games (black_id);
alter table games set (fillfactor = 80);
