//! The commit log's cost: committed reducer-style transactions per second with no log, and
//! with the log in each mode, side by side; the time to take a snapshot of a million rows
//! (written, synced, read back and checked); and the time to recover them.
//!
//! `cargo bench -p wasmod-datastore --bench durability`. A "reducer-style transaction"
//! inserts one row `(id u64 auto_inc pk, name String, score u64)` and commits; with a log it
//! is acknowledged only once its ticket's wait returns. The log lives in a temporary
//! directory under `$TMPDIR`, so the numbers are those of that file system's syncs.

mod support;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};
use support::module;
use wasmod_abi::encoding::to_vec;
use wasmod_datastore::durability::{self, Durability, Mode, Options};
use wasmod_datastore::Datastore;

fn row(score: u64) -> Vec<u8> {
    to_vec(&(0u64, format!("player {score}"), score))
}

/// Inserts `rows` rows in one transaction and commits it, acknowledged as `log` says.
fn commit(datastore: &Datastore, log: Option<&Durability>, rows: u64) {
    let mut tx = datastore.begin_mut();
    for score in 0..rows {
        tx.insert(0, &mut row(score)).expect("an insert");
    }
    match log {
        None => {
            tx.commit();
        }
        Some(log) => {
            let ticket = tx
                .try_commit_with(|changes| log.append(&changes))
                .expect("the log takes the record");
            ticket.wait().expect("durable");
        }
    }
}

fn open(dir: &Path, mode: Mode) -> durability::Recovered {
    let options = Options::default().with_mode(mode);
    durability::open(dir, &module(), options).expect("the log opens")
}

fn commits(c: &mut Criterion) {
    let mut group = c.benchmark_group("durability/commit");
    group.throughput(Throughput::Elements(1));
    group.measurement_time(Duration::from_secs(4));
    let memory = Datastore::new(&module()).expect("the module");
    group.bench_function("in memory (no log)", |b| {
        b.iter(|| commit(&memory, None, 1))
    });
    for mode in [Mode::Off, Mode::Group, Mode::Fsync] {
        let dir = tempfile::tempdir().expect("a directory");
        let log = open(dir.path(), mode);
        group.bench_function(BenchmarkId::new("one committer", mode), |b| {
            b.iter(|| commit(&log.datastore, Some(&log.durability), 1))
        });
    }
    // Four committers at once: what group commit is for.
    for mode in [Mode::Group, Mode::Fsync] {
        let dir = tempfile::tempdir().expect("a directory");
        let log = Arc::new(open(dir.path(), mode));
        group.bench_function(BenchmarkId::new("four committers", mode), |b| {
            b.iter_custom(|iters| concurrent(&log, 4, iters))
        });
    }
    group.finish();
}

/// The time `threads` committers take for `iters` commits in all.
fn concurrent(log: &Arc<durability::Recovered>, threads: u64, iters: u64) -> Duration {
    let start = Arc::new(Barrier::new(threads as usize + 1));
    let handles: Vec<_> = (0..threads)
        .map(|thread| {
            let (log, start) = (log.clone(), start.clone());
            let share = iters / threads + u64::from(thread < iters % threads);
            std::thread::spawn(move || {
                start.wait();
                for _ in 0..share {
                    commit(&log.datastore, Some(&log.durability), 1);
                }
            })
        })
        .collect();
    start.wait();
    let began = Instant::now();
    for handle in handles {
        handle.join().expect("a committer");
    }
    began.elapsed()
}

fn recovery(c: &mut Criterion) {
    let rows_per_tx = 1_000;
    let transactions = 1_000;
    let logged = tempfile::tempdir().expect("a directory");
    let snapshotted = tempfile::tempdir().expect("a directory");
    for dir in [&logged, &snapshotted] {
        let log = open(dir.path(), Mode::Off);
        for _ in 0..transactions {
            commit(&log.datastore, Some(&log.durability), rows_per_tx);
        }
        if dir.path() == snapshotted.path() {
            log.durability.snapshot(&log.datastore).expect("a snapshot");
        }
    }
    let mut group = c.benchmark_group("durability/recovery");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    for (name, dir) in [
        ("1M rows, log of 1000 transactions", &logged),
        ("1M rows, snapshot", &snapshotted),
    ] {
        group.bench_function(name, |b| {
            // Each recovery must let the directory go before the next, outside the timing.
            b.iter_custom(|iters| {
                let mut took = Duration::ZERO;
                for _ in 0..iters {
                    let began = Instant::now();
                    let log = open(dir.path(), Mode::Off);
                    took += began.elapsed();
                    assert_eq!(log.report.transactions, transactions);
                }
                took
            })
        });
    }
    group.finish();
}

fn snapshot(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a directory");
    let log = open(dir.path(), Mode::Off);
    for _ in 0..1_000 {
        commit(&log.datastore, Some(&log.durability), 1_000);
    }
    let mut group = c.benchmark_group("durability/snapshot");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    // Each snapshot replaces the previous one, at the same offset.
    group.bench_function("take, 1M rows", |b| {
        b.iter(|| log.durability.snapshot(&log.datastore).expect("a snapshot"))
    });
    group.finish();
}

criterion_group!(benches, commits, snapshot, recovery);
criterion_main!(benches);
