//! Outbound HTTP against tiny servers on 127.0.0.1: what the allow list lets through and what
//! it refuses (without connecting), deadlines, size caps, connection failures, and the
//! refusal reaching the module's log.
//!
//! Every server here listens on a random loopback port, answers a fixed number of
//! connections, and stops by itself after a few seconds at most.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};
use wasmod_abi::encoding::{from_slice, to_vec};
use wasmod_abi::http::{Method, Request, Response};
use wasmod_abi::{
    ConnectionId, Errno, Identity, ModuleDef, ModuleExports, ParamDef, ProcedureDef, SchemaType,
    Typespace,
};
use wasmod_host::outbound::BadRule;
use wasmod_host::{
    with_env, AllowList, HostRule, HttpClient, InstanceEnv, LogLevel, NativeModule, OutboundHttp,
    Outcome,
};

/// How long any test server waits for a connection, or for a client to go away.
const SERVER_PATIENCE: Duration = Duration::from_secs(5);

/// A request as the server read it.
#[derive(Debug)]
struct Received {
    /// The request line, such as `GET /path?a=1 HTTP/1.1`.
    line: String,
    /// Header names (lower case) and values.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// A server on 127.0.0.1 answering `connections` connections with `answer`, then stopping.
struct Server {
    addr: SocketAddr,
    received: Receiver<Received>,
    thread: JoinHandle<()>,
}

impl Server {
    fn start(
        connections: usize,
        answer: impl Fn(&Received, &mut TcpStream) + Send + 'static,
    ) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let (sender, received) = mpsc::channel();
        let thread = thread::spawn(move || {
            let deadline = Instant::now() + SERVER_PATIENCE;
            let mut served = 0;
            while served < connections && Instant::now() < deadline {
                match listener.accept() {
                    Ok((mut stream, _)) => {
                        served += 1;
                        stream.set_nonblocking(false).unwrap();
                        stream.set_read_timeout(Some(SERVER_PATIENCE)).unwrap();
                        if let Some(request) = read_request(&mut stream) {
                            answer(&request, &mut stream);
                            // The test may have finished with the server already.
                            let _ = sender.send(request);
                        }
                    }
                    Err(error) if error.kind() == ErrorKind::WouldBlock => {
                        thread::sleep(Duration::from_millis(5));
                    }
                    Err(error) => panic!("accept failed: {error}"),
                }
            }
        });
        Self {
            addr,
            received,
            thread,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The allow-list rule for this server exactly.
    fn rule(&self) -> String {
        self.addr.to_string()
    }

    /// The requests the server read, once it has stopped.
    fn finish(self) -> Vec<Received> {
        self.thread.join().unwrap();
        self.received.try_iter().collect()
    }
}

/// Reads one request: its head, then a body of `content-length` bytes.
fn read_request(stream: &mut TcpStream) -> Option<Received> {
    let mut bytes = Vec::new();
    let mut buf = [0; 1024];
    let head_end = loop {
        if let Some(end) = bytes.windows(4).position(|window| window == b"\r\n\r\n") {
            break end;
        }
        let count = stream.read(&mut buf).ok().filter(|&count| count > 0)?;
        bytes.extend_from_slice(&buf[..count]);
    };
    let head = String::from_utf8(bytes[..head_end].to_vec()).ok()?;
    let mut lines = head.split("\r\n");
    let line = lines.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .map_or(0, |(_, value)| value.parse().unwrap());
    let mut body = bytes[head_end + 4..].to_vec();
    while body.len() < length {
        let count = stream.read(&mut buf).ok().filter(|&count| count > 0)?;
        body.extend_from_slice(&buf[..count]);
    }
    Some(Received {
        line,
        headers,
        body,
    })
}

fn respond(stream: &mut TcpStream, status: &str, headers: &[(&str, &str)], body: &[u8]) {
    let mut head = format!("HTTP/1.1 {status}\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    ));
    // The client may have given up already.
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
}

fn client(rules: &[&str]) -> OutboundHttp {
    OutboundHttp::new(AllowList::from_rules(rules).unwrap())
}

fn get(url: &str) -> Request {
    Request::new(Method::Get, url)
}

#[test]
fn an_allowed_get_returns_status_headers_and_body() {
    let server = Server::start(1, |_, stream| {
        respond(
            stream,
            "200 OK",
            &[("content-type", "text/plain"), ("x-answer", "42")],
            b"hello",
        )
    });
    let mut request = get(&server.url("/greeting"));
    request.query = "name=ada&lang=en".into();
    request.headers.push(("x-trace".into(), "abc".into()));
    let response = client(&[&server.rule()]).send(request, None).unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("text/plain"));
    assert_eq!(response.header("X-Answer"), Some("42"));
    assert_eq!(response.body, b"hello");
    let received = server.finish();
    assert_eq!(received[0].line, "GET /greeting?name=ada&lang=en HTTP/1.1");
    assert_eq!(received[0].header("x-trace"), Some("abc"));
    assert_eq!(received[0].header("content-length"), None);
    assert!(received[0].body.is_empty());
}

#[test]
fn an_allowed_post_sends_its_body_and_any_status_is_a_response() {
    let server = Server::start(1, |request, stream| {
        let mut echoed = b"got ".to_vec();
        echoed.extend_from_slice(&request.body);
        respond(stream, "500 Internal Server Error", &[], &echoed)
    });
    let mut request = Request::new(Method::Post, server.url("/items?kind=a"));
    request.query = "verbose=1".into();
    request
        .headers
        .push(("content-type".into(), "application/json".into()));
    request.body = br#"{"id": 1}"#.to_vec();
    let response = client(&[&server.rule()]).send(request, None).unwrap();
    assert_eq!(response.status, 500);
    assert_eq!(response.body, br#"got {"id": 1}"#);
    let received = server.finish();
    assert_eq!(received[0].line, "POST /items?kind=a&verbose=1 HTTP/1.1");
    assert_eq!(received[0].header("content-type"), Some("application/json"));
    assert_eq!(received[0].body, br#"{"id": 1}"#);
}

#[test]
fn redirects_are_returned_not_followed() {
    let elsewhere = TcpListener::bind("127.0.0.1:0").unwrap();
    elsewhere.set_nonblocking(true).unwrap();
    let target = format!("http://{}/", elsewhere.local_addr().unwrap());
    let location = target.clone();
    let server = Server::start(1, move |_, stream| {
        respond(stream, "302 Found", &[("location", &location)], b"")
    });
    let response = client(&[&server.rule()])
        .send(get(&server.url("/")), None)
        .unwrap();
    assert_eq!(response.status, 302);
    assert_eq!(response.header("location"), Some(target.as_str()));
    server.finish();
    assert_eq!(
        elsewhere.accept().unwrap_err().kind(),
        ErrorKind::WouldBlock,
        "the redirect was not followed"
    );
}

#[test]
fn requests_off_the_list_are_refused_without_connecting() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let url = format!("http://{addr}/secret");
    let refused = |rules: &[&str], request: Request| {
        client(rules)
            .send(request, None)
            .expect_err("the request is refused")
    };

    // Nothing is allowed by default.
    assert_eq!(
        OutboundHttp::new(AllowList::new())
            .send(get(&url), None)
            .unwrap_err(),
        format!(
            "outbound HTTP GET {url} refused: 127.0.0.1:{} is not on this host's allow list for outbound HTTP",
            addr.port()
        )
    );
    // Another port of the same host, the same port of another name, the default port.
    let other_port = format!("127.0.0.1:{}", addr.port().wrapping_add(1).max(1));
    let by_name = format!("localhost:{}", addr.port());
    for rules in [[other_port.as_str()], [by_name.as_str()], ["127.0.0.1"]] {
        let reason = refused(&rules, get(&url));
        assert!(
            reason.contains("is not on this host's allow list"),
            "{reason}"
        );
    }
    // Not http, or a header the client owns.
    let rule = addr.to_string();
    assert_eq!(
        refused(&[&rule], get(&format!("ftp://{addr}/file"))),
        format!(
            "outbound HTTP GET ftp://{addr}/file refused: only http and https URLs can be fetched"
        )
    );
    let mut smuggled = get(&url);
    smuggled.headers.push(("Host".into(), "internal".into()));
    assert_eq!(
        refused(&[&rule], smuggled),
        format!("outbound HTTP GET {url} refused: the `Host` header is set by the HTTP client, not the module")
    );
    let reason = refused(&[&rule], get("not a url"));
    assert!(
        reason.starts_with("outbound HTTP GET not a url refused: not a valid URL"),
        "{reason}"
    );
    let reason = refused(&[&rule], get("/relative"));
    assert!(
        reason.ends_with("refused: only http and https URLs can be fetched"),
        "{reason}"
    );

    assert_eq!(
        listener.accept().unwrap_err().kind(),
        ErrorKind::WouldBlock,
        "no refused request reached the listener"
    );
}

#[test]
fn a_slow_server_times_out() {
    let server = Server::start(1, |_, stream| {
        // Answer nothing; wait for the client to give up (or for our own patience to end).
        let _ = stream.read(&mut [0; 1]);
    });
    let client = client(&[&server.rule()]).with_timeout(Duration::from_millis(300));
    let started = Instant::now();
    let reason = client.send(get(&server.url("/slow")), None).unwrap_err();
    assert_eq!(
        reason,
        format!(
            "outbound HTTP GET {} failed: timed out after 300ms",
            server.url("/slow")
        )
    );
    assert!(started.elapsed() < SERVER_PATIENCE, "the deadline held");
    server.finish();
}

#[test]
fn a_body_trickling_past_the_deadline_times_out() {
    let server = Server::start(1, |_, stream| {
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nstart");
        let _ = stream.flush();
        let _ = stream.read(&mut [0; 1]);
    });
    let client = client(&[&server.rule()]).with_timeout(Duration::from_millis(300));
    let reason = client.send(get(&server.url("/")), None).unwrap_err();
    assert!(
        reason.ends_with("failed: timed out after 300ms"),
        "{reason}"
    );
    server.finish();
}

#[test]
fn oversized_bodies_are_refused() {
    let server = Server::start(2, |_, stream| {
        respond(stream, "200 OK", &[], &[b'x'; 10_000]);
    });
    let client = client(&[&server.rule()]).with_max_response_bytes(1000);
    let reason = client.send(get(&server.url("/big")), None).unwrap_err();
    assert_eq!(
        reason,
        format!(
            "outbound HTTP GET {} failed: the response body is larger than the limit of 1000 bytes",
            server.url("/big")
        )
    );
    // Exactly at the limit is fine.
    let client = client.with_max_response_bytes(10_000);
    assert_eq!(
        client
            .send(get(&server.url("/big")), None)
            .unwrap()
            .body
            .len(),
        10_000
    );
    server.finish();
}

#[test]
fn an_oversized_body_without_a_length_is_refused_too() {
    let server = Server::start(1, |_, stream| {
        // No content-length: the body runs until the connection closes.
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n");
        for _ in 0..100 {
            if stream.write_all(&[b'y'; 1000]).is_err() {
                break;
            }
        }
    });
    let client = client(&[&server.rule()]).with_max_response_bytes(5000);
    let reason = client.send(get(&server.url("/stream")), None).unwrap_err();
    assert!(
        reason.ends_with("failed: the response body is larger than the limit of 5000 bytes"),
        "{reason}"
    );
    server.finish();
}

/// A loopback port nothing listens on (it did a moment ago).
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn a_refused_connection_is_a_failure() {
    let port = closed_port();
    let url = format!("http://127.0.0.1:{port}/");
    let reason = client(&[&format!("127.0.0.1:{port}")])
        .send(get(&url), None)
        .unwrap_err();
    assert_eq!(
        reason,
        format!("outbound HTTP GET {url} failed: the connection was refused")
    );
}

#[test]
fn https_needs_the_https_feature() {
    let port = closed_port();
    let url = format!("https://127.0.0.1:{port}/");
    let reason = client(&[&format!("127.0.0.1:{port}")])
        .send(get(&url), None)
        .unwrap_err();
    let expected = if cfg!(feature = "https") {
        // Let through, so it fails at the connection.
        "failed: the connection was refused"
    } else {
        "refused: this host was built without TLS (the `https` feature of wasmod-host)"
    };
    assert_eq!(reason, format!("outbound HTTP GET {url} {expected}"));
}

#[test]
fn allow_list_rules() {
    let list = AllowList::from_rules([
        "api.example.com",
        "Files.Example.com:8443",
        "*.cdn.example.net",
        "metrics.example.org:*",
        "[::1]:9000",
    ])
    .unwrap();
    let allowed = [
        "http://api.example.com/",
        "https://api.example.com/v1",
        "https://API.example.com./v1",
        "http://api.example.com:80/",
        "https://files.example.com:8443/",
        "https://a.cdn.example.net/x",
        "https://a.b.cdn.example.net/x",
        "http://metrics.example.org:1234/",
        "https://metrics.example.org/",
        "http://[::1]:9000/",
    ];
    let refused = [
        "http://api.example.com:8080/",
        "https://api.example.com:80/",
        "http://example.com/",
        "http://evilapi.example.com/",
        "http://api.example.com.evil.net/",
        "http://api.example.com@evil.net/",
        "https://files.example.com/",
        "https://cdn.example.net/",
        "https://acdn.example.net/",
        "http://[::1]:9001/",
        "ftp://api.example.com/",
        "api.example.com",
        "",
    ];
    for url in allowed {
        assert!(list.allows(url), "{url} is allowed");
    }
    for url in refused {
        assert!(!list.allows(url), "{url} is refused");
    }
    assert!(!AllowList::new().allows("http://api.example.com/"));
    let shown: Vec<String> = list.rules().iter().map(HostRule::to_string).collect();
    assert_eq!(
        shown,
        [
            "api.example.com",
            "files.example.com:8443",
            "*.cdn.example.net",
            "metrics.example.org:*",
            "[::1]:9000"
        ]
    );
    let extended = AllowList::new().with("localhost:*".parse().unwrap());
    assert!(extended.allows("http://localhost:1234/"));
    let numeric = AllowList::from_rules(["*.0.0.1:*"]).unwrap();
    assert!(numeric.allows("http://a.0.0.1/"));
    assert!(
        !numeric.allows("http://127.0.0.1/"),
        "a `*.` rule never matches an IP address"
    );
}

#[test]
fn bad_rules_are_refused_with_a_reason() {
    let bad = |rule: &str| rule.parse::<HostRule>().unwrap_err().to_string();
    assert_eq!(
        bad("*"),
        "bad outbound HTTP allow-list rule `*`: allowing every host is not supported: list the hosts procedures may reach"
    );
    assert_eq!(
        bad("https://api.example.com"),
        "bad outbound HTTP allow-list rule `https://api.example.com`: a rule is a host and an optional port, not a URL"
    );
    assert!(bad("").ends_with("it is empty"));
    assert!(bad("api.example.com:0").ends_with("the port is not a number from 1 to 65535, nor `*`"));
    assert!(bad("api.example.com:http").ends_with("nor `*`"));
    assert!(bad("*.exa mple.com").ends_with("`*.` must be followed by a domain name"));
    assert!(bad("a.*.example.com").ends_with("the only wildcard is a leading `*.`"));
    assert!(bad("::1").ends_with("the only wildcard is a leading `*.`"));
    assert!(bad("[::1").ends_with("an IPv6 address lacks its `]`"));
    assert!(bad("[::1]9000").ends_with("expected `:port` after `]`"));
    assert!(bad("user@host").ends_with("the only wildcard is a leading `*.`"));
    let error: BadRule = AllowList::from_rules(["ok.example.com", "bad host"]).unwrap_err();
    assert!(error.to_string().contains("`bad host`"), "{error}");
}

#[test]
fn the_client_reports_its_settings() {
    let client = client(&["a.example.com"]);
    assert_eq!(client.timeout(), OutboundHttp::DEFAULT_TIMEOUT);
    assert_eq!(
        client.max_response_bytes(),
        OutboundHttp::DEFAULT_MAX_RESPONSE_BYTES
    );
    assert_eq!(client.allow_list().rules().len(), 1);
    assert!(!client.private_addresses_allowed());
}

#[test]
fn a_name_that_resolves_to_loopback_is_refused_unless_allowed_explicitly() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let url = format!("http://localhost:{port}/");
    let reason = client(&[&format!("localhost:{port}")])
        .with_timeout(Duration::from_secs(1))
        .send(get(&url), None)
        .unwrap_err();
    assert!(
        reason.starts_with(&format!(
            "outbound HTTP GET {url} refused: localhost resolved to "
        )) && reason.contains(
            ", a loopback address, which outbound HTTP reaches only if the operator allows it"
        ),
        "{reason}"
    );
    assert_eq!(
        listener.accept().unwrap_err().kind(),
        ErrorKind::WouldBlock,
        "the refused request did not connect"
    );

    let server = Server::start(2, |_, stream| respond(stream, "200 OK", &[], b"near"));
    let by_address = client(&[&server.rule()]).send(get(&server.url("/")), None);
    assert_eq!(
        by_address.unwrap().body,
        b"near",
        "a rule naming the address allows it"
    );
    let port = server.addr.port();
    let by_name = client(&[&format!("localhost:{port}")]).with_private_addresses(true);
    assert!(by_name.private_addresses_allowed());
    let response = by_name.send(get(&format!("http://localhost:{port}/")), None);
    assert_eq!(response.unwrap().body, b"near", "private addresses allowed");
    server.finish();
}

/// A module with one procedure, `fetch(request: Request) -> Response`, that sends the request
/// through the host and returns the response, or fails with the host's error code.
struct Fetcher;

fn description() -> ModuleDef {
    let mut typespace = Typespace::default();
    let request = Request::schema(&mut typespace);
    let returns = Response::schema(&mut typespace);
    ModuleDef {
        procedures: vec![ProcedureDef {
            name: "fetch".into(),
            params: vec![ParamDef {
                name: "request".into(),
                ty: request,
            }],
            returns,
        }],
        typespace,
        ..ModuleDef::default()
    }
}

fn read_all(source: u32) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let mut buf = [0; 256];
        let (count, done) = with_env(|env| env.bytes_source_read(source, &mut buf)).unwrap();
        out.extend_from_slice(&buf[..count]);
        if done {
            return out;
        }
    }
}

