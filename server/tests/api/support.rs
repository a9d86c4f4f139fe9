//! The quickstart built for wasm once per run, servers over it, and requests through the
//! router without a socket (`tower::ServiceExt::oneshot`).

use crate::redis_server::RedisServer;
use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use axum::Router;
use serde_json::Value;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use tower::ServiceExt;
use wasmod_abi::{ConnectionId, Identity};
use wasmod_host::datastore::durability;
use wasmod_host::{
    AllowList, CompiledModule, InstanceEnv, OutboundHttp, Persistence, WasmConfig, WasmEngine,
    WasmModule,
};
use wasmod_node::replication::PublishSettings;
use wasmod_node::LogFeed;
use wasmod_server::{
    AdminOptions, DispatchReport, OidcSettings, OperatorToken, Secret, Server, ServerConfig, Sides,
};
use wasmod_wasm_tests::{built, Profile};

/// The secret the test servers sign with.
pub const SECRET: [u8; 32] = [7; 32];

/// The quickstart module, compiled once per test binary.
pub fn quickstart() -> &'static CompiledModule {
    static COMPILED: OnceLock<CompiledModule> = OnceLock::new();
    COMPILED.get_or_init(|| compile("quickstart"))
}

/// The benchmarks module (its `print_many` reducer logs), compiled once per test binary.
pub fn benchmarks() -> &'static CompiledModule {
    static COMPILED: OnceLock<CompiledModule> = OnceLock::new();
    COMPILED.get_or_init(|| compile("benchmarks"))
}

/// The three builds of the notes module (`host/tests/modules/notes`): the library (build 1),
/// then the examples `notes_v2` and `notes_incompatible`, as wasm bytes.
pub fn notes_builds() -> [Vec<u8>; 3] {
    let built = built(Profile::Release);
    [
        built.library("notes"),
        built.example("notes_v2"),
        built.example("notes_incompatible"),
    ]
}

/// Build 1 of the notes module, compiled once per test binary.
pub fn notes() -> &'static CompiledModule {
    static COMPILED: OnceLock<CompiledModule> = OnceLock::new();
    COMPILED.get_or_init(|| compile("notes"))
}

fn compile(library: &str) -> CompiledModule {
    let wasm = built(Profile::Release).library(library);
    let engine = WasmEngine::shared().expect("the shared engine");
    engine
        .compile(&wasm)
        .unwrap_or_else(|error| panic!("{library} compiles: {error}"))
}

/// The operator token of the test servers with an admin side.
pub const OPERATOR: &str = "operator-token-for-tests";

/// A server over a fresh `module` with `config` and an admin side ([`OPERATOR`]), given
/// `dispatch_report`, its logs kept in `logs` (from the module's `init` on).
pub fn admin_server(
    module: &CompiledModule,
    config: ServerConfig,
    dispatch_report: Option<DispatchReport>,
    logs: Arc<LogFeed>,
) -> Server {
    let env = InstanceEnv::unloaded().with_log_tap(logs.clone());
    let module = WasmModule::load(module, WasmConfig::default(), env).expect("the module loads");
    let admin = AdminOptions {
        token: OperatorToken::new(OPERATOR).expect("a valid token"),
        dispatch_report,
        keep_published: None,
        inspect: None,
    };
    let sides = Sides {
        admin: Some(admin),
        logs: Some(logs),
        ..Sides::default()
    };
    Server::with_sides(module, Secret::from_bytes(SECRET), config, sides)
        .expect("the server starts")
}

/// A server over a fresh quickstart with `config`, whose procedures may reach `allow`.
pub fn server(config: ServerConfig, allow: AllowList) -> Server {
    let env = InstanceEnv::unloaded().with_http_client(Arc::new(OutboundHttp::new(allow)));
    server_in(config, env)
}

/// A server over the quickstart with `config`, its tables kept in a commit log in `dir`
/// (recovered from it if it has one).
pub fn durable_server(config: ServerConfig, dir: &Path) -> Server {
    let options = durability::Options::default()
        .with_recent(config.node.resume_commits, config.node.resume_bytes);
    let persistence = Persistence::new(dir, options);
    server_in(
        config,
        InstanceEnv::unloaded().with_persistence(persistence),
    )
}

/// A server over the quickstart with `config`, its tables kept in a commit log in `dir` that is
/// synced in groups, the wait for each call's commits left to the server (as `wasmod serve`
/// sets it up).
pub fn deferred_durable_server(config: ServerConfig, dir: &Path) -> Server {
    server_in(config, deferred_durable_env(dir))
}

/// Like [`deferred_durable_server`], publishing its commits as `publish` says.
pub fn publishing_server(config: ServerConfig, dir: &Path, publish: PublishSettings) -> Server {
    let module = module_in(deferred_durable_env(dir));
    Server::publishing(module, Secret::from_bytes(SECRET), config, publish)
        .expect("the server starts")
}

/// The token of the edges of [`serving_edges`].
pub const EDGE_TOKEN: &str = "a secret of the edges";

