//! The wasmod HTTP server: one wasm module's entry points, public tables and HTTP handlers,
//! served over a versioned JSON API (`docs/http-api.md` documents every endpoint).
//!
//! The server is the **transport** of a node ([`wasmod_node`]): the node owns the module
//! and everything that runs beside it (its thread, durability, scheduling, builds, sockets'
//! live queries, replication); the server turns HTTP requests and WebSocket frames into the
//! node's calls, and answers them.
//!
//! # Shape
//!
//! ```text
//! HTTP ──▶ admission (caps, timeouts) ──▶ axum routes (async, many at once)
//!            │ refuse early: auth, rates, unknown names, bad arguments
//!            ▼
//!          the node: runner ──▶ bounded queue ──▶ the module's thread
//!            ▲                                          │
//!            └──────────── oneshot answer ◀─────────────┘
//! ```
//!
//! Handlers queue calls and await the answer, and never block the async runtime. Everything
//! that does not need the module (token checks, argument conversion, table reads) happens
//! outside its thread.
//!
//! # Modules, one job each
//!
//! - `routes` (private): the endpoints and the layers around them;
//! - `frames` (private): axum's WebSocket frames as the node's, both ways;
//! - [`auth`]: tokens, the server's own and OpenID Connect ones; [`secret`]: the signing key
//!   on disk;
//! - [`limits`]: rates per source address (new identities, calls without a token);
//! - [`degraded`]: a failed commit log, shown on every response;
//! - the operator's console and API (`/admin`, `/v1/admin/*`): [`operator`] (its token),
//!   the module's recent logs, streamed live (the node's: [`wasmod_node::LogFeed`]),
//!   [`commit_rate`];
//! - [`error`]: the API's errors as HTTP answers; [`config`]: the limits' values;
//! - [`admission`]: the accept loop: which connections are taken (caps in all and per
//!   address), and how long they are kept (header and write timeouts).
//!
//! The messages themselves (answers, error codes, the description) are the protocol's
//! ([`wasmod_protocol`]), which clients share.
//!
//! # Use
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use wasmod_server::{Secret, Server, ServerConfig};
//! let module = wasmod_host::WasmModule::new(&std::fs::read("chat.wasm")?)?;
//! let secret = Secret::load_or_create(std::path::Path::new(".wasmod"))?;
//! let server = Server::new(module, secret, ServerConfig::default())?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
//! let stop = async {
//!     let _ = tokio::signal::ctrl_c().await;
//! };
//! server.serve(listener, stop).await?;
//! # Ok(())
//! # }
//! ```

pub mod admission;
pub mod auth;
pub mod commit_rate;
pub mod config;
pub mod degraded;
pub mod error;
mod frames;
pub mod limits;
pub mod operator;
mod routes;
pub mod secret;

pub use auth::{Authenticator, OidcIssuer, OidcSettings, Tokens};
pub use config::ServerConfig;
pub use error::{ApiError, ErrorCode, HttpError};
pub use operator::OperatorToken;
pub use secret::Secret;

use axum::Router;
use limits::SourceRate;
use routes::AppState;
use std::future::Future;
use std::io;
use std::sync::Arc;
use tokio::net::TcpListener;
use wasmod_host::datastore::Database;
use wasmod_host::WasmModule;
use wasmod_node::cluster::ClusterSettings;
use wasmod_node::replication::{PublishReading, PublishSettings};
use wasmod_node::{EdgeOptions, LogFeed, Node, ScheduleClock};

/// A module ready to be served.
#[derive(Debug)]
pub struct Server {
    router: Router,
    node: Node,
    /// The limits, of which the accept loop takes the connections'.
    config: ServerConfig,
}

/// The operator's side of a server ([`Server::with_admin`]).
#[derive(Clone, Debug)]
pub struct AdminOptions {
    /// The token that opens `/admin` and `/v1/admin/*`.
    pub token: OperatorToken,
    /// The dispatch report of the served binary, for `GET /v1/admin/dispatch`; `None` if it
    /// was not made.
    pub dispatch_report: Option<DispatchReport>,
    /// Where the last build published with `wasmod publish` is kept (written whole, then
    /// renamed into place), so that it can be served again after a restart; `None` keeps
    /// none (a server without a data directory).
    pub keep_published: Option<std::path::PathBuf>,
    /// Makes the dispatch report of a build published with `wasmod publish` (as
    /// `dispatch_report` is of the build the server starts with); without it, a published
    /// build has none.
    pub inspect: Option<Inspect>,
}

