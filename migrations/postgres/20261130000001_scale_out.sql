-- several nodes on one database, and timers that need no node to host the game.

-- the next moment a timer must look at the game (a flag or a first-move
-- deadline), unix ms; null when none runs. every node's sweeper finds games
-- whose deadline passed, also games that no node hosts.
alter table games add column deadline_at bigint;
-- the events of the game's latest changes (json array, oldest first, a few
-- dozen at most): what another node replays, in order, to its own sockets.
alter table games add column recent_events text not null default '[]';
-- json {"white": node id, "black": node id} of the node whose socket set each
-- side's premove; the premove of a node that is gone is cleared.
alter table games add column premove_nodes text;
create index games_deadline on games (deadline_at) where status = 'playing' and deadline_at is not null;
-- games in play before this migration: let the sweeper load each once, which
-- settles its clock and stores its real deadline.
update games set deadline_at = 0 where status = 'playing';

-- the server processes that share this database.
create table nodes (
    id text primary key not null,               -- uuid made at each start
    name text not null,                         -- host:port; a restarted node removes its earlier rows
    heartbeat_at bigint not null                -- unix ms of the last sign of life
);
