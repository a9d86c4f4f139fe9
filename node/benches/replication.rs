//! Replication lag on loopback: from a commit on the primary's database to that commit in a
//! follower's hands, through a real `redis-server` (started on a free port, killed at the end)
//! by the server's publisher (`replication::Publisher`, its own task) and the edges' reader
//! (`replication::Follower`).
//!
//! - `commit_to_follower`: one commit at a time, each waited for: the lag of a commit when the
//!   primary is otherwise idle (a reader blocked in `XREAD` is woken by the `XADD`);
//! - `commits_64_to_follower`: 64 commits, then the wait for the last: per commit, the cost when
//!   commits come faster than one round trip (they share pipelines and reads).
//!
//! The database is in memory (a commit is durable at once), so the figures are the
//! replication path's alone, not the disk's. `cargo bench -p wasmod-node --bench replication`.

use criterion::{criterion_group, Criterion, Throughput};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use wasmod_abi::{AlgebraicType, ModuleDef, TableDef, Value};
use wasmod_host::datastore::{CommitMeta, Database};
use wasmod_node::internals::{FollowSettings, Followed, Follower, Publisher};
use wasmod_node::replication::PublishSettings;

#[allow(dead_code)]
#[path = "../../server/tests/api/redis_server.rs"]
mod redis_server;

use redis_server::RedisServer;

/// The stream the bench publishes to.
const STREAM: &str = "bench";

/// A primary's database, its publisher running, and a follower of its stream.
struct Replication {
    runtime: tokio::runtime::Runtime,
    database: Arc<Database>,
    follower: Follower,
    next_id: u64,
    stop: watch::Sender<bool>,
    _redis: RedisServer,
}

impl Replication {
    fn new() -> Self {
        let redis = RedisServer::start();
        let mut module = ModuleDef::default();
        let table = TableDef::of_columns(
            &mut module.typespace,
            "Message",
            "message",
            &[("id", AlgebraicType::U64), ("text", AlgebraicType::String)],
        );
        module.tables.push(table);
        let database = Arc::new(Database::in_memory(&module).expect("a valid module"));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let publisher =
            Publisher::new(database.clone(), PublishSettings::new(redis.stream(STREAM)))
                .expect("a publisher");
        let (stop, stopped) = watch::channel(false);
        runtime.spawn(publisher.run(stopped));
        let mut settings = FollowSettings::default();
        settings.batch = 512;
        settings.block = Duration::from_secs(1);
        settings.timeout = Duration::from_secs(2);
        let follower = Follower::new(redis.stream(STREAM), database.next_offset(), settings)
            .expect("a follower");
        Self {
            runtime,
            database,
            follower,
            next_id: 0,
            stop,
            _redis: redis,
        }
    }

    /// Commits one new row.
    fn commit(&mut self) {
        self.next_id += 1;
        let mut row = Value::Product(vec![
            Value::U64(self.next_id),
            Value::String("a message of a typical length".into()),
        ])
        .to_bytes();
        let mut tx = self.database.begin_mut();
        tx.insert(0, &mut row).expect("inserted");
        let _ = self.database.commit(tx, CommitMeta::host());
    }

    /// Waits until the follower has every commit made so far.
    fn follow(&mut self) {
        let end = self.database.next_offset();
        let follower = &mut self.follower;
        self.runtime.block_on(async {
            while follower.next_offset() < end {
                match follower.read().await {
                    Ok(Followed::Commits(_)) => {}
                    Ok(Followed::Gap(gap)) => panic!("a gap on loopback: {gap:?}"),
                    Err(error) => panic!("Redis: {error}"),
                }
            }
        });
    }

    /// `iters` rounds of `commits` commits each followed to the end; their time.
    fn timed(&mut self, iters: u64, commits: u64) -> Duration {
        let started = Instant::now();
        for _ in 0..iters {
            for _ in 0..commits {
                self.commit();
            }
            self.follow();
        }
        started.elapsed()
    }
}

impl Drop for Replication {
    fn drop(&mut self) {
        self.stop.send_replace(true);
    }
}

fn replication(c: &mut Criterion) {
    let mut replication = Replication::new();
    let mut group = c.benchmark_group("replication_loopback");
    group.throughput(Throughput::Elements(1));
    group.bench_function("commit_to_follower", |b| {
        b.iter_custom(|iters| replication.timed(iters, 1))
    });
    group.throughput(Throughput::Elements(64));
    group.bench_function("commits_64_to_follower", |b| {
        b.iter_custom(|iters| replication.timed(iters, 64))
    });
    group.finish();
}

criterion_group!(benches, replication);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
