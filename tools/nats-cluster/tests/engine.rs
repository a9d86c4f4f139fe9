//! What wasmod relies on from the consensus engine, checked with `async-nats` against a real
//! 3-node `nats-server` cluster (the crate's docs list the facts). Each test starts its own
//! cluster and bounds every wait; the timings it measures are printed (`--nocapture`).

use async_nats::jetstream::context::{CreateKeyValueErrorKind, PublishError, PublishErrorKind};
use async_nats::jetstream::kv::{CreateErrorKind, Operation, UpdateErrorKind};
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::publish::PublishAck;
use async_nats::jetstream::stream::DirectGetErrorKind;
use async_nats::jetstream::{self, consumer, stream, ErrorCode};
use futures_util::StreamExt;
use std::error::Error as _;
use std::future::Future;
use std::time::{Duration, Instant};
use wasmod_nats_cluster::{NatsCluster, MAX_PAYLOAD};

/// The stream the tests append to, and its one subject.
const STREAM: &str = "LOG";
const SUBJECT: &str = "log.test";

/// The bound on any one awaited operation: generous, since a leader election on a loaded
/// machine takes seconds, but a hang fails the test rather than CI's run.
const STEP: Duration = Duration::from_secs(30);

/// The client's request timeout and the JetStream context's: how long a publish waits for
/// its acknowledgement before it is reported as timed out.
const ACK_TIMEOUT: Duration = Duration::from_secs(2);

/// How long a quorum takes to come back after a node is restarted, at most: the node needs a
/// meta leader and a stream leader to be elected (4 to 9 s each in 2.9.10, in one round or
/// several), and to catch up, which stalls for 10 s at times. Measured: 6 to 30 s.
const QUORUM_BACK: Duration = Duration::from_secs(120);

/// How a publish ended, as wasmod's replicated log needs to tell: appended, refused because
/// another writer appended since (a deposed primary, fenced), or not known (no quorum, no
/// connection: the append may or may not have happened).
#[derive(Debug)]
enum Outcome {
    Acked(PublishAck),
    Fenced,
    Unavailable(PublishErrorKind),
}

/// The classification wasmod makes of a publish's result. Fenced is the server's refusal
/// with error code 10071: `async-nats` reports it as `PublishErrorKind::WrongLastSequence`
/// and keeps the server's error (a `jetstream::Error`) as the source.
fn classify(result: Result<PublishAck, PublishError>) -> Outcome {
    match result {
        Ok(ack) => Outcome::Acked(ack),
        Err(err) if err.kind() == PublishErrorKind::WrongLastSequence => {
            assert_eq!(
                server_error_code(&err),
                Some(ErrorCode::STREAM_WRONG_LAST_SEQUENCE),
                "a wrong-last-sequence refusal carries the server's code 10071: {err}"
            );
            Outcome::Fenced
        }
        Err(err) => Outcome::Unavailable(err.kind()),
    }
}

/// The server's JetStream error code behind a client error, if the server answered with
/// one: the `jetstream::Error` anywhere in its chain of sources.
fn server_error_code(err: &(dyn std::error::Error + 'static)) -> Option<ErrorCode> {
    let mut source = Some(err);
    while let Some(err) = source {
        if let Some(server) = err.downcast_ref::<jetstream::Error>() {
            return Some(server.error_code());
        }
        source = err.source();
    }
    None
}

/// `future`, which must end within [`STEP`].
async fn bounded<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(STEP, future)
        .await
        .unwrap_or_else(|_| panic!("{what} took more than {STEP:?}"))
}

/// A client of `servers` (every node's URL, or one's), with [`ACK_TIMEOUT`] for its requests,
/// and a JetStream context whose publishes wait as long for their acknowledgement. The two
/// timeouts are separate: a publish waits for the context's (5 s by default), not the
/// connection's request timeout.
async fn connect(servers: impl async_nats::ToServerAddrs) -> jetstream::Context {
    let client = bounded(
        "connecting",
        async_nats::ConnectOptions::new()
            .request_timeout(Some(ACK_TIMEOUT))
            .connect(servers),
    )
    .await
    .expect("connecting to the cluster");
    jetstream::ContextBuilder::new()
        .timeout(ACK_TIMEOUT)
        .build(client)
}