impl ModuleExports for Fetcher {
    fn describe_module(sink: u32) -> i16 {
        with_env(|env| {
            env.bytes_sink_write(sink, &wasmod_abi::description::encode(&description()))
        })
        .unwrap();
        0
    }

    fn call_procedure(_: u32, _: [u64; 4], _: [u64; 2], _: i64, args: u32, result: u32) -> i16 {
        let request = read_all(args);
        match with_env(|env| env.procedure_http_request(&request)) {
            Ok(source) => {
                let response = read_all(source);
                with_env(|env| env.bytes_sink_write(result, &response)).unwrap();
                0
            }
            Err(errno) => errno.code() as i16,
        }
    }

    fn call_reducer(_: u32, _: [u64; 4], _: [u64; 2], _: i64, _: u32, _: u32) -> i16 {
        Errno::NO_SUCH_ENTRY.code() as i16
    }
    fn call_view(_: u32, _: [u64; 4], _: [u64; 2], _: i64, _: u32, _: u32) -> i16 {
        Errno::NO_SUCH_ENTRY.code() as i16
    }
    fn call_view_anon(_: u32, _: i64, _: u32, _: u32) -> i16 {
        Errno::NO_SUCH_ENTRY.code() as i16
    }
    fn call_http_handler(_: u32, _: i64, _: u32, _: u32) -> i16 {
        Errno::NO_SUCH_ENTRY.code() as i16
    }
}

