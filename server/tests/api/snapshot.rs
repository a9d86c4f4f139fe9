//! `GET /v1/replication/snapshot`: a publishing server gives edges (and only them) every row
//! of every table at one durable offset; a server that serves no edges has no such route.

use crate::live::Live;
use crate::redis_server::RedisServer;
use crate::support::{identity, post, router, send, serving_edges, EDGE_TOKEN};
use axum::body::Body;
use axum::http::header::CONTENT_TYPE;
use axum::http::{Method, StatusCode};
use serde_json::json;
use std::collections::BTreeSet;
use wasmod_host::datastore::durability;
use wasmod_node::replication::{OFFSET_HEADER, SNAPSHOT_PATH, SNAPSHOT_TYPE};

#[tokio::test]
async fn the_snapshot_is_every_row_at_one_durable_offset_for_edges_only() {
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().expect("a directory");
    let server = serving_edges(&redis, "snapshot", dir.path());
    let router = server.router();
    let live = Live::serve(server).await;
    let (_, token) = identity(&router).await;
    for n in 0..7 {
        let answer = post(
            &router,
            "/v1/reducers/send",
            Some(&token),
            json!([format!("m{n}")]),
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK);
    }
    let answer = send(
        &router,
        Method::GET,
        SNAPSHOT_PATH,
        Some(EDGE_TOKEN),
        Body::empty(),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
    assert_eq!(answer.headers[CONTENT_TYPE], SNAPSHOT_TYPE);
    let (offset, rows) = durability::decode_changes(&answer.body).expect("a snapshot");
    let database = &live.database;
    assert_eq!(offset, database.next_offset());
    assert_eq!(answer.headers[OFFSET_HEADER], offset.to_string());
    let log = database.log().expect("a log");
    assert!(
        log.durable_transactions() >= offset,
        "the snapshot's commits are durable"
    );
    // Exactly the tables' rows, the private and the host's tables included.
    let read = database.begin_read();
    let tables = database.datastore().table_count() as u32;
    for table in 0..tables {
        let held: BTreeSet<_> = read.scan(table).expect("a table").into_iter().collect();
        let sent: BTreeSet<_> = rows
            .table(table)
            .map(|changes| changes.inserted.iter().cloned().collect())
            .unwrap_or_default();
        assert_eq!(sent, held, "table {table}");
    }
    let messages = database
        .datastore()
        .table_id("message")
        .expect("the message table");
    assert_eq!(
        rows.table(messages).map(|changes| changes.inserted.len()),
        Some(7)
    );
    assert!(rows.tables.iter().all(|changes| changes.deleted.is_empty()));
    drop(read);
    // Not without the edge token: a client's token, another token, none.
    for presented in [Some(token.as_str()), Some("a secret of the edgeS"), None] {
        let refused = send(
            &router,
            Method::GET,
            SNAPSHOT_PATH,
            presented,
            Body::empty(),
        )
        .await;
        assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{presented:?}");
        assert_eq!(refused.code(), "unauthenticated");
    }
    drop(router);
    live.stop().await;
}

#[tokio::test]
async fn a_server_that_serves_no_edges_has_no_snapshot() {
    let answer = send(
        &router(),
        Method::GET,
        SNAPSHOT_PATH,
        Some(EDGE_TOKEN),
        Body::empty(),
    )
    .await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert_eq!(answer.code(), "not_found");
}
