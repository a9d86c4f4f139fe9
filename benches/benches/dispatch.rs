//! Dispatch: the generated `match` against a function-pointer table and against one export per
//! entry point, 64 reducers called round robin.
//!
//! `cargo bench -p wasmod-benches --bench dispatch`. One group, `dispatch_64_reducers_round_robin`,
//! one function per way in (`match`, `fn_pointer_table`, `export_per_reducer`, and
//! `empty_export_floor` for scale); an iteration is 64 calls, one per reducer, so criterion's
//! throughput is calls per second and the time per call is the iteration's over 64. The module and
//! the fairness argument are described in `wasmod_benches::dispatch`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use wasmod_benches::dispatch::{Dispatch, Dispatch64, GROUP, REDUCERS};

fn dispatch(c: &mut Criterion) {
    let mut module = Dispatch64::new();
    let mut group = c.benchmark_group(GROUP);
    group.throughput(Throughput::Elements(u64::from(REDUCERS)));
    for dispatch in Dispatch::ALL {
        group.bench_function(dispatch.name(), |bench| {
            bench.iter(|| module.round(dispatch))
        });
    }
    group.finish();
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
