//! The quickstart built for wasm once per run, served on loopback ports (in memory, or over a
//! commit log in a directory, to be restarted), its row types, and waiting helpers.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use wasmod_client::{Backoff, Client, ClientBuilder};
use wasmod_host::datastore::durability;
use wasmod_host::{
    AllowList, CompiledModule, InstanceEnv, OutboundHttp, Persistence, WasmConfig, WasmEngine,
    WasmModule,
};
use wasmod_protocol::description::ModuleDescription;
use wasmod_server::{AdminOptions, OperatorToken, Secret, Server, ServerConfig};
use wasmod_wasm_tests::{built, Profile};

#[path = "../shared/rows.rs"]
mod rows;
pub use rows::{Message, User};

/// How long a test waits for what should come.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// The quickstart module, compiled once per test binary.
fn quickstart() -> &'static CompiledModule {
    static COMPILED: OnceLock<CompiledModule> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let wasm = built(Profile::Release).library("quickstart");
        let engine = WasmEngine::shared().expect("the shared engine");
        engine.compile(&wasm).expect("the quickstart compiles")
    })
}

/// Build 1 of the notes module (`host/tests/modules/notes`, the tests of `wasmod publish`),
/// compiled once per test binary.
fn notes() -> &'static CompiledModule {
    static COMPILED: OnceLock<CompiledModule> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let wasm = built(Profile::Release).library("notes");
        let engine = WasmEngine::shared().expect("the shared engine");
        engine.compile(&wasm).expect("the notes module compiles")
    })
}

/// A later build of the notes module: the cargo example `name` of its crate.
pub fn notes_build(name: &str) -> Vec<u8> {
    built(Profile::Release).example(name)
}

/// The operator token of [`notes_server`].
const OPERATOR: &str = "operator-token-for-client-tests";

/// A server of build 1 of the notes module, in memory, to which new builds can be published
/// ([`Live::publish`]).
pub fn notes_server() -> Server {
    let module = WasmModule::load(notes(), WasmConfig::default(), InstanceEnv::unloaded())
        .expect("the notes module loads");
    let admin = AdminOptions {
        token: OperatorToken::new(OPERATOR).expect("a valid token"),
        dispatch_report: None,
        keep_published: None,
        inspect: None,
    };
    Server::with_admin(
        module,
        Secret::from_bytes([7; 32]),
        ServerConfig::default(),
        admin,
    )
    .expect("the server starts")
}

/// A quickstart server whose tables live in memory.
pub fn memory_server() -> Server {
    memory_server_with(ServerConfig::default())
}

/// A quickstart server with `config` whose tables live in memory.
pub fn memory_server_with(config: ServerConfig) -> Server {
    server_in(InstanceEnv::unloaded(), config)
}

/// A quickstart server whose tables are kept in a commit log in `dir` (recovered from it).
pub fn durable_server(dir: &Path) -> Server {
    let config = ServerConfig::default();
    let options = durability::Options::default()
        .with_recent(config.node.resume_commits, config.node.resume_bytes);
    let env = InstanceEnv::unloaded().with_persistence(Persistence::new(dir, options));
    server_in(env, config)
}

/// The data directory `dir` of a running server as a crash (SIGKILL, power loss) would
/// leave it: a copy of its files now, while the server runs and its clients are connected, so
/// nothing the server does on stopping (a `client_disconnected` for each connection open)
/// reaches it. Take it when no commit is being made: what the server acknowledged is durable.
pub fn crash_image(dir: &Path) -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        for entry in std::fs::read_dir(from).expect("the directory reads") {
            let entry = entry.expect("an entry");
            let target = to.join(entry.file_name());
            if entry.file_type().expect("a file type").is_dir() {
                std::fs::create_dir(&target).expect("a directory");
                copy(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), &target).expect("a copy");
            }
        }
    }
    let image = tempfile::tempdir().expect("a directory");
    copy(dir, image.path());
    image
}

/// A quickstart server in memory whose procedures may fetch from `host` (`127.0.0.1:port`).
pub fn memory_server_fetching_from(host: &str) -> Server {
    let allow = AllowList::from_rules([host]).expect("a rule");
    let env = InstanceEnv::unloaded().with_http_client(Arc::new(OutboundHttp::new(allow)));
    server_in(env, ServerConfig::default())
}