/// An R3 file stream on [`SUBJECT`], with direct gets allowed (reads served by any replica).
async fn create_stream(js: &jetstream::Context) -> stream::Stream {
    bounded(
        "creating the stream",
        js.create_stream(stream::Config {
            name: STREAM.to_owned(),
            subjects: vec![SUBJECT.to_owned()],
            num_replicas: 3,
            storage: stream::StorageType::File,
            allow_direct: true,
            ..Default::default()
        }),
    )
    .await
    .expect("creating an R3 stream")
}

/// Publishes `publish` on [`SUBJECT`] and waits for its acknowledgement.
async fn publish(
    js: &jetstream::Context,
    publish: PublishMessage,
) -> Result<PublishAck, PublishError> {
    bounded("a publish", async {
        js.send_publish(SUBJECT, publish).await?.await
    })
    .await
}

/// A message with `payload`.
fn message(payload: &str) -> PublishMessage {
    PublishMessage::build().payload(payload.to_owned().into())
}

/// The stream's last sequence, from the stream's leader.
async fn last_sequence(stream: &mut stream::Stream) -> u64 {
    bounded("stream info", stream.info())
        .await
        .expect("stream info")
        .state
        .last_sequence
}

/// (a) An R3 stream acknowledges each publish with its sequence, large ones too.
#[tokio::test]
async fn an_r3_stream_acknowledges_a_publish_with_its_sequence() {
    let cluster = NatsCluster::start(3);

    // async-nats takes several servers as a list, not as one comma-separated string (which it
    // parses as one URL, whose port then fails to parse).
    let refused = async_nats::connect(cluster.url_list()).await;
    assert!(refused.is_err(), "a comma-separated list is one bad URL");

    let js = connect(cluster.urls()).await;
    assert_eq!(js.client().server_info().max_payload, MAX_PAYLOAD);
    let mut stream = create_stream(&js).await;
    assert_eq!(stream.cached_info().config.num_replicas, 3);
    for expected in 1..=3 {
        let ack = publish(&js, message("batch")).await.expect("an ack");
        assert_eq!((ack.stream.as_str(), ack.sequence), (STREAM, expected));
        assert!(!ack.duplicate);
    }
    // A commit batch is one message: one near the raised payload limit is replicated too.
    let large = vec![7; MAX_PAYLOAD - 1024];
    let ack = publish(&js, PublishMessage::build().payload(large.into()))
        .await
        .expect("a large message's ack");
    assert_eq!(ack.sequence, 4);
    assert_eq!(last_sequence(&mut stream).await, 4);
}

/// (b) Fencing: a publish that names a last sequence that is not the last is refused, with
/// the server's code 10071, and not stored.
#[tokio::test]
async fn a_stale_expected_last_sequence_is_refused_with_10071() {
    let cluster = NatsCluster::start(3);
    let js = connect(cluster.urls()).await;
    create_stream(&js).await;

    // An empty stream's last sequence is 0: the first writer's first append names it.
    let first = publish(&js, message("a").expected_last_sequence(0)).await;
    assert!(matches!(classify(first), Outcome::Acked(ack) if ack.sequence == 1));
    let second = publish(&js, message("b").expected_last_sequence(1)).await;
    assert!(matches!(classify(second), Outcome::Acked(ack) if ack.sequence == 2));

    // A deposed writer still believes the last sequence is 1, or 0.
    for stale in [1, 0, 5] {
        let err = publish(&js, message("c").expected_last_sequence(stale))
            .await
            .expect_err("a stale expected sequence is refused");
        eprintln!("expected last sequence {stale} when it is 2: {err:?} / {err}");
        assert_eq!(err.kind(), PublishErrorKind::WrongLastSequence);
        assert_eq!(
            server_error_code(&err),
            Some(ErrorCode::STREAM_WRONG_LAST_SEQUENCE)
        );
        let server = err
            .source()
            .and_then(|source| source.downcast_ref::<jetstream::Error>())
            .expect("the server's error is the source");
        assert_eq!(server.error_code().0, 10071);
        assert_eq!(server.code(), 400);
        assert!(
            server.to_string().contains("wrong last sequence: 2"),
            "{server}"
        );
    }
    let mut stream = js.get_stream(STREAM).await.expect("the stream");
    assert_eq!(
        last_sequence(&mut stream).await,
        2,
        "nothing refused was stored"
    );
}

