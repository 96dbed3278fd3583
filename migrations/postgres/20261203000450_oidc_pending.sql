-- sign-ins through the host platform's openid provider that have left for the
-- provider and not come back yet (docs/operations.md, "Sign-in with the host
-- platform"). the callback takes its row with one delete, so a callback
-- replayed, or arriving at another node, is honoured exactly once. rows live
-- ten minutes; each new sign-in removes the stale ones.
create table oidc_pending (
    state text primary key,          -- random, also in the browser's cookie
    nonce text not null,             -- must come back in the id token
    code_verifier text not null,     -- pkce: proves the code is redeemed by who asked
    guest_id text,                   -- the guest who asked (keeps their games), if any
    return_to text not null,         -- a local path to go back to
    created_at bigint not null       -- unix ms
);
create index oidc_pending_created_at on oidc_pending (created_at);