/// An HTTP server on a loopback port that answers every request `200` with `body`, until the
/// test ends; its `host:port`.
pub fn motd_server(body: &'static str) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let host = listener.local_addr().expect("an address").to_string();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut request = Vec::new();
            let mut buf = [0; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let answer = format!(
                "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    host
}

fn server_in(env: InstanceEnv, config: ServerConfig) -> Server {
    let module =
        WasmModule::load(quickstart(), WasmConfig::default(), env).expect("the quickstart loads");
    Server::new(module, Secret::from_bytes([7; 32]), config).expect("the server starts")
}

/// A server being served on a loopback port; stops when dropped or by [`Live::stop`].
pub struct Live {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
}

impl Live {
    /// `server` on a free loopback port.
    pub async fn serve(server: Server) -> Self {
        Self::serve_at(server, "127.0.0.1:0".parse().expect("an address")).await
    }

    /// `server` on `addr` (the port of a server stopped before, to restart it).
    pub async fn serve_at(server: Server, addr: SocketAddr) -> Self {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(std::env::var("WASMOD_TEST_LOG").unwrap_or_else(|_| "off".into()))
            .with_test_writer()
            .try_init();
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server.serve(listener, async {
            let _ = stopped.await;
        }));
        Self {
            addr,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// The server's base URL.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `POST {path}` with `body` (and `token` as a bearer): the answer's JSON (`null` if it is
    /// not JSON) and its `X-Wasmod-Offset` header, if any; panics unless it is a success.
    pub async fn post(
        &self,
        path: &str,
        token: &str,
        body: &str,
    ) -> (serde_json::Value, Option<u64>) {
        let url = format!("{}{path}", self.url());
        let (token, body) = (token.to_owned(), body.to_owned());
        tokio::task::spawn_blocking(move || {
            let mut answer = ureq::post(&url)
                .header("authorization", format!("Bearer {token}"))
                .header("content-type", "application/json")
                .send(body)
                .expect("a success");
            let offset = answer
                .headers()
                .get("x-wasmod-offset")
                .and_then(|value| value.to_str().ok()?.parse().ok());
            let text = answer.body_mut().read_to_string().expect("a body");
            (serde_json::from_str(&text).unwrap_or_default(), offset)
        })
        .await
        .expect("joined")
    }

    /// `GET /v1/module`.
    pub async fn description(&self) -> ModuleDescription {
        let url = format!("{}/v1/module", self.url());
        tokio::task::spawn_blocking(move || {
            let text = ureq::get(&url)
                .call()
                .expect("an answer")
                .body_mut()
                .read_to_string()
                .expect("a body");
            serde_json::from_str(&text).expect("a description")
        })
        .await
        .expect("joined")
    }

    /// Publishes the build `wasm` to this server (`wasmod publish`; a [`notes_server`]).
    pub async fn publish(&self, wasm: Vec<u8>) {
        let url = format!("{}/v1/admin/module", self.url());
        tokio::task::spawn_blocking(move || {
            let mut answer = ureq::post(&url)
                .header("authorization", format!("Bearer {OPERATOR}"))
                .config()
                .http_status_as_error(false)
                .build()
                .send(&wasm[..])
                .expect("an answer");
            let status = answer.status();
            let body = answer.body_mut().read_to_string().expect("a body");
            assert_eq!(status, 200, "the build is published: {body}");
        })
        .await
        .expect("joined");
    }

    /// A builder for a client of this server with the quickstart's tables declared.
    pub async fn builder(&self) -> ClientBuilder {
        Client::builder(self.url())
            .module(self.description().await)
            .table::<Message>("message")
            .table::<User>("user")
            .reconnect(Some(Backoff {
                first: Duration::from_millis(50),
                max: Duration::from_millis(200),
            }))
    }

    /// A connected client of this server.
    pub async fn client(&self) -> Client {
        self.builder().await.connect().await.expect("connected")
    }

    /// Shuts the server down (its sockets closed, its `client_disconnected`s run) and waits
    /// for it.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            tokio::time::timeout(PATIENCE, task)
                .await
                .expect("the server stops")
                .expect("the server task")
                .expect("serve");
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Waits until `condition` holds, checking every 10 ms; panics with `what` after
/// [`PATIENCE`].
pub async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !condition() {
        assert!(tokio::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A log that callbacks append to.
pub type Log<T> = Arc<parking_lot::Mutex<Vec<T>>>;

/// An empty log.
pub fn log<T>() -> Log<T> {
    Arc::default()
}

/// The texts of `client`'s cached messages, sorted.
pub fn texts(client: &Client) -> Vec<String> {
    let mut texts: Vec<String> = client
        .table::<Message>("message")
        .rows()
        .expect("rows decode")
        .into_iter()
        .map(|message| message.text)
        .collect();
    texts.sort();
    texts
}
