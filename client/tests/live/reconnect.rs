//! Reconnection: the server stopped and restarted on the same data directory under a
//! subscribed client, which comes back as the same identity, resumes, and ends up with the
//! cache a fresh client gets, having seen callbacks only for what changed.

use crate::support::{
    crash_image, durable_server, eventually, log, memory_server, texts, Live, Message, User,
};
use std::time::Duration;
use wasmod_client::{Backoff, Client, ConnectionState, Error};

const QUERIES: [&str; 2] = ["SELECT * FROM message", "SELECT * FROM user"];

/// Every cached row of `client`, encoded and sorted, per table.
fn snapshot(client: &Client) -> (Vec<String>, Vec<(String, bool)>) {
    let mut users: Vec<(String, bool)> = client
        .table::<User>("user")
        .rows()
        .expect("rows")
        .into_iter()
        .map(|user| (user.name, user.online))
        .collect();
    users.sort();
    (texts(client), users)
}

/// A fresh client of `live`, subscribed to the same queries, once `client`'s cache holds what
/// the fresh one's does (`what` says when that is expected).
async fn like_a_fresh_client(live: &Live, client: &Client, what: &str) -> Client {
    let fresh = live.client().await;
    let fresh_subscription = fresh.subscription().subscribe(QUERIES);
    fresh_subscription.applied().await.expect("applied");
    eventually(what, || snapshot(client) == snapshot(&fresh)).await;
    fresh
}

/// The client waits three seconds before reconnecting, so that the restarted server's commits
/// (another user's rename and message) happen while it is away and reach it as the resumed
/// answer's changes: a rename is a delete and an insert there, which the cache pairs into one
/// update.
#[tokio::test]
async fn a_restarted_server_is_resumed_and_the_cache_matches_a_fresh_clients() {
    let dir = tempfile::tempdir().expect("a directory");
    let live = Live::serve(durable_server(dir.path())).await;
    let addr = live.addr;
    let slow = Backoff {
        first: Duration::from_secs(3),
        max: Duration::from_secs(3),
    };
    let client = live
        .builder()
        .await
        .reconnect(Some(slow))
        .connect()
        .await
        .expect("connected");
    let identity = client.identity();
    let (message_inserts, message_deletes, user_inserts, user_deletes, user_updates) =
        (log(), log(), log(), log(), log());
    let messages = client.table::<Message>("message");
    let users = client.table::<User>("user");
    let seen = message_inserts.clone();
    messages.on_insert(move |message: &Message| seen.lock().push(message.text.clone()));
    let seen = message_deletes.clone();
    messages.on_delete(move |message: &Message| seen.lock().push(message.text.clone()));
    let seen = user_inserts.clone();
    users.on_insert(move |user: &User| seen.lock().push(user.identity));
    let seen = user_deletes.clone();
    users.on_delete(move |user: &User| seen.lock().push(user.identity));
    let seen = user_updates.clone();
    users.on_update(move |old: &User, new: &User| {
        seen.lock()
            .push((old.name.clone(), new.name.clone(), new.online))
    });
    let states = log();
    let seen = states.clone();
    client.on_connection_state(move |state| seen.lock().push(state));
    let subscription = client.subscription().subscribe(QUERIES);
    subscription.applied().await.expect("applied");
    assert_eq!(client.connection_state(), ConnectionState::Connected);
    client
        .call_reducer("send", &("before".to_owned(),))
        .await
        .expect("sent");
    let other = live.client().await;
    let other_identity = other.identity();
    let other_token = other.token();
    other.disconnect().await;
    eventually("the other user is cached", || users.count() == 2).await;
    let first_connection = client.connection_id();

    live.stop().await;
    let live = Live::serve_at(durable_server(dir.path()), addr).await;
    let other = live
        .builder()
        .await
        .token(other_token)
        .connect()
        .await
        .expect("connected");
    other
        .call_reducer("set_name", &("bob".to_owned(),))
        .await
        .expect("renamed");
    other
        .call_reducer("send", &("while away".to_owned(),))
        .await
        .expect("sent");
    assert_eq!(
        client.connection_id(),
        first_connection,
        "the client is still away"
    );
    eventually("the client knows it is away", || {
        client.connection_state() == ConnectionState::Reconnecting
    })
    .await;

    eventually("the client reconnects and catches up", || {
        texts(&client) == ["before", "while away"]
    })
    .await;
    assert_eq!(client.identity(), identity, "the same identity");
    assert!(subscription.resumed(), "only the changes came");
    assert_eq!(
        *states.lock(),
        [ConnectionState::Reconnecting, ConnectionState::Connected],
        "the loss and the return, each once"
    );
    assert_ne!(client.connection_id(), first_connection, "a new connection");
    let fresh = like_a_fresh_client(&live, &client, "the client's cache is a fresh client's").await;

    assert_eq!(
        *message_inserts.lock(),
        ["before", "while away"],
        "no row twice"
    );
    assert!(message_deletes.lock().is_empty());
    assert_eq!(
        *user_inserts.lock(),
        [identity, other_identity, fresh.identity()],
        "its own user was not inserted again"
    );
    assert!(
        user_deletes.lock().is_empty(),
        "rows held throughout never left"
    );
    let updates = user_updates.lock().clone();
    let default_name = updates.first().map(|update| update.0.clone());
    let default_name = default_name.expect("an update");
    assert_eq!(
        updates,
        [
            (default_name.clone(), default_name.clone(), false),
            (default_name, "bob".to_owned(), true),
        ],
        "the other user going offline (live), then its return under a new name (resumed)"
    );
    client
        .call_reducer("send", &("after".to_owned(),))
        .await
        .expect("calls work again");
    eventually("the fresh client sees it", || texts(&fresh).len() == 3).await;
    live.stop().await;
}

