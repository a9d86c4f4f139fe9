//! End to end: the real `wasmod serve` on the quickstart, called over loopback HTTP like a
//! client would, then stopped with SIGTERM.

mod support;

use serde_json::{json, Value};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use support::{agent, send, Served};
use wasmod_abi::Identity;
use wasmod_server::{Secret, Tokens};
use wasmod_wasm_tests::{built, Profile};

fn code(answer: &(u16, Value)) -> (u16, &str) {
    (answer.0, answer.1["error"]["code"].as_str().unwrap_or("-"))
}

#[test]
fn wasmod_serve_answers_a_client_and_stops_on_sigterm() {
    let started = Instant::now();
    let wasm = built(Profile::Release).library_path("quickstart");
    let data = tempfile::tempdir().expect("a data directory");
    let served = Served::start(&wasm, data.path());
    let up = started.elapsed();
    let base = served.base.clone();
    let agent = agent();
    let url = |path: &str| format!("{base}{path}");

    // An identity, then the chat through reducers and views.
    let (status, issued) = send(&agent, "POST", &url("/v1/identity"), None, None);
    assert_eq!(status, 200, "{issued}");
    let identity = issued["identity"].as_str().expect("an identity").to_owned();
    let token = issued["token"].as_str().expect("a token").to_owned();
    let call = |path: &str, body: &str| send(&agent, "POST", &url(path), Some(&token), Some(body));
    let named = call("/v1/reducers/set_name", r#"["alice"]"#);
    assert_eq!(named, (200, named.1.clone()));
    assert_eq!(named.1["status"], "committed");
    assert_eq!(call("/v1/reducers/send", r#"{"text": "hello"}"#).0, 200);
    let mine = call("/v1/views/my_messages", "[]");
    assert_eq!(mine.0, 200, "{}", mine.1);
    assert_eq!(mine.1["result"][0]["text"], "hello");
    assert_eq!(mine.1["result"][0]["sender"], identity.as_str());
    let recent = send(&agent, "POST", &url("/v1/views/recent"), None, None);
    assert_eq!(recent.0, 200, "{}", recent.1);
    assert_eq!(recent.1["result"][0]["text"], "hello");

    // Tables: public ones are readable, private ones are not.
    let messages = send(&agent, "GET", &url("/v1/tables/message"), None, None);
    assert_eq!(messages.0, 200);
    assert_eq!(messages.1["rows"][0]["text"], "hello");
    let users = send(&agent, "GET", &url("/v1/tables/user"), None, None);
    assert_eq!(
        users.1["rows"],
        json!([{"identity": identity, "name": "alice", "online": true}])
    );
    assert_eq!(
        code(&send(&agent, "GET", &url("/v1/tables/config"), None, None)),
        (403, "private_table")
    );

    // The module's own HTTP handlers.
    let posted = send(
        &agent,
        "POST",
        &url("/v1/http/messages"),
        None,
        Some("over http"),
    );
    assert_eq!(posted, (201, json!({"id": 2})));
    let stats = send(&agent, "GET", &url("/v1/http/stats"), None, None);
    assert_eq!(
        stats,
        (200, json!({"users": 1, "online": 1, "messages": 2}))
    );

    // Bad requests.
    assert_eq!(
        code(&call("/v1/reducers/nope", "[]")),
        (404, "no_such_entry")
    );
    assert_eq!(
        code(&call("/v1/reducers/send", "[42]")),
        (400, "bad_arguments")
    );
    assert_eq!(
        code(&call("/v1/reducers/send", "{not json")),
        (400, "bad_json")
    );
    assert_eq!(
        code(&call("/v1/reducers/send", r#"[""]"#)),
        (422, "entry_failed")
    );
    assert_eq!(
        code(&call("/v1/reducers/connected", "[]")),
        (403, "lifecycle_reducer")
    );
    let anonymous = send(
        &agent,
        "POST",
        &url("/v1/reducers/send"),
        None,
        Some(r#"["x"]"#),
    );
    assert_eq!(code(&anonymous), (401, "unauthenticated"));
    let someone = Identity::from_bytes([5; 32]);
    let forged = Tokens::new(Secret::from_bytes([0; 32]), Duration::from_secs(60)).issue(someone);
    let refused = send(
        &agent,
        "POST",
        &url("/v1/reducers/send"),
        Some(&forged.token),
        Some(r#"["x"]"#),
    );
    assert_eq!(code(&refused), (401, "invalid_token"));
    let secret = std::fs::read_to_string(data.path().join("identity-secret")).expect("the secret");
    let mut key = [0; 32];
    hex::decode_to_slice(secret.trim(), &mut key).expect("hex");
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    let expired =
        Tokens::new(Secret::from_bytes(key), Duration::from_secs(60)).sign(someone, now - 10);
    let late = send(
        &agent,
        "POST",
        &url("/v1/reducers/send"),
        Some(&expired),
        Some(r#"["x"]"#),
    );
    assert_eq!(code(&late), (401, "token_expired"));
    let oversized = format!("[\"{}\"]", "x".repeat(100 << 10));
    assert_eq!(
        code(&call("/v1/reducers/send", &oversized)),
        (413, "payload_too_large")
    );
    assert_eq!(
        code(&send(&agent, "GET", &url("/nowhere"), None, None)),
        (404, "not_found")
    );
    let huge_header = agent
        .get(url("/health"))
        .header("x-huge", "h".repeat(1 << 20))
        .call();
    assert!(huge_header.map_or(true, |response| response.status().is_client_error()));

    // `wasmod call` against the server.
    let output = Command::new(env!("CARGO_BIN_EXE_wasmod"))
        .args(["call", &base, "send", "\"from the cli\"", "--token", &token])
        .output()
        .expect("wasmod call runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(answer["status"], "committed");

    // Operations.
    let health = send(&agent, "GET", &url("/health"), None, None);
    assert_eq!(health.0, 200);
    assert_eq!(health.1["status"], "ok");
    let (status, metrics) = send(&agent, "GET", &url("/metrics"), None, None);
    assert_eq!(status, 200);
    let metrics = metrics.as_str().expect("text");
    assert!(
        metrics.contains("wasmod_calls_total{kind=\"reducer\",outcome=\"ok\"} 3"),
        "{metrics}"
    );
    assert!(
        metrics.contains("wasmod_calls_total{kind=\"reducer\",outcome=\"payload_too_large\"} 1"),
        "{metrics}"
    );
    assert!(metrics.contains("wasmod_calls_in_flight"), "{metrics}");

    // Without a token, the new identity's token is printed, and calls again as that identity.
    let tokenless = Command::new(env!("CARGO_BIN_EXE_wasmod"))
        .args(["call", &base, "send", "\"from a new identity\""])
        .env_remove("WASMOD_TOKEN")
        .output()
        .expect("wasmod call runs");
    let said = String::from_utf8_lossy(&tokenless.stderr);
    assert!(tokenless.status.success(), "{said}");
    let (_, printed) = said
        .split_once("its token (reuse it with --token or WASMOD_TOKEN): ")
        .unwrap_or_else(|| panic!("the token is printed: {said}"));
    let printed = printed.lines().next().unwrap_or_default();
    let mine = Command::new(env!("CARGO_BIN_EXE_wasmod"))
        .args(["call", &base, "my_messages", "--token", printed])
        .output()
        .expect("wasmod call runs");
    assert!(
        mine.status.success(),
        "{}",
        String::from_utf8_lossy(&mine.stderr)
    );
    let mine: Value = serde_json::from_slice(&mine.stdout).expect("JSON");
    assert_eq!(mine["result"][0]["text"], "from a new identity", "{mine}");

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(data.path().join("identity-secret"))
            .expect("the secret")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    let (exit, took, logs) = served.terminate();
    assert!(
        exit.success(),
        "wasmod serve exited with {exit}; it logged:\n{logs}"
    );
    assert!(
        logs.contains("wasmod::module"),
        "module logs reach the output:\n{logs}"
    );
    assert!(logs.contains("chat initialised"), "{logs}");
    eprintln!(
        "e2e: server up in {up:?}, stopped in {took:?} after SIGTERM, {:?} in all",
        started.elapsed()
    );
}

/// The rows of the quickstart's `user` table, as the API serves them.
fn users(agent: &ureq::Agent, base: &str) -> Value {
    let (status, users) = send(agent, "GET", &format!("{base}/v1/tables/user"), None, None);
    assert_eq!(status, 200, "{users}");
    users["rows"].clone()
}

#[test]
fn a_connection_cut_by_a_crash_is_disconnected_once_at_the_next_start() {
    use tungstenite::client::IntoClientRequest;
    let wasm = built(Profile::Release).library_path("quickstart");
    let data = tempfile::tempdir().expect("a data directory");
    let agent = agent();
    let served = Served::start(&wasm, data.path());
    let address = served.base.trim_start_matches("http://").to_owned();
    let mut request = format!("ws://{address}/v1/subscribe")
        .into_client_request()
        .expect("a request");
    request.headers_mut().insert(
        "sec-websocket-protocol",
        "v1.json.wasmod".parse().expect("a header value"),
    );
    let (mut socket, _) = tungstenite::connect(request).expect("the socket opens");
    let first = socket.read().expect("the first message");
    let first: Value = serde_json::from_str(first.to_text().expect("text")).expect("JSON");
    let identity = first["IdentityToken"]["identity"]
        .as_str()
        .expect("an identity")
        .to_owned();
    let online =
        json!([{"identity": identity, "name": format!("user-{}", &identity[..8]), "online": true}]);
    assert_eq!(users(&agent, &served.base), online, "client_connected ran");

    // SIGKILL with the connection open: no client_disconnected can run.
    drop(served);
    drop(socket);

    let leftover = "disconnected a connection left open by the last run";
    let served = Served::start(&wasm, data.path());
    let rows = users(&agent, &served.base);
    assert_eq!(
        rows[0]["online"], false,
        "the next start disconnected it: {rows}"
    );
    let (exit, _, logs) = served.terminate();
    assert!(exit.success(), "{logs}");
    assert_eq!(logs.matches(leftover).count(), 1, "{logs}");

    let served = Served::start(&wasm, data.path());
    let (exit, _, logs) = served.terminate();
    assert!(exit.success(), "{logs}");
    assert_eq!(logs.matches(leftover).count(), 0, "not twice: {logs}");
}
