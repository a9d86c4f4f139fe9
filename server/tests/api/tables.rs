//! `GET /v1/tables/{name}` in pages: every row exactly once under concurrent inserts, pages
//! cut at the byte cap, a large table served in bounded chunks, and the bound on reads at
//! once.

use crate::support::{get, identity, post, send, server};
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use tower::ServiceExt;
use wasmod_abi::{Encode, Identity, Timestamp};
use wasmod_host::AllowList;
use wasmod_server::{Server, ServerConfig};

/// Inserts `count` messages of `text` straight into the datastore, bypassing the module.
fn insert_messages(server: &Server, first_id: u64, count: u64, text: &str) {
    let datastore = server.database().datastore();
    let table = datastore.table_id("message").expect("the message table");
    let mut tx = datastore.begin_mut();
    for id in first_id..first_id + count {
        let mut row = Vec::new();
        id.encode(&mut row);
        Identity::from_bytes([9; 32]).encode(&mut row);
        Timestamp::from_micros_since_unix_epoch(1).encode(&mut row);
        text.encode(&mut row);
        tx.insert(table, &mut row).expect("a message row");
    }
    tx.commit();
}

/// Every page of `table`, `limit` rows at most (none: the server's default), in order.
async fn pages(router: &axum::Router, table: &str, limit: Option<usize>) -> Vec<Value> {
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut uri = format!("/v1/tables/{table}?");
        if let Some(limit) = limit {
            uri.push_str(&format!("limit={limit}&"));
        }
        if let Some(cursor) = &cursor {
            uri.push_str(&format!("cursor={cursor}"));
        }
        let answer = get(router, &uri).await;
        assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
        let page = answer.json();
        cursor = page["next_cursor"].as_str().map(str::to_owned);
        pages.push(page);
        if cursor.is_none() {
            return pages;
        }
    }
}

