//! The hostile module's outbound HTTP against tiny servers on 127.0.0.1, through the real
//! client ([`OutboundHttp`]): a server that never answers cannot hold the module's thread past
//! the call's deadline.

mod wasm_support;

use std::io::Read;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};
use wasm_support::{compiled, within};
use wasmod_abi::encoding::to_vec;
use wasmod_abi::{ConnectionId, Identity};
use wasmod_host::{AllowList, InstanceEnv, OutboundHttp, WasmConfig, WasmModule};

const ALICE: Identity = Identity::from_bytes([0xa1; 32]);
/// How long a test waits for a call the host should have stopped long before.
const TEST_TIMEOUT: Duration = Duration::from_secs(30);
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

/// The hostile module, with `deadline` and outbound HTTP through `http`.
fn hostile(deadline: Duration, http: OutboundHttp) -> WasmModule {
    let env = InstanceEnv::unloaded().with_http_client(Arc::new(http));
    let config = WasmConfig::default().with_deadline(deadline);
    WasmModule::load(compiled("hostile"), config, env).expect("it loads")
}

#[test]
fn a_request_to_a_server_that_never_answers_ends_by_the_calls_deadline() {
    within(TEST_TIMEOUT, "the waiting procedure", || {
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
        assert!(!outcome.is_success(), "{outcome}");
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
