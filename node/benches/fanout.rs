//! Fanout in memory, the shape of DarkWS's published benchmark (issue 11's goals: 10 µs,
//! 70 µs and 1 ms): one commit whose update is a 364-byte `TransactionUpdate` frame, to N
//! connections subscribed to one query (`SELECT * FROM message`), N = 100, 1,000 and 10,000,
//! from the commit in the feed to the update in every connection's outbound queue with its
//! frame's bytes rendered (`to_outboxes_*`: the evaluation task's round, which drains the
//! feed, evaluates, builds the group's shared update and pushes it to every outbox, then the
//! encoding), and further, into the hands of every connection's writer (`to_writers_*`: each
//! connection also takes its update from its outbox and gets its frame, as its writer does
//! before the socket).
//!
//! Two ways side by side: `serialize_once` (the server's: the first connection renders the
//! group's frame, the others clone its bytes) and `serialize_per_recipient` (each connection
//! renders and encodes its own frame, as every writer did before frames were shared; the
//! rest of the pipeline is the same).
//!
//! Before the measurements, a counting global allocator prints the allocations and bytes
//! allocated per broadcast for each N, serializing once, and checks that they do not grow
//! with N (so the smoke run in CI guards it).
//!
//! The commits alternate between inserting and deleting one row, so every update is the same
//! size and the table stays small; the commit itself (the datastore's work) is not measured.
//!
//! `cargo bench -p wasmod-node --bench fanout`.

use criterion::{criterion_group, BenchmarkId, Criterion};
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use wasmod_abi::{AlgebraicType, ConnectionId, Identity, ModuleDef, TableDef, Value};
use wasmod_host::datastore::{CommitMeta, Database};
use wasmod_node::internals::broadcast;
use wasmod_node::internals::fanout::{Evaluator, Request, Subscribing};
use wasmod_node::internals::frame::Frame;
use wasmod_node::internals::limits::MAX_REQUESTS_QUEUED;
use wasmod_node::internals::outbox::{self, Bounds, Outbound, OutboxReceiver, Update};
use wasmod_node::internals::stats::Stats;
use wasmod_node::internals::window::WindowBounds;
use wasmod_node::internals::wire::Binary;
use wasmod_node::internals::{Build, Settings};
use wasmod_node::NodeConfig;
use wasmod_node::{ClientMemory, Holder};
use wasmod_protocol::ws::Compression;
use wasmod_subscription::{Catalog, Query};

// `print_allocations` is for the benches that print one operation's counts.
#[allow(dead_code)]
#[path = "../../protocol/benches/support/allocations.rs"]
mod allocations;

