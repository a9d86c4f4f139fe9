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

/// A JSON WebSocket to `/v1/subscribe`.
type Socket = tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<std::net::TcpStream>>;

/// A JSON WebSocket to `base`'s `/v1/subscribe`, as `token`'s identity (a new one without),
/// and its first message's `IdentityToken`. Reads time out rather than hang.
fn json_socket(base: &str, token: Option<&str>) -> (Socket, Value) {
    use tungstenite::client::IntoClientRequest;
    let address = base.trim_start_matches("http://");
    let query = token.map_or_else(String::new, |token| format!("?token={token}"));
    let mut request = format!("ws://{address}/v1/subscribe{query}")
        .into_client_request()
        .expect("a request");
    request.headers_mut().insert(
        "sec-websocket-protocol",
        "v1.json.wasmod".parse().expect("a header value"),
    );
    let (mut socket, _) = tungstenite::connect(request).expect("the socket opens");
    if let tungstenite::stream::MaybeTlsStream::Plain(stream) = socket.get_ref() {
        stream
            .set_read_timeout(Some(support::PATIENCE))
            .expect("a read timeout");
    }
    let first = next_message(&mut socket);
    (socket, first["IdentityToken"].clone())
}

/// The next text message of `socket`, as JSON (pings are answered by the library).
fn next_message(socket: &mut Socket) -> Value {
    loop {
        let message = socket.read().expect("a message");
        if let tungstenite::Message::Text(text) = message {
            return serde_json::from_str(&text).expect("JSON");
        }
    }
}

