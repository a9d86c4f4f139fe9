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

use allocations::{print_allocations, Counting};
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use wasmod_abi::encoding::to_vec;
use wasmod_abi::{AlgebraicType, Field, SchemaType, Typespace};
use wasmod_client::cache::{Cache, PrimaryKey, TableEvents};

#[global_allocator]
static GLOBAL: Counting = Counting;

const SIZES: [usize; 3] = [1, 100, 10_000];

fn rows(count: usize, text: &str) -> Vec<Vec<u8>> {
    (0..count as u64)
        .map(|id| {
            to_vec(&(
                id,
                [0xab_u8; 32],
                1_700_000_000_000_000_i64,
                format!("{text} {id}"),
            ))
        })
        .collect()
}

fn keyed_cache() -> Cache {
    let mut typespace = Typespace::default();
    let row_type = AlgebraicType::Product(vec![
        Field::named("id", u64::schema(&mut typespace)),
        Field::named("sender", <[u8; 32]>::schema(&mut typespace)),
        Field::named("sent", i64::schema(&mut typespace)),
        Field::named("text", String::schema(&mut typespace)),
    ]);
    let key = PrimaryKey::new(&row_type, typespace, 0).expect("a product");
    let mut cache = Cache::new();
    cache.set_primary_key("message", key);
    cache
}

/// Applies one transaction: `deletes`, then `inserts`, of query set 1.
fn apply_one(cache: &mut Cache, deletes: &[Vec<u8>], inserts: &[Vec<u8>]) -> Vec<TableEvents> {
    let mut batch = cache.batch();
    batch.delete_all(1, "message", deletes.iter().map(Vec::as_slice));
    batch.insert_all(1, "message", inserts.iter().map(Vec::as_slice));
    batch.finish()
}

fn filled(rows: &[Vec<u8>]) -> Cache {
    let mut cache = keyed_cache();
    apply_one(&mut cache, &[], rows);
    cache
}

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