use allocations::{counters, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The subscriber counts measured.
const SUBSCRIBERS: [usize; 3] = [100, 1_000, 10_000];

/// The size of the update's frame, as DarkWS's benchmark.
const FRAME: usize = 364;

/// The length of the row's text that makes the frame [`FRAME`] bytes long.
const TEXT: usize = 236;

/// How each connection gets its frame.
#[derive(Clone, Copy, Debug)]
enum Serialize {
    /// The group's frame, rendered by the first and shared.
    Once,
    /// A frame rendered for each connection.
    PerRecipient,
}

/// A server's evaluation task with `subscribers` connections subscribed to one query, and
/// the next commit to make.
struct Fanout {
    database: Arc<Database>,
    evaluator: Evaluator,
    receivers: Vec<OutboxReceiver>,
    row: Vec<u8>,
    inserted: bool,
}

impl Fanout {
    /// `subscribers` connections, opened and subscribed, their initial rows taken.
    fn new(subscribers: usize) -> Self {
        let mut module = ModuleDef::default();
        let table = TableDef::of_columns(
            &mut module.typespace,
            "Message",
            "message",
            &[("id", AlgebraicType::U64), ("text", AlgebraicType::String)],
        );
        module.tables.push(table);
        let module = Arc::new(module);
        let database = Arc::new(Database::in_memory(&module).expect("a valid module"));
        let catalog = Arc::new(Catalog::new(&module).expect("no visibility filters"));
        let build = Arc::new(Build::new(0, module, catalog, database.datastore()));
        let stats = Arc::new(Stats::default());
        let memory = ClientMemory::new(usize::MAX);
        let no_resuming = WindowBounds {
            commits: 0,
            bytes: 0,
        };
        let (requests, mut evaluator) = Evaluator::new(
            build.clone(),
            database.clone(),
            no_resuming,
            Settings::from(&NodeConfig::default()).subscriptions,
            stats.clone(),
        );
        let text = "SELECT * FROM message";
        let query = Query::parse(&build.catalog, text).expect("a query");
        let bounds = Bounds {
            messages: 64,
            bytes: 1 << 20,
        };
        let mut receivers = Vec::with_capacity(subscribers);
        for n in 0..subscribers {
            let mut id = [0; 16];
            id[..8].copy_from_slice(&(n as u64 + 1).to_le_bytes());
            let connection = ConnectionId::from_bytes(id);
            let (outbox, receiver) = outbox::channel(bounds, stats.clone());
            receivers.push(receiver);
            let open = Request::Open {
                connection,
                identity: Identity::ZERO,
                outbox,
                queued: Arc::new(Semaphore::new(MAX_REQUESTS_QUEUED)),
            };
            let subscribe = Request::Subscribe(Subscribing {
                connection,
                query_set_id: 1,
                texts: vec![text.to_owned()],
                queries: vec![query.bind(Identity::ZERO)],
                build: build.number,
                resume_from: None,
                charge: memory
                    .charge(Holder::default(), text.len())
                    .expect("no ceiling"),
            });
            for request in [open, subscribe] {
                let mut request = Some(request);
                while let Some(waiting) = request.take() {
                    if let Err(full) = requests.try_send(waiting) {
                        evaluator.catch_up();
                        request = Some(full.into_inner());
                    }
                }
            }
        }
        evaluator.catch_up();
        for receiver in &mut receivers {
            while receiver.try_recv().is_some() {}
        }
        let text: String = "fanout ".chars().cycle().take(TEXT).collect();
        let row = Value::Product(vec![Value::U64(1), Value::String(text)]).to_bytes();
        Self {
            database,
            evaluator,
            receivers,
            row,
            inserted: false,
        }
    }

    /// Commits the next change: the row inserted, or deleted again.
    fn commit(&mut self) {
        let mut tx = self.database.begin_mut();
        let mut row = self.row.clone();
        if self.inserted {
            tx.delete_rows(0, &row).expect("deleted");
        } else {
            tx.insert(0, &mut row).expect("inserted");
        }
        self.inserted = !self.inserted;
        let _ = self.database.commit(tx, CommitMeta::host());
    }

    /// The commit's round, then every connection's frame; returns the bytes of the frames.
    fn broadcast(&mut self, serialize: Serialize) -> usize {
        self.evaluator.catch_up();
        let mut bytes = 0;
        for receiver in &mut self.receivers {
            let Some(Outbound::Update(update)) = receiver.try_recv() else {
                panic!("every subscriber has an update");
            };
            let frame = frame(&update, serialize);
            bytes += match black_box(frame.expect("rendered")) {
                Frame::Binary(frame) => frame.len(),
                other => panic!("not a binary frame: {other:?}"),
            };
        }
        bytes
    }

    /// `iters` broadcasts to the outboxes, timed without their commits: the round, then the
    /// update's frame rendered once (serializing once: what the first writer does) or once
    /// per connection. The connections' taking of their updates is not timed.
    fn timed_to_outboxes(&mut self, iters: u64, serialize: Serialize) -> Duration {
        let mut total = Duration::ZERO;
        let mut updates = Vec::with_capacity(self.receivers.len());
        for _ in 0..iters {
            self.commit();
            let start = Instant::now();
            self.evaluator.catch_up();
            total += start.elapsed();
            updates.extend(self.receivers.iter_mut().filter_map(
                |receiver| match receiver.try_recv() {
                    Some(Outbound::Update(update)) => Some(update),
                    _ => None,
                },
            ));
            assert_eq!(updates.len(), self.receivers.len(), "an update each");
            let start = Instant::now();
            let frames: &[_] = match serialize {
                Serialize::Once => &updates[..1],
                Serialize::PerRecipient => &updates,
            };
            for update in frames {
                let frame = frame(update, serialize);
                black_box(frame.expect("rendered"));
            }
            total += start.elapsed();
            updates.clear();
        }
        total
    }

    /// `iters` broadcasts into the writers' hands, timed without their commits.
    fn timed(&mut self, iters: u64, serialize: Serialize) -> Duration {
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            self.commit();
            let start = Instant::now();
            black_box(self.broadcast(serialize));
            total += start.elapsed();
        }
        total
    }
}

