//! String rows decoded by value (`Decode`: a `String` allocated and copied per row) against
//! borrowed (`DecodeBorrowed`: a `&str` checked in place), for the `(u32, u64, String)` row of
//! the `iterate` and `filter` workloads, 256 and 10,000 rows with texts of about 20 bytes. This
//! is the module's per-row decode, measured natively (`benches/RESULTS.md`, "A borrowing
//! decoder").
//!
//! `cargo bench -p wasmod-abi --bench borrowed`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use wasmod_abi::encoding::{from_slice, from_slice_borrowed, to_vec};
use wasmod_abi::{DecodeBorrowed, SchemaType};

/// The workloads' string row, owned.
#[derive(SchemaType)]
#[wasmod(crate = wasmod_abi)]
struct Row {
    id: u32,
    age: u64,
    name: String,
}

/// The same row, borrowing its name.
#[derive(DecodeBorrowed)]
#[wasmod(crate = wasmod_abi)]
struct RowRef<'a> {
    id: u32,
    age: u64,
    name: &'a str,
}

/// `count` encoded rows.
fn rows(count: u32) -> Vec<Vec<u8>> {
    (0..count)
        .map(|id| {
            to_vec(&Row {
                id,
                age: u64::from(id) * 3,
                name: format!("name number {id:08}"),
            })
        })
        .collect()
}

fn decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode_string_rows");
    for count in [256, 10_000] {
        let rows = rows(count);
        group.throughput(Throughput::Elements(u64::from(count)));
        group.bench_with_input(BenchmarkId::new("by_value", count), &rows, |b, rows| {
            b.iter(|| {
                let mut total = 0;
                for row in rows {
                    let row: Row = from_slice(row).expect("a row");
                    total += row.name.len() as u64 + row.age + u64::from(row.id);
                }
                black_box(total)
            })
        });
        group.bench_with_input(BenchmarkId::new("borrowed", count), &rows, |b, rows| {
            b.iter(|| {
                let mut total = 0;
                for row in rows {
                    let row: RowRef<'_> = from_slice_borrowed(row).expect("a row");
                    total += row.name.len() as u64 + row.age + u64::from(row.id);
                }
                black_box(total)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
