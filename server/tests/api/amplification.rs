//! The reproduction of issue 27's subscription amplification (items 1 and 3), measured over
//! loopback against a server in this process; ignored by default, run by hand before and after
//! a change (`docs/security.md` quotes its figures):
//!
//! ```text
//! cargo test -p wasmod-server --test api -- --ignored --nocapture amplification
//! ```
//!
//! - `repeated`: one `Subscribe` repeating `SELECT * FROM message` 2,000 and 10,000
//!   times over 6,500 messages: the time to its answer and the peak memory it adds;
//! - `commits`: over 15,500 messages, another client's reducer call made
//!   while such a `Subscribe` is handled (2,000 copies; 256 distinct queries that each return
//!   the whole table; 30 distinct queries that each read it to return nothing, on each of 8
//!   connections): how long it takes;
//! - `sets`: one connection subscribing 6,000 sets, 500 at a time: the time of the first and
//!   last 500;
//! - `heavy` (item 4): one client subscribing 20 sets of 15 distinct queries of 1,000 `OR`
//!   terms each (as many as a query's 4,096 tokens hold), then another client sending 200
//!   messages, which every query checks: how many sets were taken, and the 200 calls' time.
//!
//! Meanwhile another client calls a reducer again and again: the longest call is how long
//! commits were held back.

use crate::exhaustion::insert_messages;
use crate::live::{call_reducer, subscribe, Client, Connect, Encoding, Live};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmod_server::ServerConfig;

const MESSAGES: &str = "SELECT * FROM message";

/// A server with `config` and `rows` messages, committed directly.
pub(crate) async fn with_messages(config: ServerConfig, rows: u64) -> Live {
    let live = Live::start(config).await;
    let texts = (1..=rows).map(|id| format!("message number {id} of the reproduction"));
    insert_messages(&live.database, 1, texts);
    live
}

pub(crate) async fn client(live: &Live) -> Client {
    let mut client = Client::connect(live, Encoding::Binary, Connect::default()).await;
    client.hello().await;
    client
}

/// The peak resident memory of this process since the last [`reset_peak`], in MiB.
pub(crate) fn peak_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib / 1024)
}

pub(crate) fn resident_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib / 1024)
}

pub(crate) fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The first answer to a `Subscribe`: its kind.
pub(crate) async fn answer(client: &mut Client) -> String {
    loop {
        let message = match client.next(Duration::from_secs(300)).await {
            Some(Ok(message)) => message,
            other => panic!("no answer: {other:?}"),
        };
        for kind in ["SubscribeApplied", "SubscriptionError"] {
            if message.get(kind).is_some() {
                return kind.to_owned();
            }
        }
    }
}

/// How long `client`'s call of `save_draft` takes, to its own update (a draft: not a row the
/// subscriptions read, so that the subscribers are sent nothing).
pub(crate) async fn reducer(client: &mut Client, id: u32) -> Duration {
    let started = Instant::now();
    client
        .send(call_reducer(id, "save_draft", &["timed"]))
        .await;
    loop {
        match client.next(Duration::from_secs(300)).await {
            Some(Ok(message)) if message.get("TransactionUpdate").is_some() => {
                if message["TransactionUpdate"]["request_id"] == id {
                    return started.elapsed();
                }
            }
            Some(Ok(_)) => {}
            other => panic!("no update: {other:?}"),
        }
    }
}

