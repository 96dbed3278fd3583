//! The lichess Board and Bot API, so existing clients (berserk, lichess-bot,
//! board apps) can play on this server: `docs/lichess-api.md`.
//!
//! A thin layer over the same parts the web client uses: the live games
//! (every move goes through the one rules path, every stream watches through
//! a `chess_live::Viewer`), the lobby's seeks and the store. What it adds:
//!
//! - [`routes`]: every route of the API;
//! - [`auth`]: personal access tokens sent as `Authorization: Bearer`, with scopes;
//! - [`tokens`]: creating, listing and revoking them (signed-in session);
//! - [`account`]: `GET /api/account` and the bot upgrade;
//! - [`streams`]: what the API keeps on this node: each account's event
//!   streams, the games watched for them, its rate limits;
//! - [`event_stream`]: the per-account NDJSON event stream;
//! - [`events`]: the games it hears of, and the watchers that see them end;
//! - [`challenges`]: challenges between accounts and the open-while-waiting seek;
//! - [`notices`]: what nodes tell each other so every node's event streams hear of it;
//! - [`relay`]: other nodes' notices and the lobby's games, told to this node's streams;
//! - [`games`]: the NDJSON game stream and the game actions;
//! - [`shapes`]: the lichess JSON shapes and the mapping of endings to status names;
//! - [`reply`]: lichess's answers: `{"error": "..."}` with its status
//!   codes, `{"ok": true}`, NDJSON.

pub mod account;
pub mod auth;
pub mod challenges;
pub mod event_stream;
pub mod events;
pub mod form;
pub mod games;
pub mod notices;
pub mod relay;
pub mod reply;
pub mod routes;
pub mod shapes;
pub mod streams;
pub mod teams;
pub mod token_cache;
pub mod tokens;
pub mod tournaments;
