//! Subscriptions and the cache: rows in, live updates with the right callbacks, overlapping
//! query sets, unsubscribing, refused queries, one-off queries, two clients.

use crate::support::{
    eventually, log, memory_server, memory_server_with, texts, Live, Message, User,
};
use wasmod_client::{Error, SubscriptionState};

const MESSAGES: &str = "SELECT * FROM message";
const USERS: &str = "SELECT * FROM user";

#[tokio::test]
async fn subscribing_fills_the_cache_and_each_change_calls_back_once() {
    let live = Live::serve(memory_server()).await;
    let client = live.client().await;
    client
        .call_reducer("send", &("before".to_owned(),))
        .await
        .expect("sent");

    let users = client.table::<User>("user");
    let messages = client.table::<Message>("message");
    let (inserted, updated, deleted) = (log(), log(), log());
    let seen = inserted.clone();
    messages.on_insert(move |message: &Message| seen.lock().push(message.text.clone()));
    let seen = updated.clone();
    users.on_update(move |old: &User, new: &User| {
        seen.lock().push((old.name.clone(), new.name.clone()))
    });
    let seen = deleted.clone();
    users.on_delete(move |user: &User| seen.lock().push(user.name.clone()));
    let applied = log();
    let seen = applied.clone();
    let subscription = client
        .subscription()
        .on_applied(move || seen.lock().push(()))
        .subscribe([MESSAGES, USERS]);
    subscription.applied().await.expect("applied");
    assert_eq!(subscription.state(), SubscriptionState::Applied);
    assert_eq!(applied.lock().len(), 1);
    assert_eq!(
        *inserted.lock(),
        ["before"],
        "the initial rows call on_insert"
    );
    assert_eq!(users.count(), 1);

    let outcome = client
        .call_reducer("send", &("hi".to_owned(),))
        .await
        .expect("sent");
    assert_eq!(
        *inserted.lock(),
        ["before", "hi"],
        "the call resolves after its callbacks"
    );
    let hi = messages
        .rows()
        .expect("rows")
        .into_iter()
        .find(|m| m.text == "hi")
        .expect("cached");
    assert_eq!(hi.sender, client.identity());

    client
        .call_reducer("set_name", &("alice".to_owned(),))
        .await
        .expect("named");
    let renamed = updated.lock().clone();
    assert_eq!(renamed.len(), 1, "{renamed:?}");
    assert_eq!(renamed[0].1, "alice");
    assert!(
        deleted.lock().is_empty(),
        "a rename is an update, not a delete"
    );
    assert_eq!(users.rows().expect("rows")[0].name, "alice");
    assert!(outcome.offset > 0);
}

#[tokio::test]
async fn overlapping_query_sets_share_rows_and_unsubscribing_releases_only_the_others() {
    let live = Live::serve(memory_server()).await;
    let client = live.client().await;
    for text in ["one", "two", "three"] {
        client
            .call_reducer("send", &(text.to_owned(),))
            .await
            .expect("sent");
    }
    let all = client.subscription().subscribe([MESSAGES]);
    all.applied().await.expect("applied");
    let first = client
        .subscription()
        .subscribe(["SELECT * FROM message WHERE id = 1"]);
    first.applied().await.expect("applied");
    let messages = client.table::<Message>("message");
    assert_eq!(messages.count(), 3, "a row held twice is stored once");

    let deleted = log();
    let seen = deleted.clone();
    messages.on_delete(move |message: &Message| seen.lock().push(message.id));
    all.unsubscribe();
    eventually("the unsubscribed rows leave", || messages.count() == 1).await;
    let mut gone = deleted.lock().clone();
    gone.sort_unstable();
    assert_eq!(gone, [2, 3], "id 1 is still held by the other query set");
    assert_eq!(messages.rows().expect("rows")[0].text, "one");

    client
        .call_reducer("send", &("four".to_owned(),))
        .await
        .expect("sent");
    assert_eq!(
        messages.count(),
        1,
        "no update reaches the unsubscribed query set"
    );
}

#[tokio::test]
async fn a_refused_query_set_calls_on_error_and_holds_nothing() {
    let live = Live::serve(memory_server()).await;
    let client = live.client().await;
    let errors = log();
    let seen = errors.clone();
    let refused = client
        .subscription()
        .on_error(move |message| seen.lock().push(message.to_owned()))
        .subscribe([MESSAGES, "SELECT * FROM nowhere"]);
    let error = refused.applied().await.expect_err("refused");
    assert!(
        matches!(&error, Error::Query(message) if message.contains("nowhere")),
        "{error:?}"
    );
    assert_eq!(errors.lock().len(), 1);
    assert!(matches!(refused.state(), SubscriptionState::Failed(_)));
    assert_eq!(client.table::<Message>("message").count(), 0);
}

#[tokio::test]
async fn one_off_queries_return_rows_or_the_reason() {
    let live = Live::serve(memory_server()).await;
    let client = live.client().await;
    client
        .call_reducer("send", &("hello".to_owned(),))
        .await
        .expect("sent");
    let tables = client.one_off_query(MESSAGES).await.expect("rows");
    assert_eq!(tables.len(), 1);
    assert_eq!(tables[0].table, "message");
    let rows: Vec<Message> = tables[0]
        .rows
        .iter()
        .map(|row| wasmod_abi::encoding::from_slice(row).expect("a message"))
        .collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].text, "hello");
    let error = client
        .one_off_query("SELECT * FROM nowhere")
        .await
        .expect_err("refused");
    assert!(matches!(error, Error::Query(_)), "{error:?}");
}