#[test]
fn procedures_fetch_through_the_client_and_refusals_reach_the_module_log() {
    let server = Server::start(1, |_, stream| respond(stream, "200 OK", &[], b"pong"));
    let rules = [server.rule(), "localhost:*".to_owned()];
    let env = InstanceEnv::unloaded().with_http_client(Arc::new(OutboundHttp::new(
        AllowList::from_rules(rules).unwrap(),
    )));
    let mut module = NativeModule::<Fetcher>::with_env(env).unwrap();
    let fetch = |module: &mut NativeModule<Fetcher>, url: &str| {
        module.call_procedure(
            "fetch",
            Identity::ZERO,
            ConnectionId::ZERO,
            &to_vec(&get(url)),
        )
    };

    let bytes = match fetch(&mut module, &server.url("/ping")) {
        Outcome::Returned { bytes, .. } => bytes,
        other => panic!("expected a response, got {other}"),
    };
    let response: Response = from_slice(&bytes).unwrap();
    assert_eq!(
        (response.status, response.body.as_slice()),
        (200, &b"pong"[..])
    );
    server.finish();

    let outcome = fetch(&mut module, "http://127.0.0.2/");
    assert_eq!(outcome.errno(), Some(Errno::HTTP_FAILED), "{outcome}");
    let logs = module.logs();
    let refusal = logs.last().expect("the refusal was logged");
    assert_eq!(refusal.level, LogLevel::Warn);
    assert_eq!(&*refusal.target, "wasmod::host");
    assert_eq!(
        refusal.message,
        "outbound HTTP GET http://127.0.0.2/ refused: 127.0.0.2:80 is not on this host's allow list for outbound HTTP"
    );

    let outcome = fetch(&mut module, "http://localhost:9/");
    assert_eq!(outcome.errno(), Some(Errno::HTTP_FAILED), "{outcome}");
    let logs = module.logs();
    let refusal = &logs.last().expect("the refusal was logged").message;
    assert!(
        refusal
            .starts_with("outbound HTTP GET http://localhost:9/ refused: localhost resolved to ")
            && refusal.contains("a loopback address"),
        "{refusal}"
    );
}

