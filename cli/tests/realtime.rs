//! `wasmod subscribe` and `wasmod sql` against the real `wasmod serve` of the quickstart (one
//! server for the whole session), then `wasmod sql` offline over the data directory it left;
//! `wasmod logs` against another;
//! and `wasmod subscribe` against a scripted WebSocket peer, for what a real server does not
//! show (the close frame the command sends, a close the server sends).

mod support;

use serde_json::Value;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};
use support::{agent, send, text, wasmod, Served, Subscriber, PATIENCE};
use tungstenite::handshake::server::{Request, Response};
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::protocol::CloseFrame;
use tungstenite::{Message, WebSocket};
use wasmod_wasm_tests::{built, Profile};

/// The identity and token `wasmod subscribe` or `wasmod sql` printed on stderr for a new
/// identity.
fn issued(stderr: &str) -> (String, String) {
    let line = stderr
        .lines()
        .find(|line| line.contains("connected as a new identity"))
        .unwrap_or_else(|| panic!("no identity on stderr: {stderr}"));
    let identity = line
        .split("identity, ")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .expect("the identity")
        .to_owned();
    let token = line.rsplit(' ').next().expect("the token").to_owned();
    (identity, token)
}

/// `wasmod sql … --json`'s rows, sorted (rows come in no particular order).
fn sql_rows(args: &[&str], dir: &Path) -> Vec<Value> {
    let mut all = vec!["sql", "--json"];
    all.extend_from_slice(args);
    let output = wasmod(&all, dir);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let mut rows: Vec<Value> = text(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|error| panic!("{error}: {line}")))
        .collect();
    rows.sort_by_key(Value::to_string);
    rows
}