#[tokio::test]
async fn two_clients_see_each_others_writes() {
    let live = Live::serve(memory_server()).await;
    let (alice, bob) = (live.client().await, live.client().await);
    let heard = log();
    let seen = heard.clone();
    bob.table::<Message>("message")
        .on_insert(move |message: &Message| {
            seen.lock().push((message.sender, message.text.clone()))
        });
    let (a, b) = (
        alice.subscription().subscribe([MESSAGES, USERS]),
        bob.subscription().subscribe([MESSAGES, USERS]),
    );
    a.applied().await.expect("applied");
    b.applied().await.expect("applied");
    alice
        .call_reducer("send", &("from alice".to_owned(),))
        .await
        .expect("sent");
    bob.call_reducer("send", &("from bob".to_owned(),))
        .await
        .expect("sent");
    eventually("alice sees bob's message", || texts(&alice).len() == 2).await;
    assert_eq!(texts(&alice), texts(&bob));
    assert_eq!(
        *heard.lock(),
        [
            (alice.identity(), "from alice".to_owned()),
            (bob.identity(), "from bob".to_owned())
        ]
    );
    assert_eq!(alice.table::<User>("user").count(), 2);
}

/// Rows that come in parts (`SubscribeRows`, then `SubscribeApplied`) are applied at once: the
/// first `on_insert` already sees every row in the cache, and each row calls back once.
#[tokio::test]
async fn rows_in_parts_are_applied_together_before_any_callback() {
    let mut config = wasmod_server::ServerConfig::default();
    config.node.subscription_part_bytes = 256; // about three message rows a part
    let live = Live::serve(memory_server_with(config)).await;
    let writer = live.client().await;
    for n in 0..30 {
        writer
            .call_reducer("send", &(format!("part row {n:02}"),))
            .await
            .expect("sent");
    }
    let reader = live.client().await;
    let messages = reader.table::<Message>("message");
    let seen = log();
    let (handle, record) = (messages.clone(), seen.clone());
    messages.on_insert(move |message: &Message| {
        record.lock().push((message.text.clone(), handle.count()));
    });
    let subscription = reader.subscription().subscribe([MESSAGES]);
    subscription.applied().await.expect("applied");
    let seen = seen.lock().clone();
    assert_eq!(seen.len(), 30, "{seen:?}");
    assert!(
        seen.iter().all(|(_, count)| *count == 30),
        "a callback saw a partial cache: {seen:?}"
    );
    let mut texts: Vec<_> = seen.into_iter().map(|(text, _)| text).collect();
    texts.sort();
    texts.dedup();
    assert_eq!(texts.len(), 30);
    assert_eq!(messages.count(), 30);
}

/// Two queries of one set select the same row (the server sends it once per query): the
/// cache holds it once, calls back once when it arrives, and a change that takes it out of
/// one query only (a user going offline) is one update, not a delete and an insert.
#[tokio::test]
async fn overlapping_queries_in_one_set_call_back_once_per_row() {
    let live = Live::serve(memory_server()).await;
    let watcher = live.client().await;
    let users = watcher.table::<User>("user");
    let (inserted, updated, deleted) = (log(), log(), log());
    let seen = inserted.clone();
    users.on_insert(move |user: &User| seen.lock().push(user.identity));
    let seen = updated.clone();
    users.on_update(move |old: &User, new: &User| seen.lock().push((old.online, new.online)));
    let seen = deleted.clone();
    users.on_delete(move |user: &User| seen.lock().push(user.identity));
    let subscription = watcher
        .subscription()
        .subscribe(["SELECT * FROM user WHERE online = true", USERS]);
    subscription.applied().await.expect("applied");
    assert_eq!(
        *inserted.lock(),
        [watcher.identity()],
        "one insert for two holders"
    );

    let other = live.client().await;
    let them = other.identity();
    eventually("the other user arrives", || inserted.lock().len() == 2).await;
    assert_eq!(users.count(), 2);
    other.disconnect().await;
    eventually("the other user goes offline", || !updated.lock().is_empty()).await;
    assert_eq!(*updated.lock(), [(true, false)]);
    assert!(deleted.lock().is_empty(), "still held by `{USERS}`");
    let offline = users.find_by("identity", &them).expect("decodes");
    assert_eq!(offline.map(|user| user.online), Some(false));
    assert_eq!(inserted.lock().len(), 2, "no second insert");
}

/// A removed callback is not called again; the others are; removing twice says so.
#[tokio::test]
async fn a_removed_callback_is_not_called_again() {
    let live = Live::serve(memory_server()).await;
    let client = live.client().await;
    let messages = client.table::<Message>("message");
    let (kept, removed) = (log(), log());
    let seen = kept.clone();
    messages.on_insert(move |message: &Message| seen.lock().push(message.text.clone()));
    let seen = removed.clone();
    let id = messages.on_insert(move |message: &Message| seen.lock().push(message.text.clone()));
    let subscription = client.subscription().subscribe([MESSAGES]);
    subscription.applied().await.expect("applied");
    client
        .call_reducer("send", &("before".to_owned(),))
        .await
        .expect("sent");
    assert!(messages.remove_callback(id));
    assert!(!messages.remove_callback(id), "already removed");
    client
        .call_reducer("send", &("after".to_owned(),))
        .await
        .expect("sent");
    assert_eq!(*kept.lock(), ["before", "after"]);
    assert_eq!(*removed.lock(), ["before"]);
}
