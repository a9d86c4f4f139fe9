//! `POST /v1/admin/module` (`wasmod publish`): a new build serves the next calls with the data
//! carried over; refused builds leave the old one serving, unchanged; calls and connections go
//! on across a swap.

use crate::live::{call_reducer, resubscribe, subscribe, Client, Connect, Encoding, Live};
use crate::support::{
    admin_server, get, identity, notes, notes_builds, post, send, Answer, OPERATOR,
};
use axum::body::Body;
use axum::http::{Method, StatusCode};
use axum::Router;
use serde_json::{json, Value};
use wasmod_node::LogFeed;
use wasmod_server::ServerConfig;

/// A server over a fresh build 1 of the notes module with `config`, with an admin side.
fn notes_router(config: ServerConfig) -> Router {
    admin_server(notes(), config, None, LogFeed::with_defaults()).router()
}

/// Build 1 of the notes module served on a loopback port, with an admin side, and its router
/// (drop it before stopping the server: it holds the module's thread).
async fn served_notes() -> (Router, Live) {
    let server = admin_server(
        notes(),
        ServerConfig::default(),
        None,
        LogFeed::with_defaults(),
    );
    let router = server.router();
    (router, Live::serve(server).await)
}

/// `POST /v1/admin/module` with `wasm`, as the operator (or as nobody).
async fn publish(router: &Router, wasm: Vec<u8>, operator: bool) -> Answer {
    let token = operator.then_some(OPERATOR);
    send(router, Method::POST, "/v1/admin/module", token, wasm).await
}

/// The notes' rows as JSON.
async fn notes_rows(router: &Router) -> Vec<Value> {
    let answer = get(router, "/v1/tables/note").await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
    let mut rows = answer.json()["rows"].as_array().expect("rows").clone();
    rows.sort_by_key(|row| row["id"].as_u64());
    rows
}

/// Which build answers the module's HTTP handler.
async fn build(router: &Router) -> String {
    let answer = get(router, "/v1/http/build").await;
    assert_eq!(answer.status, StatusCode::OK);
    String::from_utf8(answer.body).expect("text")
}

#[tokio::test]
async fn a_published_build_serves_the_next_calls_with_the_data() {
    let router = notes_router(ServerConfig::default());
    let [_, v2, _] = notes_builds();
    let (_, token) = identity(&router).await;
    for text in ["one", "two"] {
        let added = post(
            &router,
            "/v1/reducers/add_note",
            Some(&token),
            json!([text]),
        )
        .await;
        assert_eq!(added.status, StatusCode::OK, "{:?}", added.json());
    }
    assert_eq!(build(&router).await, "1");

    let published = publish(&router, v2, true).await;
    assert_eq!(published.status, StatusCode::OK, "{:?}", published.json());
    let answer = published.json();
    assert_eq!(answer["build"], 1);
    assert_eq!(answer["offset"], 2, "two notes were committed before");
    assert!(
        answer["changes"]
            .as_array()
            .expect("changes")
            .iter()
            .any(|change| change
                .as_str()
                .is_some_and(|c| c.contains("`stars` is added"))),
        "{answer}"
    );

    // The new build answers, with the stored rows carried over.
    assert_eq!(build(&router).await, "2");
    let rows = notes_rows(&router).await;
    assert_eq!(
        rows,
        [
            json!({"id": 1, "text": "one", "stars": 0}),
            json!({"id": 2, "text": "two", "stars": 0}),
        ]
    );
    let starred = post(&router, "/v1/reducers/star", Some(&token), json!([2])).await;
    assert_eq!(starred.status, StatusCode::OK, "{:?}", starred.json());
    // The new `rename` takes three arguments; the old two are refused.
    let old_call = post(
        &router,
        "/v1/reducers/rename",
        Some(&token),
        json!([1, "x"]),
    )
    .await;
    assert_eq!(old_call.code(), "bad_arguments", "{:?}", old_call.json());
    let renamed = post(
        &router,
        "/v1/reducers/rename",
        Some(&token),
        json!([1, "uno", "ana"]),
    )
    .await;
    assert_eq!(renamed.status, StatusCode::OK, "{:?}", renamed.json());
    let added = post(
        &router,
        "/v1/reducers/add_note",
        Some(&token),
        json!(["three"]),
    )
    .await;
    assert_eq!(added.status, StatusCode::OK, "{:?}", added.json());
    assert_eq!(
        notes_rows(&router).await,
        [
            json!({"id": 1, "text": "uno (ana)", "stars": 0}),
            json!({"id": 2, "text": "two", "stars": 1}),
            json!({"id": 3, "text": "three", "stars": 0}),
        ]
    );
    // The description and the dispatch report follow.
    let module = get(&router, "/v1/module").await.json();
    assert!(module.to_string().contains("\"star\""), "{module}");
    let dispatch = send(
        &router,
        Method::GET,
        "/v1/admin/dispatch",
        Some(OPERATOR),
        Body::empty(),
    )
    .await;
    assert_eq!(dispatch.json(), json!({"report": null}));
}