#[test]
fn subscribe_and_sql_against_the_served_quickstart_then_offline() {
    let wasm = built(Profile::Release).library_path("quickstart");
    let wasm_path = wasm.to_str().expect("a UTF-8 path");
    let data = tempfile::tempdir().expect("a data directory");
    let data_path = data.path().to_str().expect("a UTF-8 path");
    let dir = data.path();
    let served = Served::start(&wasm, data.path());
    let base = served.base.clone();
    let agent = agent();
    let (status, caller) = send(&agent, "POST", &format!("{base}/v1/identity"), None, None);
    assert_eq!(status, 200, "{caller}");
    let token = caller["token"].as_str().expect("a token").to_owned();
    let say = |words: &str| {
        let body = serde_json::json!([words]).to_string();
        let url = format!("{base}/v1/reducers/send");
        let answer = send(&agent, "POST", &url, Some(&token), Some(&body));
        assert_eq!(answer.0, 200, "{}", answer.1);
    };
    say("before");

    // The initial rows, then the update of a reducer called over HTTP, then the exit asked for.
    let subscriber = Subscriber::start(&[
        &base,
        "SELECT * FROM message",
        "--updates",
        "1",
        "--timeout",
        "60s",
    ]);
    let applied = subscriber.next();
    let tables = &applied["SubscribeApplied"]["tables"];
    assert_eq!(tables[0]["table"], "message", "{applied}");
    assert_eq!(tables[0]["rows"][0]["text"], "before", "{applied}");
    assert_eq!(tables[0]["rows"].as_array().map(Vec::len), Some(1));
    say("after");
    let update = subscriber.next();
    let update = &update["TransactionUpdate"];
    assert_eq!(update["entry_point"]["name"], "send", "{update}");
    assert_eq!(update["caller_identity"], caller["identity"], "{update}");
    let change = &update["changes"][0]["tables"][0];
    assert_eq!(change["table"], "message", "{update}");
    assert_eq!(change["inserts"][0]["text"], "after", "{update}");
    assert_eq!(change["deletes"], serde_json::json!([]), "{update}");
    let (status, rest, stderr) = subscriber.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        rest.is_empty(),
        "nothing after the update asked for: {rest:?}"
    );

    // The token printed on stderr is the subscriber's identity's: `:sender` finds its row.
    let (identity, issued_token) = issued(&stderr);
    let mine = sql_rows(
        &[
            &base,
            "SELECT * FROM user WHERE identity = :sender",
            "--token",
            &issued_token,
        ],
        dir,
    );
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert_eq!(mine[0]["identity"], identity.as_str());

    // Ctrl-C: a clean exit, and a close frame (the server ran client_disconnected).
    let subscriber = Subscriber::start(&[&base, "SELECT * FROM user"]);
    assert!(subscriber.next()["SubscribeApplied"].is_object());
    subscriber.interrupt();
    let (status, _, stderr) = subscriber.finish();
    assert!(status.success(), "{status}: {stderr}");
    let (interrupted, _) = issued(&stderr);
    let users = sql_rows(&[&base, "SELECT * FROM user"], dir);
    let row = users
        .iter()
        .find(|row| row["identity"] == interrupted.as_str())
        .unwrap_or_else(|| panic!("{interrupted} in {users:?}"));
    assert_eq!(row["online"], false, "{row}");

    // A reader that goes away (`| head -n 1`) ends the output, not in an error.
    let mut subscriber = Subscriber::start(&[&base, "SELECT * FROM message"]);
    assert!(subscriber.next()["SubscribeApplied"].is_object());
    subscriber.stop_reading();
    let start = Instant::now();
    while !subscriber.exited() {
        assert!(start.elapsed() < PATIENCE, "wasmod subscribe writes on");
        say("to nobody");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, _, stderr) = subscriber.finish();
    assert!(status.success(), "{status}: {stderr}");
    assert!(!stderr.contains("error"), "{stderr}");

    // Queries the server refuses: status 1 and its message, nothing on stdout.
    for (query, message) in [
        ("SELECT * FROM nope", "no table is named `nope`"),
        ("SELECT * FROM config", "private"),
        (
            "SELECT * FROM message WHERE id = 'x'",
            "expected an integer",
        ),
    ] {
        let output = wasmod(&["subscribe", &base, query], dir);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{query}: {stderr}");
        assert!(
            stderr.contains("the server refused the subscription") && stderr.contains(message),
            "{query}: {stderr}"
        );
        assert!(output.stdout.is_empty(), "{query}");
        let output = wasmod(&["sql", &base, query], dir);
        assert_eq!(output.status.code(), Some(1), "{query}");
        assert!(text(&output.stderr).contains(message), "{query}");
    }

    // `wasmod sql` as a table: the declared columns, the rows, the count.
    let output = wasmod(&["sql", &base, "SELECT * FROM message"], dir);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let table = text(&output.stdout);
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("id | sender"), "{table}");
    assert!(lines[0].ends_with("| text"), "{table}");
    assert!(lines[1].starts_with("---+-"), "{table}");
    assert!(
        lines.iter().any(|line| line.ends_with("| before")),
        "{table}"
    );
    // Without --token, the new identity's token is on stderr: it finds that identity's row.
    let (queried_as, queried_token) = issued(&text(&output.stderr));
    let theirs = sql_rows(
        &[
            &base,
            "SELECT * FROM user WHERE identity = :sender",
            "--token",
            &queried_token,
        ],
        dir,
    );
    assert_eq!(theirs.len(), 1, "{theirs:?}");
    assert_eq!(theirs[0]["identity"], queried_as.as_str());
    let over_the_server = sql_rows(&[&base, "SELECT * FROM message"], dir);
    let count = format!("({} rows)", over_the_server.len());
    assert_eq!(lines.last(), Some(&count.as_str()), "{table}");
    assert_eq!(lines.len(), over_the_server.len() + 3, "{table}");
    let texts: Vec<&Value> = over_the_server.iter().map(|row| &row["text"]).collect();
    assert!(texts.contains(&&Value::from("after")), "{texts:?}");
    assert!(texts.len() > 2, "before, after, and to nobody: {texts:?}");

    // Offline while the server holds the data directory: refused, naming the way around.
    let output = wasmod(
        &[
            "sql",
            wasm_path,
            "--data",
            data_path,
            "SELECT * FROM message",
        ],
        dir,
    );
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("in use") && stderr.contains("wasmod sql http://"),
        "{stderr}"
    );

    // Offline once it stopped: the same rows as over the server, and private tables too.
    let (exit, _, logs) = served.terminate();
    assert!(exit.success(), "{logs}");
    let offline = |query: &'static str| vec![wasm_path, "--data", data_path, query];
    assert_eq!(
        sql_rows(&offline("SELECT * FROM message"), dir),
        over_the_server
    );
    let config = sql_rows(&offline("SELECT * FROM config"), dir);
    assert_eq!(config.len(), 1, "{config:?}");
    assert_eq!(config[0]["key"], "motd_url");
    let mut sender = offline("SELECT * FROM user WHERE identity = :sender");
    let output = wasmod(&[&["sql"], &sender[..]].concat(), dir);
    let stderr = text(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(2),
        "--identity is needed: {stderr}"
    );
    assert!(stderr.contains("--identity"), "{stderr}");
    sender.extend(["--identity", identity.as_str()]);
    let mine = sql_rows(&sender, dir);
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert_eq!(mine[0]["identity"], identity.as_str());
}

