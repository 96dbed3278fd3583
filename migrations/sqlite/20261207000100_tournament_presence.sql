-- when a tournament's player last showed they are there (the tournament page
-- open, or an API client's event stream): the pool is the players seen lately.
alter table tournament_players add column seen_at integer; -- unix ms; null: not since joining
