//! The wasmod HTTP server: one wasm module's entry points, public tables and HTTP handlers,
//! served over a versioned JSON API (`docs/http-api.md` documents every endpoint).
//!
//! # Shape
//!
//! ```text
//! HTTP ──▶ axum routes (async, many at once)
//!            │ refuse early: auth, limits, unknown names, bad arguments
//!            ▼
//!          bounded queue ──▶ the module's thread (one WasmModule, one call at a time)
//!            ▲                      │
//!            └──── oneshot answer ◀─┘
//! ```
//!
//! The wasm host is `&mut` per call and runs a call to completion on its thread, so it lives
//! on one dedicated thread ([`worker`]); handlers queue calls and await the answer, and never
//! block the async runtime. Everything that does not need the module (token checks, argument
//! conversion, table reads) happens outside that thread.
//!
//! # Modules, one job each
//!
//! - `routes` (private): the endpoints and the layers around them;
//! - [`build`]: the build that serves the module now, which `wasmod publish` replaces;
//! - [`entry`]: running entry points found by name (the finding, the JSON arguments and the
//!   answers are the protocol's, [`wasmod_protocol::call`]), shared with `wasmod call`;
//! - [`auth`]: identities and signed tokens; [`secret`]: the signing key on disk;
//! - [`connections`]: live connections and their lifecycle reducers, exactly once each;
//! - [`realtime`]: `GET /v1/subscribe`, the WebSocket of calls and live queries: sockets, the
//!   evaluation task that turns commits into updates, bounded outbound queues;
//! - [`replication`]: the commits published to a Redis stream for edge nodes
//!   (`wasmod serve --publish`), and an edge node's side: its copy kept from the stream, its
//!   calls forwarded to the primary (`wasmod edge`);
//! - [`runner`]: where a call runs (the module's thread, or an edge's primary);
//! - [`swap`]: `wasmod publish`, a new build taking over between two calls, connections kept;
//! - [`schedule`]: the scheduler, which calls the reducers of schedule tables when their rows
//!   are due, through the module's queue, on a clock tests can move;
//! - [`worker`]: the module's thread; [`durable`]: the thread that answers calls once their
//!   commits are durable; [`limits`]: calls per identity; [`metrics`]: counters;
//! - [`pages`]: table reads in pages, bounded in rows, bytes and how many run at once;
//! - the operator's console and API (`/admin`, `/v1/admin/*`): [`operator`] (its token),
//!   [`logfeed`] (the module's recent logs, streamed live), [`commit_rate`];
//! - [`error`]: the API's errors as HTTP answers; [`config`]: the limits' values.
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
//! server.serve(listener, wasmod_server::shutdown_signal()).await?;
//! # Ok(())
//! # }
//! ```

pub mod auth;
pub mod build;
pub mod commit_rate;
pub mod config;
pub mod connections;
pub mod degraded;
pub mod durable;
pub mod entry;
pub mod error;
pub mod limits;
pub mod logfeed;
pub mod metrics;
pub mod operator;
pub mod pages;
pub mod realtime;
pub mod replication;
pub mod results;
mod routes;
pub mod runner;
pub mod schedule;
pub mod secret;
pub mod swap;
pub mod worker;

pub use auth::Tokens;
pub use config::ServerConfig;
pub use connections::{Connection, Connections};
pub use error::{ApiError, ErrorCode, HttpError};
pub use operator::OperatorToken;
pub use secret::Secret;

use axum::Router;
use build::{Build, CurrentBuild};
use degraded::LogHealth;
use limits::{CallSlots, SourceRate};
use metrics::Metrics;
use realtime::{Realtime, RealtimeControl};
use replication::{
    EdgeSettings, EdgeStats, Follow, Primary, PublishSettings, PublishStats, Publisher,
};
use routes::AppState;
use runner::{Forwarding, Runner};
use std::future::Future;
use std::io;
use std::sync::Arc;
use tokio::net::TcpListener;
use wasmod_host::datastore::Database;
use wasmod_host::WasmModule;
use wasmod_subscription::Catalog;
use worker::{Worker, WorkerThread};

