//! The host against its floor and against SQLite, side by side in one run.
//!
//! `cargo bench -p wasmod-benches --bench host`; `-- --quick` for a short run. Every group
//! measures the same work on each backend: `host_wasm` (the benchmark module in wasmtime, the
//! whole host path: name lookup, transaction, argument source, outcome), `host_native` (the same
//! module compiled natively, same host semantics in-process) and `sqlite` (the same work in
//! SQLite in memory, prepared statements, one transaction). Setup (a fresh database, preloaded
//! rows, encoded arguments) is outside the measurement.

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkGroup, Criterion};
use std::hint::black_box;
use wasmod_benches::data::{btree_points, people, points, BATCH, PRELOAD};
use wasmod_benches::module::{call_ok, native, wasm, wasm_bytes, ModuleHost};
use wasmod_benches::sqlite::Sqlite;
use wasmtime::{Engine, Linker, Module, Store};

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

/// A bare wasmtime call of an export that does nothing, in the benchmark module itself: what
/// no host can beat. Its imports are stubs that trap; the export calls none of them.
fn bare_wasmtime_call() -> impl FnMut() {
    let engine = Engine::default();
    let module = Module::new(&engine, wasm_bytes()).expect("the module compiles");
    let mut linker = Linker::new(&engine);
    linker
        .define_unknown_imports_as_traps(&module)
        .expect("the imports are stubbed");
    let mut store = Store::new(&engine, ());
    let instance = linker
        .instantiate(&mut store, &module)
        .expect("the module instantiates");
    let floor = instance
        .get_typed_func::<(), ()>(&mut store, "bench_floor")
        .expect("the floor export");
    move || floor.call(&mut store, ()).expect("the floor call returns")
}

fn empty_reducer(c: &mut Criterion) {
    let mut group = c.benchmark_group("empty_reducer");
    let mut floor = bare_wasmtime_call();
    group.bench_function("bare_wasmtime_export", |bench| bench.iter(&mut floor));
    let mut module = wasm();
    group.bench_function("host_wasm", |bench| {
        bench.iter(|| black_box(module.call("empty", &[])))
    });
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
        "host_wasm",
        || {
            let mut module = wasm();
            call_ok(
                &mut module,
                "insert_bulk_unique_0_u32_u64_u64",
                (preload.clone(),),
            );
            module
        },
        |mut module| black_box(module.call("insert_bulk_unique_0_u32_u64_u64", &args)),
    );
    fresh(
        &mut group,
        "host_native",
        || {
            let mut module = native();
            call_ok(
                &mut module,
                "insert_bulk_unique_0_u32_u64_u64",
                (preload.clone(),),
            );
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
        "host_wasm",
        || {
            let mut module = wasm();
            call_ok(
                &mut module,
                "insert_bulk_unique_0_u32_u64_str",
                (preload.clone(),),
            );
            module
        },
        |mut module| black_box(module.call("insert_bulk_unique_0_u32_u64_str", &args)),
    );
    fresh(
        &mut group,
        "host_native",
        || {
            let mut module = native();
            call_ok(
                &mut module,
                "insert_bulk_unique_0_u32_u64_str",
                (preload.clone(),),
            );
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
    each_host(
        &mut group,
        |module| call_ok(module, "insert_bulk_unique_0_u32_u64_u64", (rows.clone(),)),
        "iterate_unique_0_u32_u64_u64",
        &[],
    );
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
    let args = wasmod_abi::encoding::to_vec(&(3u64,));
    each_host(
        &mut group,
        |module| {
            call_ok(
                module,
                "insert_bulk_btree_each_column_u32_u64_u64",
                (rows.clone(),),
            )
        },
        "filter_btree_each_column_u32_u64_u64_by_y",
        &args,
    );
    let mut sqlite = Sqlite::new();
    sqlite.insert_points("btree_each_column_u32_u64_u64", &points(0..PRELOAD));
    group.bench_function("sqlite", |bench| {
        bench.iter(|| black_box(sqlite.filter_points_by_y(3)))
    });
    group.finish();
}

/// Measures `reducer` with `args` on each host, after `prepare` set it up, in the state
/// `prepare` left (the reducer must not change it).
fn each_host(
    group: &mut BenchmarkGroup<'_, WallTime>,
    prepare: impl Fn(&mut dyn ModuleHost),
    reducer: &str,
    args: &[u8],
) {
    let mut module = wasm();
    prepare(&mut module);
    group.bench_function("host_wasm", |bench| {
        bench.iter(|| black_box(module.call(reducer, args)))
    });
    let mut module = native();
    prepare(&mut module);
    group.bench_function("host_native", |bench| {
        bench.iter(|| black_box(module.call(reducer, args)))
    });
}

criterion_group!(
    host,
    empty_reducer,
    insert_256_into_2048,
    iterate_256,
    filter_u64_btree
);
criterion_main!(host);
