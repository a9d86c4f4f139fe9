//! The client cache applying one transaction of 1, 100 and 10,000 rows of the quickstart's
//! `message` shape `(id: u64, sender: [u8; 32], sent: i64, text: String)`: inserts into an
//! empty cache, and updates (each row deleted and inserted again with the same key and a new
//! text, paired by the primary key), as the connection applies a transaction's row lists
//! (`Batch::delete_all`, `Batch::insert_all`).
//!
//! The same with the `id` column indexed (as it is once the application has looked a row up
//! by it, `find_by_id`), to show what keeping the index costs an apply; and looking one row
//! up by its `id` among 100,000, through the index and, as the cache did before it had
//! indexes, by reading every row's key.
//!
//! Before the measurements, the bytes and allocations of one apply of each are printed,
//! counted by this binary's global allocator (shared with the protocol's benches).

#[path = "../../protocol/benches/support/allocations.rs"]
mod allocations;
#[path = "support/cache.rs"]
mod scenarios;

use allocations::{print_allocations, Counting};
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use scenarios::{apply_one, filled, keyed_cache, message_column, rows, SIZES};
use std::hint::black_box;
use wasmod_abi::encoding::{from_slice, to_vec};
use wasmod_client::cache::Cache;

/// A `message` row, decoded as the generated bindings' `Message` is.
type Message = (u64, [u8; 32], i64, String);

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
        group.bench_with_input(BenchmarkId::new("insert_indexed", size), &new, |b, new| {
            b.iter_batched(
                || indexed(keyed_cache()),
                |mut cache| (apply_one(&mut cache, &[], new), cache),
                BatchSize::LargeInput,
            );
        });
        group.bench_with_input(
            BenchmarkId::new("update_indexed", size),
            &changed,
            |b, changed| {
                b.iter_batched(
                    || indexed(filled(&new)),
                    |mut cache| (apply_one(&mut cache, &new, changed), cache),
                    BatchSize::LargeInput,
                );
            },
        );
    }
    group.finish();
}

/// `cache` with its `message` table indexed by `id`.
fn indexed(mut cache: Cache) -> Cache {
    cache.index_column("message", "id", message_column("id"));
    cache
}

/// How many rows the look-ups search.
const LOOKED_UP: usize = 100_000;

/// The ids looked up in turn: spread over the table.
fn ids() -> impl Iterator<Item = u64> {
    (0..LOOKED_UP as u64).cycle().step_by(7_919)
}

/// One row found by its `id` among 100,000 and decoded, as `find_by_id` does: the key
/// encoded, found, the row decoded; through the index, and by reading every row's key.
fn lookup(c: &mut Criterion) {
    let cache = indexed(filled(&rows(LOOKED_UP, "hello")));
    let mut group = c.benchmark_group("lookup");
    let mut wanted = ids();
    group.bench_function(BenchmarkId::new("indexed", LOOKED_UP), |b| {
        b.iter(|| {
            let key = to_vec(&wanted.next().unwrap_or_default());
            let row = cache
                .find_indexed("message", "id", &key)
                .and_then(|mut rows| rows.next());
            black_box(row.map(from_slice::<Message>))
        });
    });
    let reader = message_column("id");
    group.bench_function(BenchmarkId::new("scan", LOOKED_UP), |b| {
        b.iter(|| {
            let key = to_vec(&wanted.next().unwrap_or_default());
            let row = cache
                .rows("message")
                .find(|row| reader.key(row) == Some(&key[..]));
            black_box(row.map(from_slice::<Message>))
        });
    });
    group.finish();
}

criterion_group!(benches, apply, lookup);
criterion_main!(benches);