/// A module ready to be served.
#[derive(Debug)]
pub struct Server {
    router: Router,
    database: Arc<Database>,
    connections: Connections,
    realtime: RealtimeControl,
    thread: WorkerThread,
    shutdown_grace: std::time::Duration,
    publisher: Option<Publisher>,
    follow: Option<Follow>,
    scheduling: Arc<schedule::Scheduling>,
    /// The description of the build the server starts with, for its scheduler.
    module: Arc<wasmod_abi::ModuleDef>,
}

/// The operator's side of a server ([`Server::with_admin`]).
#[derive(Debug)]
pub struct AdminOptions {
    /// The token that opens `/admin` and `/v1/admin/*`.
    pub token: OperatorToken,
    /// The dispatch report of the served binary, for `GET /v1/admin/dispatch`; `None` if it
    /// was not made.
    pub dispatch_report: Option<DispatchReport>,
    /// Where the module's logs are kept for the operator. The server hands it the module's
    /// log lines from its start on; to keep those of the module's `init` as well, set it on
    /// the module's [`wasmod_host::InstanceEnv`] before loading it
    /// ([`wasmod_host::InstanceEnv::with_log_tap`]).
    pub logs: Arc<logfeed::LogFeed>,
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
    /// a [`schedule::ManualClock`] and move it.
    pub clock: Option<Arc<dyn schedule::clock::ScheduleClock>>,
}

/// What makes a server an edge node ([`Sides::edge`], `docs/edges.md`).
#[derive(Debug)]
pub struct EdgeOptions {
    /// The primary, for snapshots and forwarded calls.
    pub primary: Arc<Primary>,
    /// How the edge follows the primary's stream.
    pub settings: EdgeSettings,
}

/// An edge's counters and how recent a read must be to count as caught up, for `/health`
/// and `/metrics`.
#[derive(Debug)]
pub(crate) struct EdgeState {
    pub(crate) stats: Arc<EdgeStats>,
    pub(crate) fresh: std::time::Duration,
}

impl Server {
    /// Moves `module` onto its own thread and builds the API over it, signing tokens with
    /// `secret`. The server has no admin side.
    pub fn new(module: WasmModule, secret: Secret, config: ServerConfig) -> io::Result<Self> {
        Self::with_sides(module, secret, config, Sides::default())
    }

