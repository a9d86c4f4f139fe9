//! The client cache applying one transaction of 1, 100 and 10,000 rows of the quickstart's
//! `message` shape `(id: u64, sender: [u8; 32], sent: i64, text: String)`: inserts into an
//! empty cache, and updates (each row deleted and inserted again with the same key and a new
//! text, paired by the primary key), as the connection applies a transaction's row lists
//! (`Batch::delete_all`, `Batch::insert_all`).
//!
//! The same with the `id` column indexed (as it is once the application has looked a row up
//! by it, `find_by_id`), to show what keeping the index costs an apply; and looking one row
//! up by its `id` among 100,000, through the index and, as the cache did before it had
//! indexes, by reading every row's key.
//!
//! And what the client does with what it receives, server frames to cache and callbacks,
//! without the network (issue 31's end-to-end goals, the client's share): through [`Replay`], which
//! applies frames exactly as the connection task does (decode, one batch per message, row
//! callbacks), on the quickstart's description (`client/vectors/module.json`).
//!
//! - `receive/subscribe_applied/100000`: a `SubscribeApplied` of 100,000 `message` rows into
//!   an empty cache (goal: a client receives such a subscription into its cache in 50 ms,
//!   end to end). `Replay::apply` copies the frame first (8 MB here), which the connection
//!   does not.
//! - `receive/update/1`: one `TransactionUpdate` replacing one row of a 100,000-row table
//!   (a delete and an insert of one key), its `on_update` callback decoding the rows (goal:
//!   100,000 such updates a second).
//!
//! Before the measurements, the bytes and allocations of one apply of each are printed,
//! counted by this binary's global allocator (shared with the protocol's benches).

#[path = "../../protocol/benches/support/allocations.rs"]
mod allocations;
#[path = "support/cache.rs"]
mod scenarios;

use allocations::{print_allocations, Counting};
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use scenarios::{apply_one, filled, keyed_cache, message_column, rows, SIZES};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use wasmod_abi::encoding::{from_slice, to_vec};
use wasmod_abi::{ConnectionId, EntryKind, Identity, Timestamp};
use wasmod_client::cache::Cache;
use wasmod_client::json::JsonModule;
use wasmod_client::Replay;
use wasmod_protocol::description::ModuleDescription;
use wasmod_protocol::ws::{
    BinaryServerMessage, EntryPointName, QuerySetUpdate, RowList, ServerMessage, TableRows,
    TableUpdate, TransactionUpdate, UpdateStatus,
};

/// A `message` row, decoded as the generated bindings' `Message` is.
type Message = (u64, [u8; 32], i64, String);

#[global_allocator]
static GLOBAL: Counting = Counting;

fn apply(c: &mut Criterion) {
    let mut group = c.benchmark_group("cache");
    for size in SIZES {
        let new = rows(size, "hello");
        let changed = rows(size, "edited");
        let mut cache = keyed_cache();
        let events = print_allocations(&format!("insert/{size}"), || {
            apply_one(&mut cache, &[], &new)
        });
        assert_eq!(events[0].inserts.len(), size);
        let events = print_allocations(&format!("update/{size}"), || {
            apply_one(&mut cache, &new, &changed)
        });
        assert_eq!(events[0].updates.len(), size);
        group.bench_with_input(BenchmarkId::new("insert", size), &new, |b, new| {
            b.iter_batched(
                keyed_cache,
                |mut cache| (apply_one(&mut cache, &[], new), cache),
                BatchSize::LargeInput,
            );
        });
        group.bench_with_input(BenchmarkId::new("update", size), &changed, |b, changed| {
            b.iter_batched(
                || filled(&new),
                |mut cache| (apply_one(&mut cache, &new, changed), cache),
                BatchSize::LargeInput,
            );
        });
        group.bench_with_input(BenchmarkId::new("insert_indexed", size), &new, |b, new| {
            b.iter_batched(
                || indexed(keyed_cache()),
                |mut cache| (apply_one(&mut cache, &[], new), cache),
                BatchSize::LargeInput,
            );
        });
        group.bench_with_input(
            BenchmarkId::new("update_indexed", size),
            &changed,
            |b, changed| {
                b.iter_batched(
                    || indexed(filled(&new)),
                    |mut cache| (apply_one(&mut cache, &new, changed), cache),
                    BatchSize::LargeInput,
                );
            },
        );
    }
    group.finish();
}

/// `cache` with its `message` table indexed by `id`.
fn indexed(mut cache: Cache) -> Cache {
    cache.index_column("message", "id", message_column("id"));
    cache
}

/// How many rows the look-ups search.
const LOOKED_UP: usize = 100_000;

/// The ids looked up in turn: spread over the table.
fn ids() -> impl Iterator<Item = u64> {
    (0..LOOKED_UP as u64).cycle().step_by(7_919)
}

