//! A client of a replicated deployment's servers (`ClientBuilder::with_servers`): it passes
//! over a standby (which closes the socket with `4004`), follows a lost primary to the next
//! server and resumes there, sends a call a standby refused (`not_primary`: it never ran) to
//! the next server, and never sends again a call that was in flight when a connection
//! dropped. The standbys and the nodes that refuse or drop are fake servers; the deployment's
//! failover over real processes is `cli/tests/failover.rs`'s.

use crate::malformed::{agree, committed, hello};
use crate::support::{crash_image, durable_server, eventually, log, texts, Live, PATIENCE};
use futures_util::{SinkExt, StreamExt};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use wasmod_client::{
    Backoff, Client, ClientBuilder, ConnectionState, Error, ErrorCode, NOT_PRIMARY_RETRIES,
};
use wasmod_protocol::ws::{BinaryClientMessage, BinaryServerMessage, ClientMessage, ServerMessage};
use wasmod_protocol::ApiError;

/// What a fake node of a deployment does with each connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Closes it with `4004` before the greeting, as a standby does.
    Standby,
    /// Greets, then answers every reducer call `not_primary`, as a primary that stepped down.
    Refusing,
    /// Greets, then drops the connection once it has read a reducer call, without answering.
    Dropping,
    /// Greets, then commits every reducer call at offset 7.
    Primary,
}

/// A fake node playing `role` on a loopback port, for any number of connections: its URL,
/// and a count of the connections (for a standby) or of the reducer calls it read.
async fn fake_node(role: Role) -> (String, Arc<AtomicU32>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("its address");
    let count = Arc::new(AtomicU32::new(0));
    let counted = count.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(role, stream, counted.clone()));
        }
    });
    (format!("http://{addr}"), count)
}

/// One connection of a fake node.
async fn serve(role: Role, stream: tokio::net::TcpStream, count: Arc<AtomicU32>) {
    let Ok(mut socket) = tokio_tungstenite::accept_hdr_async(stream, agree).await else {
        return;
    };
    if role == Role::Standby {
        count.fetch_add(1, Ordering::SeqCst);
        let close = CloseFrame {
            code: CloseCode::from(4004),
            reason: "this server is a standby".into(),
        };
        let _ = socket.close(Some(close)).await;
        return;
    }
    if socket.send(Message::binary(hello())).await.is_err() {
        return;
    }
    while let Some(Ok(Message::Binary(bytes))) = socket.next().await {
        let Ok(ClientMessage::CallReducer {
            request_id, name, ..
        }) = BinaryClientMessage::from_bytes(&bytes)
        else {
            continue;
        };
        count.fetch_add(1, Ordering::SeqCst);
        let answer: BinaryServerMessage = match role {
            Role::Dropping => return,
            Role::Refusing => ServerMessage::CallResult {
                request_id,
                offset: 6,
                result: Err(ApiError::new(
                    ErrorCode::NotPrimary,
                    "this server is a standby",
                )),
            },
            _ => committed(request_id, name),
        };
        if socket
            .send(Message::binary(answer.to_bytes()))
            .await
            .is_err()
        {
            return;
        }
    }
}

/// A builder for a client of `urls` that reconnects quickly.
fn builder(urls: &[&str]) -> ClientBuilder {
    Client::builder_with_servers(urls.iter().copied()).reconnect(Some(Backoff {
        first: Duration::from_millis(20),
        max: Duration::from_millis(100),
    }))
}

/// A loopback address nothing listens on now, for a server started later.
fn free_address() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    listener.local_addr().expect("its address")
}

#[tokio::test]
async fn the_first_connection_passes_over_a_standby_and_a_dead_server() {
    let (standby, refusals) = fake_node(Role::Standby).await;
    let dead = format!("http://{}", free_address());
    let (primary, calls) = fake_node(Role::Primary).await;
    let client = builder(&[&standby, &dead, &primary])
        .connect()
        .await
        .expect("connected to the primary");
    assert_eq!(refusals.load(Ordering::SeqCst), 1);
    let outcome = client
        .call_reducer("send", &("hi".to_owned(),))
        .await
        .expect("committed");
    assert_eq!(outcome.offset, 7);
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    let only_standbys = builder(&[&standby, &standby])
        .connect()
        .await
        .err()
        .expect("no primary");
    assert!(
        matches!(&only_standbys, Error::Connect(why) if why.contains("4004")),
        "{only_standbys:?}"
    );
    let refused = builder(&[&standby, &dead])
        .connect()
        .await
        .err()
        .expect("no primary");
    assert!(
        matches!(&refused, Error::Connect(why) if !why.contains("4004")),
        "the dead server's error says more than the standby's: {refused:?}"
    );
}

