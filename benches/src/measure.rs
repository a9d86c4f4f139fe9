//! The one measuring loop every backend goes through.

use criterion::measurement::WallTime;
use criterion::{BatchSize, BenchmarkGroup};
use std::hint::black_box;

/// Whether a measured operation changes the state it runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// It does not: one state is prepared and every iteration runs on it.
    Shared,
    /// It does: every iteration runs on a freshly prepared state, so that each one starts
    /// from the same state. Preparing and dropping the state are not measured.
    FreshEachIteration,
}

impl State {
    /// [`State::FreshEachIteration`] if `mutates`, else [`State::Shared`].
    pub fn of(mutates: bool) -> Self {
        if mutates {
            State::FreshEachIteration
        } else {
            State::Shared
        }
    }
}

/// Measures `run` as benchmark `name` of `group`, on states made by `prepare` (never measured).
pub fn measure<S, R>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    state: State,
    mut prepare: impl FnMut() -> S,
    mut run: impl FnMut(&mut S) -> R,
) {
    match state {
        State::Shared => {
            let mut shared = prepare();
            group.bench_function(name, |bench| bench.iter(|| black_box(run(&mut shared))));
        }
        State::FreshEachIteration => {
            group.bench_function(name, |bench| {
                bench.iter_batched_ref(
                    &mut prepare,
                    |state| black_box(run(state)),
                    BatchSize::PerIteration,
                )
            });
        }
    }
}