/// Makes the dispatch report of a compiled module, if it can be inspected (as `wasmod serve`
/// does with `wasmod_inspect`).
pub type Inspect = fn(&[u8]) -> Option<DispatchReport>;

/// The dispatch report of a served binary, as `wasmod inspect` makes it (`wasmod_inspect`).
#[derive(Clone, Debug)]
pub struct DispatchReport {
    /// The report as JSON (`Report::to_json`).
    pub json: String,
    /// The report as text, for people (`Report`'s `Display`).
    pub text: String,
    /// Whether no dispatch path has an indirect call (`Report::is_clean`).
    pub clean: bool,
}

impl DispatchReport {
    /// The answer of `GET /v1/admin/dispatch`: `{"clean": .., "report": .., "text": ..}`.
    pub(crate) fn answer(&self) -> io::Result<String> {
        let report = serde_json::value::RawValue::from_string(self.json.clone())
            .map_err(|error| io::Error::new(io::ErrorKind::InvalidInput, error))?;
        let answer =
            serde_json::json!({ "clean": self.clean, "report": report, "text": self.text });
        Ok(answer.to_string())
    }
}

/// The optional sides of a [`Server`], beside its API: none by default.
#[derive(Default)]
pub struct Sides {
    /// The operator's console and API, and the module's logs kept for them.
    pub admin: Option<AdminOptions>,
    /// The replication publisher: every durable commit to a Redis stream.
    pub publish: Option<PublishSettings>,
    /// The server is an edge node of a primary: its module holds a replica
    /// ([`wasmod_host::InstanceEnv::with_replica`]) kept from the primary's stream, and the
    /// calls that may write go to the primary.
    pub edge: Option<EdgeOptions>,
    /// The clock the scheduler of schedule tables goes by; the system's if `None`. Tests give
    /// a [`wasmod_node::ManualClock`] and move it.
    pub clock: Option<Arc<dyn ScheduleClock>>,
    /// The feed of the module's logs, which the operator reads: the one set on the module's
    /// [`wasmod_host::InstanceEnv`] before it was loaded
    /// ([`wasmod_host::InstanceEnv::with_log_tap`]), to keep the lines of its `init`; if
    /// `None`, the node keeps those from its start on ([`wasmod_node::NodeBuilder::logs`]).
    pub logs: Option<Arc<LogFeed>>,
    /// The server is a node of a replicated deployment ([`wasmod_node::NodeBuilder::cluster`],
    /// `docs/high-availability.md`): a standby, until it takes the lease and becomes the
    /// primary. Its module's tables must be opened with durability `replicated`.
    pub cluster: Option<ClusterSettings>,
    /// The OpenID Connect issuers whose tokens the server accepts besides its own
    /// (`docs/authentication.md`); `None`: its own only. Their keys are fetched from the
    /// server's start, in the background.
    pub oidc: Option<OidcSettings>,
}

impl Server {
    /// Moves `module` onto its own thread and builds the API over it, signing tokens with
    /// `secret`. The server has no admin side.
    pub fn new(module: WasmModule, secret: Secret, config: ServerConfig) -> io::Result<Self> {
        Self::with_sides(module, secret, config, Sides::default())
    }

    /// [`Server::new`], with the operator's console and API behind `admin`'s token: among
    /// them, the module's logs ([`wasmod_node::LogFeed`]) from the server's start on.
    pub fn with_admin(
        module: WasmModule,
        secret: Secret,
        config: ServerConfig,
        admin: AdminOptions,
    ) -> io::Result<Self> {
        let sides = Sides {
            admin: Some(admin),
            ..Sides::default()
        };
        Self::with_sides(module, secret, config, sides)
    }

    /// Like [`Server::new`], and publishes every durable commit to the Redis stream that
    /// `publish` names while it serves (see `docs/edges.md`). Fails
    /// also if the stream's address is not one the Redis client accepts.
    pub fn publishing(
        module: WasmModule,
        secret: Secret,
        config: ServerConfig,
        publish: PublishSettings,
    ) -> io::Result<Self> {
        let sides = Sides {
            publish: Some(publish),
            ..Sides::default()
        };
        Self::with_sides(module, secret, config, sides)
    }