/// A server whose first connection answers one request and is kept alive, then is closed
/// when the next request on it arrives, unanswered: a server whose idle timeout fires just as
/// the client reuses the connection. Each of the next `fresh` connections answers `fresh`.
/// Returns the server, whose requests are listed by connection.
fn closing_after_one_answer(fresh: usize) -> (SocketAddr, JoinHandle<Vec<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let thread = thread::spawn(move || {
        let deadline = Instant::now() + SERVER_PATIENCE;
        let mut connections = Vec::new();
        while connections.len() < 1 + fresh && Instant::now() < deadline {
            let mut stream = match listener.accept() {
                Ok((stream, _)) => stream,
                Err(error) if error.kind() == ErrorKind::WouldBlock => {
                    thread::sleep(Duration::from_millis(5));
                    continue;
                }
                Err(error) => panic!("accept failed: {error}"),
            };
            stream.set_nonblocking(false).unwrap();
            stream.set_read_timeout(Some(SERVER_PATIENCE)).unwrap();
            let mut lines = Vec::new();
            let Some(request) = read_request(&mut stream) else {
                continue;
            };
            lines.push(request.line);
            if connections.is_empty() {
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nfirst");
                if let Some(request) = read_request(&mut stream) {
                    lines.push(request.line);
                }
            } else {
                respond(&mut stream, "200 OK", &[], b"fresh");
            }
            connections.push(lines);
        }
        connections
    });
    (addr, thread)
}

