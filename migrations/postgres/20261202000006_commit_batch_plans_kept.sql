-- chess_commit_batch's statements, and the foreign-key checks they set off
-- (a move's game, a game's players), are planned once per connection and the
-- plans kept, instead of planned again at every call. the node's connections
-- force custom plans (store/connect.rs), and under that setting every
-- execution plans again, the foreign-key checks' saved plans too: planning
-- was 29% of the writer's backend and the moves' foreign-key checks 23%,
-- most of that planning as well (docs/performance.md, fourteenth pass). a
-- plan kept from a connection's first call was what the node forced custom
-- plans against: made while games was small, it scanned the whole table
-- long after it grew. every statement here finds its rows by key, so
-- sequential scans are ruled out while the function runs, and each kept
-- plan looks rows up by key whatever the tables' sizes when it was made.
-- a later `create or replace function chess_commit_batch` drops these
-- settings: it must say them again.
alter function chess_commit_batch set plan_cache_mode = force_generic_plan;
alter function chess_commit_batch set enable_seqscan = off;
