//! Live connections: a fresh random id each, `client_connected` when one opens, and
//! `client_disconnected` exactly once however it ends (closed, dropped, shut down).

use crate::support::{identity, server};
use std::collections::HashSet;
use std::time::Duration;
use wasmod_abi::{ConnectionId, Identity};
use wasmod_host::datastore::{CommitReceiver, FeedError};
use wasmod_host::AllowList;
use wasmod_server::ServerConfig;

const ALICE: Identity = Identity::from_bytes([0xa1; 32]);

/// The connections whose lifecycle reducer `name` committed, from the commits in `feed` so
/// far, waiting up to a few seconds for `expected` of them.
async fn lifecycle_commits(
    feed: &mut CommitReceiver,
    name: &str,
    expected: usize,
) -> Vec<ConnectionId> {
    let mut found = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match feed.try_recv() {
            Ok(commit) => {
                let entry = commit.meta.entry.as_ref();
                if entry.is_some_and(|entry| &*entry.name == name) {
                    found.push(commit.meta.connection_id);
                }
            }
            Err(FeedError::Empty) if found.len() < expected => {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "{name}: {found:?} of {expected}"
                );
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(FeedError::Empty) => return found,
            Err(error) => panic!("the feed failed: {error}"),
        }
    }
}

#[tokio::test]
async fn connections_get_fresh_ids_and_disconnect_once_when_closed_or_dropped() {
    let server = server(ServerConfig::default(), AllowList::new());
    let mut feed = server.database().feed().subscribe();
    let connections = server.connections().clone();

    let first = connections.connect(ALICE).await.expect("connected");
    let second = connections.connect(ALICE).await.expect("connected");
    let ids: HashSet<ConnectionId> = [first.id(), second.id()].into();
    assert_eq!(ids.len(), 2, "each connection has its own id");
    assert!(!ids.contains(&ConnectionId::ZERO));
    assert_eq!(connections.count(), 2);
    let connected = lifecycle_commits(&mut feed, "connected", 2).await;
    assert_eq!(connected, [first.id(), second.id()]);

    let (first_id, second_id) = (first.id(), second.id());
    first.close().await;
    assert!(!connections.is_open(first_id));
    drop(second);
    let disconnected = lifecycle_commits(&mut feed, "disconnected", 2).await;
    assert_eq!(disconnected, [first_id, second_id]);
    assert_eq!(connections.count(), 0);
    assert!(
        server.database().recorded_connections().is_empty(),
        "the database forgot both"
    );
}

#[tokio::test]
async fn issuing_an_identity_opens_no_connection() {
    let server = server(ServerConfig::default(), AllowList::new());
    identity(&server.router()).await;
    assert_eq!(server.connections().count(), 0);
    assert!(server.database().recorded_connections().is_empty());
}

#[tokio::test]
async fn shutdown_disconnects_the_connections_still_open_once() {
    let server = server(ServerConfig::default(), AllowList::new());
    let database = server.database().clone();
    let mut feed = database.feed().subscribe();
    let open = server
        .connections()
        .connect(ALICE)
        .await
        .expect("connected");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    server
        .serve(listener, std::future::ready(()))
        .await
        .expect("served, then shut down");
    assert!(database.recorded_connections().is_empty());
    let id = open.id();
    // The connection's holder lets go after shutdown: nothing runs twice.
    drop(open);
    let disconnected = lifecycle_commits(&mut feed, "disconnected", 1).await;
    assert_eq!(disconnected, [id]);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(feed.try_recv().unwrap_err(), FeedError::Empty);
}
