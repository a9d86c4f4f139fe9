//! The standard workloads (`wasmod_benches::workloads::standard`), each on every backend that
//! can run it, side by side in one run.
//!
//! `cargo bench -p wasmod-benches --bench workloads`. One criterion group per workload, named
//! after it; in each, up to three functions:
//!
//! - `host_wasm`: the benchmark module (`examples/benchmarks`) built for wasm32 in release and
//!   run by the host in wasmtime: the whole path of a client's call (name lookup, transaction,
//!   argument source, the module's decoding and table calls through the ABI's imports, commit,
//!   outcome);
//! - `host_native`: the same reducers compiled natively, behind the same host semantics
//!   in-process (same datastore, same transaction and outcome), without wasm: the floor
//!   `host_wasm` is compared with;
//! - `sqlite`: the same work in SQLite in memory (prepared statements, one transaction, every
//!   column of every row read), where the workload is table work.
//!
//! Why it is fair: every backend gets the same rows (`wasmod_benches::data`), starts each
//! measured call from the same state (workloads that change it get a freshly prepared host or
//! database for every iteration, prepared and dropped outside the measurement), and is checked:
//! every measured reducer call must succeed, and the unit tests of `wasmod_benches::workloads`
//! check that SQLite touches the rows it should. Setup is never measured.

use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;
use wasmod_benches::measure::{measure, State};
use wasmod_benches::module::{call_encoded_ok, Host};
use wasmod_benches::workloads::{standard, Workload};

fn workloads(c: &mut Criterion) {
    for workload in standard() {
        measure_workload(c, &workload);
    }
}

fn measure_workload(c: &mut Criterion, workload: &Workload) {
    let mut group = c.benchmark_group(&workload.name);
    let work = &workload.module;
    if work.mutates {
        // Every iteration prepares a fresh host (a new instance, the tables preloaded), which
        // costs more than the measured call: fewer, shorter samples keep the run reasonable.
        group
            .sample_size(50)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3));
    }
    for host in Host::ALL {
        measure(
            &mut group,
            host.name(),
            State::of(work.mutates),
            || {
                let mut module = host.load();
                for call in &work.setup {
                    call_encoded_ok(&mut *module, &call.reducer, &call.args);
                }
                module
            },
            |module| call_encoded_ok(&mut **module, &work.call.reducer, &work.call.args),
        );
    }
    if let Some(sqlite) = &workload.sqlite {
        measure(
            &mut group,
            "sqlite",
            State::of(sqlite.mutates()),
            || sqlite.prepare(),
            |db| sqlite.run(db),
        );
    }
    group.finish();
}

criterion_group!(benches, workloads);
criterion_main!(benches);