#[test]
fn a_connection_cut_by_a_crash_is_disconnected_once_at_the_next_start() {
    let wasm = built(Profile::Release).library_path("quickstart");
    let data = tempfile::tempdir().expect("a data directory");
    let agent = agent();
    let served = Served::start(&wasm, data.path());
    let (socket, first) = json_socket(&served.base, None);
    let identity = first["identity"].as_str().expect("an identity").to_owned();
    let online =
        json!([{"identity": identity, "name": format!("user-{}", &identity[..8]), "online": true}]);
    assert_eq!(users(&agent, &served.base), online, "client_connected ran");

    // SIGKILL with the connection open: no client_disconnected can run.
    served.kill();
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

/// A subscriber as the crash test drives it: its socket, its identity and token, the rows it
/// holds per query set (as JSON texts, sorted) and the last offset it applied.
struct Holder {
    socket: Socket,
    identity: Value,
    token: String,
    rows: [Vec<String>; 2],
    applied: u64,
}

/// The two query sets every holder subscribes: one that a connection's comings and goings
/// change, one they do not.
const SETS: [&str; 2] = ["SELECT * FROM message", "SELECT * FROM user"];

impl Holder {
    /// Subscribes query set `n + 1` to `SETS[n]`, resuming from `resume_from`; returns the
    /// `SubscribeApplied`, applied.
    fn subscribe(&mut self, n: usize, resume_from: Option<u64>) -> Value {
        let subscribe = json!({"Subscribe": {
            "query_set_id": n + 1,
            "queries": [SETS[n]],
            "resume_from": resume_from,
        }});
        self.socket
            .send(tungstenite::Message::text(subscribe.to_string()))
            .expect("sent");
        loop {
            let message = next_message(&mut self.socket);
            if let Some(applied) = message.get("SubscribeApplied") {
                self.apply_rows(n, applied);
                return applied.clone();
            }
            self.apply(&message);
        }
    }

    /// Applies a `SubscribeApplied`'s rows to query set `n`: the changes if it resumed, all
    /// the rows otherwise.
    fn apply_rows(&mut self, n: usize, applied: &Value) {
        let rows_of = |field: &str| -> Vec<String> {
            applied[field]
                .as_array()
                .expect("a list")
                .iter()
                .flat_map(|table| table["rows"].as_array().expect("rows"))
                .map(Value::to_string)
                .collect()
        };
        if applied["resumed"] != true {
            self.rows[n].clear();
        }
        self.change(n, rows_of("deletes"), rows_of("tables"));
        self.applied = self
            .applied
            .max(applied["offset"].as_u64().expect("an offset"));
    }

    /// Removes `deletes` from query set `n` and adds `inserts`.
    fn change(&mut self, n: usize, deletes: Vec<String>, inserts: Vec<String>) {
        let held = &mut self.rows[n];
        for row in deletes {
            let at = held
                .iter()
                .position(|held| *held == row)
                .unwrap_or_else(|| panic!("{row} is deleted but not held: {held:?}"));
            held.remove(at);
        }
        held.extend(inserts);
        held.sort();
    }

    /// Applies a message: a `TransactionUpdate`'s changes (the sets it names; the others did
    /// not change) and its offset.
    fn apply(&mut self, message: &Value) {
        let Some(update) = message.get("TransactionUpdate") else {
            return;
        };
        for change in update["changes"].as_array().expect("changes") {
            let n = change["query_set_id"].as_u64().expect("an id") as usize - 1;
            let rows_of = |field: &str| -> Vec<String> {
                change["tables"]
                    .as_array()
                    .expect("tables")
                    .iter()
                    .flat_map(|table| table[field].as_array().expect("rows"))
                    .map(Value::to_string)
                    .collect()
            };
            self.change(n, rows_of("deletes"), rows_of("inserts"));
        }
        self.applied = update["offset"].as_u64().expect("an offset");
    }

    /// Applies the messages that come until the holder has applied commit `offset`.
    fn catch_up(&mut self, offset: u64) {
        while self.applied < offset {
            let message = next_message(&mut self.socket);
            self.apply(&message);
        }
    }
}

/// The rows of the quickstart's `table`, as `SETS` select them, as JSON texts, sorted.
fn table_rows(agent: &ureq::Agent, base: &str, table: &str) -> Vec<String> {
    let (status, answer) = send(
        agent,
        "GET",
        &format!("{base}/v1/tables/{table}"),
        None,
        None,
    );
    assert_eq!(status, 200, "{answer}");
    let mut rows: Vec<String> = answer["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(Value::to_string)
        .collect();
    rows.sort();
    rows
}

/// Issue 33: the clients connected when `wasmod serve` is killed are exactly the ones that
/// reconnect, and each resumes past the next start's disconnection of every connection the
/// kill left open (one commit each, made before anyone is served), with only what changed.
/// Each resumes both its query sets from the last offset its connection applied, though the
/// message set's own last change is older: the offset is the connection's, not the set's.
/// (Before the fix every one got `resumed: false` and all its rows.)
#[test]
fn subscribers_connected_at_a_sigkill_resume_after_the_restart_with_only_what_changed() {
    let wasm = built(Profile::Release).library_path("quickstart");
    let data = tempfile::tempdir().expect("a data directory");
    let agent = agent();
    let served = Served::start(&wasm, data.path());
    let base = served.base.clone();
    let (status, issued) = send(&agent, "POST", &format!("{base}/v1/identity"), None, None);
    assert_eq!(status, 200, "{issued}");
    let writer = issued["token"].as_str().expect("a token").to_owned();
    let say = |base: &str, text: &str| {
        let body = json!([text]).to_string();
        let url = format!("{base}/v1/reducers/send");
        let answer = send(&agent, "POST", &url, Some(&writer), Some(&body));
        assert_eq!(answer.0, 200, "{}", answer.1);
    };
    for n in 1..=5 {
        say(&base, &format!("message {n}"));
    }
    let mut holders: Vec<Holder> = (0..3)
        .map(|_| {
            let (socket, identity) = json_socket(&base, None);
            let token = identity["token"].as_str().expect("a token").to_owned();
            let mut holder = Holder {
                socket,
                identity: identity["identity"].clone(),
                token,
                rows: [Vec::new(), Vec::new()],
                applied: 0,
            };
            for n in 0..2 {
                let applied = holder.subscribe(n, None);
                assert_eq!(applied["resumed"], false, "{applied}");
            }
            holder
        })
        .collect();
    // The last commit before the kill: every holder applies it, and holds the tables.
    say(&base, "the last before the kill");
    for holder in &mut holders {
        while !holder.rows[0]
            .iter()
            .any(|row| row.contains("the last before the kill"))
        {
            let message = next_message(&mut holder.socket);
            holder.apply(&message);
        }
    }
    let last = holders[0].applied;
    for holder in &holders {
        assert_eq!(holder.applied, last, "every holder applied the same commit");
        assert_eq!(holder.rows[0], table_rows(&agent, &base, "message"));
        assert_eq!(holder.rows[1], table_rows(&agent, &base, "user"));
    }

    // SIGKILL with the three connected: the next start disconnects them, three commits.
    served.kill();
    let served = Served::start(&wasm, data.path());
    let base = served.base.clone();
    for (n, holder) in holders.iter_mut().enumerate() {
        let (socket, identity) = json_socket(&base, Some(&holder.token));
        assert_eq!(identity["identity"], holder.identity, "the same identity");
        holder.socket = socket;
        let from = holder.applied;
        let messages = holder.subscribe(0, Some(from));
        assert_eq!(messages["resumed"], true, "{messages}");
        assert_eq!(messages["tables"][0]["rows"], json!([]), "{messages}");
        assert_eq!(messages["deletes"][0]["rows"], json!([]), "{messages}");
        let users = holder.subscribe(1, Some(from));
        assert_eq!(users["resumed"], true, "{users}");
        assert!(
            users["offset"].as_u64() > Some(last + 3),
            "past the start's three disconnections: {users}"
        );
        if n == 0 {
            // Its own row went offline and came back: no change. The others are offline.
            let (gone, new) = (&users["deletes"][0]["rows"], &users["tables"][0]["rows"]);
            assert_eq!(gone.as_array().map(Vec::len), Some(2), "{users}");
            assert_eq!(new.as_array().map(Vec::len), Some(2), "{users}");
            assert!(new.to_string().contains(r#""online":false"#), "{users}");
        }
    }
    let end = holders.iter().map(|holder| holder.applied).max();
    for holder in &mut holders {
        holder.catch_up(end.expect("holders"));
        assert_eq!(holder.rows[0], table_rows(&agent, &base, "message"));
        assert_eq!(holder.rows[1], table_rows(&agent, &base, "user"));
    }
    drop(holders);
    let (exit, _, logs) = served.terminate();
    assert!(exit.success(), "{logs}");
    let leftover = "disconnected a connection left open by the last run";
    assert_eq!(logs.matches(leftover).count(), 3, "{logs}");
}
