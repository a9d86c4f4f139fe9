//! The primary publishing its commits to a real Redis stream (`wasmod serve --publish`):
//! every durable commit once, in order, ids from offsets; Redis down does not stop the
//! primary, and the stream is refilled from the commit log once Redis is back, with a marker
//! where the log no longer has them; a restarted primary goes on where the stream ends; the
//! stream stays within its bound.

use crate::live::Live;
use crate::redis_server::{RedisServer, PATIENCE};
use crate::support::{identity, post, publishing_server};
use axum::http::StatusCode;
use axum::Router;
use serde_json::json;
use std::path::Path;

use std::time::{Duration, Instant};
use wasmod_node::internals::StreamEntry;
use wasmod_node::replication::{PublishReading, PublishSettings};
use wasmod_node::NodeHandle;
use wasmod_server::ServerConfig;

pub const STREAM: &str = "quickstart";

/// Settings that retry quickly, with a backlog of `backlog` commits.
pub fn settings(redis: &RedisServer, backlog: usize) -> PublishSettings {
    let mut settings = PublishSettings::new(redis.stream(STREAM));
    settings.backlog = backlog;
    settings.retry = Duration::from_millis(50);
    settings.timeout = Duration::from_millis(500);
    settings
}

/// A publishing quickstart over the log in `dir`, served; its router and its node, whose
/// counters the tests read (drop both before stopping the server: they hold the module's
/// thread).
pub async fn primary(dir: &Path, settings: PublishSettings) -> (Live, Router, NodeHandle) {
    let server = publishing_server(ServerConfig::default(), dir, settings);
    let router = server.router();
    let node = server.node().clone();
    (Live::serve(server).await, router, node)
}

/// Calls `send` with `text`, answered within a bounded time whatever Redis does.
pub async fn send(router: &Router, token: &str, text: &str) {
    let answer = tokio::time::timeout(
        PATIENCE,
        post(router, "/v1/reducers/send", Some(token), json!([text])),
    )
    .await
    .expect("the call is answered");
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
}

