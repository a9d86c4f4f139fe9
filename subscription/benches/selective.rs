//! Selective evaluation (issue 11's goal: at most 5 µs): 100,000 subscriptions
//! `SELECT * FROM item WHERE owner = :sender`, one per owner; one commit that inserts one item,
//! evaluated over all of them. Only the evaluation is measured: the commit is made once, and
//! the registry evaluates its changes against the tables right after it on every iteration.
//!
//! `cargo bench -p wasmod-subscription --bench selective`.

#[path = "../tests/support/owners.rs"]
mod owners;

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

criterion_group!(benches, selective);
criterion_main!(benches);
