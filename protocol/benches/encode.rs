//! Encoding a reducer call as the client does (issue 12's "encode a reducer call payload"):
//! typed arguments, here one parameter holding 1, 100 or 10,000 chat-like rows
//! `(id: u64, sender: Identity, text: String)`, written into one binary frame
//! (`BinaryClientMessage::call_frame_of`, as `Client::call_reducer` does: group
//! `reducer_call`) and, beside it, as the client did before (group `reducer_call_copied`):
//! encoded into a buffer of their own (`to_vec`), then wrapped in a `CallReducer` message
//! and written as one frame (`BinaryClientMessage::to_bytes`), which copies them.
//!
//! Before the measurements, the bytes and allocations of one encode are printed, counted by
//! this binary's global allocator.
//!
//! `cargo bench -p wasmod-protocol --bench encode`.

#[path = "support/allocations.rs"]
mod allocations;

use allocations::{print_allocations, Counting};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use wasmod_abi::encoding::to_vec;
use wasmod_abi::Identity;
use wasmod_protocol::ws::{BinaryClientMessage, CallKind, ClientMessage};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The row counts measured.
const ROWS: [usize; 3] = [1, 100, 10_000];

/// One argument row.
type Row = (u64, Identity, String);

/// `count` rows.
fn rows(count: usize) -> Vec<Row> {
    (0..count as u64)
        .map(|id| {
            (
                id,
                Identity::from_bytes([(id % 7) as u8; 32]),
                format!("message number {id} from the dragon"),
            )
        })
        .collect()
}

/// One way of writing a call's frame.
type Encoder = fn(&Vec<Row>) -> Vec<u8>;

/// The frame of a call of `send_batch(rows)`, the arguments encoded into it.
fn call_frame(rows: &Vec<Row>) -> Vec<u8> {
    BinaryClientMessage::call_frame_of(CallKind::Reducer, 7, "send_batch", &(rows,))
}

/// The same frame, the arguments encoded into a buffer of their own, then copied.
fn call_frame_copied(rows: &Vec<Row>) -> Vec<u8> {
    let message: BinaryClientMessage = ClientMessage::CallReducer {
        request_id: 7,
        name: "send_batch".to_owned(),
        args: to_vec(&(rows,)),
    };
    message.to_bytes()
}

fn encode(c: &mut Criterion) {
    let ways: [(&str, Encoder); 2] = [
        ("reducer_call", call_frame),
        ("reducer_call_copied", call_frame_copied),
    ];
    for (name, way) in ways {
        let mut group = c.benchmark_group(name);
        for count in ROWS {
            let rows = rows(count);
            let frame = print_allocations(&format!("{name}/{count}"), || way(&rows));
            assert_eq!(frame, call_frame_copied(&rows), "the same bytes");
            assert!(
                frame.len() > count * 60,
                "{} bytes for {count} rows",
                frame.len()
            );
            group.throughput(Throughput::Elements(count as u64));
            group.bench_with_input(BenchmarkId::from_parameter(count), &rows, |b, rows| {
                b.iter(|| black_box(way(black_box(rows))))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, encode);
criterion_main!(benches);