#[test]
fn an_idempotent_request_on_a_connection_the_server_closed_is_sent_again_on_a_new_one() {
    let (addr, server) = closing_after_one_answer(1);
    let client = client(&[&addr.to_string()]);
    let url = format!("http://{addr}/item");
    let first = client.send(get(&url), None).expect("the first answer");
    assert_eq!(first.body, b"first");
    let mut put = Request::new(Method::Put, url.clone());
    put.body = b"same again".to_vec();
    let again = client
        .send(put, None)
        .expect("sent again on a new connection");
    assert_eq!(again.body, b"fresh");
    assert_eq!(
        server.join().unwrap(),
        [
            vec!["GET /item HTTP/1.1", "PUT /item HTTP/1.1"],
            vec!["PUT /item HTTP/1.1"]
        ]
    );
}

#[test]
fn a_post_on_a_connection_the_server_closed_is_not_sent_again() {
    let (addr, server) = closing_after_one_answer(0);
    let client = client(&[&addr.to_string()]);
    let url = format!("http://{addr}/item");
    client.send(get(&url), None).expect("the first answer");
    let mut post = Request::new(Method::Post, url.clone());
    post.body = b"once".to_vec();
    let reason = client.send(post, None).expect_err("not sent twice");
    assert!(
        reason.starts_with(&format!("outbound HTTP POST {url} failed: ")),
        "{reason}"
    );
    assert_eq!(
        server.join().unwrap(),
        [vec!["GET /item HTTP/1.1", "POST /item HTTP/1.1"]]
    );
}
