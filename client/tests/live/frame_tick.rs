//! A client built with `Callbacks::OnFrameTick`: nothing the server sends reaches the cache,
//! the callbacks or the call futures until the application ticks, and then each message in
//! order, on the ticking thread, its callbacks seeing the cache as of that message.

use crate::support::{log, memory_server, Live, Message, PATIENCE};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, ThreadId};
use std::time::Duration;
use wasmod_client::{Callbacks, Client, SubscriptionState};

/// What a callback saw: the row's text, the cache's count then, whether a tick was running
/// and on which thread it ran.
type Seen = (String, usize, bool, ThreadId);

/// Ticks `client` every 10 ms until `done` holds; panics after [`PATIENCE`].
async fn tick_until(client: &Client, ticking: &AtomicBool, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "never done ticking");
        ticking.store(true, Ordering::SeqCst);
        client.frame_tick();
        ticking.store(false, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callbacks_wait_for_the_tick_and_run_in_order_on_its_thread_over_a_consistent_cache() {
    let live = Live::serve(memory_server()).await;
    let ticked = live
        .builder()
        .await
        .callbacks(Callbacks::OnFrameTick)
        .connect()
        .await
        .expect("connected");
    let writer = live.client().await;
    assert_eq!(
        writer.frame_tick(),
        0,
        "a default client has nothing queued"
    );

    let ticking = Arc::new(AtomicBool::new(false));
    let messages = ticked.table::<Message>("message");
    let seen: crate::support::Log<Seen> = log();
    let (record, counted, in_tick) = (seen.clone(), messages.clone(), ticking.clone());
    messages.on_insert(move |message: &Message| {
        record.lock().push((
            message.text.clone(),
            counted.count(),
            in_tick.load(Ordering::SeqCst),
            thread::current().id(),
        ));
    });
    let subscription = ticked.subscription().subscribe(["SELECT * FROM message"]);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        subscription.state(),
        SubscriptionState::Pending,
        "the answer waits for a tick"
    );
    tick_until(&ticked, &ticking, || {
        subscription.state() == SubscriptionState::Applied
    })
    .await;

    for text in ["one", "two", "three"] {
        writer
            .call_reducer("send", &(text.to_owned(),))
            .await
            .expect("sent");
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(seen.lock().is_empty(), "no callback before the tick");
    assert_eq!(messages.count(), 0, "the cache changes only in a tick");
    tick_until(&ticked, &ticking, || seen.lock().len() == 3).await;

    let here = thread::current().id();
    let expected: Vec<Seen> = [("one", 1), ("two", 2), ("three", 3)]
        .into_iter()
        .map(|(text, count)| (text.to_owned(), count, true, here))
        .collect();
    assert_eq!(
        *seen.lock(),
        expected,
        "one transaction at a time, each callback seeing the cache as of its transaction"
    );

    let mut call = pin!(ticked.call_reducer("send", &("mine".to_owned(),)));
    let waited = tokio::time::timeout(Duration::from_millis(200), call.as_mut()).await;
    assert!(waited.is_err(), "a reducer's answer waits for a tick");
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let outcome = loop {
        assert!(tokio::time::Instant::now() < deadline, "never answered");
        ticking.store(true, Ordering::SeqCst);
        ticked.frame_tick();
        ticking.store(false, Ordering::SeqCst);
        if let Ok(outcome) = tokio::time::timeout(Duration::from_millis(10), call.as_mut()).await {
            break outcome;
        }
    };
    assert!(outcome.expect("committed").offset > 0);
    let last = seen.lock().last().cloned().expect("seen");
    assert_eq!(
        last,
        ("mine".to_owned(), 4, true, here),
        "the call resolves after its callbacks, in a tick"
    );
    assert_eq!(messages.count(), 4);
}
