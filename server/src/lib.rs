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
//! - [`entry`]: running entry points found by name (the finding, the JSON arguments and the
//!   answers are the protocol's, [`wasmod_protocol::call`]), shared with `wasmod call`;
//! - [`auth`]: identities and signed tokens; [`secret`]: the signing key on disk;
//! - [`connections`]: live connections and their lifecycle reducers, exactly once each;
//! - [`realtime`]: `GET /v1/subscribe`, the WebSocket of calls and live queries: sockets, the
//!   evaluation task that turns commits into updates, bounded outbound queues;
//! - [`replication`]: the commits published to a Redis stream for edge nodes
//!   (`wasmod serve --publish`);
//! - [`worker`]: the module's thread; [`durable`]: the thread that answers calls once their
//!   commits are durable; [`limits`]: calls per identity; [`metrics`]: counters;
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
pub mod config;
pub mod connections;
pub mod durable;
pub mod entry;
pub mod error;
pub mod limits;
pub mod metrics;
pub mod realtime;
pub mod replication;
mod routes;
pub mod secret;
pub mod worker;

pub use auth::Tokens;
pub use config::ServerConfig;
pub use connections::{Connection, Connections};
pub use error::{ApiError, ErrorCode, HttpError};
pub use secret::Secret;

use axum::Router;
use limits::{CallSlots, SourceRate};
use metrics::Metrics;
use realtime::{Realtime, RealtimeControl};
use replication::{PublishSettings, PublishStats, Publisher};
use routes::AppState;
use std::future::Future;
use std::io;
use std::sync::Arc;
use tokio::net::TcpListener;
use wasmod_host::datastore::Database;
use wasmod_host::WasmModule;
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
}

impl Server {
    /// Moves `module` onto its own thread and builds the API over it, signing tokens with
    /// `secret`.
    pub fn new(module: WasmModule, secret: Secret, config: ServerConfig) -> io::Result<Self> {
        Self::build(module, secret, config, None)
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
        Self::build(module, secret, config, Some(publish))
    }

    fn build(
        module: WasmModule,
        secret: Secret,
        config: ServerConfig,
        publish: Option<PublishSettings>,
    ) -> io::Result<Self> {
        let description = Arc::new(module.module().clone());
        let database = module.database().clone();
        let datastore = module.datastore().clone();
        let (worker, thread) = Worker::start(module, config.queue)?;
        let connections = Connections::new(worker.clone());
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
        };
        let (realtime, control) = Realtime::new(
            description.clone(),
            database.clone(),
            worker.clone(),
            connections.clone(),
            settings,
        );
        let edge_token = publish
            .as_ref()
            .and_then(|settings| settings.edge_token.clone());
        let publisher = publish
            .map(|settings| Publisher::new(database.clone(), settings))
            .transpose()?;
        let state = Arc::new(AppState {
            publish: publisher.as_ref().map(Publisher::stats),
            edge_token,
            module: description,
            datastore,
            worker,
            tokens: Tokens::new(secret, config.token_ttl),
            slots: CallSlots::new(config.max_calls_per_identity),
            identities: SourceRate::new("new identities", config.identities_per_minute),
            metrics: Arc::new(Metrics::default()),
            config,
            realtime,
        });
        Ok(Self {
            router: routes::router(state),
            database,
            connections,
            realtime: control,
            thread,
            shutdown_grace: config.shutdown_grace,
            publisher,
        })
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

    /// Serves the API on `listener` until `shutdown` completes, then stops accepting, lets
    /// the requests in progress finish, closes every WebSocket with a close frame (`1001`),
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
            ..
        } = self;
        realtime.start();
        let (stop_publishing, publishing) = tokio::sync::watch::channel(false);
        if let Some(publisher) = publisher {
            tokio::spawn(publisher.run(publishing));
        }
        // Upgraded connections are the sockets' own: graceful shutdown does not end them, so
        // they are told to close as soon as shutdown starts.
        let stopper = realtime.stopper();
        let shutdown = async move {
            shutdown.await;
            stopper.stop();
            stop_publishing.send_replace(true);
        };
        let service = router.into_make_service_with_connect_info::<std::net::SocketAddr>();
        axum::serve(listener, service)
            .with_graceful_shutdown(shutdown)
            .await?;
        // The router, and with it the last handle on the worker but the registry's and the
        // sockets', is gone: close the sockets (each closes its connection), then whatever
        // connection is left, then the module's thread finishes its queue and ends.
        let finish = async move {
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