fn ids(page: &Value) -> Vec<u64> {
    page["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| row["id"].as_u64().expect("an id"))
        .collect()
}

#[tokio::test]
async fn pages_hold_every_row_exactly_once_while_rows_are_inserted() {
    let server = server(ServerConfig::default(), AllowList::new());
    let router = server.router();
    insert_messages(&server, 1, 50, "before");
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut next_id = 1000;
    loop {
        let uri = match &cursor {
            None => "/v1/tables/message?limit=7".to_owned(),
            Some(cursor) => format!("/v1/tables/message?limit=7&cursor={cursor}"),
        };
        // Rows are inserted between pages: they come after every page already read.
        if cursor.is_some() && next_id < 1010 {
            insert_messages(&server, next_id, 1, "during");
            next_id += 1;
        }
        let page = get(&router, &uri).await.json();
        let page_ids = ids(&page);
        assert!(page_ids.len() <= 7, "{page_ids:?}");
        seen.extend(page_ids);
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    let unique: BTreeSet<u64> = seen.iter().copied().collect();
    assert_eq!(unique.len(), seen.len(), "a row was sent twice: {seen:?}");
    assert!(next_id > 1005, "rows were inserted while paging");
    let expected: BTreeSet<u64> = (1..=50).chain(1000..next_id).collect();
    assert_eq!(unique, expected);
    assert_eq!(seen[..50], (1..=50).collect::<Vec<_>>()[..], "oldest first");
}

#[tokio::test]
async fn the_default_limit_applies_and_the_last_page_has_no_cursor() {
    let mut config = ServerConfig::default();
    config.node.table_page_rows = 4;
    config.node.max_table_page_rows = 6;
    let server = server(config, AllowList::new());
    let router = server.router();
    insert_messages(&server, 1, 10, "x");
    let by_default = pages(&router, "message", None).await;
    let sizes: Vec<usize> = by_default.iter().map(|page| ids(page).len()).collect();
    assert_eq!(sizes, [4, 4, 2]);
    let capped = pages(&router, "message", Some(100)).await;
    let sizes: Vec<usize> = capped.iter().map(|page| ids(page).len()).collect();
    assert_eq!(sizes, [6, 4], "a limit past the maximum is the maximum");
    let empty = get(&router, "/v1/tables/user").await.json();
    assert_eq!(empty, json!({"rows": [], "next_cursor": null}));
    let bad = get(&router, "/v1/tables/message?limit=0").await;
    assert_eq!(
        (bad.status, bad.code().as_str()),
        (StatusCode::BAD_REQUEST, "bad_request")
    );
    let forged = get(&router, "/v1/tables/message?cursor=12").await;
    assert_eq!(forged.code(), "bad_request");
}

/// The encoded size of a message of `text` (id, sender, sent, the text with its length).
fn encoded_message(text: &str) -> usize {
    8 + 32 + 8 + 4 + text.len()
}

#[tokio::test]
async fn a_page_stops_before_the_byte_cap_and_a_huge_row_comes_alone() {
    let mut config = ServerConfig::default();
    config.node.max_table_page_bytes = 2000;
    let server = server(config, AllowList::new());
    let router = server.router();
    let (medium, huge) = ("a".repeat(300), "b".repeat(5000));
    assert_eq!(2000 / encoded_message(&medium), 5);
    insert_messages(&server, 1, 30, &medium);
    insert_messages(&server, 31, 1, &huge);
    insert_messages(&server, 32, 3, "small");
    let pages = pages(&router, "message", None).await;
    let sizes: Vec<usize> = pages.iter().map(|page| ids(page).len()).collect();
    assert_eq!(sizes, [5, 5, 5, 5, 5, 5, 1, 3]);
    assert_eq!(ids(&pages[6]), [31], "the huge row comes alone");
    let seen: Vec<u64> = pages.iter().flat_map(ids).collect();
    assert_eq!(seen, (1..=34).collect::<Vec<_>>());
}

/// Issue 15's measurement: 20 MB of rows, once served as one answer (56 MB of JSON, and
/// 1.34 GB of memory), is now served in pages of at most the cap, each written in chunks of
/// bounded size as the connection takes them.
#[tokio::test]
async fn a_twenty_megabyte_table_is_served_in_bounded_pages_and_chunks() {
    let config = ServerConfig::default();
    let cap = config.node.max_table_page_bytes;
    let server = server(config, AllowList::new());
    let router = server.router();
    let text = "x".repeat(10_000);
    insert_messages(&server, 1, 2000, &text);
    let row_bytes = encoded_message(&text);
    // A row's JSON: the text, the sender in hex, the keys and numbers.
    let row_json = text.len() + 200;
    let mut cursor: Option<String> = None;
    let (mut rows, mut pages, mut total) = (0, 0, 0);
    loop {
        let uri = match &cursor {
            None => "/v1/tables/message".to_owned(),
            Some(cursor) => format!("/v1/tables/message?cursor={cursor}"),
        };
        let request = Request::get(uri).body(Body::empty()).expect("a request");
        let response = router.clone().oneshot(request).await.expect("infallible");
        assert_eq!(response.status(), StatusCode::OK);
        let mut chunks = response.into_body().into_data_stream();
        let mut body = Vec::new();
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.expect("a chunk");
            assert!(
                chunk.len() <= (64 << 10) + row_json,
                "a chunk of {} bytes",
                chunk.len()
            );
            body.extend_from_slice(&chunk);
        }
        let page: Value = serde_json::from_slice(&body).expect("JSON");
        let page_rows = ids(&page).len();
        assert!(
            page_rows * row_bytes <= cap,
            "{page_rows} rows of {row_bytes} bytes"
        );
        assert!(
            body.len() <= page_rows * row_json + 64,
            "a page of {} bytes",
            body.len()
        );
        total += body.len();
        rows += page_rows;
        pages += 1;
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(rows, 2000);
    assert!(total > 20_000_000, "the JSON is large: {total} bytes");
    assert_eq!(pages, 2000usize.div_ceil(cap / row_bytes));
}

#[tokio::test]
async fn a_read_holds_its_permit_until_its_page_is_rendered_not_while_it_is_sent() {
    let mut config = ServerConfig::default();
    config.node.max_table_reads = 1;
    let server = server(config, AllowList::new());
    let router = server.router();
    insert_messages(&server, 1, 3, "x");
    let request = || {
        Request::get("/v1/tables/message")
            .body(Body::empty())
            .expect("a request")
    };
    // A page whose body is not read yet holds no permit: the next read is served.
    let held = router.clone().oneshot(request()).await.expect("infallible");
    assert_eq!(held.status(), StatusCode::OK);
    let next = get(&router, "/v1/tables/message").await;
    assert_eq!(next.status, StatusCode::OK, "{:?}", next.json());
    assert_eq!(ids(&next.json()), [1, 2, 3]);
    let body = axum::body::to_bytes(held.into_body(), usize::MAX)
        .await
        .expect("the held body");
    let page: Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(ids(&page), [1, 2, 3]);
}

/// Clients that ask for a large page and never read it, over real sockets with small
/// receive buffers, as many as there are reads at once and one more: each is answered, and
/// so is a reader after them (issue 27, item 6: they made every read answer `busy`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_never_read_their_pages_do_not_hold_the_reads() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut config = ServerConfig::default();
    config.node.max_table_reads = 2;
    // Pages of 8 MiB, more than the sockets' buffers hold.
    config.node.max_table_page_bytes = 8 << 20;
    let server = server(config, AllowList::new());
    insert_messages(&server, 1, 1000, &"x".repeat(10_000));
    let live = crate::live::Live::serve(server).await;
    let request = b"GET /v1/tables/message?limit=10000 HTTP/1.1\r\nhost: test\r\n\r\n";
    let mut stalled = Vec::new();
    for _ in 0..3 {
        let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
        socket.set_recv_buffer_size(4096).expect("a small buffer");
        let mut stream = socket.connect(live.addr).await.expect("connected");
        stream.write_all(request).await.expect("sent");
        // The status line comes; the rest is never read.
        let mut head = [0u8; 12];
        tokio::time::timeout(
            std::time::Duration::from_secs(10),
            stream.read_exact(&mut head),
        )
        .await
        .expect("an answer in time")
        .expect("the status line");
        assert_eq!(&head, b"HTTP/1.1 200", "{}", String::from_utf8_lossy(&head));
        stalled.push(stream);
    }
    let uri = format!("http://{}/v1/tables/message?limit=1", live.addr);
    let status = tokio::task::spawn_blocking(move || {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(std::time::Duration::from_secs(10)))
            .http_status_as_error(false)
            .build()
            .into();
        agent.get(&uri).call().expect("an answer").status()
    })
    .await
    .expect("joined");
    assert_eq!(status, 200);
    drop(stalled);
    live.stop().await;
}