#[test]
fn urls_that_name_no_reachable_server_fail_clearly() {
    let dir = tempfile::tempdir().expect("a directory");
    let refused = wasmod(
        &["subscribe", "http://127.0.0.1:1", "SELECT * FROM user"],
        dir.path(),
    );
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused.stderr).contains("cannot connect to ws://127.0.0.1:1/v1/subscribe"),
        "{}",
        text(&refused.stderr)
    );
    // Over TLS alike (nothing listens there either).
    let refused = wasmod(
        &["subscribe", "https://127.0.0.1:1", "SELECT * FROM user"],
        dir.path(),
    );
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused.stderr).contains("cannot connect to wss://127.0.0.1:1/v1/subscribe"),
        "{}",
        text(&refused.stderr)
    );
    let output = wasmod(
        &["subscribe", "ftp://example.org", "SELECT * FROM user"],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("ftp://example.org"));
    let output = wasmod(
        &["sql", "http://127.0.0.1:1", "SELECT * FROM user"],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));

    // A peer that takes the connection and never answers the handshake: --timeout bounds it.
    let silent = TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!("http://{}", silent.local_addr().expect("an address"));
    let output = wasmod(
        &["subscribe", &url, "SELECT * FROM user", "--timeout", "1s"],
        dir.path(),
    );
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("no connection within 1s"),
        "{}",
        text(&output.stderr)
    );
}

/// One connection of a scripted peer that speaks the JSON subprotocol: accepts the handshake,
/// sends an `IdentityToken`, reads the `Subscribe` and answers it with empty rows.
fn scripted_subscription(listener: &TcpListener) -> WebSocket<TcpStream> {
    let (stream, _) = listener.accept().expect("a connection");
    stream
        .set_read_timeout(Some(PATIENCE))
        .expect("a read timeout");
    #[allow(
        clippy::result_large_err,
        reason = "tungstenite's handshake callback's signature: its error is a whole HTTP response"
    )]
    let agree = |request: &Request, mut response: Response| {
        let asked = request.headers().get("sec-websocket-protocol").cloned();
        assert_eq!(
            asked.as_ref().and_then(|value| value.to_str().ok()),
            Some("v1.json.wasmod")
        );
        response
            .headers_mut()
            .insert("sec-websocket-protocol", asked.expect("the subprotocol"));
        Ok(response)
    };
    let mut socket = tungstenite::accept_hdr(stream, agree).expect("the handshake");
    let identity = format!(
        r#"{{"IdentityToken":{{"identity":"{}","token":"t0k3n","connection_id":"{}"}}}}"#,
        "ab".repeat(32),
        "cd".repeat(16)
    );
    socket.send(Message::text(identity)).expect("sent");
    let subscribe = socket.read().expect("the subscription");
    let subscribe: Value = serde_json::from_str(subscribe.to_text().expect("text")).expect("JSON");
    assert_eq!(
        subscribe["Subscribe"]["queries"],
        serde_json::json!(["SELECT * FROM t"]),
        "{subscribe}"
    );
    let id = &subscribe["Subscribe"]["query_set_id"];
    let applied = format!(
        r#"{{"SubscribeApplied":{{"query_set_id":{id},"offset":0,"tables":[],"deletes":[],"resumed":false}}}}"#
    );
    socket.send(Message::text(applied)).expect("sent");
    socket
}

