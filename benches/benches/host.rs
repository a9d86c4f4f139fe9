//! The host against its floor: an empty reducer through each backend, beside a bare wasmtime
//! call of an export that does nothing.
//!
//! `cargo bench -p wasmod-benches --bench host`. Group `empty_reducer`:
//!
//! - `bare_wasmtime_export`: wasmtime calling an empty export of the benchmark module, with no
//!   host at all: what no host can beat;
//! - `host_wasm`: the `empty` reducer through the host in wasmtime (name lookup, transaction,
//!   argument source, the generated dispatch, commit, outcome);
//! - `host_native`: the same reducer compiled natively, behind the same host semantics;
//! - `sqlite`: an empty transaction in SQLite in memory.
//!
//! The table workloads, which used to be here too, are in `benches/workloads.rs`.

use criterion::{criterion_group, criterion_main, Criterion};
use wasmod_benches::measure::{measure, State};
use wasmod_benches::module::{call_encoded_ok, wasm_bytes, Host};
use wasmod_benches::sqlite::SqliteWork;
use wasmtime::{Engine, Linker, Module, Store};

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
    for host in Host::ALL {
        measure(
            &mut group,
            host.name(),
            State::Shared,
            || host.load(),
            |module| call_encoded_ok(&mut **module, "empty", &[]),
        );
    }
    let sqlite = SqliteWork::Empty;
    measure(
        &mut group,
        "sqlite",
        State::Shared,
        || sqlite.prepare(),
        |db| sqlite.run(db),
    );
    group.finish();
}

criterion_group!(host, empty_reducer);
criterion_main!(host);
