//! The client cache applying one transaction of 1, 100 and 10,000 rows of the quickstart's
//! `message` shape `(id: u64, sender: [u8; 32], sent: i64, text: String)`: inserts into an
//! empty cache, and updates (each row deleted and inserted again with the same key and a new
//! text, paired by the primary key), as the connection applies a transaction's row lists
//! (`Batch::delete_all`, `Batch::insert_all`).
//!
//! Before the measurements, the bytes and allocations of one apply of each are printed,
//! counted by this binary's global allocator (shared with the protocol's benches).

#[path = "../../protocol/benches/support/allocations.rs"]
mod allocations;
#[path = "support/cache.rs"]
mod scenarios;

use allocations::{print_allocations, Counting};
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use scenarios::{apply_one, filled, keyed_cache, rows, SIZES};

#[global_allocator]
static GLOBAL: Counting = Counting;

fn apply(c: &mut Criterion) {
    let mut group = c.benchmark_group("cache");
    for size in SIZES {
        let new = rows(size, "hello");
        let changed = rows(size, "edited");
        let mut cache = keyed_cache();
        let events = print_allocations(&format!("insert/{size}"), || {
            apply_one(&mut cache, &[], &new)
        });
        assert_eq!(events[0].inserts.len(), size);
        let events = print_allocations(&format!("update/{size}"), || {
            apply_one(&mut cache, &new, &changed)
        });
        assert_eq!(events[0].updates.len(), size);
        group.bench_with_input(BenchmarkId::new("insert", size), &new, |b, new| {
            b.iter_batched(
                keyed_cache,
                |mut cache| (apply_one(&mut cache, &[], new), cache),
                BatchSize::LargeInput,
            );
        });
        group.bench_with_input(BenchmarkId::new("update", size), &changed, |b, changed| {
            b.iter_batched(
                || filled(&new),
                |mut cache| (apply_one(&mut cache, &new, changed), cache),
                BatchSize::LargeInput,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, apply);
criterion_main!(benches);