/// One row found by its `id` among 100,000 and decoded, as `find_by_id` does: the key
/// encoded, found, the row decoded; through the index, and by reading every row's key.
fn lookup(c: &mut Criterion) {
    let cache = indexed(filled(&rows(LOOKED_UP, "hello")));
    let mut group = c.benchmark_group("lookup");
    let mut wanted = ids();
    group.bench_function(BenchmarkId::new("indexed", LOOKED_UP), |b| {
        b.iter(|| {
            let key = to_vec(&wanted.next().unwrap_or_default());
            let row = cache
                .find_indexed("message", "id", &key)
                .and_then(|mut rows| rows.next());
            black_box(row.map(from_slice::<Message>))
        });
    });
    let reader = message_column("id");
    group.bench_function(BenchmarkId::new("scan", LOOKED_UP), |b| {
        b.iter(|| {
            let key = to_vec(&wanted.next().unwrap_or_default());
            let row = cache
                .rows("message")
                .find(|row| reader.key(row) == Some(&key[..]));
            black_box(row.map(from_slice::<Message>))
        });
    });
    group.finish();
}

/// Rows in the subscribed table.
const TABLE_ROWS: usize = 100_000;

/// The quickstart's `message` row, as its generated bindings decode it.
type QuickstartMessage = (u64, Identity, Timestamp, String);

fn list(rows: &[Vec<u8>]) -> RowList {
    RowList::from_rows(rows.iter().map(Vec::as_slice)).expect("small")
}

/// The `SubscribeApplied` of query set 1 holding `rows` of `message`.
fn applied(rows: &[Vec<u8>]) -> Vec<u8> {
    let message: BinaryServerMessage = ServerMessage::SubscribeApplied {
        query_set_id: 1,
        offset: 1,
        tables: vec![TableRows {
            table: "message".into(),
            rows: list(rows),
        }],
        deletes: vec![],
        resumed: false,
    };
    message.to_bytes()
}

/// A committed transaction of query set 1 replacing `old` by `new` in `message`.
fn update(offset: u64, old: &[u8], new: &[u8]) -> Vec<u8> {
    let message: BinaryServerMessage = ServerMessage::TransactionUpdate(TransactionUpdate {
        offset,
        timestamp: Timestamp::from_micros_since_unix_epoch(1_764_590_000_000_000),
        caller_identity: Identity::from_bytes([9; 32]),
        caller_connection_id: ConnectionId::from_bytes([5; 16]),
        entry_point: EntryPointName {
            kind: EntryKind::Reducer,
            name: "send_message".into(),
        },
        status: UpdateStatus::Committed,
        request_id: None,
        changes: vec![QuerySetUpdate {
            query_set_id: 1,
            tables: vec![TableUpdate {
                table: "message".into(),
                inserts: list(&[new.to_vec()]),
                deletes: list(&[old.to_vec()]),
            }],
        }],
    });
    message.to_bytes()
}

/// A replay of the quickstart, its `message` table's updates counted.
fn replay(module: &JsonModule, updates: &Arc<AtomicU64>) -> Replay {
    let replay = Replay::new(module).expect("the quickstart's tables");
    let counted = updates.clone();
    replay
        .table::<QuickstartMessage>("message")
        .on_update(move |_, _| {
            counted.fetch_add(1, Ordering::Relaxed);
        });
    replay
}

fn receive(c: &mut Criterion) {
    let description: ModuleDescription =
        serde_json::from_str(include_str!("../vectors/module.json"))
            .expect("the quickstart's description");
    let module = JsonModule::new(&description).expect("a module");
    let hello = rows(TABLE_ROWS, "hello");
    let edited = rows(TABLE_ROWS, "edited");
    let subscribed = applied(&hello);
    let updates = Arc::new(AtomicU64::new(0));

    let mut group = c.benchmark_group("receive");
    group.sample_size(10);
    group.throughput(Throughput::Elements(TABLE_ROWS as u64));
    group.bench_with_input(
        BenchmarkId::new("subscribe_applied", TABLE_ROWS),
        &subscribed,
        |b, frame| {
            b.iter_batched(
                || replay(&module, &updates),
                |mut replay| {
                    replay.apply(frame).expect("applies");
                    replay
                },
                BatchSize::PerIteration,
            );
        },
    );

    // Each row edited, then back: the frames can be applied in a loop forever.
    let frames: Vec<Vec<u8>> = (0..1_000)
        .map(|id| update(2 + id as u64, &hello[id], &edited[id]))
        .chain((0..1_000).map(|id| update(1_002 + id as u64, &edited[id], &hello[id])))
        .collect();
    let mut replay = replay(&module, &updates);
    replay.apply(&subscribed).expect("applies");
    let before = updates.load(Ordering::Relaxed);
    for frame in &frames {
        replay.apply(frame).expect("applies");
    }
    assert_eq!(
        updates.load(Ordering::Relaxed) - before,
        frames.len() as u64,
        "each frame one update"
    );
    let mut next = frames.iter().cycle();
    group.sample_size(50);
    group.throughput(Throughput::Elements(1));
    group.bench_function(BenchmarkId::new("update", 1), |b| {
        b.iter(|| replay.apply(next.next().map_or(&[][..], Vec::as_slice)))
    });
    group.finish();
}

criterion_group!(benches, apply, lookup, receive);
criterion_main!(benches);
