//! The API's calls, errors, tokens, module handlers, description and metrics.

use crate::support::{get, identity, post, router, send, SECRET};
use axum::body::Body;
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use wasmod_abi::Identity;
use wasmod_server::{Secret, Tokens};

#[tokio::test]
async fn a_client_chats_through_reducers_views_and_tables() {
    let router = router();
    let (alice, token) = identity(&router).await;
    assert_eq!(alice.len(), 64);

    let named = post(
        &router,
        "/v1/reducers/set_name",
        Some(&token),
        json!(["alice"]),
    )
    .await;
    assert_eq!(named.status, StatusCode::OK, "{:?}", named.json());
    assert_eq!(named.json()["status"], "committed");
    let sent = post(
        &router,
        "/v1/reducers/send",
        Some(&token),
        json!({"text": "hi"}),
    )
    .await;
    assert_eq!(sent.status, StatusCode::OK, "{:?}", sent.json());

    let mine = post(&router, "/v1/views/my_messages", Some(&token), json!([])).await;
    assert_eq!(mine.status, StatusCode::OK, "{:?}", mine.json());
    let result = &mine.json()["result"];
    assert_eq!(result.as_array().map(Vec::len), Some(1));
    assert_eq!(result[0]["text"], "hi");
    assert_eq!(result[0]["sender"], alice);

    // An anonymous view needs no token, and takes an empty body for no arguments.
    let recent = send(
        &router,
        Method::POST,
        "/v1/views/recent",
        None,
        Body::empty(),
    )
    .await;
    assert_eq!(recent.status, StatusCode::OK, "{:?}", recent.json());
    assert_eq!(recent.json()["result"][0]["text"], "hi");

    let users = get(&router, "/v1/tables/user").await;
    assert_eq!(users.status, StatusCode::OK);
    assert_eq!(
        users.json()["rows"],
        json!([{"identity": alice, "name": "alice", "online": true}])
    );
    let messages = get(&router, "/v1/tables/message").await;
    assert_eq!(messages.json()["rows"][0]["text"], "hi");

    let private = get(&router, "/v1/tables/config").await;
    assert_eq!(private.status, StatusCode::FORBIDDEN);
    assert_eq!(private.code(), "private_table");
    let missing = get(&router, "/v1/tables/nope").await;
    assert_eq!(
        (missing.status, missing.code().as_str()),
        (StatusCode::NOT_FOUND, "no_such_table")
    );
}

