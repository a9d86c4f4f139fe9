//! Following the stream as an edge does (`replication::Follower`), against a real Redis fed
//! by a real publishing primary: every commit once, in order, from an offset; a stuck
//! follower finds the stream trimmed past it (Redis's memory stays bounded meanwhile) and
//! goes on after a restart from a new offset; Redis restarted and refilled from the log is no
//! gap; a marker is.

use crate::publish::{eventually, primary, send, settings, stream_until, STREAM};
use crate::redis_server::{RedisServer, PATIENCE};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmod_host::datastore::Commit;
use wasmod_node::internals::{FollowSettings, Followed, Follower, Gap};

/// A follower of the test stream on `redis` holding every commit below `next`.
fn follower(redis: &RedisServer, next: u64) -> Follower {
    let mut settings = FollowSettings::default();
    settings.batch = 64;
    settings.block = Duration::from_millis(100);
    settings.timeout = Duration::from_millis(500);
    Follower::new(redis.stream(STREAM), next, settings).expect("a follower")
}

/// The commits `follower` reads until it needs offset `end`; a gap fails the test.
async fn follow_until(follower: &mut Follower, end: u64) -> Vec<Arc<Commit>> {
    let started = Instant::now();
    let mut commits = Vec::new();
    while follower.next_offset() < end {
        assert!(
            started.elapsed() < PATIENCE,
            "the follower did not catch up"
        );
        match follower.read().await {
            Ok(Followed::Commits(more)) => commits.extend(more),
            Ok(Followed::Gap(gap)) => panic!("a gap: {gap:?}"),
            Err(error) => panic!("Redis: {error}"),
        }
    }
    commits
}

/// The gap `follower` meets next, reading past any commit before it.
async fn gap(follower: &mut Follower) -> Gap {
    eventually("a gap", async || match follower.read().await {
        Ok(Followed::Gap(gap)) => Some(gap),
        _ => None,
    })
    .await
}

fn offsets(commits: &[Arc<Commit>]) -> Vec<u64> {
    commits.iter().map(|commit| commit.offset).collect()
}

#[tokio::test]
async fn a_follower_gets_every_commit_once_in_order_from_its_offset() {
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().expect("a directory");
    let (live, router, _) = primary(dir.path(), settings(&redis, 1000)).await;
    let (_, token) = crate::support::identity(&router).await;
    for n in 0..10 {
        send(&router, &token, &format!("message {n}")).await;
    }
    let end = live.database.next_offset();
    let mut follower = follower(&redis, 3);
    let commits = follow_until(&mut follower, end).await;
    assert_eq!(offsets(&commits), (3..end).collect::<Vec<_>>());
    let log = live.database.log().expect("a log");
    let recorded = log.read(3, end).expect("read").expect("in the log");
    for (commit, (offset, changes)) in commits.iter().zip(&recorded) {
        assert_eq!((commit.offset, &commit.changes), (*offset, changes));
    }
    // Caught up, a read waits and brings nothing, then the next commit.
    assert_eq!(
        follower.read().await.expect("a read"),
        Followed::Commits(Vec::new())
    );
    send(&router, &token, "one more").await;
    let more = follow_until(&mut follower, end + 1).await;
    assert_eq!(offsets(&more), [end]);
    drop(router);
    live.stop().await;
}

#[tokio::test]
async fn a_stuck_follower_finds_the_stream_trimmed_past_it_and_goes_on_after_a_restart() {
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().expect("a directory");
    let mut settings = settings(&redis, 1000);
    settings.max_len = 50;
    let (live, router, _) = primary(dir.path(), settings).await;
    let (_, token) = crate::support::identity(&router).await;
    let mut follower = follower(&redis, live.database.next_offset());
    // The follower reads nothing while 300 commits go by; Redis keeps its bound.
    for n in 0..300 {
        send(&router, &token, &format!("message {n}")).await;
    }
    let end = live.database.next_offset();
    stream_until(&redis, end).await;
    assert!(redis.len(STREAM).await <= 150);
    let expected = follower.next_offset();
    let Gap::Missing {
        expected: needed,
        found,
    } = gap(&mut follower).await
    else {
        panic!("a trimmed stream is a missing commit");
    };
    assert_eq!(needed, expected);
    assert!(found > expected && found < end, "{found}");
    // Told again until it restarts, from a snapshot's offset.
    assert!(matches!(follower.read().await, Ok(Followed::Gap(_))));
    follower.restart(end);
    send(&router, &token, "after the restart").await;
    assert_eq!(offsets(&follow_until(&mut follower, end + 1).await), [end]);
    drop(router);
    live.stop().await;
}

/// A follower caught up with a primary whose Redis goes away for 20 commits and comes back
/// empty, `while_down` running meanwhile; what the follower reads next: the commits it gets
/// before its first gap, and the gap if any.
async fn through_an_outage(
    while_down: impl FnOnce(&crate::live::Live),
) -> (Vec<u64>, Option<Gap>, u64, u64) {
    let mut redis = RedisServer::start();
    let dir = tempfile::tempdir().expect("a directory");
    let (live, router, _) = primary(dir.path(), settings(&redis, 4)).await;
    let (_, token) = crate::support::identity(&router).await;
    for n in 0..5 {
        send(&router, &token, &format!("before {n}")).await;
    }
    let before = live.database.next_offset();
    let mut follower = follower(&redis, 0);
    follow_until(&mut follower, before).await;
    redis.kill();
    // Reads fail while Redis is down; the follower keeps its place.
    assert!(follower.read().await.is_err());
    for n in 0..20 {
        send(&router, &token, &format!("during {n}")).await;
    }
    while_down(&live);
    redis.resume();
    let end = live.database.next_offset();
    stream_until(&redis, end).await;
    let mut commits = Vec::new();
    let mut found = None;
    while found.is_none() && follower.next_offset() < end {
        match follower.read().await {
            Ok(Followed::Commits(more)) => commits.extend(offsets(&more)),
            Ok(Followed::Gap(gap)) => found = Some(gap),
            Err(error) => panic!("Redis: {error}"),
        }
    }
    drop(router);
    live.stop().await;
    (commits, found, before, end)
}

#[tokio::test]
async fn redis_restarted_and_refilled_from_the_log_is_no_gap() {
    let (commits, gap, before, end) = through_an_outage(|_| {}).await;
    assert_eq!(gap, None);
    assert_eq!(commits, (before..end).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_marker_sends_a_follower_to_bootstrap_again() {
    let (commits, gap, before, end) = through_an_outage(|live| {
        let log = live.database.log().expect("a log");
        log.snapshot(&live.database.datastore())
            .expect("a snapshot");
    })
    .await;
    assert_eq!(commits, Vec::<u64>::new());
    assert_eq!(
        gap,
        Some(Gap::Resync {
            expected: before,
            offset: end - 4
        })
    );
}
