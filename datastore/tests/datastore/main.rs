//! The datastore through its public API: descriptions, constraints, scans, transactions.

mod database;
mod durability;
mod failures;
mod fixtures;
mod migrations;
mod ops;
mod replace;
mod replicated;
mod scans;
mod schema;
mod transactions;
