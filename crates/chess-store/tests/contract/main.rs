//! The store's contract, run against SQLite and Postgres alike with a fresh
//! database per test and no server: what the layers above rely on.

mod accounts;
mod classes;
mod clubs;
mod games;
mod ledger;
mod tournaments;
