//! Decoding a binary server frame as the client does (`BinaryServerMessage::from_frame`): a
//! `SubscribeApplied` of 1, 100 and 10,000 chat-like rows (about 60 bytes each), uncompressed
//! and brotli-compressed, with one decompressor kept across the iterations. The rows are the
//! cost that scales: with row lists borrowing the frame they are validated, not copied.
//!
//! `cargo bench -p wasmod-protocol --bench decode`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use wasmod_protocol::ws::compression::{Compression, Decompressor};
use wasmod_protocol::ws::{BinaryServerMessage, RowList, ServerMessage, TableRows};

/// The row counts measured.
const ROWS: [usize; 3] = [1, 100, 10_000];

/// An encoded chat row: an id, a sender, a short text.
fn row(id: u64) -> Vec<u8> {
    let mut row = id.to_le_bytes().to_vec();
    row.extend_from_slice(&[(id % 7) as u8; 32]);
    let text = format!("message number {id} from the dragon");
    row.extend_from_slice(&(text.len() as u32).to_le_bytes());
    row.extend_from_slice(text.as_bytes());
    row
}

/// A `SubscribeApplied` of `count` rows of one table.
fn applied(count: usize) -> BinaryServerMessage {
    let rows: Vec<Vec<u8>> = (0..count as u64).map(row).collect();
    ServerMessage::SubscribeApplied {
        query_set_id: 1,
        offset: 42,
        tables: vec![TableRows {
            table: "message".into(),
            rows: RowList::from_rows(rows.iter().map(Vec::as_slice)).expect("small"),
        }],
        deletes: vec![],
        resumed: false,
    }
}

fn decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode_subscribe_applied");
    for count in ROWS {
        let message = applied(count);
        group.throughput(Throughput::Elements(count as u64));
        for compression in [Compression::None, Compression::Brotli] {
            let frame = bytes::Bytes::from(message.to_frame(compression, 0));
            let mut decompressor = Decompressor::default();
            group.bench_with_input(
                BenchmarkId::new(compression.name(), count),
                &frame,
                |b, frame| {
                    b.iter(|| black_box(BinaryServerMessage::from_frame(frame, &mut decompressor)))
                },
            );
        }
    }
    group.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
