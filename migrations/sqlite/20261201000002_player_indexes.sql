-- a player's games by seat alone. every move rewrote the old indexes' entries
-- (keyed on updated_at, which each move changes) on two scattered pages;
-- the batch's plain update of a move (store::batch) now leaves the seats
-- and the status alone, so these indexes and games_unfinished are written
-- only when a game starts, changes seats or ends. the lists' order by
-- updated_at sorts one player's games, as the old indexes' or-lookup did.
drop index games_white;
drop index games_black;
create index games_white on games (white_id);
create index games_black on games (black_id);
