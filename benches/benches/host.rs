//! The host against SQLite (issue 3's workloads), side by side in one run.
//!
//! `cargo bench -p wasmod-benches --bench host`; `-- --quick` for a short run. Every group
//! measures the same work on each backend; setup (a fresh database, preloaded rows, encoded
//! arguments) is outside the measurement.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use std::hint::black_box;
use wasmod_benches::data::{btree_points, people, points, BATCH, PRELOAD};
use wasmod_benches::module::{native, ModuleHost};
use wasmod_benches::sqlite::Sqlite;

fn encoded<T: wasmod_abi::Encode>(rows: T) -> Vec<u8> {
    wasmod_abi::encoding::to_vec(&(rows,))
}

/// Measures `routine` on a fresh `setup()` each iteration.
fn fresh<S, R>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    mut setup: impl FnMut() -> S,
    mut routine: impl FnMut(S) -> R,
) {
    group.bench_function(name, |bench| {
        bench.iter_batched(&mut setup, &mut routine, BatchSize::PerIteration)
    });
}

fn empty_reducer(c: &mut Criterion) {
    let mut group = c.benchmark_group("empty_reducer");
    let mut module = native();
    group.bench_function("host_native", |bench| {
        bench.iter(|| black_box(module.call("empty", &[])))
    });
    group.finish();
}

fn insert_256_into_2048(c: &mut Criterion) {
    let mut group = c.benchmark_group("insert_256_into_2048_unique_u32_u64_u64");
    let preload = points(0..PRELOAD);
    let batch = points(PRELOAD..PRELOAD + BATCH);
    let args = encoded(batch.clone());
    fresh(
        &mut group,
        "host_native",
        || {
            let mut module = native();
            module.call_ok("insert_bulk_unique_0_u32_u64_u64", (preload.clone(),));
            module
        },
        |mut module| black_box(module.call("insert_bulk_unique_0_u32_u64_u64", &args)),
    );
    fresh(
        &mut group,
        "sqlite",
        || {
            let mut sqlite = Sqlite::new();
            sqlite.insert_points("unique_0_u32_u64_u64", &preload);
            sqlite
        },
        |mut sqlite| sqlite.insert_points("unique_0_u32_u64_u64", &batch),
    );
    group.finish();

    let mut group = c.benchmark_group("insert_256_into_2048_unique_u32_u64_str");
    let preload = people(0..PRELOAD);
    let batch = people(PRELOAD..PRELOAD + BATCH);
    let args = encoded(batch.clone());
    fresh(
        &mut group,
        "host_native",
        || {
            let mut module = native();
            module.call_ok("insert_bulk_unique_0_u32_u64_str", (preload.clone(),));
            module
        },
        |mut module| black_box(module.call("insert_bulk_unique_0_u32_u64_str", &args)),
    );
    fresh(
        &mut group,
        "sqlite",
        || {
            let mut sqlite = Sqlite::new();
            sqlite.insert_people(&preload);
            sqlite
        },
        |mut sqlite| sqlite.insert_people(&batch),
    );
    group.finish();
}

fn iterate_256(c: &mut Criterion) {
    let mut group = c.benchmark_group("iterate_256_unique_u32_u64_u64");
    let rows = points(0..BATCH);
    let mut module = native();
    module.call_ok("insert_bulk_unique_0_u32_u64_u64", (rows.clone(),));
    group.bench_function("host_native", |bench| {
        bench.iter(|| black_box(module.call("iterate_unique_0_u32_u64_u64", &[])))
    });
    let mut sqlite = Sqlite::new();
    sqlite.insert_points("unique_0_u32_u64_u64", &rows);
    group.bench_function("sqlite", |bench| {
        bench.iter(|| black_box(sqlite.iterate_points()))
    });
    group.finish();
}

fn filter_u64_btree(c: &mut Criterion) {
    let mut group = c.benchmark_group("filter_u64_btree_256_of_2048");
    let rows = btree_points(0..PRELOAD);
    let mut module = native();
    module.call_ok("insert_bulk_btree_each_column_u32_u64_u64", (rows.clone(),));
    let args = wasmod_abi::encoding::to_vec(&(3u64,));
    group.bench_function("host_native", |bench| {
        bench.iter(|| black_box(module.call("filter_btree_each_column_u32_u64_u64_by_y", &args)))
    });
    let mut sqlite = Sqlite::new();
    sqlite.insert_points("btree_each_column_u32_u64_u64", &points(0..PRELOAD));
    group.bench_function("sqlite", |bench| {
        bench.iter(|| black_box(sqlite.filter_points_by_y(3)))
    });
    group.finish();
}

criterion_group!(
    host,
    empty_reducer,
    insert_256_into_2048,
    iterate_256,
    filter_u64_btree
);
criterion_main!(host);
