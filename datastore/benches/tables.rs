//! The datastore's share of the standard table workloads, without a module or a host: insert
//! 256 rows into a table of 2048, and update 256 of 2048 through the primary key (after a
//! full scan, as the benchmark module's update reducer does), each in one committed
//! transaction.
//!
//! `cargo bench -p wasmod-datastore --bench tables`. The tables are those of the workloads
//! (`benches/`): `(id u32, age u64, name String)` and `(id u32, x u64, y u64)`, with a unique
//! primary key on `id` or without an index. Every iteration starts from a freshly preloaded
//! datastore, prepared outside the measurement.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use wasmod_abi::encoding::to_vec;
use wasmod_abi::{AlgebraicType, IndexDef, ModuleDef, TableDef};
use wasmod_datastore::Datastore;

/// Rows in the table before the measured transaction.
const PRELOAD: u32 = 2048;
/// Rows inserted or updated by the measured transaction.
const BATCH: u32 = 256;

/// The third column of a workload table.
#[derive(Clone, Copy)]
enum Shape {
    /// `name String`.
    Str,
    /// `y u64`.
    U64,
}

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Self::Str => "u32_u64_str",
            Self::U64 => "u32_u64_u64",
        }
    }

    /// The encoded row with id `id`, its other columns as in the workloads' data.
    fn row(self, id: u32, bump: u64) -> Vec<u8> {
        let bucket = u64::from(id) % 8;
        match self {
            Self::Str => to_vec(&(id, bucket + bump, format!("name-{bucket}"))),
            Self::U64 => to_vec(&(id, bucket + bump, bucket)),
        }
    }
}

/// One table of shape `shape`, with a unique primary key on `id` if `unique`.
fn module(shape: Shape, unique: bool) -> ModuleDef {
    let third = match shape {
        Shape::Str => AlgebraicType::String,
        Shape::U64 => AlgebraicType::U64,
    };
    let columns = [
        ("id", AlgebraicType::U32),
        ("x", AlgebraicType::U64),
        ("y", third),
    ];
    let mut def = ModuleDef::default();
    let table = TableDef::of_columns(&mut def.typespace, "Row", "row", &columns);
    def.tables.push(TableDef {
        primary_key: unique.then_some(0),
        indexes: if unique {
            vec![IndexDef {
                name: "row_id".into(),
                columns: vec![0],
                unique: true,
            }]
        } else {
            Vec::new()
        },
        ..table
    });
    def
}

/// A datastore with `PRELOAD` rows committed.
fn preloaded(shape: Shape, unique: bool) -> Datastore {
    let datastore = Datastore::new(&module(shape, unique)).expect("the module is valid");
    let mut tx = datastore.begin_mut();
    for id in 0..PRELOAD {
        tx.insert(0, &mut shape.row(id, 0))
            .expect("the row goes in");
    }
    tx.commit();
    datastore
}

fn tables(c: &mut Criterion) {
    for shape in [Shape::Str, Shape::U64] {
        for unique in [true, false] {
            let batch: Vec<Vec<u8>> = (PRELOAD..PRELOAD + BATCH)
                .map(|id| shape.row(id, 0))
                .collect();
            let variant = if unique { "unique_0" } else { "no_index" };
            c.bench_function(&format!("insert_{variant}_{}", shape.name()), |b| {
                b.iter_batched(
                    || (preloaded(shape, unique), batch.clone()),
                    |(datastore, mut batch)| {
                        let mut tx = datastore.begin_mut();
                        for row in &mut batch {
                            tx.insert(0, row).expect("the row goes in");
                        }
                        let changes = tx.commit();
                        (datastore, changes)
                    },
                    BatchSize::LargeInput,
                );
            });
        }
        let updates: Vec<Vec<u8>> = (0..BATCH).map(|id| shape.row(id, 1)).collect();
        c.bench_function(&format!("update_unique_0_{}", shape.name()), |b| {
            b.iter_batched(
                || preloaded(shape, true),
                |datastore| {
                    let mut tx = datastore.begin_mut();
                    let rows = tx.scan(0).expect("the table exists");
                    for (old, new) in rows.iter().zip(&updates) {
                        std::hint::black_box(old);
                        tx.update_by_unique(0, 0, new).expect("the row is updated");
                    }
                    drop(rows);
                    let changes = tx.commit();
                    (datastore, changes)
                },
                BatchSize::LargeInput,
            );
        });
    }
}

criterion_group!(benches, tables);
criterion_main!(benches);
