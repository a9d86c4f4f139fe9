//! The host's dynamic decoder ([`Value::skip`], which checks a row, and [`Value::decode`],
//! which builds its tree) over a table page's worth of compound rows: 1,000 rows of
//! `(u32, String, Option<u64>, Vec<u8>)` (about 40 bytes each), as one `Vec` of them. This is
//! the work the bound on elements per byte ([`wasmod_abi::elements`]) adds its count to.
//!
//! `cargo bench -p wasmod-abi --bench value`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use wasmod_abi::encoding::to_vec;
use wasmod_abi::{AlgebraicType, Reader, SchemaType, Typespace, Value};

/// A compound row.
#[derive(SchemaType)]
#[wasmod(crate = wasmod_abi)]
struct Row {
    id: u32,
    name: String,
    score: Option<u64>,
    tags: Vec<u8>,
}

fn rows() -> (AlgebraicType, Typespace, Vec<u8>) {
    let rows: Vec<Row> = (0..1_000u32)
        .map(|id| Row {
            id,
            name: format!("player number {id}"),
            score: (id % 3 != 0).then_some(u64::from(id) * 7),
            tags: vec![1, 2, 3, 4, 5, 6, 7, 8],
        })
        .collect();
    let mut typespace = Typespace::default();
    let ty = <Vec<Row>>::schema(&mut typespace);
    (ty, typespace, to_vec(&rows))
}

fn value(c: &mut Criterion) {
    let (ty, typespace, bytes) = rows();
    let mut group = c.benchmark_group("value");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("skip_1000_rows", |b| {
        b.iter(|| Value::skip(&ty, &typespace, &mut Reader::new(black_box(&bytes))))
    });
    group.bench_function("decode_1000_rows", |b| {
        b.iter(|| Value::decode(&ty, &typespace, &mut Reader::new(black_box(&bytes))))
    });
    group.finish();
}

criterion_group!(benches, value);
criterion_main!(benches);