/// Calls `save_draft` again and again on `caller` until `stop` is set; returns the longest call and
/// how many there were.
fn reducers(
    mut caller: Client,
    stop: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<(Duration, u32, Client)> {
    tokio::spawn(async move {
        let (mut longest, mut calls) = (Duration::ZERO, 0);
        while !stop.load(Ordering::Relaxed) {
            calls += 1;
            longest = longest.max(reducer(&mut caller, calls).await);
        }
        (longest, calls, caller)
    })
}

async fn repeated(config: ServerConfig, label: &str) {
    let live = with_messages(config, 6_500).await;
    for copies in [2_000, 10_000] {
        let mut client = client(&live).await;
        let queries = vec![MESSAGES; copies];
        let before = resident_mib();
        reset_peak();
        let started = Instant::now();
        client.send(subscribe(1, &queries)).await;
        let kind = answer(&mut client).await;
        println!(
            "{label}: {copies} copies over 6,500 rows: {kind} in {:?}, RSS {before} MiB, peak +{} MiB",
            started.elapsed(),
            peak_mib().saturating_sub(before)
        );
        client.close().await;
    }
    live.stop().await;
}

async fn commits(config: ServerConfig, label: &str) {
    let live = with_messages(config, 15_500).await;
    let mut caller = client(&live).await;
    println!(
        "{label}: a reducer alone: {:?}",
        reducer(&mut caller, 1).await
    );
    // Queries that read the whole table (`text` has no index): every row, or none.
    let distinct = |count: usize, op: &str| -> Vec<String> {
        (0..count)
            .map(|n| format!("SELECT * FROM message WHERE text {op} 'not {n}'"))
            .collect()
    };
    let copies = vec![MESSAGES.to_owned(); 2_000];
    let cases = [
        ("2,000 copies", 1, copies),
        ("256 distinct of every row", 1, distinct(256, "!=")),
        (
            "30 distinct of no row on each of 8 connections",
            8,
            distinct(30, "="),
        ),
    ];
    for (what, connections, queries) in cases {
        let queries: Vec<&str> = queries.iter().map(String::as_str).collect();
        let mut subscribers = Vec::new();
        for _ in 0..connections {
            subscribers.push(client(&live).await);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let calling = reducers(caller, stop.clone());
        let started = Instant::now();
        for subscriber in &mut subscribers {
            subscriber.send(subscribe(1, &queries)).await;
        }
        let mut kinds = Vec::new();
        for subscriber in &mut subscribers {
            kinds.push(answer(subscriber).await);
        }
        let answered = started.elapsed();
        stop.store(true, Ordering::Relaxed);
        let (longest, calls, back) = calling.await.expect("the calls");
        caller = back;
        kinds.dedup();
        println!(
            "{label}: a Subscribe of {what} over 15,500 rows: {kinds:?} in {answered:?}; \
             meanwhile {calls} reducer calls, the longest {longest:?}"
        );
        for subscriber in subscribers {
            subscriber.close().await;
        }
    }
    live.stop().await;
}

async fn sets(config: ServerConfig, label: &str, count: u32) {
    let live = with_messages(config, 100).await;
    let caller = client(&live).await;
    let mut subscriber = client(&live).await;
    let query = ["SELECT * FROM message WHERE id = 1"];
    let started = Instant::now();
    let mut refused = 0;
    let stop = Arc::new(AtomicBool::new(false));
    let calling = reducers(caller, stop.clone());
    for block in 0..count / 500 {
        let block_started = Instant::now();
        for n in 0..500 {
            subscriber
                .send(subscribe(block * 500 + n + 1, &query))
                .await;
        }
        for _ in 0..500 {
            if answer(&mut subscriber).await == "SubscriptionError" {
                refused += 1;
            }
        }
        if block == 0 || block + 1 == count / 500 {
            println!(
                "{label}: subscribes {}..{}: {:?}",
                block * 500 + 1,
                block * 500 + 500,
                block_started.elapsed(),
            );
        }
    }
    stop.store(true, Ordering::Relaxed);
    let (longest, calls, _) = calling.await.expect("the calls");
    println!(
        "{label}: {count} subscribes in {:?} ({refused} refused); meanwhile {calls} reducer \
         calls, the longest {longest:?}",
        started.elapsed(),
    );
    live.stop().await;
}
async fn heavy(config: ServerConfig, label: &str) {
    let live = with_messages(config, 0).await;
    let mut subscriber = client(&live).await;
    let mut taken = 0;
    for set in 0..20u32 {
        let queries: Vec<String> = (0..15)
            .map(|query| {
                let terms: Vec<String> = (0..1_000)
                    .map(|term| format!("text = 's{set}q{query}t{term}'"))
                    .collect();
                format!("SELECT * FROM message WHERE {}", terms.join(" OR "))
            })
            .collect();
        let queries: Vec<&str> = queries.iter().map(String::as_str).collect();
        subscriber.send(subscribe(set, &queries)).await;
        if answer(&mut subscriber).await == "SubscribeApplied" {
            taken += 1;
        }
    }
    let mut writer = client(&live).await;
    let started = Instant::now();
    for id in 1..=200 {
        writer.send(call_reducer(id, "send", &["heavy"])).await;
        loop {
            match writer.next(Duration::from_secs(300)).await {
                Some(Ok(message)) if message["TransactionUpdate"]["request_id"] == id => break,
                Some(Ok(_)) => {}
                other => panic!("no update: {other:?}"),
            }
        }
    }
    println!(
        "heavy ({label}): {taken} of 20 sets of 15 queries of 1,000 terms taken; 200 messages \
         sent in {:?}",
        started.elapsed()
    );
    live.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, run by hand"]
async fn amplification() {
    let defaults = ServerConfig::default();
    repeated(defaults, "defaults").await;
    commits(defaults, "defaults").await;
    sets(defaults, "defaults", 6_000).await;
    // The same with the caps on queries and sets out of the way: what deduplication, the
    // bound on reads and in-place groups do on their own.
    let mut raised = ServerConfig::default();
    raised.node.max_queries_per_set = 20_000;
    raised.node.max_query_sets_per_connection = 20_000;
    repeated(raised, "caps raised").await;
    commits(raised, "caps raised").await;
    sets(raised, "caps raised", 6_000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, run by hand"]
async fn amplification_by_query_cost() {
    heavy(ServerConfig::default(), "defaults").await;
    let mut raised = ServerConfig::default();
    raised.node.max_query_cost_per_identity = usize::MAX;
    heavy(raised, "cost cap raised").await;
}