    /// [`Server::new`], with the operator's console and API behind `admin`'s token, and the
    /// module's logs kept for them ([`logfeed`]).
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
    /// `publish` names while it serves (see [`replication::publisher`]). Fails also if the
    /// stream's address is not one the Redis client accepts.
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
    /// ([`Server::with_admin`]) and the replication publisher ([`Server::publishing`]).
    pub fn with_sides(
        mut module: WasmModule,
        secret: Secret,
        config: ServerConfig,
        sides: Sides,
    ) -> io::Result<Self> {
        let Sides {
            admin,
            publish,
            edge,
            clock,
        } = sides;
        if edge.is_some() && (publish.is_some() || !module.database().is_replica()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "an edge serves a replica of its primary (InstanceEnv::with_replica) and does \
                 not publish",
            ));
        }
        let mut keep_published = None;
        let admin = match admin {
            None => None,
            Some(options) => {
                keep_published = options.keep_published;
                let logs = options.logs;
                module.env_mut().set_log_tap(logs.clone());
                let dispatch = options
                    .dispatch_report
                    .as_ref()
                    .map(DispatchReport::answer)
                    .transpose()?;
                Some(routes::admin::Admin {
                    token: options.token,
                    dispatch: parking_lot::RwLock::new(dispatch),
                    inspect: options.inspect,
                    logs,
                    commit_rate: commit_rate::CommitRate::new(module.database().next_offset()),
                })
            }
        };
        let description = module.description().clone();
        let catalog = Catalog::new(&description)
            .map(Arc::new)
            .map_err(|error| io::Error::new(io::ErrorKind::InvalidData, error))?;
        let current = CurrentBuild::new(Build::new(
            0,
            description.clone(),
            catalog,
            module.datastore(),
        ));
        let database = module.database().clone();
        let (engine, wasm_config) = (module.engine().clone(), module.wasm_config());
        let (worker, thread) = Worker::start(module, config.queue)?;
        let metrics = Arc::new(Metrics::default());
        let scheduling = Arc::new(schedule::Scheduling::new(schedule::Parts {
            database: database.clone(),
            worker: worker.clone(),
            clock: clock.unwrap_or_else(|| Arc::new(schedule::SystemClock)),
            metrics: metrics.clone(),
        }));
        let (runner, follow, edge) = match edge {
            None => (
                Runner::local(worker.clone(), LogHealth::new(database.clone())),
                None,
                None,
            ),
            Some(EdgeOptions { primary, settings }) => {
                let stats = Arc::new(EdgeStats::default());
                let (follow, applied) =
                    Follow::new(database.clone(), primary.clone(), &settings, stats.clone())?;
                let forwarding =
                    Forwarding::new(primary, applied, settings.apply_wait, config.queue);
                let state = EdgeState {
                    stats,
                    fresh: settings.fresh(),
                };
                (
                    Runner::forwarding(
                        worker.clone(),
                        LogHealth::new(database.clone()),
                        forwarding,
                    ),
                    Some(follow),
                    Some(state),
                )
            }
        };
        let connections = Connections::new(runner.clone());
        let settings = realtime::Settings {
            outbound: realtime::outbox::Bounds {
                messages: config.outbound_messages,
                bytes: config.outbound_bytes,
            },
            resume: realtime::window::WindowBounds {
                commits: config.resume_commits,
                bytes: config.resume_bytes,
            },
            ping_interval: config.ping_interval,
            part_bytes: config.subscription_part_bytes,
            one_offs: config.max_table_reads,
        };
        let results = results::Results::new(config.max_result_bytes);
        let (realtime, control) = Realtime::new(
            current.clone(),
            database.clone(),
            runner.clone(),
            connections.clone(),
            settings,
            results.clone(),
        );
        let edge_token = publish
            .as_ref()
            .and_then(|settings| settings.edge_token.clone());
        let publisher = publish
            .map(|settings| Publisher::new(database.clone(), settings))
            .transpose()?;
        let refusal = if edge.is_some() {
            Some("this server is an edge node: publish the new build to its primary")
        } else if publisher.is_some() {
            Some(
                "this server publishes its commits to edge nodes, which would need the new build \
                 too: taking a new build while serving edges is not supported yet; restart the \
                 server with the new build instead",
            )
        } else {
            None
        };
        let swap = swap::Swap::new(swap::SwapParts {
            engine,
            config: wasm_config,
            worker: worker.clone(),
            build: current.clone(),
            realtime: realtime.clone(),
            scheduling: scheduling.clone(),
            log_health: LogHealth::new(database.clone()),
            keep: keep_published,
            refusal,
        });
        let state = Arc::new(AppState {
            swap,
            publish: publisher.as_ref().map(Publisher::stats),
            edge_token,
            build: current,
            log_health: LogHealth::new(database.clone()),
            worker,
            runner,
            edge,
            tokens: Tokens::new(secret, config.token_ttl),
            slots: CallSlots::new(config.max_calls_per_identity),
            identities: SourceRate::new("new identities", config.identities_per_minute),
            anonymous_calls: SourceRate::new(
                "calls without a token",
                config.anonymous_calls_per_minute,
            ),
            metrics,
            table_reads: pages::TableReads::new(config.max_table_reads),
            results,
            config,
            realtime,
            admin,
        });
        Ok(Self {
            router: routes::router(state),
            database,
            connections,
            realtime: control,
            thread,
            shutdown_grace: config.shutdown_grace,
            publisher,
            follow,
            scheduling,
            module: description,
        })
    }

    /// Serves the files under `dir` at `/` for the paths the API's routes do not match (see
    /// `routes/static_files.rs`): the module's web page.
    pub fn with_static_files(mut self, dir: &std::path::Path) -> Self {
        self.router = routes::with_static_files(self.router, dir);
        self
    }

    /// The module's database: its tables and the feed of its commits.
    pub fn database(&self) -> &Arc<Database> {
        &self.database
    }

    /// The publisher's counters, if the server publishes its commits.
    pub fn publish_stats(&self) -> Option<Arc<PublishStats>> {
        self.publisher.as_ref().map(Publisher::stats)
    }

    /// The live connections.
    pub fn connections(&self) -> &Connections {
        &self.connections
    }

    /// The API as a router, to serve or to call in tests
    /// (`tower::ServiceExt::oneshot`).
    pub fn router(&self) -> Router {
        self.router.clone()
    }

    /// Serves the API on `listener`, and runs the scheduler of the module's schedule tables
    /// ([`schedule`]), until `shutdown` completes; then stops the scheduler, stops accepting,
    /// lets the requests in progress finish, closes every WebSocket with a close frame (`1001`),
    /// closes the connections still open (each with its `client_disconnected`: the sockets'
    /// own first, then any left), waits for the module's thread to finish the calls already
    /// queued (at most [`ServerConfig::shutdown_grace`] for all of it), and returns.
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> io::Result<()> {
        let Self {
            router,
            connections,
            mut realtime,
            thread,
            shutdown_grace,
            publisher,
            follow,
            scheduling,
            module,
            ..
        } = self;
        realtime.start();
        scheduling.start(module).await;
        let (stop_replication, replicating) = tokio::sync::watch::channel(false);
        if let Some(publisher) = publisher {
            tokio::spawn(publisher.run(replicating.clone()));
        }
        if let Some(follow) = follow {
            tokio::spawn(follow.run(replicating));
        }
        // Upgraded connections are the sockets' own: graceful shutdown does not end them, so
        // they are told to close as soon as shutdown starts.
        let stopper = realtime.stopper();
        let scheduler = scheduling.clone();
        let shutdown = async move {
            shutdown.await;
            stopper.stop();
            stop_replication.send_replace(true);
            // The scheduler holds a handle on the worker: it ends first.
            scheduler.shut_down().await;
        };
        let service = router.into_make_service_with_connect_info::<std::net::SocketAddr>();
        axum::serve(listener, service)
            .with_graceful_shutdown(shutdown)
            .await?;
        // The router, and with it the last handle on the worker but the registry's and the
        // sockets', is gone: close the sockets (each closes its connection), then whatever
        // connection is left, then the module's thread finishes its queue and ends.
        let finish = async move {
            scheduling.shut_down().await;
            let open = realtime.close_all(shutdown_grace).await;
            if open > 0 {
                tracing::warn!(open, "sockets still open after the shutdown grace");
            }
            let closed = connections.close_all().await;
            if closed > 0 {
                tracing::info!(closed, "closed the connections still open");
            }
            drop(connections);
            tokio::task::spawn_blocking(move || thread.join()).await
        };
        if tokio::time::timeout(shutdown_grace, finish).await.is_err() {
            tracing::warn!(
                "the module's thread did not finish within {shutdown_grace:?}; exiting anyway"
            );
        }
        Ok(())
    }
}

/// Completes on SIGINT (Ctrl-C) or, on Unix, SIGTERM: the usual signals to stop a server.
pub async fn shutdown_signal() {
    let interrupt = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!("cannot listen for Ctrl-C: {error}");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut stream) => {
                stream.recv().await;
            }
            Err(error) => {
                tracing::error!("cannot listen for SIGTERM: {error}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => tracing::info!("interrupted: shutting down"),
        () = terminate => tracing::info!("terminated: shutting down"),
    }
}