#[tokio::test]
async fn module_failures_map_to_statuses_with_the_modules_message() {
    let router = router();
    let (_, token) = identity(&router).await;

    let empty = post(&router, "/v1/reducers/send", Some(&token), json!([" "])).await;
    assert_eq!(empty.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(empty.code(), "entry_failed");
    assert_eq!(empty.message(), "a message cannot be empty");

    let wrong_type = post(&router, "/v1/reducers/send", Some(&token), json!([42])).await;
    assert_eq!(wrong_type.status, StatusCode::BAD_REQUEST);
    assert_eq!(wrong_type.code(), "bad_arguments");
    assert!(
        wrong_type
            .message()
            .contains("argument `text` of reducer `send`"),
        "{}",
        wrong_type.message()
    );

    let null = post(&router, "/v1/reducers/send", Some(&token), json!(null)).await;
    assert_eq!(null.code(), "bad_arguments");
    assert!(null.message().ends_with("found null"), "{}", null.message());
    let nothing = send(
        &router,
        Method::POST,
        "/v1/reducers/send",
        Some(&token),
        Body::empty(),
    )
    .await;
    assert_eq!(nothing.code(), "bad_arguments");
    assert!(
        nothing.message().ends_with("found an array of 0 items"),
        "{}",
        nothing.message()
    );
    let no_arguments = post(&router, "/v1/views/recent", None, json!(null)).await;
    assert_eq!(
        no_arguments.status,
        StatusCode::OK,
        "{}",
        no_arguments.message()
    );

    let unknown_arg = post(
        &router,
        "/v1/reducers/send",
        Some(&token),
        json!({"txt": "x"}),
    )
    .await;
    assert_eq!(unknown_arg.code(), "bad_arguments");
    assert!(
        unknown_arg.message().contains("`txt`"),
        "{}",
        unknown_arg.message()
    );

    let bad_json = send(
        &router,
        Method::POST,
        "/v1/reducers/send",
        Some(&token),
        "[\"hi\"",
    )
    .await;
    assert_eq!(
        (bad_json.status, bad_json.code().as_str()),
        (StatusCode::BAD_REQUEST, "bad_json")
    );

    let unknown = post(&router, "/v1/reducers/nope", Some(&token), json!([])).await;
    assert_eq!(
        (unknown.status, unknown.code().as_str()),
        (StatusCode::NOT_FOUND, "no_such_entry")
    );
    let misplaced = post(
        &router,
        "/v1/reducers/fetch_motd",
        Some(&token),
        json!(["x"]),
    )
    .await;
    assert_eq!(misplaced.code(), "no_such_entry");
    assert!(
        misplaced.message().contains("procedure"),
        "{}",
        misplaced.message()
    );

    for lifecycle in ["init", "connected", "disconnected"] {
        let uri = format!("/v1/reducers/{lifecycle}");
        let refused = post(&router, &uri, Some(&token), json!([])).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{lifecycle}");
        assert_eq!(refused.code(), "lifecycle_reducer");
    }

    // A procedure whose outbound request the host refuses returns the module's `Err` value.
    let motd = post(
        &router,
        "/v1/procedures/fetch_motd",
        Some(&token),
        json!(["http://127.0.0.1:9/"]),
    )
    .await;
    assert_eq!(motd.status, StatusCode::OK, "{:?}", motd.json());
    assert!(
        motd.json()["result"]["err"].is_string(),
        "{:?}",
        motd.json()
    );
}

#[tokio::test]
async fn tokens_are_required_checked_and_expire() {
    let router = router();
    let anonymous = post(&router, "/v1/reducers/send", None, json!(["hi"])).await;
    assert_eq!(
        (anonymous.status, anonymous.code().as_str()),
        (StatusCode::UNAUTHORIZED, "unauthenticated")
    );
    let view = post(&router, "/v1/views/my_messages", None, json!([])).await;
    assert_eq!(view.code(), "unauthenticated");

    let someone = Identity::from_bytes([3; 32]);
    let forged = Tokens::new(Secret::from_bytes([8; 32]), Duration::from_secs(60)).issue(someone);
    let refused = post(
        &router,
        "/v1/reducers/send",
        Some(&forged.token),
        json!(["hi"]),
    )
    .await;
    assert_eq!(
        (refused.status, refused.code().as_str()),
        (StatusCode::UNAUTHORIZED, "invalid_token")
    );
    let garbage = post(&router, "/v1/reducers/send", Some("garbage"), json!(["hi"])).await;
    assert_eq!(garbage.code(), "invalid_token");
    // A bad token is refused even where none is needed.
    let anon_view = post(&router, "/v1/views/recent", Some("garbage"), json!([])).await;
    assert_eq!(anon_view.code(), "invalid_token");

    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    let ours = Tokens::new(Secret::from_bytes(SECRET), Duration::from_secs(60));
    let expired = ours.sign(someone, now - 1);
    let late = post(&router, "/v1/reducers/send", Some(&expired), json!(["hi"])).await;
    assert_eq!(
        (late.status, late.code().as_str()),
        (StatusCode::UNAUTHORIZED, "token_expired")
    );

    // A token the server signed for an identity it never issued is valid: tokens are stateless.
    let valid = ours.sign(someone, now + 60);
    let mine = post(&router, "/v1/views/my_messages", Some(&valid), json!([])).await;
    assert_eq!(mine.status, StatusCode::OK, "{:?}", mine.json());
}

#[tokio::test]
async fn the_modules_http_handlers_answer_under_v1_http() {
    let router = router();
    let posted = send(
        &router,
        Method::POST,
        "/v1/http/messages",
        None,
        "hello over http",
    )
    .await;
    assert_eq!(posted.status, StatusCode::CREATED);
    assert_eq!(posted.headers["content-type"], "application/json");
    assert_eq!(posted.json(), json!({"id": 1}));

    let stats = get(&router, "/v1/http/stats").await;
    assert_eq!(stats.status, StatusCode::OK);
    assert_eq!(
        stats.json(),
        json!({"users": 0, "online": 0, "messages": 1})
    );

    // The module's own 400 passes through as the module wrote it.
    let empty = send(&router, Method::POST, "/v1/http/messages", None, "  ").await;
    assert_eq!(empty.status, StatusCode::BAD_REQUEST);
    assert_eq!(empty.body, b"a message cannot be empty");

    let no_route = get(&router, "/v1/http/nope").await;
    assert_eq!(
        (no_route.status, no_route.code().as_str()),
        (StatusCode::NOT_FOUND, "no_such_route")
    );
    let wrong_method = send(
        &router,
        Method::DELETE,
        "/v1/http/stats",
        None,
        Body::empty(),
    )
    .await;
    assert_eq!(
        (wrong_method.status, wrong_method.code().as_str()),
        (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed")
    );
    assert_eq!(wrong_method.headers["allow"], "GET");
    // Routed once, here: the refusal is the host's own wording, from the one place that
    // words it.
    assert_eq!(
        wrong_method.message(),
        "no http handler answers DELETE /stats: it takes GET"
    );
    assert_eq!(no_route.message(), "no http handler answers GET /nope");

    // A route with a parameter: the captured value reaches the handler.
    let message = get(&router, "/v1/http/messages/1").await;
    assert_eq!(
        (message.status, message.body.as_slice()),
        (StatusCode::OK, &b"hello over http"[..])
    );
    let unknown = get(&router, "/v1/http/messages/9").await;
    assert_eq!(
        (unknown.status, unknown.body.as_slice()),
        (StatusCode::NOT_FOUND, &b"no message 9"[..])
    );
    let not_a_number = get(&router, "/v1/http/messages/first").await;
    assert_eq!(not_a_number.status, StatusCode::BAD_REQUEST);
    let put = send(&router, Method::PUT, "/v1/http/messages/1", None, "x").await;
    assert_eq!(put.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(put.headers["allow"], "GET");
    let on_collection = send(&router, Method::PUT, "/v1/http/messages", None, "x").await;
    assert_eq!(on_collection.headers["allow"], "POST");
    let deeper = get(&router, "/v1/http/messages/1/more").await;
    assert_eq!(deeper.code(), "no_such_route");
}

#[tokio::test]
async fn hostile_requests_get_json_errors() {
    let router = router();
    let (_, token) = identity(&router).await;
    let huge = format!("[\"{}\"]", "x".repeat(2 << 20));
    let too_large = send(
        &router,
        Method::POST,
        "/v1/reducers/send",
        Some(&token),
        huge,
    )
    .await;
    assert_eq!(
        (too_large.status, too_large.code().as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large")
    );
    let too_large_http = send(
        &router,
        Method::POST,
        "/v1/http/messages",
        None,
        vec![b'x'; 2 << 20],
    )
    .await;
    assert_eq!(too_large_http.code(), "payload_too_large");

    let unknown = get(&router, "/v2/anything").await;
    assert_eq!(
        (unknown.status, unknown.code().as_str()),
        (StatusCode::NOT_FOUND, "not_found")
    );
    let wrong_method = get(&router, "/v1/reducers/send").await;
    assert_eq!(
        (wrong_method.status, wrong_method.code().as_str()),
        (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed")
    );

    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let nested = send(
        &router,
        Method::POST,
        "/v1/reducers/send",
        Some(&token),
        deep,
    )
    .await;
    assert_eq!(nested.code(), "bad_json");
    let not_utf8 = send(
        &router,
        Method::POST,
        "/v1/reducers/send",
        Some(&token),
        vec![0xff, 0xfe],
    )
    .await;
    assert_eq!(not_utf8.code(), "bad_json");
    let bad_path = send(
        &router,
        Method::POST,
        "/v1/reducers/%ff",
        Some(&token),
        Body::empty(),
    )
    .await;
    assert_eq!(bad_path.status, StatusCode::BAD_REQUEST);

    // The server still works.
    let health = get(&router, "/health").await;
    assert_eq!(health.status, StatusCode::OK);
    assert_eq!(health.json()["status"], "ok");
}

#[tokio::test]
async fn the_description_and_metrics_are_served() {
    let router = router();
    let module = get(&router, "/v1/module").await.json();
    let tables: Vec<&str> = module["tables"]
        .as_array()
        .expect("tables")
        .iter()
        .filter_map(|table| table["name"].as_str())
        .collect();
    assert_eq!(
        tables,
        ["message", "user", "draft"],
        "private tables are not described"
    );
    assert_eq!(module["tables"][0]["visibility"], Value::Null);
    assert_eq!(module["tables"][2]["visibility"], "owner = :sender");
    let types: Vec<&str> = module["types"]
        .as_array()
        .expect("types")
        .iter()
        .filter_map(|ty| ty["name"].as_str())
        .collect();
    assert_eq!(
        types,
        [
            "quickstart::chat::Message",
            "quickstart::chat::User",
            "quickstart::chat::Draft"
        ],
        "nor their row types"
    );
    assert_eq!(
        module["reducers"][4],
        json!({"id": 4, "name": "send", "params": [{"name": "text", "type": "String"}], "lifecycle": null})
    );
    assert_eq!(module["views"][0]["returns"], "Vec<Message>");

    let (_, token) = identity(&router).await;
    post(&router, "/v1/reducers/send", Some(&token), json!(["hi"])).await;
    post(&router, "/v1/reducers/send", Some(&token), json!([""])).await;
    let metrics = get(&router, "/metrics").await;
    assert!(metrics.headers["content-type"]
        .to_str()
        .is_ok_and(|t| t.starts_with("text/plain")));
    let text = String::from_utf8(metrics.body).expect("text");
    for line in [
        "wasmod_calls_total{kind=\"identity\",outcome=\"ok\"} 1",
        "wasmod_calls_total{kind=\"reducer\",outcome=\"ok\"} 1",
        "wasmod_calls_total{kind=\"reducer\",outcome=\"entry_failed\"} 1",
        "wasmod_call_duration_seconds_count{kind=\"reducer\"} 2",
        "wasmod_calls_in_flight 0",
    ] {
        assert!(text.contains(line), "{line} in\n{text}");
    }
}

/// The answers are typed now, and tables and results are written from encoded rows by the
/// streaming JSON mapping; their bytes must still be what the server wrote when it built them
/// as `serde_json::Value`s: compact, keys in sorted order at every level.
#[tokio::test]
async fn answers_are_written_byte_for_byte_as_before() {
    let router = router();
    let issued = send(&router, Method::POST, "/v1/identity", None, Body::empty()).await;
    let (_, token) = identity(&router).await;
    let answers = [
        issued,
        post(
            &router,
            "/v1/reducers/send",
            Some(&token),
            json!(["hi \"there\"\n"]),
        )
        .await,
        post(&router, "/v1/views/my_messages", Some(&token), json!([])).await,
        post(&router, "/v1/views/recent", None, json!([])).await,
        get(&router, "/v1/tables/message").await,
        get(&router, "/v1/tables/user").await,
        get(&router, "/v1/tables/config").await,
        get(&router, "/v1/module").await,
        post(&router, "/v1/reducers/send", Some(&token), json!([1])).await,
    ];
    for answer in answers {
        let body = String::from_utf8_lossy(&answer.body).into_owned();
        assert_eq!(body, answer.json().to_string());
    }
}