/// Issue 33: the server crashes with the client and another user connected, and comes back
/// on the data the crash left; its start disconnects both connections (a commit each) before
/// it serves anyone. The client reconnects and resumes past those commits: only the changes
/// come, and its cache is a fresh client's.
#[tokio::test]
async fn a_client_connected_at_a_crash_resumes_past_the_starts_disconnections() {
    let dir = tempfile::tempdir().expect("a directory");
    let live = Live::serve(durable_server(dir.path())).await;
    let addr = live.addr;
    let client = live.client().await;
    let users = client.table::<User>("user");
    let user_inserts = log();
    let seen = user_inserts.clone();
    users.on_insert(move |user: &User| seen.lock().push(user.identity));
    let subscription = client.subscription().subscribe(QUERIES);
    subscription.applied().await.expect("applied");
    client
        .call_reducer("send", &("before the crash".to_owned(),))
        .await
        .expect("sent");
    let other = live
        .builder()
        .await
        .reconnect(None)
        .connect()
        .await
        .expect("connected");
    let other_identity = other.identity();
    eventually("the other user is cached", || users.count() == 2).await;
    assert!(
        !subscription.resumed(),
        "its rows came whole the first time"
    );
    let first_connection = client.connection_id();

    let image = crash_image(dir.path());
    // What the stop does (disconnecting both) goes to `dir`, not to the crash's image.
    live.stop().await;
    let live = Live::serve_at(durable_server(image.path()), addr).await;
    eventually("the client reconnects and its query set is back", || {
        client.connection_id() != first_connection
            && client.connection_state() == ConnectionState::Connected
            && users
                .rows()
                .expect("rows")
                .iter()
                .any(|user| user.identity == other_identity && !user.online)
    })
    .await;
    assert!(
        subscription.resumed(),
        "resumed past the start's disconnections, not sent every row"
    );
    assert_eq!(texts(&client), ["before the crash"]);
    let fresh = like_a_fresh_client(&live, &client, "the client's cache is a fresh client's").await;
    assert_eq!(
        *user_inserts.lock(),
        [client.identity(), other_identity, fresh.identity()],
        "no row inserted again"
    );
    drop(other);
    live.stop().await;
}

#[tokio::test]
async fn without_reconnection_a_lost_server_ends_the_client() {
    let live = Live::serve(memory_server()).await;
    let client = live
        .builder()
        .await
        .reconnect(None)
        .connect()
        .await
        .expect("connected");
    let subscription = client.subscription().subscribe(QUERIES);
    subscription.applied().await.expect("applied");
    let states = log();
    let seen = states.clone();
    client.on_connection_state(move |state| seen.lock().push(state));
    live.stop().await;
    eventually("the connection task ends", || !client.is_running()).await;
    assert_eq!(client.connection_state(), ConnectionState::Disconnected);
    assert_eq!(*states.lock(), [ConnectionState::Disconnected]);
    assert_eq!(
        client
            .call_reducer("send", &("nobody hears".to_owned(),))
            .await,
        Err(Error::Disconnected)
    );
}

/// A server without a commit log cannot resume: restarted, it has lost its messages and
/// sends every row again. The client reconciles: the lost message is deleted, and its own
/// user, the same row again, calls back nothing.
#[tokio::test]
async fn a_server_that_cannot_resume_sends_all_rows_and_only_the_difference_calls_back() {
    let live = Live::serve(memory_server()).await;
    let addr = live.addr;
    let client = live.client().await;
    let (message_deletes, user_events) = (log(), log());
    let seen = message_deletes.clone();
    client
        .table::<Message>("message")
        .on_delete(move |message: &Message| seen.lock().push(message.text.clone()));
    let users = client.table::<User>("user");
    let seen = user_events.clone();
    users.on_insert(move |user: &User| seen.lock().push(("insert", user.identity)));
    let seen = user_events.clone();
    users.on_delete(move |user: &User| seen.lock().push(("delete", user.identity)));
    let seen = user_events.clone();
    users.on_update(move |_: &User, new: &User| seen.lock().push(("update", new.identity)));
    let subscription = client.subscription().subscribe(QUERIES);
    subscription.applied().await.expect("applied");
    client
        .call_reducer("send", &("lost".to_owned(),))
        .await
        .expect("sent");
    let first_connection = client.connection_id();

    live.stop().await;
    let live = Live::serve_at(memory_server(), addr).await;
    eventually("the client reconnects and drops the lost message", || {
        client.connection_id() != first_connection && texts(&client).is_empty()
    })
    .await;
    let fresh = like_a_fresh_client(&live, &client, "both clients hold the same rows").await;
    assert_eq!(*message_deletes.lock(), ["lost"]);
    assert!(!subscription.resumed(), "every row came");
    assert_eq!(
        *user_events.lock(),
        [("insert", client.identity()), ("insert", fresh.identity())],
        "its own user, sent again, is no change"
    );
    live.stop().await;
}