#[test]
fn ctrl_c_sends_a_close_frame_and_a_close_from_the_server_is_a_failure() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!("http://{}", listener.local_addr().expect("an address"));

    // Ctrl-C: a normal close frame, then a clean exit.
    let subscriber = Subscriber::start(&[&url, "SELECT * FROM t"]);
    let mut socket = scripted_subscription(&listener);
    assert!(subscriber.next()["SubscribeApplied"].is_object());
    subscriber.interrupt();
    let close = loop {
        match socket.read().expect("a close frame before the socket ends") {
            Message::Close(frame) => break frame,
            _ => continue,
        }
    };
    assert_eq!(close.map(|frame| frame.code), Some(CloseCode::Normal));
    drop(socket);
    let (status, _, stderr) = subscriber.finish();
    assert!(status.success(), "{status}: {stderr}");

    // The server closes: status 1, its code and reason on stderr.
    let subscriber = Subscriber::start(&[&url, "SELECT * FROM t", "--token", "t0k3n"]);
    let mut socket = scripted_subscription(&listener);
    assert!(subscriber.next()["SubscribeApplied"].is_object());
    let frame = CloseFrame {
        code: CloseCode::Library(4001),
        reason: "the client is too slow".into(),
    };
    socket.close(Some(frame)).expect("a close frame");
    while socket.read().is_ok() {}
    let (status, _, stderr) = subscriber.finish();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the server closed the connection (4001): the client is too slow"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("t0k3n"),
        "a given token is not printed: {stderr}"
    );

    // --timeout before the updates asked for: status 1, saying how many came.
    let subscriber =
        Subscriber::start(&[&url, "SELECT * FROM t", "--updates", "1", "--timeout", "1s"]);
    let _socket = scripted_subscription(&listener);
    assert!(subscriber.next()["SubscribeApplied"].is_object());
    let (status, _, stderr) = subscriber.finish();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("0 of the 1 updates asked for came within 1s"),
        "{stderr}"
    );
}

#[test]
fn wasmod_logs_streams_the_module_log_and_stops_on_ctrl_c() {
    let wasm = built(Profile::Release).library_path("quickstart");
    let data = tempfile::tempdir().expect("a data directory");
    let served = Served::start(&wasm, data.path());
    let base = served.base.as_str();

    let refused = wasmod(
        &["logs", base, "--operator-token", "not-the-operator-token"],
        data.path(),
    );
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(
        text(&refused.stderr).contains("not_operator"),
        "{}",
        text(&refused.stderr)
    );

    let token = served.operator_token.as_str();
    let logs = Subscriber::run("logs", &[base, "--operator-token", token]);
    // The recent records first: the quickstart's `init`, logged before the server started.
    let line = logs.next_line();
    assert!(
        line.contains(" INFO ") && line.ends_with(": chat initialised"),
        "{line}"
    );
    assert!(
        line.starts_with("20") && line.contains('T'),
        "a time first: {line}"
    );
    logs.interrupt();
    let (status, _, stderr) = logs.finish();
    assert!(status.success(), "{status}: {stderr}");

    let json = Subscriber::run(
        "logs",
        &[base, "--operator-token", token, "--json", "--level", "warn"],
    );
    let quiet = json.line_within(Duration::from_millis(500));
    assert!(quiet.is_none(), "no warning was logged: {quiet:?}");
    json.interrupt();
    assert!(json.finish().0.success());
}
