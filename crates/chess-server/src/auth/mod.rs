//! Who is asking: guest identities, accounts (parsed usernames and
//! passwords, Argon2id hashing, session tokens) and the rate limits that
//! protect sign-in.
//!
//! Each module has one purpose and, but for [`routes`], [`extract`] and
//! [`account_limits`], no knowledge of HTTP routes or the store, so the server's routes compose
//! them (the account tables' queries are in `store::accounts`):
//!
//! - [`identity`]: the `Identity` of a request (guest or account), and
//!   guest tokens in a signed cookie;
//! - [`extract`]: the extractors that resolve a request's identity;
//! - [`routes`]: the account endpoints, a router the server merges;
//! - [`password`]: length-checked `Password`, hashing and verifying in
//!   `spawn_blocking` under a concurrency cap, rehash on sign-in, a dummy
//!   verify for unknown users;
//! - [`session`]: HS256 account tokens with a rotating key ring;
//! - [`rate_limit`]: in-memory limits: failed sign-ins per account and
//!   address, sign-ups and game creation;
//! - [`account_limits`]: the limits that protect accounts (failed sign-ins,
//!   sign-ups), counted in the store on Postgres so that every node counts
//!   the same attempts, in memory on SQLite;
//! - [`sign_in`]: the sign-in decision that reveals nothing about which
//!   usernames exist;
//! - [`oidc`]: the host platform's OpenID provider: discovery, keys, the
//!   code exchange and the ID token's checks;
//! - [`oidc_routes`]: sign-in with the platform (`/auth/oidc/*`) and its
//!   error pages.

pub mod account_limits;
mod cookies;
pub mod extract;
pub mod identity;
pub mod oidc;
pub mod oidc_routes;
pub mod password;
pub mod rate_limit;
pub mod routes;
pub mod session;
pub mod sign_in;
