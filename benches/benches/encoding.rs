//! Encoding and decoding rows, with the allocations of each operation counted.
//!
//! `cargo bench -p wasmod-benches --bench encoding`. Groups `encode_<shape>` and
//! `decode_<shape>`, functions `rows_1`, `rows_100`, `rows_10000`: a `Vec` of that many rows
//! of `(u32,u64,String)` or of the plain `(u32,u64,u64)`, encoded to a new buffer or decoded to
//! a new vector (see `wasmod_benches::encoding`).
//!
//! This binary's global allocator counts calls and bytes. Before the timed runs, each
//! operation runs once untimed to warm up and once counted; the counts are printed as a table
//! and, in a measuring run, saved next to criterion's results for `RESULTS.md`. The counts are
//! exact and the same on every run: no other thread allocates while they are taken, and the
//! inputs are made before counting starts.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use wasmod_benches::data::{Rows, Shape};
use wasmod_benches::encoding::{
    decode, encode, function, group, save_allocations, Allocations, Op, SIZES,
};

/// The system allocator, counting.
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static REALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: every method forwards to `System` with the same arguments.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(layout.size() as u64, Relaxed);
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(layout.size() as u64, Relaxed);
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        REALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(new_size as u64, Relaxed);
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The counters now: allocations, reallocations, bytes.
fn counters() -> [u64; 3] {
    [&ALLOCS, &REALLOCS, &BYTES].map(|counter| counter.load(Relaxed))
}

/// What `op` allocates, run once after a warm-up run; its output is dropped after counting.
fn count<R>(mut op: impl FnMut() -> R) -> [u64; 3] {
    drop(black_box(op()));
    let before = counters();
    let output = black_box(op());
    let after = counters();
    drop(output);
    [0, 1, 2].map(|i| after[i] - before[i])
}

/// One operation on one input: its names and the input it works on.
struct Case {
    op: Op,
    shape: Shape,
    rows: u32,
    input: Rows,
    bytes: Vec<u8>,
}

impl Case {
    fn run(&self) -> usize {
        match self.op {
            Op::Encode => encode(&self.input).len(),
            Op::Decode => match decode(self.shape, &self.bytes) {
                Rows::Str(rows) => rows.len(),
                Rows::U64(rows) => rows.len(),
            },
        }
    }
}

/// Whether this is a measuring run (`cargo bench`), not criterion's test mode (`cargo test
/// --benches`, `cargo bench -- --test`), whose counts would come from another profile.
fn measuring() -> bool {
    let mut args = std::env::args();
    args.any(|arg| arg == "--bench") && !std::env::args().any(|arg| arg == "--test")
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for op in Op::ALL {
        for shape in Shape::ALL {
            for rows in SIZES {
                let input = shape.rows(0..rows);
                let bytes = encode(&input);
                cases.push(Case {
                    op,
                    shape,
                    rows,
                    input,
                    bytes,
                });
            }
        }
    }
    cases
}

fn encoding(c: &mut Criterion) {
    let cases = cases();
    let mut counts = Vec::new();
    println!("\nallocations per operation:\n\n| operation | rows | allocs | reallocs | bytes |\n|---|---:|---:|---:|---:|");
    for case in &cases {
        let [allocs, reallocs, bytes] = count(|| case.run());
        let group = group(case.op, case.shape);
        println!(
            "| {group} | {} | {allocs} | {reallocs} | {bytes} |",
            case.rows
        );
        counts.push(Allocations {
            group,
            function: function(case.rows),
            allocs,
            reallocs,
            bytes,
        });
    }
    if measuring() {
        match save_allocations(&counts) {
            Ok(path) => println!("\nsaved to {}\n", path.display()),
            Err(error) => println!("\nthe counts could not be saved: {error}\n"),
        }
    }

    for op in Op::ALL {
        for shape in Shape::ALL {
            let mut group = c.benchmark_group(group(op, shape));
            for case in cases
                .iter()
                .filter(|case| (case.op, case.shape) == (op, shape))
            {
                group.throughput(Throughput::Elements(u64::from(case.rows)));
                group.bench_function(function(case.rows), |bench| bench.iter(|| case.run()));
            }
            group.finish();
        }
    }
}

criterion_group!(benches, encoding);
criterion_main!(benches);
