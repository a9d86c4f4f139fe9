//! The JSON writer ([`wasmod_abi::json::write_value`], which the host's answers and modules'
//! `Response::json` both use) over a table page's worth of compound rows, beside `serde_json`
//! writing the same rows from a `#[derive(Serialize)]` struct: the cost of walking a type
//! described at run time against code compiled for one type. The two texts are checked equal
//! before anything is timed.
//!
//! Also a page of `f32` values alone (`write_value_1000_f32`): their shortest decimal, laid out
//! as an `f64`'s.
//!
//! `cargo bench -p wasmod-abi --bench json`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use wasmod_abi::encoding::to_vec;
use wasmod_abi::json::write_value;
use wasmod_abi::{SchemaType, Typespace};

/// A compound row, as a module declares it.
#[derive(SchemaType)]
#[wasmod(crate = wasmod_abi)]
struct Row {
    id: u32,
    name: String,
    score: Option<u64>,
    ratio: f64,
    tags: Vec<u8>,
}

/// The same row for `serde_json`, its fields in the sorted order the mapping writes keys in.
#[derive(serde::Serialize)]
struct SerdeRow {
    id: u32,
    name: String,
    ratio: f64,
    score: Option<u64>,
    tags: Vec<u8>,
}

fn json(c: &mut Criterion) {
    let rows: Vec<(Row, SerdeRow)> = (0..1_000u32)
        .map(|id| {
            let name = format!("player \"number\" {id}");
            let score = (id % 3 != 0).then_some(u64::from(id) * 7);
            let ratio = f64::from(id) / 7.0;
            let tags = vec![1, 2, 3, 4, 5, 6, 7, 8];
            let serde = SerdeRow {
                id,
                name: name.clone(),
                ratio,
                score,
                tags: tags.clone(),
            };
            (
                Row {
                    id,
                    name,
                    score,
                    ratio,
                    tags,
                },
                serde,
            )
        })
        .collect();
    let (ours, theirs): (Vec<Row>, Vec<SerdeRow>) = rows.into_iter().unzip();
    let mut typespace = Typespace::default();
    let ty = <Vec<Row>>::schema(&mut typespace);
    let bytes = to_vec(&ours);
    let mut written = Vec::new();
    write_value(&mut written, &ty, &typespace, &bytes).expect("the rows are their type");
    assert_eq!(
        written,
        serde_json::to_vec(&theirs).unwrap(),
        "the texts differ"
    );

    let mut group = c.benchmark_group("json");
    group.throughput(Throughput::Bytes(written.len() as u64));
    let mut out = Vec::with_capacity(written.len());
    group.bench_function("write_value_1000_rows", |b| {
        b.iter(|| {
            out.clear();
            write_value(&mut out, &ty, &typespace, black_box(&bytes))
        })
    });
    group.bench_function("serde_json_1000_rows", |b| {
        b.iter(|| {
            out.clear();
            serde_json::to_writer(&mut out, black_box(&theirs))
        })
    });
    group.finish();
}

/// A page of `f32` values (a float column's), which the writer writes in their shortest
/// decimal form read as an `f64` (`0.1`, not `0.10000000149011612`).
fn json_f32(c: &mut Criterion) {
    let values: Vec<f32> = (0..1_000u32)
        .map(|i| (i as f32 - 500.0) / 7.0 * 10f32.powi(i as i32 % 9 - 4))
        .collect();
    let mut typespace = Typespace::default();
    let ty = <Vec<f32>>::schema(&mut typespace);
    let bytes = to_vec(&values);
    let mut out = Vec::new();
    write_value(&mut out, &ty, &typespace, &bytes).expect("the values are their type");
    let mut group = c.benchmark_group("json");
    group.throughput(Throughput::Bytes(out.len() as u64));
    group.bench_function("write_value_1000_f32", |b| {
        b.iter(|| {
            out.clear();
            write_value(&mut out, &ty, &typespace, black_box(&bytes))
        })
    });
    group.finish();
}

criterion_group!(benches, json, json_f32);
criterion_main!(benches);