/// A quickstart over the log in `dir` that publishes to `stream` of `redis` and serves edges
/// holding [`EDGE_TOKEN`] (its snapshot, their forwarded calls).
pub fn serving_edges(redis: &RedisServer, stream: &str, dir: &Path) -> Server {
    let mut settings = PublishSettings::new(redis.stream(stream));
    settings.edge_token = Some(EDGE_TOKEN.into());
    publishing_server(ServerConfig::default(), dir, settings)
}

/// Like [`deferred_durable_server`], its commit log failing as `faults` say (a full disk).
pub fn failing_disk_server(config: ServerConfig, dir: &Path, faults: durability::Faults) -> Server {
    server_in(config, deferred_durable_env_with(dir, faults))
}

/// A commit log in `dir` synced in groups, the wait for each call's commits left to the server.
fn deferred_durable_env(dir: &Path) -> InstanceEnv {
    deferred_durable_env_with(dir, durability::Faults::default())
}

/// [`deferred_durable_env`] with `faults` injected into the log's writes.
fn deferred_durable_env_with(dir: &Path, faults: durability::Faults) -> InstanceEnv {
    let options = durability::Options::default()
        .with_mode(durability::Mode::Group)
        .with_faults(faults);
    InstanceEnv::unloaded()
        .with_persistence(Persistence::new(dir, options))
        .with_deferred_durability()
}

/// A server over a fresh quickstart, signing its own tokens with `secret` and accepting those
/// of the OpenID Connect issuers `oidc` names.
pub fn oidc_server(secret: Secret, oidc: OidcSettings) -> Server {
    oidc_server_of(module_in(InstanceEnv::unloaded()), secret, oidc)
}

/// A server over `module`, signing its own tokens with `secret` and accepting those of the
/// OpenID Connect issuers `oidc` names.
pub fn oidc_server_of(module: WasmModule, secret: Secret, oidc: OidcSettings) -> Server {
    let sides = Sides {
        oidc: Some(oidc),
        ..Sides::default()
    };
    Server::with_sides(module, secret, ServerConfig::default(), sides).expect("the server starts")
}

/// A fresh `signin` (`examples/signin`), its admitted issuer configured as its operator would
/// before serving it: by the host's identity.
pub fn signin(issuer: &str) -> WasmModule {
    static COMPILED: OnceLock<CompiledModule> = OnceLock::new();
    let compiled = COMPILED.get_or_init(|| compile("signin"));
    let mut module = WasmModule::load(compiled, WasmConfig::default(), InstanceEnv::unloaded())
        .expect("signin loads");
    let args = wasmod_abi::encoding::to_vec(&(issuer.to_owned(),));
    let configured = module.call_reducer("configure", Identity::ZERO, ConnectionId::ZERO, &args);
    assert!(configured.is_success(), "{configured}");
    module
}

/// A server over the quickstart loaded with `env`.
fn server_in(config: ServerConfig, env: InstanceEnv) -> Server {
    Server::new(module_in(env), Secret::from_bytes(SECRET), config).expect("the server starts")
}

/// The quickstart loaded with `env`.
fn module_in(env: InstanceEnv) -> WasmModule {
    WasmModule::load(quickstart(), WasmConfig::default(), env).expect("the quickstart loads")
}

/// A server over a fresh quickstart with the default limits and no outbound HTTP.
pub fn router() -> Router {
    server(ServerConfig::default(), AllowList::new()).router()
}

/// A response: status, headers and body (parsed as JSON when it is JSON).
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: axum::http::HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|error| {
            panic!(
                "not JSON ({error}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The error code of an error answer.
    pub fn code(&self) -> String {
        self.json()["error"]["code"]
            .as_str()
            .unwrap_or_else(|| panic!("not an error: {:?}", self.json()))
            .to_owned()
    }

    /// The error message of an error answer.
    pub fn message(&self) -> String {
        self.json()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

/// Sends one request: `body` as is, with `token` as a bearer token if given.
pub async fn send(
    router: &Router,
    method: Method,
    uri: &str,
    token: Option<&str>,
    body: impl Into<Body>,
) -> Answer {
    let mut request = Request::builder().method(method).uri(uri);
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let request = request.body(body.into()).expect("a request");
    let response = router.clone().oneshot(request).await.expect("infallible");
    let status = response.status();
    let headers = response.headers().clone();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("the body")
        .to_vec();
    Answer {
        status,
        headers,
        body,
    }
}

/// `POST uri` with a JSON body.
pub async fn post(router: &Router, uri: &str, token: Option<&str>, json: Value) -> Answer {
    send(router, Method::POST, uri, token, json.to_string()).await
}

/// `GET uri`.
pub async fn get(router: &Router, uri: &str) -> Answer {
    send(router, Method::GET, uri, None, Body::empty()).await
}

/// A new identity: `(identity hex, token)`.
pub async fn identity(router: &Router) -> (String, String) {
    let answer = send(router, Method::POST, "/v1/identity", None, Body::empty()).await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.json());
    let json = answer.json();
    (
        json["identity"].as_str().expect("an identity").to_owned(),
        json["token"].as_str().expect("a token").to_owned(),
    )
}
