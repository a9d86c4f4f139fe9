//! The operator's side: the token, the admin API's content, the console's pages, and the
//! live log feed (a reducer's lines reach it; a reader that does not read never holds the
//! module up).

use crate::live::{Client, Connect, Encoding, Live};
use crate::support::{
    admin_server, benchmarks, get, identity, post, quickstart, router, Answer, OPERATOR,
};
use axum::body::{Body, BodyDataStream};
use axum::http::{header, Request, StatusCode};
use axum::Router;
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::time::Duration;
use tower::ServiceExt;
use wasmod_node::LogFeed;
use wasmod_server::{DispatchReport, ServerConfig};

const PATIENCE: Duration = Duration::from_secs(10);

/// `GET path` with `credential` as the given header (`authorization` or `cookie`).
async fn get_with(router: &Router, path: &str, credential: Option<(&str, String)>) -> Answer {
    let headers: Vec<(&str, String)> = credential.into_iter().collect();
    request_with(router, "GET", path, &headers, Body::empty()).await
}

fn bearer() -> Option<(&'static str, String)> {
    Some(("authorization", format!("Bearer {OPERATOR}")))
}

/// `GET path` as the operator, as JSON.
async fn admin_get(router: &Router, path: &str) -> Value {
    let answer = get_with(router, path, bearer()).await;
    assert_eq!(
        answer.status,
        StatusCode::OK,
        "{path}: {}",
        String::from_utf8_lossy(&answer.body)
    );
    answer.json()
}

/// The live feed at `level`, as a stream of body chunks.
async fn open_feed(router: &Router, level: &str) -> BodyDataStream {
    let request = Request::get(format!("/v1/admin/logs/feed?level={level}"))
        .header(header::AUTHORIZATION, format!("Bearer {OPERATOR}"))
        .body(Body::empty())
        .expect("a request");
    let response = router.clone().oneshot(request).await.expect("infallible");
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "text/event-stream"
    );
    response.into_body().into_data_stream()
}