/// The primary (a durable quickstart) is lost; the next server is a standby, the one after
/// it the new primary, started on what the old one had written (as a standby fed by the
/// replicated log has it): the client reconnects there as the same identity and resumes its
/// query set, the offsets being the same.
#[tokio::test]
async fn a_lost_primary_is_followed_to_the_next_server_where_the_query_set_resumes() {
    let dir = tempfile::tempdir().expect("a directory");
    let old = Live::serve(durable_server(dir.path())).await;
    let (standby, refusals) = fake_node(Role::Standby).await;
    let next = free_address();
    let next_url = format!("http://{next}");
    let client = builder(&[&old.url(), &standby, &next_url])
        .module(old.description().await)
        .table::<crate::support::Message>("message")
        .table::<crate::support::User>("user")
        .connect()
        .await
        .expect("connected");
    let identity = client.identity();
    let states = log();
    let seen = states.clone();
    client.on_connection_state(move |state| seen.lock().push(state));
    let inserts = log();
    let seen = inserts.clone();
    client
        .table::<crate::support::Message>("message")
        .on_insert(move |message: &crate::support::Message| seen.lock().push(message.text.clone()));
    let subscription = client
        .subscription()
        .subscribe(["SELECT * FROM message", "SELECT * FROM user"]);
    subscription.applied().await.expect("applied");
    client
        .call_reducer("send", &("before".to_owned(),))
        .await
        .expect("sent");
    let image = crash_image(dir.path());

    old.stop().await;
    let new = Live::serve_at(durable_server(image.path()), next).await;
    eventually("the client is connected to the new primary", || {
        client.connection_state() == ConnectionState::Connected
            && *states.lock() == [ConnectionState::Reconnecting, ConnectionState::Connected]
    })
    .await;
    assert!(
        refusals.load(Ordering::SeqCst) >= 1,
        "the standby was tried"
    );
    assert_eq!(client.identity(), identity, "the same identity");
    eventually("the query set is back", || subscription.resumed()).await;
    assert_eq!(texts(&client), ["before"]);
    client
        .call_reducer("send", &("after".to_owned(),))
        .await
        .expect("the new primary takes calls");
    eventually("the new message is cached", || {
        texts(&client) == ["after", "before"]
    })
    .await;
    assert_eq!(
        *inserts.lock(),
        ["before", "after"],
        "resumed: no row came twice"
    );
    new.stop().await;
}

#[tokio::test]
async fn calls_refused_as_not_primary_are_sent_to_the_next_server() {
    let (refusing, refused) = fake_node(Role::Refusing).await;
    let (primary, committed) = fake_node(Role::Primary).await;
    let client = builder(&[&refusing, &primary])
        .connect()
        .await
        .expect("connected");
    let calls: Vec<_> = (0..3)
        .map(|n| client.call_reducer("send", &(format!("call {n}"),)))
        .collect();
    for call in calls {
        let outcome = tokio::time::timeout(PATIENCE, call)
            .await
            .expect("answered")
            .expect("committed by the next server");
        assert_eq!(outcome.offset, 7);
    }
    assert_eq!(
        refused.load(Ordering::SeqCst),
        3,
        "each sent once to the refusing server"
    );
    assert_eq!(committed.load(Ordering::SeqCst), 3, "and once to the next");
}

#[tokio::test]
async fn a_call_refused_as_not_primary_by_every_server_fails_not_primary() {
    let (refusing, refused) = fake_node(Role::Refusing).await;
    let client = builder(&[&refusing]).connect().await.expect("connected");
    let failed = client
        .call_reducer("send", &("hi".to_owned(),))
        .await
        .expect_err("refused every time");
    assert_eq!(failed.code(), Some(ErrorCode::NotPrimary), "{failed:?}");
    assert_eq!(refused.load(Ordering::SeqCst), NOT_PRIMARY_RETRIES + 1);

    let (refusing, refused) = fake_node(Role::Refusing).await;
    let (primary, committed) = fake_node(Role::Primary).await;
    let without_reconnection = builder(&[&refusing, &primary])
        .reconnect(None)
        .connect()
        .await
        .expect("connected");
    let failed = without_reconnection
        .call_reducer("send", &("hi".to_owned(),))
        .await
        .expect_err("not sent elsewhere");
    assert_eq!(failed.code(), Some(ErrorCode::NotPrimary), "{failed:?}");
    assert_eq!(refused.load(Ordering::SeqCst), 1);
    assert_eq!(committed.load(Ordering::SeqCst), 0);
}

/// A reducer is not idempotent: a call whose connection dropped may have run, so it fails
/// rather than being sent to the next server.
#[tokio::test]
async fn a_call_in_flight_when_the_connection_drops_fails_and_is_not_sent_again() {
    let (dropping, dropped) = fake_node(Role::Dropping).await;
    let (primary, committed) = fake_node(Role::Primary).await;
    let client = builder(&[&dropping, &primary])
        .connect()
        .await
        .expect("connected");
    let states = log();
    let seen = states.clone();
    client.on_connection_state(move |state| seen.lock().push(state));
    let lost = client.call_reducer("send", &("maybe".to_owned(),)).await;
    assert_eq!(lost, Err(Error::Disconnected));
    eventually("the client is connected to the next server", || {
        *states.lock() == [ConnectionState::Reconnecting, ConnectionState::Connected]
    })
    .await;
    let outcome = client
        .call_reducer("send", &("surely".to_owned(),))
        .await
        .expect("committed by the next server");
    assert_eq!(outcome.offset, 7);
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
    assert_eq!(
        committed.load(Ordering::SeqCst),
        1,
        "only the call made after the loss"
    );
}
