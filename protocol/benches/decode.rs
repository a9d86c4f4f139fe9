//! Decoding binary server frames as the client does (`BinaryServerMessage::from_frame`, one
//! decompressor kept across the iterations), in the scenarios of SpacetimeDB's client SDK
//! benchmarks (issue 12; `support/scenarios.rs`, which the browser's bench shares): a
//! `TransactionUpdate` inserting 1, 100 and 10,000 chat-like rows (about 60 bytes each),
//! uncompressed, brotli- and gzip-compressed; a `SubscribeApplied` of as many rows; the first
//! message of a connection (`IdentityToken`); a brotli `TransactionUpdate`'s inflate alone;
//! and a row list alone. Row lists borrow the frame, so the rows are checked, not copied.
//!
//! SpacetimeDB's figures do not say their rows' shape, but their allocations do: 10,000 rows
//! inflate to about 40 KB there (`benches/RESULTS.md`), 4 bytes a row, where ours are about 80.
//! So the brotli inflate is also measured on rows of one `u32` (`brotli_inflate_u32`), the
//! payload theirs appears to be.
//!
//! Before the measurements, the bytes and allocations of one decode of each are printed
//! (the second decode, as in the measured loop), counted by this binary's global allocator.
//!
//! `cargo bench -p wasmod-protocol --bench decode`.

#[path = "support/allocations.rs"]
mod allocations;
#[path = "support/scenarios.rs"]
mod scenarios;
mod support;

use allocations::{print_allocations, Counting};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use scenarios::{applied, identity_token, rows, update, ROWS};
use std::hint::black_box;
use support::message_update;
use wasmod_abi::encoding::{from_shared, to_vec};
use wasmod_protocol::ws::compression::{Compression, Decompressor};
use wasmod_protocol::ws::{BinaryServerMessage, RowList};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The frames measured: a group name, a row count, a compression, the frame.
fn frames() -> Vec<(&'static str, usize, Compression, bytes::Bytes)> {
    let mut frames = vec![(
        "identity_token",
        0,
        Compression::None,
        identity_token().to_bytes().into(),
    )];
    for count in ROWS {
        for compression in [Compression::None, Compression::Brotli, Compression::Gzip] {
            frames.push((
                "transaction_update",
                count,
                compression,
                update(count).to_frame(compression, 0).into(),
            ));
            frames.push((
                "subscribe_applied",
                count,
                compression,
                applied(count).to_frame(compression, 0).into(),
            ));
        }
    }
    frames
}

fn decode(c: &mut Criterion) {
    let frames = frames();
    let lists: Vec<(usize, bytes::Bytes)> = ROWS
        .iter()
        .map(|&count| (count, to_vec(&rows(count)).into()))
        .collect();
    let mut decompressor = Decompressor::default();
    for (group, count, compression, frame) in &frames {
        let name = format!(
            "{group}/{}/{count} ({} bytes)",
            compression.name(),
            frame.len()
        );
        // Once first, so that the count is of a decode with the decompressor's buffers grown,
        // as in the measured loop.
        black_box(BinaryServerMessage::from_frame(frame, &mut decompressor)).expect("decodes");
        print_allocations(&name, || {
            black_box(BinaryServerMessage::from_frame(frame, &mut decompressor)).expect("decodes");
        });
    }
    for (count, list) in &lists {
        print_allocations(&format!("row_list/{count}"), || {
            black_box(from_shared::<RowList, _>(list)).expect("decodes");
        });
    }
    for (group, count, compression, frame) in &frames {
        let mut group = c.benchmark_group(*group);
        group.throughput(Throughput::Elements((*count).max(1) as u64));
        group.bench_with_input(
            BenchmarkId::new(compression.name(), count),
            frame,
            |b, frame| {
                b.iter(|| black_box(BinaryServerMessage::from_frame(frame, &mut decompressor)))
            },
        );
        group.finish();
    }
    let mut group = c.benchmark_group("brotli_inflate");
    for (_, count, _, frame) in frames.iter().filter(|(group, _, compression, _)| {
        *group == "transaction_update" && *compression == Compression::Brotli
    }) {
        let compressed = &frame[1..];
        print_allocations(&format!("brotli_inflate/{count}"), || {
            black_box(decompressor.decompress(Compression::Brotli, compressed)).expect("inflates")
        });
        group.throughput(Throughput::Elements(*count as u64));
        group.bench_with_input(
            BenchmarkId::from_parameter(count),
            compressed,
            |b, input| b.iter(|| black_box(decompressor.decompress(Compression::Brotli, input))),
        );
    }
    group.finish();
    let mut group = c.benchmark_group("brotli_inflate_u32");
    for count in ROWS {
        let rows: Vec<[u8; 4]> = (0..count as u32).map(u32::to_le_bytes).collect();
        let list = RowList::from_rows(rows.iter().map(|row| &row[..])).expect("small");
        let frame = message_update(list).to_frame(Compression::Brotli, 0);
        let compressed = &frame[1..];
        let inflated = decompressor
            .decompress(Compression::Brotli, compressed)
            .expect("inflates");
        print_allocations(
            &format!(
                "brotli_inflate_u32/{count} ({} to {} bytes)",
                compressed.len(),
                inflated.len()
            ),
            || {
                black_box(decompressor.decompress(Compression::Brotli, compressed))
                    .expect("inflates")
            },
        );
        group.throughput(Throughput::Elements(count as u64));
        group.bench_with_input(
            BenchmarkId::from_parameter(count),
            compressed,
            |b, input| b.iter(|| black_box(decompressor.decompress(Compression::Brotli, input))),
        );
    }
    group.finish();
    let mut group = c.benchmark_group("row_list");
    for (count, list) in &lists {
        group.throughput(Throughput::Elements(*count as u64));
        group.bench_with_input(BenchmarkId::from_parameter(count), list, |b, list| {
            b.iter(|| black_box(from_shared::<RowList, _>(list)))
        });
    }
    group.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
