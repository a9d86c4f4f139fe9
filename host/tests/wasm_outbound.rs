//! The hostile module's outbound HTTP against tiny servers on 127.0.0.1, through the real
//! client ([`OutboundHttp`]): a server that never answers cannot hold the module's thread past
//! the call's deadline, and a procedure that fetches responses in a loop without reading them
//! is stopped by the call's budget of host memory, with the host's memory bounded by it.

mod wasm_support;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};
use wasm_support::{compiled, within};
use wasmod_abi::encoding::{from_slice, to_vec};
use wasmod_abi::{ConnectionId, Errno, Identity};
use wasmod_host::{AllowList, InstanceEnv, Limits, OutboundHttp, Outcome, WasmConfig, WasmModule};

const ALICE: Identity = Identity::from_bytes([0xa1; 32]);
/// How long a test waits for a call the host should have stopped long before.
const TEST_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a test server keeps a connection the client does not close.
const SERVER_PATIENCE: Duration = Duration::from_secs(20);

/// A server on 127.0.0.1 that accepts one connection and never answers: it waits until the
/// client goes away (or its own patience ends).
struct Silent {
    addr: SocketAddr,
    thread: JoinHandle<()>,
}

impl Silent {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        let thread = thread::spawn(move || {
            let Ok((mut stream, _)) = listener.accept() else {
                return;
            };
            stream.set_read_timeout(Some(SERVER_PATIENCE)).unwrap();
            // Reads the request, then waits for the end of the connection.
            let mut buf = [0; 1024];
            while stream.read(&mut buf).is_ok_and(|count| count > 0) {}
        });
        Self { addr, thread }
    }

    fn url(&self) -> String {
        format!("http://{}/never", self.addr)
    }

    /// The allow-list rule for this server exactly.
    fn rule(&self) -> String {
        self.addr.to_string()
    }
}

/// A server on 127.0.0.1 that answers every request with the same body, one connection at a
/// time, until it is finished.
struct Generous {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    /// Counts the responses it sent.
    thread: JoinHandle<usize>,
}

impl Generous {
    fn start(body_len: usize) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().expect("its address");
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = thread::spawn(move || {
            let body = vec![b'x'; body_len];
            let mut served = 0;
            while !stopped.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => served += usize::from(answer(stream, &body)),
                    Err(error) if error.kind() == ErrorKind::WouldBlock => {
                        thread::sleep(Duration::from_millis(2));
                    }
                    Err(error) => panic!("accept failed: {error}"),
                }
            }
            served
        });
        Self { addr, stop, thread }
    }

    fn url(&self) -> String {
        format!("http://{}/large", self.addr)
    }

    fn rule(&self) -> String {
        self.addr.to_string()
    }

    /// Stops the server; returns how many responses it sent.
    fn finish(self) -> usize {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().expect("the server thread")
    }
}

/// Reads a request's head from `stream` and answers it with `body`; whether it did.
fn answer(mut stream: TcpStream, body: &[u8]) -> bool {
    stream.set_nonblocking(false).unwrap();
    stream.set_read_timeout(Some(SERVER_PATIENCE)).unwrap();
    let mut head = Vec::new();
    let mut buf = [0; 1024];
    while !head.windows(4).any(|window| window == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(count) if count > 0 => head.extend_from_slice(&buf[..count]),
            _ => return false,
        }
    }
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).is_ok() && stream.write_all(body).is_ok()
}

/// Runs the tests of this file one at a time, so that one's peak memory is its own.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The hostile module, with `config`, `limits` and outbound HTTP through `http`.
fn hostile_with(config: WasmConfig, limits: Limits, http: OutboundHttp) -> WasmModule {
    let env = InstanceEnv::unloaded()
        .with_limits(limits)
        .with_http_client(Arc::new(http));
    WasmModule::load(compiled("hostile"), config, env).expect("it loads")
}

/// The hostile module, with `deadline` and outbound HTTP through `http`.
fn hostile(deadline: Duration, http: OutboundHttp) -> WasmModule {
    let config = WasmConfig::default().with_deadline(deadline);
    hostile_with(config, Limits::default(), http)
}

/// Calls `hoard` on `url` up to `times` times: how many responses it got, and the code that
/// stopped it (`0` for none).
fn hoard(module: &mut WasmModule, url: &str, times: u32) -> (u32, u32) {
    let args = to_vec(&(url.to_owned(), times));
    let outcome = module.call_procedure("hoard", ALICE, ConnectionId::ZERO, &args);
    let Outcome::Returned { bytes, .. } = outcome else {
        panic!("`hoard` should return, but {outcome}");
    };
    match from_slice::<Vec<u32>>(&bytes).expect("its answer decodes")[..] {
        [fetched, code] => (fetched, code),
        ref other => panic!("`hoard` answered {other:?}"),
    }
}

/// The process's peak resident memory since the last [`reset_peak_rss`], in bytes.
fn peak_rss() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux's /proc");
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .expect("a VmHWM line");
    let kib: usize = line.trim().trim_end_matches("kB").trim().parse().unwrap();
    kib << 10
}

/// Makes the peak resident memory start again from what is resident now.
fn reset_peak_rss() {
    std::fs::write("/proc/self/clear_refs", "5").expect("Linux's /proc");
}

