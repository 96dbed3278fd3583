-- class accounts: a club's leader creates accounts for pupils (no e-mail, a
-- generated password handed out on a printed sheet). such an account signs in
-- only by choosing its own password first, and its club's leaders may give it
-- a new generated one when the pupil forgets theirs.
alter table accounts add column must_change_password boolean not null default false;
alter table accounts add column class_club_id text references clubs (id); -- the club whose leaders made it; null for everyone else
create index accounts_class_club on accounts (class_club_id) where class_club_id is not null;
