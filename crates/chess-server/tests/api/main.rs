//! Black-box tests: the real server on port 0 with a fresh database per test,
//! each test run on SQLite and on Postgres, played over real WebSockets.

mod helpers;

mod accounts;
mod bad_input;
mod clocks;
mod computer;
mod disk_faults;
mod endings;
mod identity;
mod lobby;
mod metrics;
mod nodes;
mod overload;
mod premoves;
mod restart;
mod security;
mod store_contract;