/// The allocations and bytes allocated per broadcast, serializing `serialize`, on average
/// over `rounds` broadcasts after as many to warm up (queues reach their steady state).
fn allocations_per_broadcast(fanout: &mut Fanout, serialize: Serialize, rounds: u64) -> (u64, u64) {
    for _ in 0..rounds {
        fanout.commit();
        let frames = fanout.broadcast(serialize);
        assert_eq!(
            frames,
            FRAME * fanout.receivers.len(),
            "{FRAME}-byte frames"
        );
    }
    let (mut allocations, mut allocated) = (0, 0);
    for _ in 0..rounds {
        fanout.commit();
        let (before, bytes_before) = counters();
        fanout.broadcast(serialize);
        let (after, bytes_after) = counters();
        allocations += after - before;
        allocated += bytes_after - bytes_before;
    }
    (allocations / rounds, allocated / rounds)
}

/// Prints the allocations per broadcast for each N, both ways, and checks that serializing
/// once they do not grow with N.
fn allocations() {
    const ROUNDS: u64 = 200;
    println!("fanout allocations per broadcast:");
    println!("subscribers | once: allocations | once: bytes | per recipient: allocations | per recipient: bytes");
    let mut counts = Vec::new();
    for subscribers in SUBSCRIBERS {
        let mut fanout = Fanout::new(subscribers);
        let once = allocations_per_broadcast(&mut fanout, Serialize::Once, ROUNDS);
        let each = allocations_per_broadcast(&mut fanout, Serialize::PerRecipient, ROUNDS);
        println!(
            "{subscribers} | {} | {} | {} | {}",
            once.0, once.1, each.0, each.1
        );
        counts.push(once.0);
    }
    let fewest = counts.iter().min().copied().unwrap_or(0);
    assert!(
        counts.iter().all(|&count| count <= fewest + 2),
        "allocations per broadcast grow with the subscribers: {counts:?}"
    );
}

/// The measurements: both ways, for each N.
fn fanout(c: &mut Criterion) {
    let mut group = c.benchmark_group("fanout_in_memory");
    for subscribers in SUBSCRIBERS {
        let mut fanout = Fanout::new(subscribers);
        for (name, serialize) in [
            ("serialize_once", Serialize::Once),
            ("serialize_per_recipient", Serialize::PerRecipient),
        ] {
            let to_outboxes = format!("to_outboxes_{name}");
            group.bench_function(BenchmarkId::new(to_outboxes, subscribers), |b| {
                b.iter_custom(|iters| fanout.timed_to_outboxes(iters, serialize))
            });
            let to_writers = format!("to_writers_{name}");
            group.bench_function(BenchmarkId::new(to_writers, subscribers), |b| {
                b.iter_custom(|iters| fanout.timed(iters, serialize))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, fanout);

fn main() {
    allocations();
    benches();
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
}

/// `update`'s frame: the shared one (rendered by the first to ask), or one rendered for this
/// recipient alone.
fn frame(update: &Update, serialize: Serialize) -> Result<Frame, String> {
    match serialize {
        Serialize::Once => update.shared.frame::<Binary>(Compression::None),
        Serialize::PerRecipient => {
            broadcast::render::<Binary>(&update.shared, None, Compression::None)
        }
    }
}
