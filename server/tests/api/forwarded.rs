//! `POST /v1/replication/calls`: a publishing server runs the calls its edges forward through
//! the same call pipeline as its own clients' (`NodeHandle::run_forwarded`): a call by name
//! must name an entry point a client may call, and only edges may forward.

use crate::redis_server::RedisServer;
use crate::support::{send, serving_edges, EDGE_TOKEN};
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};
use wasmod_abi::encoding::to_vec;
use wasmod_node::replication::{CALLS_PATH, OFFSET_HEADER};

/// A forwarded call of `call` (the wire's `call` object) from the identity `[7; 32]`.
fn forwarded(call: Value) -> String {
    json!({
        "caller": hex::encode([7u8; 32]),
        "connection": hex::encode([0u8; 16]),
        "call": call,
    })
    .to_string()
}

#[tokio::test]
async fn forwarded_calls_run_through_the_pipeline_and_reach_only_what_clients_may_call() {
    let redis = RedisServer::start();
    let dir = tempfile::tempdir().expect("a directory");
    let router = serving_edges(&redis, "forwarded", dir.path()).router();
    let post = |body: String, token: Option<&'static str>| {
        let router = router.clone();
        async move { send(&router, Method::POST, CALLS_PATH, token, body).await }
    };

    let args = hex::encode(to_vec(&("from an edge".to_owned(),)));
    let sent = post(
        forwarded(json!({"kind": "reducer", "name": "send", "args": args})),
        Some(EDGE_TOKEN),
    )
    .await;
    assert_eq!(sent.status, StatusCode::OK, "{:?}", sent.json());
    assert_eq!(sent.json()["outcome"], "committed", "{:?}", sent.json());
    let offset: u64 = sent.headers[OFFSET_HEADER]
        .to_str()
        .expect("text")
        .parse()
        .expect("an offset");
    assert!(offset > 0);

    // The lifecycle reducers are the host's to call, through `connect`/`disconnect`, never by
    // name; nor a name that is no reducer.
    for (name, code) in [("init", "lifecycle_reducer"), ("nothing", "no_such_entry")] {
        let refused = post(
            forwarded(json!({"kind": "reducer", "name": name, "args": ""})),
            Some(EDGE_TOKEN),
        )
        .await;
        assert_eq!(refused.json()["error"]["code"], code, "{name}");
    }

    let garbled = post("{\"caller\":".to_owned(), Some(EDGE_TOKEN)).await;
    assert_eq!(garbled.status, StatusCode::BAD_REQUEST);
    assert_eq!(garbled.json()["error"]["code"], "bad_json");

    let anyone = post(
        forwarded(json!({"kind": "reducer", "name": "send", "args": args})),
        None,
    )
    .await;
    assert_eq!(anyone.status, StatusCode::UNAUTHORIZED);
}
