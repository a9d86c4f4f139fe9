//! The client cache applying one transaction of 1, 100 and 10,000 rows of the quickstart's
//! `message` shape `(id: u64, sender: [u8; 32], sent: i64, text: String)`: inserts into an
//! empty cache, and updates (each row deleted and inserted again with the same key and a new
//! text, paired by the primary key).

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use wasmod_abi::encoding::to_vec;
use wasmod_abi::{AlgebraicType, Field, SchemaType, Typespace};
use wasmod_client::cache::{Cache, PrimaryKey};

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

fn filled(rows: &[Vec<u8>]) -> Cache {
    let mut cache = keyed_cache();
    let mut batch = cache.batch();
    for row in rows {
        batch.insert(1, "message", row);
    }
    batch.finish();
    cache
}

fn apply(c: &mut Criterion) {
    let mut group = c.benchmark_group("cache");
    for size in SIZES {
        let new = rows(size, "hello");
        group.bench_with_input(BenchmarkId::new("insert", size), &new, |b, new| {
            b.iter_batched(
                keyed_cache,
                |mut cache| {
                    let mut batch = cache.batch();
                    for row in new {
                        batch.insert(1, "message", row);
                    }
                    (batch.finish(), cache)
                },
                BatchSize::LargeInput,
            );
        });
        let changed = rows(size, "edited");
        group.bench_with_input(BenchmarkId::new("update", size), &changed, |b, changed| {
            b.iter_batched(
                || filled(&new),
                |mut cache| {
                    let mut batch = cache.batch();
                    for (old, row) in new.iter().zip(changed) {
                        batch.delete(1, "message", old);
                        batch.insert(1, "message", row);
                    }
                    let events = batch.finish();
                    assert_eq!(events[0].updates.len(), changed.len());
                    (events, cache)
                },
                BatchSize::LargeInput,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, apply);
criterion_main!(benches);
