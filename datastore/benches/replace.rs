//! What `wasmod publish` costs the module's thread: the time [`Database::replace`] takes to
//! carry a table of rows over into a build that adds a column (in memory, and with the commit
//! log moved to the new tables), beside what the same upgrade costs by a restart (opening the
//! directory with the new build) and beside a build whose tables store rows alike (nothing
//! carried over).
//!
//! `cargo bench -p wasmod-datastore --bench replace`. Calls wait for the module's thread while
//! the replacement runs, so this is the pause clients see. The table is `row (id u64 auto_inc
//! pk, name String, score u64)`; the new build adds `level u16` with a default.

mod support;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use std::time::Duration;
use wasmod_abi::encoding::to_vec;
use wasmod_abi::{AlgebraicType, ColumnDef, Field, ModuleDef};
use wasmod_datastore::durability::{Mode, Options};
use wasmod_datastore::{CommitMeta, Database};

/// Build 2: build 1 ([`support::module`]) with `level u16` (default 7) at the end of `row`.
fn build_2() -> ModuleDef {
    let mut def = support::module();
    let table = &mut def.tables[0];
    table.columns.push(ColumnDef {
        name: "level".into(),
        ty: AlgebraicType::U16,
        default: Some(to_vec(&7u16)),
    });
    let AlgebraicType::Ref(row) = table.row_type else {
        unreachable!("of_columns names the row type")
    };
    def.typespace.types[row as usize].ty = AlgebraicType::Product(
        table
            .columns
            .iter()
            .map(|column| Field::named(&column.name, column.ty.clone()))
            .collect(),
    );
    def
}

/// Commits `rows` rows to `database`, a thousand per transaction.
fn fill(database: &Database, rows: u64) {
    for start in (0..rows).step_by(1000) {
        let mut tx = database.begin_mut();
        for score in start..(start + 1000).min(rows) {
            tx.insert(0, &mut to_vec(&(0u64, format!("player {score}"), score)))
                .expect("an insert");
        }
        let committed = database.commit(tx, CommitMeta::host()).expect("committed");
        committed.durable.wait().expect("durable");
    }
}

fn options() -> Options {
    Options::default().with_mode(Mode::Fsync)
}

/// A directory whose log holds `rows` rows written by build 1, and build 1's database open
/// over it.
fn opened(rows: u64) -> (tempfile::TempDir, Database) {
    let dir = directory(rows);
    let database = Database::open(dir.path(), &support::module(), options()).expect("opened");
    (dir, database)
}

/// A directory whose log holds `rows` rows written by build 1.
fn directory(rows: u64) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a directory");
    let database = Database::open(dir.path(), &support::module(), options()).expect("opened");
    fill(&database, rows);
    dir
}

fn replace(c: &mut Criterion) {
    let (old, new) = (support::module(), build_2());
    let mut alike = support::module();
    alike.tables[0].public = !alike.tables[0].public;
    let mut group = c.benchmark_group("replace");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for rows in [10_000u64, 100_000] {
        group.bench_with_input(BenchmarkId::new("in_memory", rows), &rows, |b, &rows| {
            b.iter_batched(
                || {
                    let database = Database::in_memory(&old).expect("a database");
                    fill(&database, rows);
                    database
                },
                |database| database.replace(&old, &new).expect("replaced"),
                BatchSize::PerIteration,
            )
        });
        group.bench_with_input(BenchmarkId::new("with_log", rows), &rows, |b, &rows| {
            b.iter_batched(
                || opened(rows),
                |(dir, database)| {
                    database.replace(&old, &new).expect("replaced");
                    (dir, database)
                },
                BatchSize::PerIteration,
            )
        });
        group.bench_with_input(BenchmarkId::new("restart", rows), &rows, |b, &rows| {
            b.iter_batched(
                || directory(rows),
                |dir| {
                    let database = Database::open(dir.path(), &new, options()).expect("upgraded");
                    (dir, database)
                },
                BatchSize::PerIteration,
            )
        });
        group.bench_with_input(BenchmarkId::new("alike", rows), &rows, |b, &rows| {
            b.iter_batched(
                || opened(rows),
                |(dir, database)| {
                    database.replace(&old, &alike).expect("replaced");
                    (dir, database)
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, replace);
criterion_main!(benches);
