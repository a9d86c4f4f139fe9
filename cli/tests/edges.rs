//! Edge nodes as they run: a real `redis-server`, the quickstart served by `wasmod serve
//! --publish` (the primary) and `wasmod edge`s of it, each a process of its own on loopback,
//! with clients that are `wasmod subscribe` processes and HTTP calls.
//!
//! Every client's view of the `message` table is checked as it is built from what it is
//! sent: an insert of a row it already holds (a duplicate) or a delete of a row it does not
//! hold, or offsets that do not grow, fail the test at once; and in the end it must hold
//! exactly the primary's rows (nothing missed).

mod support;

#[allow(dead_code)] // The Redis helpers the server's tests use; these need only some.
#[path = "../../server/tests/api/redis_server.rs"]
mod redis_server;

use redis_server::RedisServer;
use serde_json::Value;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use support::{agent, free_port, private_file, send, signal, Served, Subscriber, PATIENCE};
use wasmod_wasm_tests::{built, Profile};

/// The stream the primary publishes to.
const STREAM: &str = "chat";

/// One Redis, one primary, and the files edges need.
struct Cluster {
    redis: RedisServer,
    dir: tempfile::TempDir,
    wasm: PathBuf,
    /// The primary's fixed address, so that it restarts where edges look for it.
    listen: String,
    primary_args: Vec<String>,
    primary: Option<Served>,
}

impl Cluster {
    /// Starts Redis and the primary, with `primary_args` added to `wasmod serve`.
    fn start(primary_args: &[&str]) -> Self {
        let redis = RedisServer::start();
        let dir = tempfile::tempdir().expect("a directory");
        private_file(
            &dir.path().join("edge-token"),
            "an edge token for the tests\n",
        );
        let mut cluster = Self {
            redis,
            dir,
            wasm: built(Profile::Release).library_path("quickstart"),
            listen: format!("127.0.0.1:{}", free_port()),
            primary_args: primary_args.iter().map(|arg| arg.to_string()).collect(),
            primary: None,
        };
        cluster.start_primary();
        cluster
    }

    fn start_primary(&mut self) {
        let stream = format!("{}/{STREAM}", self.redis.server());
        let token = self.dir.path().join("edge-token");
        let mut args: Vec<&OsStr> = vec![
            "--publish".as_ref(),
            stream.as_ref(),
            "--edge-token-file".as_ref(),
            token.as_os_str(),
        ];
        args.extend(self.primary_args.iter().map(OsStr::new));
        let data = self.dir.path().join("primary");
        self.primary = Some(Served::start_with(&self.wasm, &data, &self.listen, &args));
    }

    /// The primary's address.
    fn primary(&self) -> &str {
        &self.primary.as_ref().expect("the primary runs").base
    }

    /// Stops the primary (SIGTERM) and starts it again over its data, at the same address.
    fn restart_primary(&mut self) {
        let (status, _, logs) = self.primary.take().expect("the primary runs").terminate();
        assert!(status.success(), "{status}: {logs}");
        self.start_primary();
    }

    /// Starts an edge of the primary on a free port, and waits until it is caught up.
    fn edge(&self) -> Served {
        self.edge_with(&[])
    }

    /// [`Cluster::edge`] with `extra` arguments.
    fn edge_with(&self, extra: &[&str]) -> Served {
        let stream = format!("{}/{STREAM}", self.redis.server());
        let token = self.dir.path().join("edge-token");
        let secret = self.dir.path().join("primary").join("identity-secret");
        let primary = self.primary().to_owned();
        let edge = Served::edge_of(&self.wasm, &primary, &stream, (&token, &secret), extra);
        wait_until("the new edge catches up", || caught_up(&edge.base));
        edge
    }
}

/// A new identity's token from the server at `base`.
fn token(base: &str) -> String {
    let (status, body) = send(&agent(), "POST", &format!("{base}/v1/identity"), None, None);
    assert_eq!(status, 200, "{body}");
    body["token"].as_str().expect("a token").to_owned()
}

/// Sends the chat message `text` as `token` through the server at `base`.
fn say(base: &str, token: &str, text: &str) {
    let url = format!("{base}/v1/reducers/send");
    let body = serde_json::to_string(&[text]).expect("JSON");
    let (status, answer) = send(&agent(), "POST", &url, Some(token), Some(&body));
    assert_eq!(
        (status, &answer["status"]),
        (200, &Value::from("committed")),
        "{answer}"
    );
}