/// Polls `probe` until it returns something, for at most [`PATIENCE`].
pub async fn eventually<T>(what: &str, mut probe: impl AsyncFnMut() -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        assert!(started.elapsed() < PATIENCE, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The stream's entries once it holds everything below offset `end`.
pub async fn stream_until(redis: &RedisServer, end: u64) -> Vec<StreamEntry> {
    eventually("the stream to catch up", async || {
        let entries = redis.entries(STREAM).await;
        (entries.last().map(StreamEntry::next_offset) == Some(end)).then_some(entries)
    })
    .await
}

/// The publisher's counters once `check` holds for them.
async fn stats_when(node: &NodeHandle, check: impl Fn(&PublishReading) -> bool) -> PublishReading {
    eventually("the publisher's counters", async || {
        let reading = node.publish_stats().expect("a publisher");
        Some(reading).filter(|reading| check(reading))
    })
    .await
}

/// The offsets of the commits among `entries`.
fn commit_offsets(entries: &[StreamEntry]) -> Vec<u64> {
    entries
        .iter()
        .filter_map(|entry| match entry {
            StreamEntry::Commit(commit) => Some(commit.offset),
            StreamEntry::Resync { .. } => None,
        })
        .collect()
}

/// How many of `entries` are commits of `send`.
fn sends(entries: &[StreamEntry]) -> usize {
    entries
        .iter()
        .filter(|entry| match entry {
            StreamEntry::Commit(commit) => commit
                .meta
                .entry
                .as_ref()
                .is_some_and(|entry| &*entry.name == "send"),
            StreamEntry::Resync { .. } => false,
        })
        .count()
}

#[tokio::test]
async fn every_durable_commit_reaches_the_stream_once_in_order() {
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().expect("a directory");
    let (live, router, stats) = primary(dir.path(), settings(&redis, 1000)).await;
    let (_, token) = identity(&router).await;
    for n in 0..20 {
        send(&router, &token, &format!("message {n}")).await;
    }
    let end = live.database.next_offset();
    let entries = stream_until(&redis, end).await;
    assert_eq!(commit_offsets(&entries), (0..end).collect::<Vec<_>>());
    assert_eq!(sends(&entries), 20);
    // Each entry carries the commit's changes as the log recorded them.
    let log = live.database.log().expect("a log");
    let recorded = log.read(0, end).expect("read").expect("in the log");
    for (entry, (offset, changes)) in entries.iter().zip(&recorded) {
        let StreamEntry::Commit(commit) = entry else {
            panic!("a marker in a stream that lost nothing: {entry:?}");
        };
        assert_eq!((commit.offset, &commit.changes), (*offset, changes));
    }
    stats_when(&stats, |reading| reading.published == end).await;
    let metrics = live.metrics().await;
    for line in [
        format!("wasmod_publish_offset {end}"),
        "wasmod_publish_lag_offsets 0".into(),
        format!("wasmod_publish_written_total {end}"),
        "wasmod_publish_connected 1".into(),
    ] {
        assert!(
            metrics.lines().any(|got| got == line),
            "{line} in\n{metrics}"
        );
    }
    drop((router, stats));
    live.stop().await;
}

/// Redis goes away after `before` sends and comes back (empty) after `during` more, with a
/// backlog of 4 commits; `while_down` runs meanwhile. The stream's entries and the counters
/// once it has everything.
async fn outage(
    before: usize,
    during: usize,
    while_down: impl FnOnce(&Live),
) -> (Vec<StreamEntry>, PublishReading, u64) {
    let mut redis = RedisServer::start();
    let dir = tempfile::tempdir().expect("a directory");
    let (live, router, stats) = primary(dir.path(), settings(&redis, 4)).await;
    let (_, token) = identity(&router).await;
    for n in 0..before {
        send(&router, &token, &format!("before {n}")).await;
    }
    stream_until(&redis, live.database.next_offset()).await;
    redis.kill();
    // The primary goes on serving; the publisher counts what waits, within its bound.
    for n in 0..during {
        send(&router, &token, &format!("during {n}")).await;
    }
    let down = stats_when(&stats, |reading| {
        !reading.connected && reading.errors > 0 && reading.lag() as usize >= during
    })
    .await;
    assert!(down.backlog <= 4, "{down:?}");
    let metrics = live.metrics().await;
    assert!(metrics.contains("wasmod_publish_connected 0"), "{metrics}");
    while_down(&live);
    redis.resume();
    let end = live.database.next_offset();
    let entries = stream_until(&redis, end).await;
    let reading = stats_when(&stats, |reading| reading.published == end).await;
    drop((router, stats));
    live.stop().await;
    (entries, reading, end)
}

#[tokio::test]
async fn redis_down_does_not_stop_the_primary_and_the_stream_is_refilled_from_the_log() {
    let (entries, reading, end) = outage(5, 30, |_| {}).await;
    // Redis came back empty: everything is written again, the older commits from the log.
    assert_eq!(commit_offsets(&entries), (0..end).collect::<Vec<_>>());
    assert!(entries
        .iter()
        .all(|entry| matches!(entry, StreamEntry::Commit(_))));
    assert!(reading.dropped >= 26, "{reading:?}");
    assert!(reading.refilled >= 26, "{reading:?}");
    assert_eq!(reading.resyncs, 0);
    // The last ones came from memory, with their metadata.
    assert!(sends(&entries) >= 4, "{entries:?}");
}

#[tokio::test]
async fn commits_the_log_no_longer_has_are_replaced_by_a_marker() {
    let (entries, reading, end) = outage(5, 30, |live| {
        let log = live.database.log().expect("a log");
        log.snapshot(&live.database.datastore())
            .expect("a snapshot");
    })
    .await;
    // The snapshot removed the log's older segments: a marker, then the backlog's commits.
    let Some(StreamEntry::Resync { offset }) = entries.first() else {
        panic!("the stream starts with a marker: {entries:?}");
    };
    assert_eq!(*offset, end - 4);
    assert_eq!(commit_offsets(&entries), (end - 4..end).collect::<Vec<_>>());
    assert_eq!(entries.len(), 5);
    assert_eq!(reading.resyncs, 1);
}

#[tokio::test]
async fn a_restarted_primary_goes_on_where_the_stream_ends() {
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().expect("a directory");
    for round in 0..2 {
        let (live, router, _) = primary(dir.path(), settings(&redis, 1000)).await;
        let (_, token) = identity(&router).await;
        for n in 0..10 {
            send(&router, &token, &format!("round {round} message {n}")).await;
        }
        stream_until(&redis, live.database.next_offset()).await;
        drop(router);
        live.stop().await;
    }
    let entries = redis.entries(STREAM).await;
    let end = entries.last().map_or(0, StreamEntry::next_offset);
    assert_eq!(commit_offsets(&entries), (0..end).collect::<Vec<_>>());
    assert_eq!(sends(&entries), 20);
}

#[tokio::test]
async fn the_stream_stays_within_its_bound() {
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().expect("a directory");
    let mut settings = settings(&redis, 1000);
    settings.max_len = 50;
    let (live, router, _) = primary(dir.path(), settings).await;
    let (_, token) = identity(&router).await;
    for n in 0..400 {
        send(&router, &token, &format!("message {n}")).await;
        // `MAXLEN ~` trims whole nodes of the stream (100 entries each by default).
        assert!(redis.len(STREAM).await <= 50 + 100);
    }
    let end = live.database.next_offset();
    let entries = stream_until(&redis, end).await;
    let offsets = commit_offsets(&entries);
    assert!(offsets[0] >= end - 150, "{} entries kept", offsets.len());
    assert_eq!(offsets, (offsets[0]..end).collect::<Vec<_>>());
    drop(router);
    live.stop().await;
}