const TOO_LARGE: u32 = Errno::TOO_LARGE.code() as u32;

#[test]
fn unread_responses_in_a_loop_are_stopped_by_the_calls_budget() {
    within(TEST_TIMEOUT, "the hoarding procedure", || {
        let _turn = one_at_a_time();
        let server = Generous::start(1 << 20);
        let http = OutboundHttp::new(AllowList::from_rules([server.rule()]).unwrap());
        let mut limits = Limits::default();
        limits.max_held_bytes = 8 << 20;
        let mut module = hostile_with(WasmConfig::default(), limits, http);
        // Each response holds a little more than its 1 MiB body: 7 fit in 8 MiB, not 8.
        assert_eq!(hoard(&mut module, &server.url(), 100), (7, TOO_LARGE));
        let logs = module.logs();
        let refusal = &logs.last().expect("the refusal is logged").message;
        assert!(
            refusal.starts_with("outbound HTTP response of 10")
                && refusal.ends_with(" bytes, and may hold 8388608 (read or close some first)"),
            "{refusal}"
        );
        assert_eq!(
            hoard(&mut module, &server.url(), 100),
            (7, TOO_LARGE),
            "the next call starts afresh"
        );
        assert_eq!(
            server.finish(),
            16,
            "the dropped responses were fetched, no more"
        );
    });
}

#[test]
fn unread_responses_in_a_loop_are_stopped_by_the_cap_on_handles() {
    within(TEST_TIMEOUT, "the hoarding procedure", || {
        let _turn = one_at_a_time();
        let server = Generous::start(10);
        let http = OutboundHttp::new(AllowList::from_rules([server.rule()]).unwrap());
        let mut limits = Limits::default();
        limits.max_live_handles = 16;
        let mut module = hostile_with(WasmConfig::default(), limits, http);
        // The call's result sink is the sixteenth handle.
        assert_eq!(hoard(&mut module, &server.url(), 100), (15, TOO_LARGE));
        assert_eq!(
            server.finish(),
            15,
            "no request is sent without a handle for it"
        );
    });
}

/// The measurement of issue 15 (8 MB responses, never read: 2.7 GB before), with the default
/// limits: the host's peak memory grows by about the budget (256 MiB), not without bound.
#[test]
fn unread_8_mib_responses_peak_near_the_default_budget() {
    within(TEST_TIMEOUT, "the hoarding procedure", || {
        let _turn = one_at_a_time();
        let body = OutboundHttp::DEFAULT_MAX_RESPONSE_BYTES as usize;
        let server = Generous::start(body);
        let http = OutboundHttp::new(AllowList::from_rules([server.rule()]).unwrap());
        // Time enough for the 64 fetches the loop would make without the budget.
        let config = WasmConfig::default().with_deadline(Duration::from_secs(40));
        let mut module = hostile_with(config, Limits::default(), http);
        let budget = Limits::default().max_held_bytes;
        reset_peak_rss();
        let before = peak_rss();
        // 64 would be 512 MiB without the budget.
        let started = Instant::now();
        let (fetched, code) = hoard(&mut module, &server.url(), 64);
        let took = started.elapsed();
        let grown = peak_rss().saturating_sub(before);
        eprintln!(
            "fetched {fetched} responses of {body} bytes in {took:?}; peak RSS grew by {grown} bytes"
        );
        assert_eq!((fetched, code), (31, TOO_LARGE));
        assert!(
            grown < budget + (128 << 20),
            "the peak grew by {grown} bytes, past the budget of {budget} and a margin"
        );
        server.finish();
    });
}

#[test]
fn a_request_to_a_server_that_never_answers_ends_by_the_calls_deadline() {
    within(TEST_TIMEOUT, "the waiting procedure", || {
        let _turn = one_at_a_time();
        let silent = Silent::start();
        let deadline = Duration::from_millis(400);
        let http = OutboundHttp::new(AllowList::from_rules([silent.rule()]).unwrap());
        assert!(
            http.timeout() > deadline * 10,
            "the client alone would wait"
        );
        let mut module = hostile(deadline, http);
        let started = Instant::now();
        let args = to_vec(&(silent.url(),));
        let outcome = module.call_procedure("fetch", ALICE, ConnectionId::ZERO, &args);
        let took = started.elapsed();
        match outcome {
            // The request failed at the deadline, and the module returned before the next tick.
            Outcome::Returned { bytes, .. } => assert_eq!(from_slice::<u16>(&bytes), Ok(0)),
            Outcome::Aborted { reason } => assert!(reason.contains("deadline"), "{reason}"),
            other => panic!("the call neither failed its request nor ran out of time: {other}"),
        }
        assert!(
            took < deadline + Duration::from_millis(300),
            "the call took {took:?} against a deadline of {deadline:?}"
        );
        let logs: Vec<String> = module.logs().into_iter().map(|r| r.message).collect();
        let expected = format!("outbound HTTP GET {} failed: timed out after", silent.url());
        assert!(
            logs.iter().any(|line| line.starts_with(&expected)
                && line.ends_with("the time the call had left before its deadline")),
            "{logs:?}"
        );
        drop(module);
        silent
            .thread
            .join()
            .expect("the server stops once the client is gone");
    });
}