#[tokio::test]
async fn refused_builds_leave_the_old_one_serving() {
    let mut config = ServerConfig::default();
    config.max_module_bytes = 4 << 20;
    let router = notes_router(config);
    let [v1, _, incompatible] = notes_builds();
    let (_, token) = identity(&router).await;
    let added = post(
        &router,
        "/v1/reducers/add_note",
        Some(&token),
        json!(["kept"]),
    )
    .await;
    assert_eq!(added.status, StatusCode::OK);

    let refused = publish(&router, incompatible, true).await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{:?}", refused.json());
    assert_eq!(refused.code(), "incompatible_build");
    assert!(
        refused.message().contains("column `text` was removed"),
        "{}",
        refused.message()
    );

    let garbage = publish(&router, b"\0asm but not really".to_vec(), true).await;
    assert_eq!(garbage.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(garbage.code(), "invalid_module", "{}", garbage.message());

    let anonymous = publish(&router, v1.clone(), false).await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
    let as_client = send(&router, Method::POST, "/v1/admin/module", Some(&token), v1).await;
    assert_eq!(as_client.code(), "not_operator", "{:?}", as_client.json());

    let huge = publish(&router, vec![0; (4 << 20) + 1], true).await;
    assert_eq!(huge.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(huge.code(), "payload_too_large");

    assert_eq!(build(&router).await, "1");
    assert_eq!(
        notes_rows(&router).await,
        [json!({"id": 1, "text": "kept"})]
    );
    let renamed = post(
        &router,
        "/v1/reducers/rename",
        Some(&token),
        json!([1, "still"]),
    )
    .await;
    assert_eq!(renamed.status, StatusCode::OK, "{:?}", renamed.json());
}

#[tokio::test]
async fn a_socket_keeps_calling_across_a_swap() {
    let (router, live) = served_notes().await;
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    client.hello().await;
    client.send(call_reducer(1, "add_note", &["before"])).await;
    let before = client.recv_kind("TransactionUpdate").await;
    assert_eq!(before["request_id"], 1, "{before}");
    assert_eq!(before["status"], "Committed", "{before}");

    let [_, v2, _] = notes_builds();
    let published = publish(&router, v2, true).await;
    assert_eq!(published.status, StatusCode::OK, "{:?}", published.json());

    // The same socket, the same connection: its calls now run on build 2.
    client.send(call_reducer(2, "add_note", &["after"])).await;
    let after = client.recv_kind("TransactionUpdate").await;
    assert_eq!(after["request_id"], 2, "{after}");
    assert_eq!(after["status"], "Committed", "{after}");
    assert_eq!(
        notes_rows(&router).await,
        [
            json!({"id": 1, "text": "before", "stars": 0}),
            json!({"id": 2, "text": "after", "stars": 0}),
        ]
    );
    client.close().await;
    // The router holds the module's thread, which must end for the server to stop.
    drop(router);
    live.stop().await;
}

#[tokio::test]
async fn subscriptions_over_unchanged_tables_go_on_across_a_swap_and_the_others_end() {
    let (router, live) = served_notes().await;
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    client.hello().await;
    client.send(subscribe(1, &["SELECT * FROM tag"])).await;
    client.recv_kind("SubscribeApplied").await;
    client.send(subscribe(2, &["SELECT * FROM note"])).await;
    client.recv_kind("SubscribeApplied").await;
    client.send(call_reducer(1, "add_note", &["before"])).await;
    let update = client.recv_kind("TransactionUpdate").await;
    assert!(update.to_string().contains("before"), "{update}");

    let [_, v2, _] = notes_builds();
    let published = publish(&router, v2, true).await;
    assert_eq!(published.status, StatusCode::OK, "{:?}", published.json());

    // The set over `note`, which gained a column, ends, saying why; the connection stays.
    let ended = client.recv_kind("SubscriptionError").await;
    assert_eq!(ended["query_set_id"], 2, "{ended}");
    let message = ended["message"].as_str().expect("a message");
    assert!(
        message.contains("wasmod publish") && message.contains("`note`"),
        "{message}"
    );
    // The set over `tag` goes on with the new build's commits.
    client.send(call_reducer(2, "add_tag", &["fresh"])).await;
    let update = client.recv_kind("TransactionUpdate").await;
    assert_eq!(update["request_id"], 2, "{update}");
    assert!(update.to_string().contains("fresh"), "{update}");
    // Subscribing again reads the new build's rows.
    client.send(subscribe(3, &["SELECT * FROM note"])).await;
    let applied = client.recv_kind("SubscribeApplied").await;
    assert!(applied.to_string().contains("\"stars\":0"), "{applied}");
    client.close().await;
    drop(router);
    live.stop().await;
}

/// A server over `module` with an admin side, its tables kept in a commit log in `dir` that
/// keeps the recent commits for clients that resume.
fn durable_notes(
    module: &wasmod_host::CompiledModule,
    dir: &std::path::Path,
) -> wasmod_server::Server {
    use wasmod_host::datastore::durability;
    use wasmod_host::{InstanceEnv, Persistence, WasmConfig, WasmModule};
    let config = ServerConfig::default();
    let options = durability::Options::default()
        .with_recent(config.node.resume_commits, config.node.resume_bytes);
    let env = InstanceEnv::unloaded().with_persistence(Persistence::new(dir, options));
    let module = WasmModule::load(module, WasmConfig::default(), env).expect("the module loads");
    wasmod_server::Server::new(
        module,
        wasmod_server::Secret::from_bytes(crate::support::SECRET),
        config,
    )
    .expect("the server starts")
}

#[tokio::test]
async fn a_client_resuming_across_an_upgrade_at_start_gets_the_full_rows() {
    let dir = tempfile::tempdir().expect("a directory");
    let live = Live::serve(durable_notes(notes(), dir.path())).await;
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    client.hello().await;
    client.send(subscribe(1, &["SELECT * FROM note"])).await;
    client.recv_kind("SubscribeApplied").await;
    client.send(call_reducer(1, "add_note", &["kept"])).await;
    client.recv_kind("TransactionUpdate").await;
    client.close().await;
    // The last commit before the restart (the disconnection's): a client that applied it
    // holds every row as of the old build.
    let database = live.stop_releasing().await;
    let applied = database.next_offset() - 1;
    drop(database);

    // The next start is build 2's, whose notes have another column.
    let [_, v2, _] = notes_builds();
    let v2 = wasmod_host::WasmEngine::shared()
        .expect("the engine")
        .compile(&v2)
        .expect("build 2 compiles");
    let live = Live::serve(durable_notes(&v2, dir.path())).await;
    let mut back = Client::connect(&live, Encoding::Json, Connect::default()).await;
    back.hello().await;
    back.send(resubscribe(1, &["SELECT * FROM note"], applied))
        .await;
    let full = back.recv_kind("SubscribeApplied").await;
    assert_eq!(full["resumed"], false, "{full}");
    assert!(full.to_string().contains("\"stars\":0"), "{full}");
    back.close().await;
    live.stop().await;
}
