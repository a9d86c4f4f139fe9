//! Selective evaluation (issue 11's goal: at most 5 µs): 100,000 subscriptions
//! `SELECT * FROM item WHERE owner = :sender`, one per owner, and one commit that inserts one
//! item, evaluated over all of them; then the same for joins: 10,000 subscriptions
//! `SELECT item.* FROM item JOIN player ON item.holder = player.id WHERE player.who = :sender`
//! and one new item; and 100,000 subscriptions `SELECT * FROM item` of a table whose visibility
//! filter is `owner = :sender`, which must cost what the explicit equality costs (the filter is
//! in the plan, and routes it). Only the evaluation is measured: the commit is made once, and the registry
//! evaluates its changes against the tables right after it on every iteration.
//!
//! `cargo bench -p wasmod-subscription --bench selective`.

#[path = "../tests/support/owners.rs"]
mod owners;
#[path = "../tests/support/players.rs"]
mod players;

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

/// Subscriptions, one per owner, with distinct owners.
const OWNERS: u32 = 100_000;

fn selective(c: &mut Criterion) {
    let (datastore, _, mut subscriptions, _) = owners::subscribed(OWNERS);
    let changes = owners::insert_one(&datastore, 1, owners::owner(42));
    let tables = datastore.begin_read();
    c.bench_function(
        "evaluate one commit of one row, 100,000 equality subscriptions",
        |b| b.iter(|| black_box(subscriptions.evaluate(black_box(&changes), &tables))),
    );
}

fn selective_through_visibility(c: &mut Criterion) {
    let (datastore, _, mut subscriptions, _) = owners::subscribed_through_visibility(OWNERS);
    let changes = owners::insert_one(&datastore, 1, owners::owner(42));
    let tables = datastore.begin_read();
    c.bench_function(
        "evaluate one commit of one row, 100,000 subscriptions through a visibility filter",
        |b| b.iter(|| black_box(subscriptions.evaluate(black_box(&changes), &tables))),
    );
}

fn selective_joins(c: &mut Criterion) {
    let (datastore, mut subscriptions, _) = players::subscribed(10_000);
    let changes = players::new_item(&datastore, 7, 42);
    let tables = datastore.begin_read();
    c.bench_function(
        "evaluate one commit of one row, 10,000 per-user join subscriptions",
        |b| b.iter(|| black_box(subscriptions.evaluate(black_box(&changes), &tables))),
    );
}

criterion_group!(
    benches,
    selective,
    selective_through_visibility,
    selective_joins
);
criterion_main!(benches);
