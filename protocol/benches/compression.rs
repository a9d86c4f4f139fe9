//! Compression of binary server frames, to choose the threshold under which a frame is sent
//! as it is, and the algorithms' levels (`benches/RESULTS.md`): for `TransactionUpdate`s of
//! chat-like rows from 128 bytes to 64 KiB, the time to encode the frame plain and to encode
//! and compress it with brotli (quality 1, and 4 for comparison) and gzip (levels 1 and 6, and
//! level 1 with one deflate state reset between messages instead of a new one per message,
//! to see whether reusing it matters); the compressed sizes are printed before the
//! measurements.
//!
//! `cargo bench -p wasmod-protocol --bench compression`.

mod support;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use wasmod_protocol::ws::compression::{self, Compression};
use wasmod_protocol::ws::{BinaryServerMessage, RowList};

/// The message sizes measured (bytes of the plain frame, about).
const SIZES: [usize; 8] = [128, 256, 512, 1024, 2048, 4096, 16384, 65536];

/// Words the rows' texts are made of.
const WORDS: [&str; 12] = [
    "hello", "world", "the", "dragon", "is", "near", "gold", "castle", "run", "north", "42", "ok",
];

/// A row of a chat table: id, sender, text (about 60 bytes).
fn row(id: u64) -> Vec<u8> {
    let mut row = id.to_le_bytes().to_vec();
    row.extend_from_slice(&[(id % 7) as u8; 32]);
    let text: Vec<&str> = (0..4)
        .map(|n| WORDS[((id * 7 + n * 3) % WORDS.len() as u64) as usize])
        .collect();
    let text = text.join(" ");
    row.extend_from_slice(&(text.len() as u32).to_le_bytes());
    row.extend_from_slice(text.as_bytes());
    row
}

/// A `TransactionUpdate` with as many rows as make its frame about `size` bytes.
fn update(size: usize) -> BinaryServerMessage {
    let mut rows = Vec::new();
    let mut message = message(RowList::default());
    while message.to_bytes().len() < size {
        rows.push(row(rows.len() as u64));
        message = message_of(&rows);
    }
    message
}

/// A `TransactionUpdate` that inserts `rows`.
fn message_of(rows: &[Vec<u8>]) -> BinaryServerMessage {
    let list = RowList::from_rows(rows.iter().map(Vec::as_slice)).expect("small");
    message(list)
}

/// A `TransactionUpdate` of one query set that inserts `inserts` into `message`.
fn message(inserts: RowList) -> BinaryServerMessage {
    support::message_update(inserts)
}

/// Raw deflate of `input` by `deflate`, reset first (a no-op on a new state).
fn deflate_with(deflate: &mut flate2::Compress, input: &[u8]) -> Vec<u8> {
    deflate.reset();
    let mut out = Vec::with_capacity(input.len() + 64);
    let _ = deflate.compress_vec(input, &mut out, flate2::FlushCompress::Finish);
    out
}

/// `input` gzipped at `level`.
fn gzip_at(input: &[u8], level: u32) -> Vec<u8> {
    let mut out = Vec::new();
    compression::gzip(input, level, &mut out);
    out
}

/// Prints each message's frame size plain and compressed each way.
fn print_sizes(messages: &[(usize, BinaryServerMessage)]) {
    println!("plain bytes | brotli q1 | brotli q4 | gzip l1 | gzip l6");
    for (_, message) in messages {
        let plain = message.to_bytes();
        let mut brotli4 = Vec::new();
        compression::brotli(&plain[1..], 4, &mut brotli4);
        println!(
            "{} | {} | {} | {} | {}",
            plain.len(),
            message.to_frame(Compression::Brotli, 0).len(),
            brotli4.len() + 1,
            message.to_frame(Compression::Gzip, 0).len(),
            gzip_at(&plain[1..], 6).len() + 1,
        );
    }
}

/// The measurements, per size.
fn compression(c: &mut Criterion) {
    let messages: Vec<(usize, BinaryServerMessage)> =
        SIZES.iter().map(|&size| (size, update(size))).collect();
    print_sizes(&messages);
    let mut group = c.benchmark_group("frame");
    for (size, message) in &messages {
        group.throughput(Throughput::Bytes(*size as u64));
        group.bench_with_input(BenchmarkId::new("plain", size), message, |b, message| {
            b.iter(|| black_box(message.to_bytes()))
        });
        group.bench_with_input(
            BenchmarkId::new("brotli_q1", size),
            message,
            |b, message| b.iter(|| black_box(message.to_frame(Compression::Brotli, 0))),
        );
        group.bench_with_input(
            BenchmarkId::new("brotli_q4", size),
            message,
            |b, message| {
                b.iter(|| {
                    let plain = message.to_bytes();
                    let mut out = vec![Compression::Brotli.tag()];
                    compression::brotli(&plain[1..], 4, &mut out);
                    black_box(out)
                })
            },
        );
        group.bench_with_input(BenchmarkId::new("gzip_l1", size), message, |b, message| {
            b.iter(|| black_box(message.to_frame(Compression::Gzip, 0)))
        });
        group.bench_with_input(BenchmarkId::new("gzip_l6", size), message, |b, message| {
            b.iter(|| black_box(gzip_at(&message.to_bytes()[1..], 6)))
        });
        let mut deflate = flate2::Compress::new(flate2::Compression::new(1), false);
        let name = "deflate_l1_reused_state";
        group.bench_with_input(BenchmarkId::new(name, size), message, |b, message| {
            b.iter(|| black_box(deflate_with(&mut deflate, &message.to_bytes()[1..])))
        });
        let name = "deflate_l1_new_state";
        group.bench_with_input(BenchmarkId::new(name, size), message, |b, message| {
            b.iter(|| {
                let mut deflate = flate2::Compress::new(flate2::Compression::new(1), false);
                black_box(deflate_with(&mut deflate, &message.to_bytes()[1..]))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, compression);
criterion_main!(benches);