    /// [`Server::new`] with the optional sides that `sides` asks for: the operator's side
    /// ([`Server::with_admin`]), the replication publisher ([`Server::publishing`]) or an
    /// edge's. The node ([`wasmod_node::Node`]) is built with those sides; the server adds
    /// the HTTP API over it.
    pub fn with_sides(
        module: WasmModule,
        secret: Secret,
        config: ServerConfig,
        sides: Sides,
    ) -> io::Result<Self> {
        let Sides {
            admin,
            publish,
            edge,
            clock,
            logs,
            cluster,
            oidc,
        } = sides;
        let edge_token = publish
            .as_ref()
            .and_then(|settings| settings.edge_token.clone());
        let mut keep_published = None;
        let admin = match admin {
            None => None,
            Some(options) => {
                keep_published = options.keep_published.clone();
                Some(routes::admin::Admin::new(&module, options)?)
            }
        };
        let auth =
            Authenticator::new(Tokens::new(secret, config.token_ttl), oidc).map_err(|why| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("OpenID Connect: {why}"),
                )
            })?;
        let mut builder = Node::builder(module, config.node);
        if let Some(settings) = publish {
            builder = builder.publish(settings);
        }
        if let Some(edge) = edge {
            builder = builder.edge(edge);
        }
        if let Some(clock) = clock {
            builder = builder.clock(clock);
        }
        if let Some(path) = keep_published {
            builder = builder.keep_published(path);
        }
        if let Some(feed) = logs {
            builder = builder.logs(feed);
        }
        if let Some(settings) = cluster {
            builder = builder.cluster(settings);
        }
        let node = builder.build()?;
        let state = Arc::new(AppState {
            node: node.handle().clone(),
            edge_token,
            auth,
            websockets: wasmod_node::Counts::new(config.max_websockets_per_identity),
            identities: SourceRate::new("new identities", config.identities_per_minute),
            anonymous_calls: SourceRate::new(
                "calls without a token",
                config.anonymous_calls_per_minute,
            ),
            failed_tokens: SourceRate::per_second(
                "wrong tokens",
                config.failed_tokens_per_second,
                limits::FAILED_TOKENS_BURST_SECONDS,
            ),
            config,
            admin,
        });
        Ok(Self {
            router: routes::router(state),
            node,
            config,
        })
    }

    /// Serves the files under `dir` at `/` for the paths the API's routes do not match (see
    /// `routes/static_files.rs`): the module's web page.
    pub fn with_static_files(mut self, dir: &std::path::Path) -> Self {
        self.router = routes::with_static_files(self.router, dir);
        self
    }

    /// The node the server serves.
    pub fn node(&self) -> &wasmod_node::NodeHandle {
        self.node.handle()
    }

    /// The module's database: its tables and the feed of its commits.
    pub fn database(&self) -> &Arc<Database> {
        self.node.handle().database()
    }

    /// The publisher's counters, if the server publishes its commits.
    pub fn publish_stats(&self) -> Option<PublishReading> {
        self.node.handle().publish_stats()
    }

    /// The API as a router, to serve or to call in tests
    /// (`tower::ServiceExt::oneshot`).
    pub fn router(&self) -> Router {
        self.router.clone()
    }

    /// Serves the API on `listener`, taking and keeping connections within the configuration's
    /// bounds ([`admission`]), with the node started (its scheduler, live queries and
    /// replication: [`Node::start`]), until `shutdown` completes; then stops the node's
    /// scheduler and replication, stops accepting, lets the requests in progress finish,
    /// closes every WebSocket with a close frame (`1001`), closes the connections still open
    /// (each with its `client_disconnected`: the sockets' own first, then any left), waits for
    /// the module's thread to finish the calls already queued (at most
    /// [`ServerConfig::shutdown_grace`] for all of it), and returns.
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> io::Result<()> {
        let Self {
            router,
            node,
            config,
        } = self;
        let running = node.start().await;
        // Upgraded connections are the sockets' own: graceful shutdown does not end them, so
        // they are told to close as soon as shutdown starts.
        let stopper = running.stopper();
        let shutdown = async move {
            shutdown.await;
            stopper.stop().await;
        };
        admission::serve(listener, router, &config, shutdown).await;
        // The router, and with it every handle on the node, is gone: the node closes its
        // sockets and connections, and its module's thread finishes its queue and ends.
        running.finish(config.shutdown_grace).await;
        Ok(())
    }
}