#[tokio::test]
async fn rows_sent_through_the_module_are_paged_too() {
    let server = server(ServerConfig::default(), AllowList::new());
    let router = server.router();
    let (_, token) = identity(&router).await;
    for text in ["one", "two", "three"] {
        let sent = post(&router, "/v1/reducers/send", Some(&token), json!([text])).await;
        assert_eq!(sent.status, StatusCode::OK);
    }
    let first = send(
        &router,
        Method::GET,
        "/v1/tables/message?limit=2",
        None,
        Body::empty(),
    )
    .await;
    let first = first.json();
    assert_eq!(first["rows"].as_array().map(Vec::len), Some(2));
    let cursor = first["next_cursor"].as_str().expect("a cursor");
    let rest = get(
        &router,
        &format!("/v1/tables/message?limit=2&cursor={cursor}"),
    )
    .await;
    assert_eq!(rest.json()["rows"][0]["text"], "three");
    assert_eq!(rest.json()["next_cursor"], Value::Null);
}

#[tokio::test]
async fn a_query_string_that_does_not_parse_is_a_bad_request() {
    let router = server(ServerConfig::default(), AllowList::new()).router();
    let answer = get(&router, "/v1/tables/message?limit=1&limit=2").await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.json()["error"]["code"], "bad_request");
    let message = answer.json()["error"]["message"].to_string();
    assert!(message.contains("the query is not valid"), "{message}");
}