/// (c) Retrying: a message id seen before is answered as a duplicate, with the first one's
/// sequence, whatever its expected last sequence.
#[tokio::test]
async fn a_message_id_is_deduplicated_before_the_expected_sequence_is_checked() {
    let cluster = NatsCluster::start(3);
    let js = connect(cluster.urls()).await;
    let mut stream = create_stream(&js).await;
    publish(&js, message("before")).await.expect("an ack");

    let first = publish(
        &js,
        message("one")
            .message_id("batch-2")
            .expected_last_sequence(1),
    )
    .await
    .expect("the first publish of an id");
    assert_eq!((first.sequence, first.duplicate), (2, false));

    // The same publish again, as a retry after an ambiguous failure: the first ack back.
    let again = publish(
        &js,
        message("one")
            .message_id("batch-2")
            .expected_last_sequence(1),
    )
    .await
    .expect("a duplicate is acknowledged");
    assert_eq!((again.sequence, again.duplicate), (2, true));
    assert_eq!(last_sequence(&mut stream).await, 2, "stored once");

    // Another append since: the retry's expected sequence is stale now, and the id still wins.
    publish(&js, message("other")).await.expect("an ack");
    let stale = publish(
        &js,
        message("one")
            .message_id("batch-2")
            .expected_last_sequence(1),
    )
    .await;
    eprintln!("a duplicate id with a stale expected sequence: {stale:?}");
    let stale = stale.expect("a duplicate id is answered as a duplicate, not refused");
    assert_eq!((stale.sequence, stale.duplicate), (2, true));
    assert_eq!(last_sequence(&mut stream).await, 3);

    // An id not seen, with a stale expected sequence: refused.
    let fenced = publish(
        &js,
        message("new")
            .message_id("batch-4")
            .expected_last_sequence(2),
    )
    .await;
    assert!(matches!(classify(fenced), Outcome::Fenced));
    // And the refused id was not remembered: with the right sequence it is appended.
    let retried = publish(
        &js,
        message("new")
            .message_id("batch-4")
            .expected_last_sequence(3),
    )
    .await
    .expect("an id refused before is not a duplicate");
    assert_eq!((retried.sequence, retried.duplicate), (4, false));
}

/// A key-value bucket made by hand, as `Context::create_key_value` would make it (its
/// `kv_to_stream_config`), for a server it cannot make one on: the stream `KV_<bucket>` on
/// `$KV.<bucket>.>`, which `get_key_value` then opens as a bucket.
async fn create_key_value(
    js: &jetstream::Context,
    config: jetstream::kv::Config,
) -> jetstream::kv::Store {
    bounded(
        "creating the bucket's stream",
        js.create_stream(stream::Config {
            name: format!("KV_{}", config.bucket),
            subjects: vec![format!("$KV.{}.>", config.bucket)],
            max_messages_per_subject: config.history,
            max_age: config.max_age,
            num_replicas: config.num_replicas,
            storage: stream::StorageType::File,
            discard: stream::DiscardPolicy::New,
            allow_rollup: true,
            deny_delete: true,
            allow_direct: true,
            ..Default::default()
        }),
    )
    .await
    .expect("a bucket's stream");
    bounded("get_key_value", js.get_key_value(config.bucket))
        .await
        .expect("the bucket")
}