/// Reads the feed until `done` holds of what was read, and returns it.
async fn read_feed_until(feed: &mut BodyDataStream, done: impl Fn(&str) -> bool) -> String {
    let mut text = String::new();
    tokio::time::timeout(PATIENCE, async {
        while !done(&text) {
            let chunk = feed
                .next()
                .await
                .expect("the feed goes on")
                .expect("a chunk");
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the feed never had it; it had:\n{text}"));
    text
}

#[tokio::test]
async fn the_admin_side_takes_the_operator_token_and_nothing_else() {
    let (_, client_token) = identity(&router()).await;
    let server = admin_server(
        quickstart(),
        ServerConfig::default(),
        None,
        LogFeed::with_defaults(),
    );
    let router = server.router();
    for path in [
        "/v1/admin/stats",
        "/v1/admin/tables",
        "/v1/admin/logs",
        "/v1/admin/logs/feed",
        "/v1/admin/tables/config",
        "/v1/admin/module",
        "/v1/admin/dispatch",
    ] {
        let none = get_with(&router, path, None).await;
        assert_eq!(
            (none.status, none.code().as_str()),
            (StatusCode::UNAUTHORIZED, "unauthenticated"),
            "{path}"
        );
        let wrong = get_with(
            &router,
            path,
            Some(("authorization", "Bearer operator-token-for-test".into())),
        )
        .await;
        assert_eq!(
            (wrong.status, wrong.code().as_str()),
            (StatusCode::FORBIDDEN, "not_operator"),
            "{path}"
        );
        let client = get_with(
            &router,
            path,
            Some(("authorization", format!("Bearer {client_token}"))),
        )
        .await;
        assert_eq!(
            client.code(),
            "not_operator",
            "a client's token is not the operator's: {path}"
        );
    }
    let cookie = Some(("cookie", format!("theme=dark; wasmod_operator={OPERATOR}")));
    assert_eq!(
        get_with(&router, "/v1/admin/stats", cookie.clone())
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(
        get_with(&router, "/v1/admin/stats", bearer()).await.status,
        StatusCode::OK
    );

    // The console: the sign-in page without the token, the console with it.
    let sign_in = get_with(&router, "/admin", None).await;
    assert_eq!(sign_in.status, StatusCode::UNAUTHORIZED);
    let page = String::from_utf8_lossy(&sign_in.body).into_owned();
    assert!(
        page.contains("id=\"operator-token\"") && !page.contains("id=\"logs\""),
        "{page}"
    );
    let wrong = get_with(
        &router,
        "/admin",
        Some(("cookie", "wasmod_operator=nope".into())),
    )
    .await;
    assert_eq!(wrong.status, StatusCode::FORBIDDEN);
    let console = get_with(&router, "/admin", cookie).await;
    assert_eq!(console.status, StatusCode::OK);
    assert!(console.headers[header::CONTENT_TYPE]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let page = String::from_utf8_lossy(&console.body).into_owned();
    for id in [
        "tables",
        "table-rows",
        "commit-rate",
        "connections",
        "clients-dropped",
        "logs",
        "entries",
        "dispatch",
        "cluster-role",
        "standbys",
    ] {
        assert!(
            page.contains(&format!("id=\"{id}\"")),
            "the console has #{id}"
        );
    }

    // A server without an operator token has no admin side at all.
    let plain = crate::support::router();
    assert_eq!(
        get_with(&plain, "/v1/admin/stats", bearer()).await.code(),
        "not_found"
    );
    assert_eq!(
        get_with(&plain, "/admin", bearer()).await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn the_admin_api_shows_tables_private_rows_entry_points_and_the_report() {
    let report = DispatchReport {
        json: r#"{"exports":[]}"#.to_owned(),
        text: "dispatch: clean\n".to_owned(),
        clean: true,
    };
    let server = admin_server(
        quickstart(),
        ServerConfig::default(),
        Some(report),
        LogFeed::with_defaults(),
    );
    let router = server.router();
    let (_, token) = identity(&router).await;
    let sent = post(&router, "/v1/reducers/send", Some(&token), json!(["hello"])).await;
    assert_eq!(sent.status, StatusCode::OK);

    let tables = admin_get(&router, "/v1/admin/tables").await;
    let find = |name: &str| {
        tables["tables"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(find("message")["rows"], 1);
    assert_eq!(find("user")["rows"], 1);
    assert_eq!(
        find("config"),
        json!({"id": 2, "name": "config", "public": false, "rows": 1})
    );
    // The private table's rows are the operator's to see, in pages.
    let config = admin_get(&router, "/v1/admin/tables/config?limit=1").await;
    assert_eq!(
        config,
        json!({"rows": [{"key": "motd_url", "value": ""}], "next_cursor": null})
    );
    assert_eq!(
        get(&router, "/v1/tables/config").await.code(),
        "private_table"
    );

    let module = admin_get(&router, "/v1/admin/module").await;
    let send_entry = module["reducers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "send")
        .cloned()
        .unwrap();
    assert_eq!(
        send_entry["params"],
        json!([{"name": "text", "type": "String"}])
    );
    assert!(send_entry["id"].is_u64());
    assert!(module["tables"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "config"));

    let dispatch = admin_get(&router, "/v1/admin/dispatch").await;
    assert_eq!(
        dispatch,
        json!({"clean": true, "report": {"exports": []}, "text": "dispatch: clean\n"})
    );

    let stats = admin_get(&router, "/v1/admin/stats").await;
    assert!(stats["commits"].as_u64().unwrap() >= 2, "{stats}");
    assert_eq!(
        stats["clients_dropped"],
        json!({"slow": 0, "idle": 0, "lagged": 0})
    );
    assert!(stats["commits_per_second"].is_number());
    assert_eq!(stats["connections"], json!([]));
    assert_eq!(
        stats["cluster"],
        Value::Null,
        "a lone server is of no deployment"
    );

    // The module's `init` logged before the server started: the log was handed the feed
    // with the module.
    let logs = admin_get(&router, "/v1/admin/logs").await;
    assert_eq!(logs["records"][0]["message"], "chat initialised", "{logs}");
    assert_eq!(logs["records"][0]["seq"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_list_the_open_sockets_with_their_queues() {
    let server = admin_server(
        quickstart(),
        ServerConfig::default(),
        None,
        LogFeed::with_defaults(),
    );
    let router = server.router();
    let live = Live::serve(server).await;
    let mut client = Client::connect(&live, Encoding::Json, Connect::default()).await;
    let (identity, _, connection) = client.hello().await;
    let stats = admin_get(&router, "/v1/admin/stats").await;
    let sockets = stats["connections"].as_array().expect("a list");
    assert_eq!(sockets.len(), 1, "{stats}");
    assert_eq!(sockets[0]["identity"], identity.as_str());
    assert_eq!(sockets[0]["connection_id"], connection.as_str());
    assert_eq!(sockets[0]["queued_messages"], 0);
    assert_eq!(
        sockets[0]["max_messages"],
        ServerConfig::default().node.outbound_messages
    );
    drop(client);
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !admin_get(&router, "/v1/admin/stats").await["connections"]
        .as_array()
        .unwrap()
        .is_empty()
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the socket is never unlisted"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The router holds a handle on the module's thread, which shutdown waits for.
    drop(router);
    live.stop().await;
}

#[tokio::test]
async fn the_log_feed_receives_what_a_reducer_logs() {
    let server = admin_server(
        benchmarks(),
        ServerConfig::default(),
        None,
        LogFeed::with_defaults(),
    );
    let router = server.router();
    let (_, token) = identity(&router).await;
    let mut feed = open_feed(&router, "info").await;
    let mut quiet = open_feed(&router, "warn").await;
    let logged = post(&router, "/v1/reducers/print_many", Some(&token), json!([3])).await;
    assert_eq!(logged.status, StatusCode::OK, "{:?}", logged.json());
    let text = read_feed_until(&mut feed, |text| text.contains("line 2 of 3")).await;
    let records: Vec<Value> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).expect("a record"))
        .collect();
    let messages: Vec<&str> = records
        .iter()
        .map(|r| r["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        messages,
        [
            "print_many: line 0 of 3",
            "print_many: line 1 of 3",
            "print_many: line 2 of 3"
        ]
    );
    assert_eq!(records[0]["level"], "info");
    assert!(text.contains("event: log"));

    // Kept for those who come later, and filtered by level.
    let recent = admin_get(&router, "/v1/admin/logs?level=info").await;
    assert_eq!(recent["records"].as_array().unwrap().len(), 3);
    let severe = admin_get(&router, "/v1/admin/logs?level=warn").await;
    assert_eq!(severe["records"], json!([]));
    let late = open_feed(&router, "info").await;
    let backlog = read_feed_until(&mut { late }, |text| text.contains("line 2 of 3")).await;
    assert!(backlog.contains("line 0 of 3"));
    // The warn reader heard nothing of it.
    let nothing = tokio::time::timeout(Duration::from_millis(200), quiet.next()).await;
    assert!(nothing.is_err(), "a warn feed got {nothing:?}");
    let bad = get_with(&router, "/v1/admin/logs?level=loud", bearer()).await;
    assert_eq!(bad.code(), "bad_request");
}

#[tokio::test]
async fn a_reader_that_does_not_read_never_holds_the_module_up() {
    let logs = LogFeed::new(1000, 8);
    let server = admin_server(benchmarks(), ServerConfig::default(), None, logs);
    let router = server.router();
    let (_, token) = identity(&router).await;
    // This reader reads nothing until the module has logged 100 times its lag.
    let mut stalled = open_feed(&router, "trace").await;
    for _ in 0..4 {
        let logged = tokio::time::timeout(
            PATIENCE,
            post(
                &router,
                "/v1/reducers/print_many",
                Some(&token),
                json!([200]),
            ),
        )
        .await
        .expect("the reducer is not held up by the reader");
        assert_eq!(logged.status, StatusCode::OK);
    }
    let text = read_feed_until(&mut stalled, |text| text.contains("event: dropped")).await;
    let dropped: Value = text
        .split("event: dropped\n")
        .nth(1)
        .and_then(|rest| rest.lines().find_map(|line| line.strip_prefix("data: ")))
        .map(|data| serde_json::from_str(data).expect("JSON"))
        .expect("a dropped event");
    assert_eq!(dropped["dropped"], 800 - 8, "{text}");
    let stats = admin_get(&router, "/v1/admin/stats").await;
    assert_eq!(stats["logs"]["dropped_for_slow_readers"], 800 - 8);
    // The reader goes on with the newest records.
    read_feed_until(&mut stalled, |text| text.contains("line 199 of 200")).await;
}

/// `method path` with `headers` and `body`.
async fn request_with(
    router: &Router,
    method: &str,
    path: &str,
    headers: &[(&str, String)],
    body: impl Into<Body>,
) -> Answer {
    let mut request = Request::builder().method(method).uri(path);
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let response = router
        .clone()
        .oneshot(request.body(body.into()).expect("a request"))
        .await
        .expect("infallible");
    let status = response.status();
    let headers = response.headers().clone();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("a body")
        .to_vec();
    Answer {
        status,
        headers,
        body,
    }
}

/// The headers of a browser at `origin` sending the operator's cookie to 127.0.0.1:3000.
fn browser_with_cookie(origin: Option<&str>) -> Vec<(&'static str, String)> {
    let mut headers = vec![
        ("host", "127.0.0.1:3000".to_owned()),
        ("cookie", format!("wasmod_operator={OPERATOR}")),
        ("content-type", "text/plain".to_owned()),
    ];
    if let Some(origin) = origin {
        headers.push(("origin", origin.to_owned()));
    }
    headers
}

#[tokio::test]
async fn another_sites_page_cannot_publish_with_the_operators_cookie() {
    let server = admin_server(
        quickstart(),
        ServerConfig::default(),
        None,
        LogFeed::with_defaults(),
    );
    let router = server.router();
    // The reproduction of issue 27: a cross-origin `text/plain` form POST carrying the cookie.
    // A wasm body is not needed to tell: a refusal is `cross_site`, a pass is the publish's
    // own `invalid_module` for these bytes.
    let not_wasm = "not a module";
    for origin in [Some("http://evil.example"), Some("null"), None] {
        let refused = request_with(
            &router,
            "POST",
            "/v1/admin/module",
            &browser_with_cookie(origin),
            not_wasm,
        )
        .await;
        assert_eq!(
            (refused.status, refused.code().as_str()),
            (StatusCode::FORBIDDEN, "cross_site"),
            "from {origin:?}"
        );
    }
    let mut cross_site = browser_with_cookie(None);
    cross_site.push(("sec-fetch-site", "cross-site".to_owned()));
    let refused = request_with(&router, "POST", "/v1/admin/module", &cross_site, not_wasm).await;
    assert_eq!(refused.code(), "cross_site");
    // The server's own page passes, and so does the bearer token from anywhere.
    let own = browser_with_cookie(Some("http://127.0.0.1:3000"));
    let passed = request_with(&router, "POST", "/v1/admin/module", &own, not_wasm).await;
    assert_eq!(passed.code(), "invalid_module");
    let mut bearer = browser_with_cookie(Some("http://evil.example"));
    bearer.push(("authorization", format!("Bearer {OPERATOR}")));
    let passed = request_with(&router, "POST", "/v1/admin/module", &bearer, not_wasm).await;
    assert_eq!(passed.code(), "invalid_module");
    // Reads by cookie still work from a navigation, which sends no `Origin`.
    let read = request_with(
        &router,
        "GET",
        "/v1/admin/stats",
        &browser_with_cookie(None),
        Body::empty(),
    )
    .await;
    assert_eq!(read.status, StatusCode::OK);
    // An operator `Authorization` must be `Bearer <token>`.
    for value in [OPERATOR.to_owned(), format!("Token {OPERATOR}")] {
        let refused = get_with(&router, "/v1/admin/stats", Some(("authorization", value))).await;
        assert_eq!(refused.code(), "invalid_token");
    }
}

/// The router of an admin server with default settings, and the headers of a request from
/// the server's own console page (same origin, JSON).
fn console() -> (axum::Router, [(&'static str, String); 3]) {
    let server = admin_server(
        quickstart(),
        ServerConfig::default(),
        None,
        LogFeed::with_defaults(),
    );
    let page = [
        ("host", "127.0.0.1:3000".to_owned()),
        ("origin", "http://127.0.0.1:3000".to_owned()),
        ("content-type", "application/json".to_owned()),
    ];
    (server.router(), page)
}

#[tokio::test]
async fn the_server_sets_the_cookie_http_only_and_strict_and_forgets_it() {
    let (router, page) = console();
    let cookies = |answer: &Answer| -> Vec<String> {
        answer
            .headers
            .get_all(header::SET_COOKIE)
            .iter()
            .map(|value| value.to_str().expect("text").to_owned())
            .collect()
    };
    let body = json!({ "token": OPERATOR }).to_string();
    let signed_in = request_with(&router, "POST", "/v1/admin/session", &page, body.clone()).await;
    assert_eq!(signed_in.status, StatusCode::NO_CONTENT);
    assert_eq!(
        cookies(&signed_in),
        [
            format!("wasmod_operator={OPERATOR}; Path=/admin; HttpOnly; SameSite=Strict"),
            format!("wasmod_operator={OPERATOR}; Path=/v1/admin; HttpOnly; SameSite=Strict"),
        ]
    );
    // Behind a TLS proxy, `Secure` too.
    let mut proxied = page.to_vec();
    proxied.push(("x-forwarded-proto", "https".to_owned()));
    let secure = request_with(&router, "POST", "/v1/admin/session", &proxied, body.clone()).await;
    assert!(cookies(&secure)
        .iter()
        .all(|cookie| cookie.ends_with("; Secure")));
    // A wrong token gets no cookie; another site's page cannot sign the browser in.
    let wrong = json!({ "token": "not-the-operator-token" }).to_string();
    let refused = request_with(&router, "POST", "/v1/admin/session", &page, wrong).await;
    assert_eq!(refused.code(), "not_operator");
    assert!(cookies(&refused).is_empty());
    let mut elsewhere = page.to_vec();
    elsewhere[1].1 = "http://evil.example".to_owned();
    let refused = request_with(&router, "POST", "/v1/admin/session", &elsewhere, body).await;
    assert_eq!(refused.code(), "cross_site");
    assert!(cookies(&refused).is_empty());
    let garbled = request_with(&router, "POST", "/v1/admin/session", &page, "{").await;
    assert_eq!(garbled.code(), "bad_json");
    // Sign-out: both cookies expire.
    let signed_out =
        request_with(&router, "DELETE", "/v1/admin/session", &page, Body::empty()).await;
    assert_eq!(signed_out.status, StatusCode::NO_CONTENT);
    let forgotten = cookies(&signed_out);
    assert_eq!(forgotten.len(), 2);
    assert!(forgotten
        .iter()
        .all(|cookie| cookie.starts_with("wasmod_operator=;") && cookie.ends_with("Max-Age=0")));
    // The sign-in page sends the token to the server and sets no cookie itself.
    let sign_in = String::from_utf8(get_with(&router, "/admin", None).await.body).unwrap();
    assert!(sign_in.contains("/v1/admin/session") && !sign_in.contains("document.cookie"));
}

#[tokio::test]
async fn a_sign_in_over_the_body_limit_is_payload_too_large() {
    let (router, page) = console();
    let padding = " ".repeat(ServerConfig::default().max_body_bytes);
    let large = format!("{{\"token\": \"{OPERATOR}\"}}{padding}");
    let refused = request_with(&router, "POST", "/v1/admin/session", &page, large).await;
    assert_eq!(
        (refused.status, refused.code().as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large")
    );
    assert!(refused.headers.get(header::SET_COOKIE).is_none());
}