/// The texts of the messages the server at `base` holds, by id.
fn messages(base: &str) -> BTreeMap<u64, String> {
    let url = format!("{base}/v1/tables/message?limit=10000");
    let (status, body) = send(&agent(), "GET", &url, None, None);
    assert_eq!(status, 200, "{body}");
    body["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| (id(row), row["text"].as_str().expect("a text").to_owned()))
        .collect()
}

fn id(row: &Value) -> u64 {
    row["id"].as_u64().expect("an id")
}

/// `/health` of the server at `base`.
fn health(base: &str) -> (u16, Value) {
    send(&agent(), "GET", &format!("{base}/health"), None, None)
}

fn caught_up(base: &str) -> bool {
    let (status, body) = health(base);
    status == 200 && body["edge"]["caught_up"] == true
}

/// Polls `condition` until it holds, failing after [`PATIENCE`].
fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let started = Instant::now();
    while !condition() {
        assert!(started.elapsed() < PATIENCE, "timed out: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A client subscribed to `SELECT * FROM message` on one server, and the rows it holds from
/// what it was sent, checked as they come (see the module docs).
struct Feed {
    subscriber: Subscriber,
    rows: BTreeMap<u64, String>,
    offset: u64,
    updates: usize,
}

impl Feed {
    fn start(base: &str) -> Self {
        let subscriber = Subscriber::start(&[base, "SELECT * FROM message"]);
        let applied = subscriber.next();
        let applied = &applied["SubscribeApplied"];
        let rows = applied["tables"][0]["rows"]
            .as_array()
            .map(|rows| {
                rows.iter()
                    .map(|row| (id(row), row["text"].as_str().expect("text").to_owned()))
                    .collect()
            })
            .unwrap_or_default();
        Self {
            subscriber,
            rows,
            offset: applied["offset"].as_u64().expect("an offset"),
            updates: 0,
        }
    }

    /// Reads updates until the client holds exactly `expected`.
    fn until(&mut self, expected: &BTreeMap<u64, String>) {
        let started = Instant::now();
        while &self.rows != expected {
            if started.elapsed() > PATIENCE {
                let missing: Vec<_> = expected
                    .keys()
                    .filter(|id| !self.rows.contains_key(id))
                    .collect();
                let extra: Vec<_> = self
                    .rows
                    .keys()
                    .filter(|id| !expected.contains_key(id))
                    .collect();
                panic!(
                    "the client holds {} rows, not {}: missing ids {missing:?}, extra {extra:?}",
                    self.rows.len(),
                    expected.len()
                );
            }
            if let Some(line) = self.subscriber.line_within(Duration::from_millis(200)) {
                self.apply(&serde_json::from_str(&line).expect("a JSON line"));
            }
        }
    }

    fn apply(&mut self, message: &Value) {
        let Some(update) = message.get("TransactionUpdate") else {
            panic!("not an update: {message}");
        };
        let offset = update["offset"].as_u64().expect("an offset");
        assert!(
            offset > self.offset,
            "offset {offset} after {}",
            self.offset
        );
        self.offset = offset;
        self.updates += 1;
        for change in update["changes"].as_array().expect("changes") {
            for table in change["tables"].as_array().expect("tables") {
                for row in table["deletes"].as_array().expect("deletes") {
                    let held = self.rows.remove(&id(row));
                    assert!(held.is_some(), "a delete of a row not held: {row}");
                }
                for row in table["inserts"].as_array().expect("inserts") {
                    let text = row["text"].as_str().expect("text").to_owned();
                    let before = self.rows.insert(id(row), text);
                    assert!(before.is_none(), "a row sent twice: {row}");
                }
            }
        }
    }
}

/// The resident memory of process `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// A Redis reply as a number.
fn redis_number(redis: &RedisServer, command: &[&str]) -> u64 {
    let mut connection = redis::Client::open(redis.server())
        .and_then(|client| client.get_connection())
        .expect("a connection");
    let mut cmd = redis::cmd(command[0]);
    for arg in &command[1..] {
        cmd.arg(*arg);
    }
    cmd.query(&mut connection).expect("a number")
}

/// Redis's `used_memory`, in bytes.
fn redis_memory(redis: &RedisServer) -> u64 {
    let mut connection = redis::Client::open(redis.server())
        .and_then(|client| client.get_connection())
        .expect("a connection");
    let info: String = redis::cmd("INFO")
        .arg("memory")
        .query(&mut connection)
        .expect("INFO");
    info.lines()
        .find_map(|line| line.strip_prefix("used_memory:"))
        .and_then(|value| value.trim().parse().ok())
        .expect("used_memory")
}

#[test]
fn clients_on_two_edges_see_each_others_writes_and_read_their_own() {
    let cluster = Cluster::start(&[]);
    let (a, b) = (cluster.edge(), cluster.edge());
    let (mut on_a, mut on_b) = (Feed::start(&a.base), Feed::start(&b.base));

    // A write through an edge is on that edge by the time the call is answered.
    let (alice, bob) = (token(&a.base), token(&b.base));
    for n in 0..10 {
        let text = format!("from a {n}");
        say(&a.base, &alice, &text);
        assert!(
            messages(&a.base).values().any(|held| *held == text),
            "{text}"
        );
    }
    say(&b.base, &bob, "from b");
    assert!(messages(&b.base).values().any(|text| text == "from b"));
    // Tokens are the primary's: good on every node.
    say(&b.base, &alice, "alice, through b");
    say(cluster.primary(), &bob, "bob, on the primary");

    let expected = messages(cluster.primary());
    assert_eq!(expected.len(), 13, "{expected:?}");
    on_a.until(&expected);
    on_b.until(&expected);
    assert_eq!(messages(&a.base), expected);
    assert_eq!(messages(&b.base), expected);

    // Views and the module's HTTP handlers: read on the edge, written through the primary.
    let (status, stats) = send(
        &agent(),
        "GET",
        &format!("{}/v1/http/stats", a.base),
        None,
        None,
    );
    assert_eq!(status, 200, "{stats}");
    assert_eq!(stats["messages"], 13, "{stats}");
    let url = format!("{}/v1/http/messages", b.base);
    let (status, posted) = send(&agent(), "POST", &url, None, Some("posted to b"));
    assert_eq!(status, 201, "{posted}");
    let url = format!("{}/v1/views/recent", a.base);
    wait_until("the handler's message reaches edge a", || {
        let (_, recent) = send(&agent(), "POST", &url, None, Some("[]"));
        recent["result"].to_string().contains("posted to b")
    });

    // Both edges report being caught up, with their lag.
    for edge in [&a, &b] {
        let (status, body) = health(&edge.base);
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["edge"]["lag_offsets"], 0, "{body}");
        let (_, metrics) = send(
            &agent(),
            "GET",
            &format!("{}/metrics", edge.base),
            None,
            None,
        );
        let metrics = metrics.as_str().expect("text").to_owned();
        assert!(metrics.contains("wasmod_edge_caught_up 1"), "{metrics}");
        assert!(metrics.contains("wasmod_edge_lag_seconds"), "{metrics}");
    }
}

/// A WebSocket client of the JSON protocol.
type Socket = tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<std::net::TcpStream>>;

/// A new WebSocket client of the server at `base` (a new identity), past its first message.
fn open_socket(base: &str) -> Socket {
    identified_socket(base).0
}

/// [`open_socket`], with the token of its new identity.
fn identified_socket(base: &str) -> (Socket, String) {
    use tungstenite::client::IntoClientRequest;
    let url = format!("{}/v1/subscribe", base.replacen("http://", "ws://", 1));
    let mut request = url.into_client_request().expect("a request");
    request.headers_mut().insert(
        "Sec-WebSocket-Protocol",
        "v1.json.wasmod".parse().expect("a header"),
    );
    let (mut socket, _) = tungstenite::connect(request).expect("the WebSocket");
    if let tungstenite::stream::MaybeTlsStream::Plain(stream) = socket.get_mut() {
        stream.set_read_timeout(Some(PATIENCE)).expect("a timeout");
    }
    let identity = next_message(&mut socket);
    let token = identity["IdentityToken"]["token"]
        .as_str()
        .unwrap_or_else(|| panic!("{identity}"))
        .to_owned();
    (socket, token)
}

/// The quickstart's users on the server at `base`, and how many are online.
fn users_online(base: &str) -> (usize, usize) {
    let url = format!("{base}/v1/tables/user?limit=10000");
    let (status, body) = send(&agent(), "GET", &url, None, None);
    assert_eq!(status, 200, "{body}");
    let rows = body["rows"].as_array().expect("rows");
    let online = rows.iter().filter(|row| row["online"] == true).count();
    (rows.len(), online)
}

/// A JSON frame of the WebSocket protocol from `socket`, skipping pings.
fn next_message(
    socket: &mut tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<std::net::TcpStream>>,
) -> Value {
    loop {
        match socket.read().expect("a frame") {
            tungstenite::Message::Text(text) => {
                return serde_json::from_str(&text).expect("a JSON message")
            }
            tungstenite::Message::Ping(_) | tungstenite::Message::Pong(_) => continue,
            other => panic!("not a JSON message: {other:?}"),
        }
    }
}

#[test]
fn a_websocket_client_of_an_edge_calls_through_it_and_sees_its_own_commit() {
    let cluster = Cluster::start(&[]);
    let edge = cluster.edge();
    let mut socket = open_socket(&edge.base);
    let send_text = |socket: &mut Socket, message: Value| {
        socket
            .send(tungstenite::Message::text(message.to_string()))
            .expect("sent")
    };
    send_text(
        &mut socket,
        serde_json::json!({"Subscribe": {"query_set_id": 1, "queries": ["SELECT * FROM message"], "resume_from": null}}),
    );
    let applied = next_message(&mut socket);
    assert!(applied["SubscribeApplied"].is_object(), "{applied}");
    send_text(
        &mut socket,
        serde_json::json!({"CallReducer": {"request_id": 7, "name": "send", "args": ["over the socket"]}}),
    );
    let own = next_message(&mut socket);
    let update = &own["TransactionUpdate"];
    assert_eq!(update["request_id"], 7, "{own}");
    assert_eq!(update["status"], "Committed", "{own}");
    assert_eq!(
        update["changes"][0]["tables"][0]["inserts"][0]["text"], "over the socket",
        "{own}"
    );
    // The commit is the primary's: the same offset there.
    let offset = update["offset"].as_u64().expect("an offset");
    let (_, health) = health(&edge.base);
    assert!(health["edge"]["offset"].as_u64() > Some(offset), "{health}");
    send_text(
        &mut socket,
        serde_json::json!({"CallView": {"request_id": 8, "name": "recent", "args": []}}),
    );
    let viewed = next_message(&mut socket);
    assert_eq!(viewed["CallResult"]["request_id"], 8, "{viewed}");
    assert!(viewed.to_string().contains("over the socket"), "{viewed}");
    assert!(messages(cluster.primary())
        .values()
        .any(|text| text == "over the socket"));
}

/// The texts of the `draft` rows `rows` (JSON), sorted.
fn draft_texts(rows: &Value) -> Vec<String> {
    let mut texts: Vec<String> = rows
        .as_array()
        .unwrap_or_else(|| panic!("rows: {rows}"))
        .iter()
        .map(|row| row["text"].as_str().expect("a text").to_owned())
        .collect();
    texts.sort();
    texts
}

/// The drafts the server at `base` shows `token` in `GET /v1/tables/draft`.
fn drafts_read(base: &str, token: &str) -> Vec<String> {
    let url = format!("{base}/v1/tables/draft");
    let (status, body) = send(&agent(), "GET", &url, Some(token), None);
    assert_eq!(status, 200, "{body}");
    draft_texts(&body["rows"])
}

#[test]
fn clients_of_an_edge_see_the_rows_they_would_see_on_the_primary() {
    let cluster = Cluster::start(&[]);
    let edge = cluster.edge();
    let send_text = |socket: &mut Socket, message: Value| {
        socket
            .send(tungstenite::Message::text(message.to_string()))
            .expect("sent")
    };
    let subscribed = || {
        let (mut socket, token) = identified_socket(&edge.base);
        send_text(
            &mut socket,
            serde_json::json!({"Subscribe": {"query_set_id": 1, "queries": ["SELECT * FROM draft"], "resume_from": null}}),
        );
        let applied = next_message(&mut socket);
        assert_eq!(
            draft_texts(&applied["SubscribeApplied"]["tables"][0]["rows"]),
            Vec::<String>::new(),
            "{applied}"
        );
        (socket, token)
    };
    let (mut alice, alice_token) = subscribed();
    let (mut bob, bob_token) = subscribed();
    for (socket, text) in [(&mut alice, "alice's"), (&mut bob, "bob's")] {
        send_text(
            socket,
            serde_json::json!({"CallReducer": {"request_id": 1, "name": "save_draft", "args": [text]}}),
        );
        // The next message is the caller's own update: the other's draft was not sent.
        let own = next_message(socket);
        let inserts = &own["TransactionUpdate"]["changes"][0]["tables"][0]["inserts"];
        assert_eq!(draft_texts(inserts), [text], "{own}");
    }
    for (socket, text) in [(&mut alice, "alice's"), (&mut bob, "bob's")] {
        send_text(
            socket,
            serde_json::json!({"OneOffQuery": {"request_id": 2, "query": "SELECT * FROM draft"}}),
        );
        let answer = next_message(socket);
        let rows = &answer["OneOffQueryResult"]["result"]["ok"][0]["rows"];
        assert_eq!(draft_texts(rows), [text], "{answer}");
    }
    for (token, text) in [(&alice_token, "alice's"), (&bob_token, "bob's")] {
        assert_eq!(drafts_read(&edge.base, token), [text]);
        assert_eq!(drafts_read(cluster.primary(), token), [text]);
    }
    let url = format!("{}/v1/tables/draft", edge.base);
    let (status, body) = send(&agent(), "GET", &url, None, None);
    assert_eq!(status, 401, "a reader without a token: {body}");
}

#[test]
fn clients_leaving_an_edge_all_at_once_are_all_disconnected_on_the_primary() {
    let cluster = Cluster::start(&[]);
    // Room for 4 forwarded calls at a time: 40 clients leaving at once overflow it.
    let edge = cluster.edge_with(&["--queue", "4", "--identities-per-minute", "0"]);
    let sockets: Vec<Socket> = (0..40).map(|_| open_socket(&edge.base)).collect();
    wait_until("every client is online on the primary", || {
        users_online(cluster.primary()) == (40, 40)
    });
    drop(sockets);
    wait_until("every client is offline on the primary", || {
        users_online(cluster.primary()) == (40, 0)
    });
}

#[test]
fn a_write_through_an_edge_is_answered_once_the_edge_holds_it() {
    let cluster = Cluster::start(&[]);
    let edge = cluster.edge();
    let erin = token(&edge.base);
    // With Redis paused, the primary commits the call but the edge cannot have it yet: the
    // answer waits until it does.
    let redis = cluster.redis.pid().expect("Redis runs");
    signal(redis, "STOP");
    let base = edge.base.clone();
    let call = std::thread::spawn(move || say(&base, &erin, "held back"));
    std::thread::sleep(Duration::from_millis(1500));
    let early = call.is_finished();
    signal(redis, "CONT");
    assert!(
        !early,
        "the call was answered before the edge had its commit"
    );
    call.join().expect("the call succeeds");
    assert!(messages(&edge.base)
        .values()
        .any(|text| text == "held back"));

    // A module HTTP handler's transaction is waited for the same way (its answer carries the
    // primary's last commit, which the edge must hold first).
    signal(redis, "STOP");
    let url = format!("{}/v1/http/messages", edge.base);
    let call =
        std::thread::spawn(move || send(&agent(), "POST", &url, None, Some("handled, held back")));
    std::thread::sleep(Duration::from_millis(1500));
    let early = call.is_finished();
    signal(redis, "CONT");
    assert!(
        !early,
        "the handler was answered before the edge had its commit"
    );
    let (status, body) = call.join().expect("the handler answers");
    assert_eq!(status, 201, "{body}");
    assert!(messages(&edge.base)
        .values()
        .any(|text| text == "handled, held back"));
}

#[test]
fn edges_catch_up_after_an_edge_redis_or_the_primary_restarts_without_a_gap_or_a_duplicate() {
    let mut cluster = Cluster::start(&[]);
    let (a, b) = (cluster.edge(), cluster.edge());
    let mut on_b = Feed::start(&b.base);
    let carol = token(&b.base);

    // An edge killed, writes meanwhile, the edge started again: it holds them all.
    a.kill();
    for n in 0..5 {
        say(&b.base, &carol, &format!("while a was down {n}"));
    }
    let a = cluster.edge();
    let mut on_a = Feed::start(&a.base);
    assert_eq!(messages(&a.base), messages(cluster.primary()));

    // Redis killed (it loses the stream), writes meanwhile, Redis started again empty.
    cluster.redis.kill();
    for n in 0..3 {
        say(
            cluster.primary(),
            &carol,
            &format!("while redis was down {n}"),
        );
    }
    cluster.redis.resume();
    let expected = messages(cluster.primary());
    assert_eq!(expected.len(), 8, "{expected:?}");
    on_a.until(&expected);
    on_b.until(&expected);

    // The primary stopped and started again over its log: edges go on from it.
    cluster.restart_primary();
    say(&a.base, &carol, "after the primary's restart");
    let expected = messages(cluster.primary());
    assert_eq!(expected.len(), 9, "{expected:?}");
    on_a.until(&expected);
    on_b.until(&expected);
    wait_until("both edges catch up", || {
        caught_up(&a.base) && caught_up(&b.base)
    });
    assert_eq!(messages(&a.base), expected);
    assert_eq!(messages(&b.base), expected);
}

#[test]
fn a_stuck_edge_costs_the_primary_and_redis_nothing_and_bootstraps_again_on_resume() {
    let cluster = Cluster::start(&["--publish-max-len", "50"]);
    let stuck = cluster.edge();
    let mut on_stuck = Feed::start(&stuck.base);
    let dave = token(cluster.primary());
    for n in 0..50 {
        say(cluster.primary(), &dave, &format!("warming up {n}"));
    }
    on_stuck.until(&messages(cluster.primary()));
    let primary_pid = cluster.primary.as_ref().expect("the primary").pid();
    let (rss_before, redis_before) = (rss_kib(primary_pid), redis_memory(&cluster.redis));

    signal(stuck.pid(), "STOP");
    for n in 0..400 {
        say(
            cluster.primary(),
            &dave,
            &format!("while the edge was stuck {n}"),
        );
    }
    let length = redis_number(&cluster.redis, &["XLEN", STREAM]);
    let (rss_after, redis_after) = (rss_kib(primary_pid), redis_memory(&cluster.redis));
    println!(
        "400 commits past a stuck edge: stream {length} entries; primary RSS {rss_before} -> \
         {rss_after} KiB; Redis used_memory {redis_before} -> {redis_after} B"
    );
    // MAXLEN ~ 50 trims in whole nodes of 100 entries: the stream stays near its bound.
    assert!(length <= 150, "the stream holds {length} entries");
    assert!(
        redis_after < redis_before + (1 << 20),
        "Redis grew from {redis_before} to {redis_after} bytes"
    );
    assert!(
        rss_after < rss_before + 16 * 1024,
        "the primary grew from {rss_before} to {rss_after} KiB"
    );

    // Resumed, the edge finds the stream trimmed past it, bootstraps again, and its client
    // gets exactly the rows it missed.
    signal(stuck.pid(), "CONT");
    wait_until("the resumed edge resynchronises", || {
        let (status, body) = health(&stuck.base);
        status == 200 && body["edge"]["resyncs"].as_u64() >= Some(1)
    });
    let expected = messages(cluster.primary());
    assert_eq!(expected.len(), 450);
    on_stuck.until(&expected);
    assert_eq!(messages(&stuck.base), expected);
}

#[test]
fn an_edge_refuses_to_start_without_the_right_token_or_a_primary_that_serves_edges() {
    let cluster = Cluster::start(&[]);
    let wrong = cluster.dir.path().join("wrong-token");
    private_file(&wrong, "not the edge token at all");
    let secret = cluster.dir.path().join("primary").join("identity-secret");
    let stream = format!("{}/{STREAM}", cluster.redis.server());
    let output = Command::new(env!("CARGO_BIN_EXE_wasmod"))
        .arg("edge")
        .arg(&cluster.wasm)
        .args(["--primary", cluster.primary(), "--follow", &stream])
        .arg("--edge-token-file")
        .arg(&wrong)
        .arg("--secret-file")
        .arg(&secret)
        .args(["--listen", "127.0.0.1:0"])
        .output()
        .expect("wasmod edge runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("unauthenticated"), "{stderr}");
    assert!(stderr.contains("edge token"), "{stderr}");
    let missing: &Path = &cluster.dir.path().join("no-such-secret");
    let output = Command::new(env!("CARGO_BIN_EXE_wasmod"))
        .arg("edge")
        .arg(&cluster.wasm)
        .args(["--primary", cluster.primary(), "--follow", &stream])
        .arg("--edge-token-file")
        .arg(cluster.dir.path().join("edge-token"))
        .arg("--secret-file")
        .arg(missing)
        .output()
        .expect("wasmod edge runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("--secret-file"), "{stderr}");
}