/// (d) The lease: a key-value entry created once, renewed by revision, gone after `max_age`.
#[tokio::test]
async fn a_key_value_lease_is_created_once_updated_by_revision_and_expires() {
    let cluster = NatsCluster::start(3);
    let js = connect(cluster.urls()).await;
    let max_age = Duration::from_secs(2);
    let config = jetstream::kv::Config {
        bucket: "lease".to_owned(),
        history: 1,
        max_age,
        num_replicas: 3,
        ..Default::default()
    };

    // async-nats 0.52 reads the account's limits before it creates a bucket, and cannot decode
    // 2.9.10's answer, which lacks `reserved_memory` and `reserved_storage`.
    let account = bounded("query_account", js.query_account()).await;
    eprintln!("query_account on 2.9.10: {account:?}");
    assert!(
        account.is_err(),
        "async-nats decodes 2.9.10's account info now"
    );
    let refused = bounded("create_key_value", js.create_key_value(config.clone())).await;
    let refused = refused.expect_err("create_key_value fails on 2.9.10");
    assert_eq!(refused.kind(), CreateKeyValueErrorKind::JetStream);
    let kv = create_key_value(&js, config).await;
    let created = bounded("create", kv.create("primary", "n0".into()))
        .await
        .expect("the first create");
    let taken = bounded("create", kv.create("primary", "n1".into()))
        .await
        .expect_err("a second create of a live key");
    eprintln!("create of a live key: {taken:?} / {taken}");
    assert_eq!(taken.kind(), CreateErrorKind::AlreadyExists);

    let renewed = bounded("update", kv.update("primary", "n0".into(), created))
        .await
        .expect("an update at the current revision");
    assert!(renewed > created);
    let stale = bounded("update", kv.update("primary", "n1".into(), created))
        .await
        .expect_err("an update at a stale revision");
    eprintln!("update at a stale revision: {stale:?} / {stale}");
    assert_eq!(stale.kind(), UpdateErrorKind::WrongLastRevision);
    assert_eq!(
        server_error_code(&stale),
        Some(ErrorCode::STREAM_WRONG_LAST_SEQUENCE)
    );

    // Unrenewed, the key expires: measured from the write's acknowledgement, polling every
    // 50 ms, a few times over, first until `entry` no longer shows it, then until `create`
    // succeeds (which writes it again, for the next run).
    let poll = Duration::from_millis(50);
    let mut last_write = (Instant::now(), renewed);
    for run in 0..3 {
        let (written, revision) = last_write;
        let gone = loop {
            let entry = bounded("entry", kv.entry("primary"))
                .await
                .expect("an entry");
            match entry {
                Some(entry) if entry.operation == Operation::Put => assert!(
                    written.elapsed() < max_age + Duration::from_secs(5),
                    "the key outlived max_age by 5 s"
                ),
                // An expired key has no entry at all, not a delete or purge marker.
                other => {
                    assert!(other.is_none(), "{other:?}");
                    break written.elapsed();
                }
            }
            tokio::time::sleep(poll).await;
        };
        let created = loop {
            match bounded("create", kv.create("primary", "n1".into())).await {
                Ok(revision) => break revision,
                Err(err) => assert_eq!(err.kind(), CreateErrorKind::AlreadyExists, "{err}"),
            }
            assert!(
                written.elapsed() < max_age + Duration::from_secs(5),
                "create failed 5 s past max_age, after entry() showed the key gone"
            );
            tokio::time::sleep(poll).await;
        };
        let after = written.elapsed();
        eprintln!(
            "run {run}: with max_age {max_age:?}, entry() showed the key gone {gone:?} after \
             the last write, and create succeeded after {after:?}"
        );
        // Timed from the acknowledgement, which comes a moment after the server's timestamp
        // that expiry counts from. `create` is checked by the stream's leader; `entry` is a
        // direct get, which any replica answers, and one that has not applied the last write
        // yet answers `None` at once (seen on a loaded machine): no expiry to check there.
        assert!(
            after + Duration::from_millis(250) >= max_age,
            "expired early: {after:?}"
        );
        // The lease's old holder, renewing late, is refused.
        let late = bounded("update", kv.update("primary", "n0".into(), revision))
            .await
            .expect_err("a renewal after expiry");
        assert_eq!(late.kind(), UpdateErrorKind::WrongLastRevision);
        last_write = (Instant::now(), created);
    }
}

/// (e) Standbys' reads: an ordered consumer from a start sequence, a message by sequence, the
/// last sequence.
#[tokio::test]
async fn an_ordered_consumer_reads_from_a_start_sequence_and_messages_are_read_by_sequence() {
    let cluster = NatsCluster::start(3);
    let js = connect(cluster.urls()).await;
    let mut stream = create_stream(&js).await;
    for i in 1..=10 {
        publish(&js, message(&format!("m{i}")))
            .await
            .expect("an ack");
    }
    assert_eq!(last_sequence(&mut stream).await, 10);

    let one = bounded("get_raw_message", stream.get_raw_message(5))
        .await
        .expect("a message by sequence");
    assert_eq!((one.sequence, &one.payload[..]), (5, &b"m5"[..]));
    // A direct get is answered by any replica, which may not have applied the message yet.
    let direct = bounded("direct_get", async {
        loop {
            match stream.direct_get(6).await {
                Ok(message) => break message,
                Err(err) if err.kind() == DirectGetErrorKind::NotFound => {
                    eprintln!("direct_get(6) from a replica behind: {err}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(err) => panic!("a direct get: {err}"),
            }
        }
    })
    .await;
    assert_eq!((direct.sequence, &direct.payload[..]), (6, &b"m6"[..]));

    let consumer = bounded(
        "creating the ordered consumer",
        stream.create_consumer(consumer::pull::OrderedConfig {
            deliver_policy: consumer::DeliverPolicy::ByStartSequence { start_sequence: 4 },
            ..Default::default()
        }),
    )
    .await
    .expect("an ordered consumer");
    let mut messages = bounded("messages", consumer.messages())
        .await
        .expect("its messages");
    for expected in 4..=12 {
        if expected == 11 {
            // Tailing: what is appended after the consumer started comes too.
            for i in 11..=12 {
                publish(&js, message(&format!("m{i}")))
                    .await
                    .expect("an ack");
            }
        }
        let next = bounded("the next message", messages.next())
            .await
            .expect("the stream goes on")
            .expect("a message");
        let info = next.info().expect("a JetStream message's info");
        assert_eq!(info.stream_sequence, expected);
        assert_eq!(&next.payload[..], format!("m{expected}").as_bytes());
    }
}

/// (f) Failures: one node of three down (the stream's leader), then two, then both back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn publishes_go_on_with_one_node_down_and_stop_with_two() {
    let mut cluster = NatsCluster::start(3);
    let js = connect(cluster.urls()).await;
    let mut stream = create_stream(&js).await;
    let mut acked = vec![publish(&js, message("0")).await.expect("an ack").sequence];

    // The worst single failure: the node that leads the stream.
    let first = stream_leader(&mut stream).await;
    eprintln!(
        "client on {}, stream leader n{first}",
        js.client().server_info().server_name
    );
    cluster.kill(first);
    let (sequence, took, failures) = publish_until_acked(&js, "1", STEP).await;
    eprintln!(
        "the stream leader n{first} killed: a publish acked after {took:?} ({failures:?} before)"
    );
    acked.push(sequence);

    // Two of three down: no quorum, no acknowledgement. The new stream leader is the second
    // to go, so the survivor is a follower.
    let second = stream_leader(&mut stream).await;
    cluster.kill(second);
    for attempt in 0..3 {
        let started = Instant::now();
        let result = publish(&js, message("lost")).await;
        eprintln!(
            "n{second}, the new stream leader, killed too; attempt {attempt}: {:?} after {:?}",
            result.as_ref().map_err(|err| err.to_string()),
            started.elapsed()
        );
        match classify(result) {
            // Nothing listens on the stream's subject: it has no leader ("no responders").
            Outcome::Unavailable(PublishErrorKind::StreamNotFound) => {}
            // The client was on a killed node and is still reconnecting.
            Outcome::Unavailable(PublishErrorKind::TimedOut) => {
                assert!(started.elapsed() >= ACK_TIMEOUT)
            }
            other => panic!("a publish without quorum: {other:?}"),
        }
    }

    // Back: acknowledged again once one of them is up (two of three), while the restart
    // waits for the node to be current. The stalest node first: the one killed first.
    let restarted = Instant::now();
    let pending = tokio::spawn({
        let js = js.clone();
        async move { publish_until_acked(&js, "2", QUORUM_BACK).await }
    });
    cluster.restart(first);
    let rejoined = restarted.elapsed();
    let (sequence, took, failures) = pending.await.expect("the publishing task");
    eprintln!(
        "n{first} restarted (two of three up): back in the cluster after {rejoined:?}, a \
         publish acked {took:?} after the restart began ({failures:?} before)"
    );
    acked.push(sequence);
    let restarted = Instant::now();
    cluster.restart(second);
    eprintln!(
        "n{second} restarted (three of three): back in the cluster after {:?}",
        restarted.elapsed()
    );
    acked.push(publish(&js, message("3")).await.expect("an ack").sequence);

    // Every acknowledged publish is there, in order. The publishes without quorum found no
    // stream leader; any of them stored all the same (sent by a reconnecting client after
    // the fact) would be between.
    let last = last_sequence(&mut stream).await;
    assert!(acked.windows(2).all(|pair| pair[0] < pair[1]), "{acked:?}");
    assert_eq!(acked.last(), Some(&last));
    for sequence in 1..=last {
        let stored = bounded("get_raw_message", stream.get_raw_message(sequence))
            .await
            .expect("a stored message");
        assert!(acked.contains(&sequence) || &stored.payload[..] == b"lost");
    }
    eprintln!("acknowledged {acked:?} of {last} stored");
}

/// (f) An ambiguous publish: the stream's leader alone times it out, and commits it when a
/// follower is back, so that its retry is answered as a duplicate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_publish_the_leader_cannot_commit_times_out_and_its_retry_is_stored_once() {
    let mut cluster = NatsCluster::start(3);
    let js = connect(cluster.urls()).await;
    let mut stream = create_stream(&js).await;
    publish(&js, message("0")).await.expect("an ack");

    // The stream leader alone, with a client on it: it takes the publish and cannot commit.
    let leader = stream_leader(&mut stream).await;
    let js = connect(&cluster.urls()[leader]).await;
    let followers: Vec<usize> = (0..3).filter(|&i| i != leader).collect();
    for &follower in &followers {
        cluster.kill(follower);
    }
    let started = Instant::now();
    let ambiguous = publish(&js, message("batch").message_id("batch-2")).await;
    eprintln!(
        "the stream leader n{leader} alone: {:?} after {:?}",
        ambiguous.as_ref().map_err(|err| err.to_string()),
        started.elapsed()
    );
    assert!(matches!(
        classify(ambiguous),
        Outcome::Unavailable(PublishErrorKind::TimedOut)
    ));

    // The writer retries the same publish until it is answered: whether the first one was
    // committed when the quorum came back, or dropped, the message is stored once.
    let restarted = Instant::now();
    let pending = tokio::spawn({
        let js = js.clone();
        async move {
            let started = Instant::now();
            loop {
                assert!(
                    started.elapsed() < QUORUM_BACK,
                    "no ack within {QUORUM_BACK:?}"
                );
                match publish(&js, message("batch").message_id("batch-2")).await {
                    Ok(ack) => return ack,
                    Err(err) => assert!(
                        matches!(
                            err.kind(),
                            PublishErrorKind::TimedOut | PublishErrorKind::StreamNotFound
                        ),
                        "{err}"
                    ),
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    });
    cluster.restart(followers[0]);
    let retried = pending.await.expect("the publishing task");
    eprintln!(
        "a follower restarted: the retry answered {retried:?} {:?} after the restart began",
        restarted.elapsed()
    );
    assert_eq!(retried.sequence, 2);
    assert_eq!(last_sequence(&mut stream).await, 2, "stored once");
}

/// The node that leads `stream` now.
async fn stream_leader(stream: &mut stream::Stream) -> usize {
    let leader = bounded("stream info", stream.info())
        .await
        .expect("stream info")
        .cluster
        .as_ref()
        .and_then(|cluster| cluster.leader.clone())
        .expect("the stream has a leader");
    leader[1..].parse().expect("a node's name is n<i>")
}

/// Publishes until a publish is acknowledged, as a writer waiting out a failover would (with
/// the same message id each time, so that at most one is stored): its sequence, how long it
/// took, and the errors met before, as runs of one kind and their lengths.
async fn publish_until_acked(
    js: &jetstream::Context,
    payload: &str,
    within: Duration,
) -> (u64, Duration, Vec<(PublishErrorKind, usize)>) {
    let started = Instant::now();
    let mut failures: Vec<(PublishErrorKind, usize)> = Vec::new();
    loop {
        assert!(
            started.elapsed() < within,
            "no ack within {within:?}: {failures:?}"
        );
        match publish(js, message(payload).message_id(payload)).await {
            Ok(ack) => return (ack.sequence, started.elapsed(), failures),
            Err(err) => match failures.last_mut() {
                Some((kind, count)) if *kind == err.kind() => *count += 1,
                _ => failures.push((err.kind(), 1)),
            },
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// (f) A paused node (a long pause, a partition) is silent rather than gone: publishes to the
/// stream it led time out until another leader is elected. And the harness's signals.
#[tokio::test]
async fn a_paused_stream_leader_times_publishes_out_until_another_is_elected() {
    let mut cluster = NatsCluster::start(3);
    let setup = connect(cluster.urls()).await;
    let mut stream = create_stream(&setup).await;
    publish(&setup, message("0")).await.expect("an ack");
    let mut tries = 0;
    let (leader, js, failures) = loop {
        let leader = stream_leader(&mut stream).await;
        // A client on another node: a paused node keeps its connections and answers nothing.
        let js = connect(&cluster.urls()[(leader + 1) % 3]).await;
        cluster.pause(leader);
        assert!(cluster.is_running(leader));
        let (_, took, failures) = publish_until_acked(&js, "while paused", STEP).await;
        eprintln!("the stream leader n{leader} paused: acked after {took:?} ({failures:?} before)");
        tries += 1;
        if !failures.is_empty() || tries == 3 {
            break (leader, js, failures);
        }
        // Acknowledged at once: the stream's leadership had moved before the pause (seen
        // once in about ten runs). Again, with the leader it has now.
        cluster.resume(leader);
    };
    assert!(
        !failures.is_empty(),
        "a paused stream leader made no publish fail"
    );
    assert!(
        failures
            .iter()
            .all(|(kind, _)| *kind == PublishErrorKind::TimedOut),
        "{failures:?}"
    );

    // Resumed, it rejoins as a follower; paused again, SIGKILL ends it all the same.
    cluster.resume(leader);
    cluster.pause(leader);
    cluster.kill(leader);
    assert!(!cluster.is_running(leader));
    cluster.restart(leader);
    assert!(cluster.is_running(leader));
    assert_eq!(cluster.log(leader).matches("Server is ready").count(), 2);
    publish(&js, message("after")).await.expect("an ack");
}
