//! The node: its parts wired together ([`NodeBuilder`]), the handle transports share
//! ([`NodeHandle`]), and its life (started, stopped, finished: [`Running`]).
//!
//! The wiring is here and nowhere else, and so is the policy of the sides a node may have
//! ([`Role`]): what an edge refuses, and why.

use crate::build::{Build, CurrentBuild};
use crate::call::{Caller, HttpAnswer, HttpRefusal, Pipeline};
use crate::cluster::{Cluster, ClusterSettings, ClusterStatus, Deposed, NodeParts, SharedStatus};
use crate::connections::Connections;
use crate::health::LogHealth;
use crate::logs::LogFeed;
use crate::memory::ClientMemory;
use crate::memory::Holder;
use crate::metrics::Metrics;
use crate::realtime::frame::Frame;
use crate::realtime::open::SocketView;
use crate::realtime::socket::{serve, Encoding, Socket};
use crate::realtime::stats::Dropped;
use crate::realtime::wire::{Binary, Json};
use crate::realtime::{self, Realtime, RealtimeControl, SubscriptionLimits};
use crate::replication::forward::{Forwarded, ForwardedCall, ForwardedOutcome};
use crate::replication::{self, PublishReading};
use crate::replication::{
    EdgeSettings, EdgeState, EdgeStats, Follow, Primary, PublishSettings, PublishStats, Publisher,
};
use crate::report::{self, Health};
use crate::results::Results;
use crate::runner::{Forwarding, Runner};
use crate::schedule::{self, Scheduling};
use crate::slots::CallSlots;
use crate::swap::Published;
use crate::swap::{Swap, SwapParts};
use crate::tables::{self, PageLimits, PageQuery, Reader, TablePage, TableReads};
use crate::worker::WhenFull;
use crate::worker::{Worker, WorkerThread};
use futures_util::{Sink, Stream};
use std::future::Future;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use wasmod_abi::http::Request;
use wasmod_abi::ModuleDef;
use wasmod_abi::{ConnectionId, Identity};
use wasmod_host::datastore::Database;
use wasmod_host::WasmModule;
use wasmod_protocol::call::CallKind;
use wasmod_protocol::errors::{ApiError, ErrorCode};
use wasmod_protocol::http::CallResponse;
use wasmod_subscription::Catalog;

/// The node's limits and settings: what its module's queue, its calls and its sockets may
/// hold, and what reading its tables may cost.
///
/// Start from [`NodeConfig::default`] and set the fields that differ: more may be added, so
/// the struct cannot be written out whole outside this crate.
///
/// One flat struct of what a user sets, each field documented once, here: the transport's
/// configuration holds it whole (`ServerConfig::node` in `wasmod-server`) rather than copying
/// its fields, and `wasmod serve` has one flag for each. The node divides it among its parts
/// itself (`realtime::Settings`), so that how the parts are cut stays the node's business.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct NodeConfig {
    /// The most calls waiting for the module (`busy` beyond: `503` over HTTP; a socket's call
    /// waits for room instead). An edge bounds its calls forwarded to the primary by as many.
    /// Default: 256.
    pub queue: usize,
    /// The most calls one identity (or, for calls without a token, one source address) may
    /// have queued or running at once, of every kind, over HTTP and every socket together
    /// (`too_many_calls` beyond). Default: 16, what one socket may have in flight.
    pub max_calls_per_identity: usize,
    /// The most bytes of a value a view or procedure returns, in its binary encoding, that an
    /// answer carries (over HTTP or a socket); a larger one is answered `result_too_large`,
    /// the call's commits staying. Default: 8 MiB.
    pub max_result_bytes: usize,
    /// The most bytes clients may make the node hold for them, every client together: the
    /// texts of their query sets, one-off answers and table pages on their way out
    /// ([`ClientMemory`]). An identity may hold an eighth of it, a source address a quarter.
    /// Default: a sixty-fourth of the machine's memory, within 64 MiB and 4 GiB
    /// ([`ClientMemory::default_ceiling`]).
    pub max_client_memory: usize,
    /// The most messages queued for one socket; a client with more waiting is too slow and is
    /// closed (`4001`). Default: 1024.
    pub outbound_messages: usize,
    /// The most bytes of rows queued for one socket (counted in the binary encoding); beyond,
    /// the client is closed (`4001`). A subscription's rows are counted as their pointers
    /// (16 bytes a row) until they are sent, and a subscription with more is refused.
    /// Default: 16 MiB.
    pub outbound_bytes: usize,
    /// The most bytes of rows (in the binary encoding) in one message of a subscription's
    /// rows: more are sent in parts (`SubscribeRows`, then `SubscribeApplied`), each encoded
    /// once the one before it is written. Large enough that a part's fixed costs (a frame, a
    /// compressor's set-up) vanish beside its rows, small enough that a connection holds
    /// little beyond its rows' pointers (`benches/RESULTS.md`, "Initial subscription").
    /// Default: 1 MiB.
    pub subscription_part_bytes: usize,
    /// The most recent commits kept so that a client that reconnects (with `resume_from`) is
    /// sent what changed since its last offset rather than all its rows; `0` keeps none. Only
    /// a module with a commit log resumes, and its log should keep as many at hand
    /// (`durability::Options::with_recent` in `wasmod-datastore`). Default: 4096.
    pub resume_commits: usize,
    /// The most bytes of rows those commits may hold; the oldest are forgotten beyond.
    /// Default: 64 MiB.
    pub resume_bytes: usize,
    /// How long a client may stay silent on its socket before it is pinged; a client that
    /// then stays silent for as long again (it sent nothing, not even the pong) is closed
    /// (`4003`). Default: 30 s.
    pub ping_interval: Duration,
    /// The most queries one `Subscribe` may carry, repeats included (repeats are then
    /// subscribed once); beyond, a `SubscriptionError`. Default: 256.
    pub max_queries_per_set: usize,
    /// The most query sets one connection may hold at once; beyond, a `SubscriptionError`
    /// (unsubscribe one first). Default: 1024.
    pub max_query_sets_per_connection: usize,
    /// The most distinct queries one identity may be subscribed to at once, all its
    /// connections together (a query is counted once however many of its sets hold it);
    /// beyond, a `SubscriptionError`. Default: 4096.
    pub max_queries_per_identity: usize,
    /// The most those distinct queries may cost together, in reads a row (one for the row,
    /// one for each comparison of a query's condition, its tables' visibility filters
    /// included: `SELECT * FROM t WHERE a = 1 OR a = 2` costs 3,
    /// [`BoundQuery::cost`](wasmod_subscription::BoundQuery::cost)): what each row a commit
    /// changes may cost to check against the identity's queries. Beyond, a
    /// `SubscriptionError`. Default: 16,384.
    pub max_query_cost_per_identity: usize,
    /// The most reads the first evaluation of new subscriptions may make under one read
    /// transaction of the tables, during which commits wait: a read is a row found (scanned,
    /// through an index, a join's partner) and each comparison of the query's condition
    /// checked on it ([`wasmod_subscription::Budget`]). It bounds how long subscribing holds
    /// commits back, whatever clients send. Subscriptions beyond it wait for the next
    /// transaction; one that reads more on its own is refused with a `SubscriptionError`. A
    /// one-off query may read as many, or is refused. Default: 1,000,000 (10 to 50 ms on this
    /// project's 2-core reference machine: `subscription/tests/selective.rs`, `a_read`).
    pub max_subscription_reads: usize,
    /// The most reads of the tables at once, of each kind: one-off queries over sockets,
    /// every connection together, evaluated at once (the others wait their turn), and pages
    /// of tables read for a transport (`wasmod-server`'s `GET /v1/tables/{name}`: each from
    /// before it waits for the tables until its page is rendered, not while it is sent;
    /// `busy`, 503, beyond). At least one is. Default: 4.
    pub max_table_reads: usize,
    /// The rows of a page of a table read ([`NodeHandle::read_page`]) when the request names
    /// no `limit`. Default: 1000.
    pub table_page_rows: usize,
    /// The most rows of such a page; a larger `limit` is taken as this. Default: 10,000.
    pub max_table_page_rows: usize,
    /// The most bytes of such a page's rows, in their binary encoding: the page stops before
    /// the row that would take it past this (a first row larger than that on its own is sent
    /// alone). Its JSON is larger by a factor the encoding bounds. Default: 1 MiB.
    pub max_table_page_bytes: usize,
}

impl Default for NodeConfig {
    fn default() -> Self {
        Self {
            queue: 256,
            max_calls_per_identity: 16,
            max_result_bytes: 8 << 20,
            max_client_memory: ClientMemory::default_ceiling(crate::memory::physical_memory()),
            outbound_messages: 1024,
            outbound_bytes: 16 << 20,
            subscription_part_bytes: 1 << 20,
            resume_commits: 4096,
            resume_bytes: 64 << 20,
            ping_interval: Duration::from_secs(30),
            max_queries_per_set: 256,
            max_query_sets_per_connection: 1024,
            max_queries_per_identity: 4096,
            max_query_cost_per_identity: 16_384,
            max_subscription_reads: 1_000_000,
            max_table_reads: 4,
            table_page_rows: 1000,
            max_table_page_rows: 10_000,
            max_table_page_bytes: 1 << 20,
        }
    }
}

/// The settings of the real-time side, cut from the node's: what its sockets, its evaluation
/// task and its subscriptions follow.
impl From<&NodeConfig> for realtime::Settings {
    fn from(config: &NodeConfig) -> Self {
        Self {
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
            one_offs: config.max_table_reads.max(1),
            client_memory: config.max_client_memory,
            subscriptions: SubscriptionLimits {
                queries_per_set: config.max_queries_per_set,
                sets_per_connection: config.max_query_sets_per_connection,
                queries_per_identity: config.max_queries_per_identity,
                cost_per_identity: config.max_query_cost_per_identity,
                reads: config.max_subscription_reads,
            },
        }
    }
}

/// How a node is doing now, for an operator ([`NodeHandle::status`]).
#[derive(Debug)]
pub struct Status {
    /// The offset of the next commit: how many commits the module has made.
    pub commits: u64,
    /// The WebSockets open now.
    pub sockets: Vec<SocketView>,
    /// The clients the node closed so far, by reason.
    pub dropped: ClientsDropped,
    /// Room left in the module's queue.
    pub queue_free: usize,
}

/// Clients closed by the node so far, by reason (`wasmod_ws_dropped_total`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientsDropped {
    /// Their outbound queue was full.
    pub slow: u64,
    /// They sent nothing, not even a pong.
    pub idle: u64,
    /// The evaluation of their queries fell behind the commits.
    pub lagged: u64,
}

/// What makes a node an edge of a primary ([`NodeBuilder::edge`], `docs/edges.md`).
#[derive(Debug)]
pub struct EdgeOptions {
    /// The primary, for snapshots and forwarded calls.
    pub primary: Arc<Primary>,
    /// How the edge follows the primary's stream.
    pub settings: EdgeSettings,
}

/// The side a node plays, and what each side refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The node holds the module's data and takes its writes, alone.
    Primary,
    /// A primary that also publishes every durable commit to a Redis stream for edges.
    Publisher,
    /// An edge: its module holds a replica kept from a primary's stream, and its calls that
    /// may write go to the primary.
    Edge,
    /// A node of a replicated deployment ([`NodeBuilder::cluster`]): a standby or the
    /// primary, as [`NodeHandle::cluster`] says now.
    Replicated,
}

impl Role {
    /// Why a node of this role takes no new build (`wasmod publish`), if it does not: an edge
    /// takes its builds from its primary, and a publisher's edges would need the new build
    /// too, which is not supported yet.
    pub fn refuses_builds(self) -> Option<&'static str> {
        match self {
            Self::Primary => None,
            Self::Edge => Some("this server is an edge node: publish the new build to its primary"),
            Self::Publisher => Some(
                "this server publishes its commits to edge nodes, which would need the new build \
                 too: taking a new build while serving edges is not supported yet; restart the \
                 server with the new build instead",
            ),
            Self::Replicated => Some(
                "this server is a node of a replicated deployment, whose every node would need \
                 the new build too: taking a new build is not supported there yet; restart the \
                 standbys with the new build, then the primary",
            ),
        }
    }
}

/// Builds a [`Node`]: a primary by default, with the sides its steps add.
#[must_use]
pub struct NodeBuilder {
    module: WasmModule,
    config: NodeConfig,
    publish: Option<PublishSettings>,
    edge: Option<EdgeOptions>,
    clock: Option<Arc<dyn schedule::clock::ScheduleClock>>,
    keep_published: Option<PathBuf>,
    logs: Option<Arc<LogFeed>>,
    cluster: Option<ClusterSettings>,
}

/// What every transport of a node shares: cheap to clone.
#[derive(Clone, Debug)]
pub struct NodeHandle {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    role: Role,
    build: CurrentBuild,
    database: Arc<Database>,
    worker: Worker,
    log_health: LogHealth,
    runner: Runner,
    connections: Connections,
    pipeline: Pipeline,
    metrics: Arc<Metrics>,
    swap: Swap,
    realtime: Arc<Realtime>,
    table_reads: TableReads,
    edge: Option<EdgeState>,
    publish: Option<Arc<PublishStats>>,
    cluster: Option<(Arc<SharedStatus>, Deposed)>,
    logs: Arc<LogFeed>,
    config: NodeConfig,
}

/// One served module and what runs beside it, built and not started yet.
#[derive(Debug)]
pub struct Node {
    handle: NodeHandle,
    background: Background,
}

/// What runs in the background once a node starts, and what shutting it down ends.
#[derive(Debug)]
struct Background {
    realtime: RealtimeControl,
    thread: WorkerThread,
    connections: Connections,
    publisher: Option<Publisher>,
    follow: Option<Follow>,
    cluster: Option<Cluster>,
    scheduling: Arc<Scheduling>,
    /// The description of the build the node starts with, for its scheduler.
    module: Arc<ModuleDef>,
}

impl NodeBuilder {
    /// Publishes every durable commit to the Redis stream that `settings` names
    /// (`crate::replication::publisher`): the node becomes a [`Role::Publisher`].
    pub fn publish(mut self, settings: PublishSettings) -> Self {
        self.publish = Some(settings);
        self
    }

    /// Makes the node an edge of `edge`'s primary ([`Role::Edge`]): its module must hold a
    /// replica ([`wasmod_host::InstanceEnv::with_replica`]), kept from the primary's stream,
    /// and its calls that may write go to the primary.
    pub fn edge(mut self, edge: EdgeOptions) -> Self {
        self.edge = Some(edge);
        self
    }

    /// Makes the node one of the replicated deployment that `settings` names ([`Role::Replicated`],
    /// [`crate::cluster`]): a standby until it takes the lease, then the primary. Its module's
    /// tables must be opened with durability `replicated`
    /// (`wasmod_host::datastore::durability::Mode::Replicated`), which makes them a standby's.
    pub fn cluster(mut self, settings: ClusterSettings) -> Self {
        self.cluster = Some(settings);
        self
    }

    /// The clock the scheduler of schedule tables goes by (the system's by default). Tests
    /// give a [`schedule::ManualClock`] and move it.
    pub fn clock(mut self, clock: Arc<dyn schedule::clock::ScheduleClock>) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Where the last build published with `wasmod publish` is kept (written whole, then
    /// renamed into place), so that it can be served again after a restart; none by default.
    pub fn keep_published(mut self, path: PathBuf) -> Self {
        self.keep_published = Some(path);
        self
    }

    /// The feed the module's log lines go to, instead of a new one: the feed set on the
    /// module's environment before it was loaded
    /// ([`wasmod_host::InstanceEnv::with_log_tap`]), so that the lines of its `init` are kept
    /// too. Without it, the node keeps the lines logged from its build on.
    pub fn logs(mut self, feed: Arc<LogFeed>) -> Self {
        self.logs = Some(feed);
        self
    }

    /// The role the sides asked for make: an edge, a publisher, a node of a replicated
    /// deployment (which may publish too), or a primary alone. An edge that would also publish,
    /// or whose module holds no replica, is refused; so is a node of a deployment that would
    /// be an edge, or whose tables are not a standby's.
    fn role(&self) -> io::Result<Role> {
        if let Some(settings) = &self.cluster {
            settings
                .check()
                .map_err(|reason| io::Error::new(io::ErrorKind::InvalidInput, reason))?;
            let standby = self.module.database().is_standby();
            if self.edge.is_some() || !standby {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "a node of a replicated deployment opens its tables with durability \
                     `replicated`, and is no edge",
                ));
            }
            return Ok(Role::Replicated);
        }
        match (&self.edge, &self.publish) {
            (None, None) => Ok(Role::Primary),
            (None, Some(_)) => Ok(Role::Publisher),
            (Some(_), None) if self.module.database().is_replica() => Ok(Role::Edge),
            (Some(_), _) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "an edge serves a replica of its primary (InstanceEnv::with_replica) and does \
                 not publish",
            )),
        }
    }

    /// Moves the module onto its own thread and wires the node's parts around it. Fails if
    /// the sides do not go together, if the module's visibility filters do not compile, if
    /// the thread cannot start, or if the stream's address is not one the Redis client
    /// accepts.
    pub fn build(self) -> io::Result<Node> {
        let role = self.role()?;
        let Self {
            mut module,
            config,
            publish,
            edge,
            clock,
            keep_published,
            logs,
            cluster,
        } = self;
        let logs = logs.unwrap_or_else(LogFeed::with_defaults);
        module.env_mut().set_log_tap(logs.clone());
        let description = module.description().clone();
        let catalog = Catalog::new(&description)
            .map(Arc::new)
            .map_err(|error| io::Error::new(io::ErrorKind::InvalidData, error))?;
        let build = CurrentBuild::new(Build::new(
            0,
            description.clone(),
            catalog,
            module.datastore(),
        ));
        let database = module.database().clone();
        let (engine, wasm_config) = (module.engine().clone(), module.wasm_config());
        let (worker, thread) = Worker::start(module, config.queue)?;
        let log_health = LogHealth::new(database.clone());
        let metrics = Arc::new(Metrics::default());
        let scheduling = Arc::new(Scheduling::new(schedule::Parts {
            database: database.clone(),
            worker: worker.clone(),
            clock: clock.unwrap_or_else(|| Arc::new(schedule::SystemClock)),
            metrics: metrics.clone(),
        }));
        let (runner, follow, edge) = match edge {
            None => (
                Runner::local(worker.clone(), build.clone(), log_health.clone()),
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
                let runner = Runner::forwarding(
                    worker.clone(),
                    build.clone(),
                    log_health.clone(),
                    forwarding,
                );
                (runner, Some(follow), Some(state))
            }
        };
        let connections = Connections::new(runner.clone());
        let pipeline = Pipeline::new(
            build.clone(),
            runner.clone(),
            CallSlots::new(config.max_calls_per_identity),
            Results::new(config.max_result_bytes),
            metrics.clone(),
        );
        let (realtime, control) = Realtime::new(
            build.clone(),
            database.clone(),
            pipeline.clone(),
            connections.clone(),
            realtime::Settings::from(&config),
        );
        let mut publisher = publish
            .map(|settings| Publisher::new(database.clone(), settings))
            .transpose()?;
        let publish_stats = publisher.as_ref().map(Publisher::stats);
        let (cluster, cluster_side) = match cluster {
            None => (None, None),
            Some(settings) => {
                // A deployment's publisher runs on its primary only: from the promotion on.
                let parts = NodeParts {
                    database: database.clone(),
                    worker: worker.clone(),
                    build: build.clone(),
                    scheduling: scheduling.clone(),
                };
                let (cluster, status, deposed) = Cluster::new(settings, parts, publisher.take());
                (Some(cluster), Some((status, deposed)))
            }
        };
        let swap = Swap::new(SwapParts {
            engine,
            config: wasm_config,
            worker: worker.clone(),
            build: build.clone(),
            realtime: realtime.clone(),
            scheduling: scheduling.clone(),
            log_health: log_health.clone(),
            keep: keep_published,
            refusal: role.refuses_builds(),
        });
        let inner = Inner {
            role,
            build,
            database,
            worker,
            log_health,
            runner,
            connections: connections.clone(),
            pipeline,
            metrics,
            swap,
            table_reads: TableReads::new(config.max_table_reads, realtime.memory.clone()),
            realtime,
            edge,
            publish: publish_stats,
            cluster: cluster_side,
            logs,
            config,
        };
        Ok(Node {
            handle: NodeHandle {
                inner: Arc::new(inner),
            },
            background: Background {
                realtime: control,
                thread,
                connections,
                publisher,
                follow,
                cluster,
                scheduling,
                module: description,
            },
        })
    }
}

impl Node {
    /// A node of `module` with `config`: a primary, unless the builder's steps say otherwise.
    pub fn builder(module: WasmModule, config: NodeConfig) -> NodeBuilder {
        NodeBuilder {
            module,
            config,
            publish: None,
            edge: None,
            clock: None,
            keep_published: None,
            logs: None,
            cluster: None,
        }
    }

    /// The handle transports share.
    pub fn handle(&self) -> &NodeHandle {
        &self.handle
    }

    /// Starts what runs in the background, on the current runtime: the evaluation of live
    /// queries, the scheduler (its due timers fired), and the publisher or the edge's
    /// follower. The node's own handle is dropped: once every transport has dropped its
    /// clones, [`Running::finish`] can end the module's thread.
    pub async fn start(self) -> Running {
        let Self {
            handle,
            background:
                Background {
                    mut realtime,
                    thread,
                    connections,
                    publisher,
                    follow,
                    cluster,
                    scheduling,
                    module,
                },
        } = self;
        drop(handle);
        realtime.start();
        scheduling.start(module).await;
        let (stop_replication, replicating) = watch::channel(false);
        if let Some(publisher) = publisher {
            tokio::spawn(publisher.run(replicating.clone()));
        }
        if let Some(follow) = follow {
            tokio::spawn(follow.run(replicating.clone()));
        }
        if let Some(cluster) = cluster {
            tokio::spawn(cluster.run(replicating));
        }
        Running {
            stopper: NodeStopper {
                sockets: realtime.stopper(),
                replication: Arc::new(stop_replication),
                scheduling: scheduling.clone(),
            },
            realtime,
            thread,
            connections,
            scheduling,
        }
    }
}

/// A started node: what its shutdown stops and waits for.
#[derive(Debug)]
pub struct Running {
    stopper: NodeStopper,
    realtime: RealtimeControl,
    thread: WorkerThread,
    connections: Connections,
    scheduling: Arc<Scheduling>,
}

/// Starts a node's shutdown: cheap to clone, for the transport's shutdown signal.
#[derive(Clone, Debug)]
pub struct NodeStopper {
    sockets: realtime::Stopper,
    replication: Arc<watch::Sender<bool>>,
    scheduling: Arc<Scheduling>,
}

impl NodeStopper {
    /// Tells every socket to close and replication to stop, and stops the scheduler (which
    /// holds a handle on the module's thread, so it ends first).
    pub async fn stop(&self) {
        self.sockets.stop();
        self.replication.send_replace(true);
        self.scheduling.shut_down().await;
    }
}

impl Running {
    /// What starts the shutdown.
    pub fn stopper(&self) -> NodeStopper {
        self.stopper.clone()
    }

    /// Ends the node, once the transports have stopped and dropped their handles: closes the
    /// sockets (each closes its connection), then whatever connection is left (each with its
    /// `client_disconnected`), then lets the module's thread finish the calls already queued,
    /// waiting at most `grace` for all of it.
    pub async fn finish(self, grace: Duration) {
        let Self {
            stopper,
            mut realtime,
            thread,
            connections,
            scheduling,
        } = self;
        drop(stopper);
        let finish = async move {
            scheduling.shut_down().await;
            let open = realtime.close_all(grace).await;
            if open > 0 {
                tracing::warn!(open, "sockets still open after the shutdown grace");
            }
            let closed = connections.close_all().await;
            if closed > 0 {
                tracing::info!(closed, "closed the connections still open");
            }
            drop(connections);
            drop(scheduling);
            tokio::task::spawn_blocking(move || thread.join()).await
        };
        if tokio::time::timeout(grace, finish).await.is_err() {
            tracing::warn!("the module's thread did not finish within {grace:?}; exiting anyway");
        }
    }
}

impl NodeHandle {
    /// The side the node plays.
    pub fn role(&self) -> Role {
        self.inner.role
    }

    /// The description of the build serving now.
    pub fn describe(&self) -> Arc<ModuleDef> {
        self.inner.build.get().module.clone()
    }

    /// Calls the entry point `name` by name (`crate::call`): a reducer, procedure or view
    /// as `kind` says (any of them for `None`), as `caller`, with the JSON arguments `args`
    /// (awaited only once the call is known to be good: an HTTP body is read last). Refused
    /// with `busy` when the module's queue is full; answered once the call's commits are
    /// durable, with its commit or its value as JSON.
    pub async fn call(
        &self,
        kind: Option<CallKind>,
        name: &str,
        caller: Caller,
        args: impl Future<Output = Result<serde_json::Value, ApiError>>,
    ) -> Result<CallResponse, ApiError> {
        self.inner
            .pipeline
            .call_json(kind, name, caller, args)
            .await
    }

    /// Runs the module's `client_connected` for a new `identity` without a connection
    /// ([`ConnectionId::ZERO`]: no `client_disconnected` follows): the module may refuse it
    /// (`connection_refused`). How `POST /v1/identity` issues an identity.
    pub async fn admit(&self, identity: Identity) -> Result<(), ApiError> {
        self.inner
            .runner
            .connect(
                wasmod_host::Caller::new(identity, ConnectionId::ZERO),
                || {},
            )
            .await
    }

    /// Sends `request` to the module's HTTP handler its route finds in the build serving now,
    /// with the body `body` (awaited only once a handler is found), as `caller`; the
    /// module's response once the handler's commits are durable. On an edge, it runs on the
    /// primary.
    pub async fn call_http(
        &self,
        request: Request,
        body: impl Future<Output = Result<Vec<u8>, ApiError>>,
        caller: Caller,
    ) -> Result<HttpAnswer, HttpRefusal> {
        self.inner.pipeline.call_http(request, body, caller).await
    }

    /// Serves `socket` over frames read from `stream` and written to `sink` (the transport's
    /// two halves of it, [`crate::socket`]) until it closes: its calls, its live queries,
    /// pings, and its connection's lifecycle reducers.
    pub async fn serve_socket<S, R, E>(&self, sink: S, stream: R, socket: Socket)
    where
        S: Sink<Frame> + Unpin + Send + 'static,
        S::Error: Send,
        R: Stream<Item = Result<Frame, E>> + Unpin,
        E: std::fmt::Display,
    {
        let realtime = self.inner.realtime.clone();
        match socket.encoding {
            Encoding::Binary => serve::<Binary, _, _, _>(sink, stream, realtime, socket).await,
            Encoding::Json => serve::<Json, _, _, _>(sink, stream, realtime, socket).await,
        }
    }

    /// Publishes a new build of the module (`wasmod publish`): checked, its tables migrated,
    /// and swapped in between two calls (`crate::swap`).
    pub async fn publish(&self, wasm: Vec<u8>) -> Result<Published, ApiError> {
        self.inner.swap.publish(wasm).await
    }

    /// Runs a call an edge forwarded to this primary on the module's thread: its outcome
    /// (`None` for a lifecycle reducer the module lacks) and the offset of the last commit
    /// when it ended. A call by name must name an entry point a client may call
    /// (`crate::call`'s rule); a disconnection waits for room in the queue, as this
    /// node's own clients' do.
    pub async fn run_forwarded(
        &self,
        call: ForwardedCall,
    ) -> Result<(Option<ForwardedOutcome>, u64), ApiError> {
        if let Some((kind, name)) = call.by_name() {
            self.inner.pipeline.find(Some(kind), name)?;
        }
        let when_full = if call.call == Forwarded::Disconnect {
            WhenFull::Wait
        } else {
            WhenFull::Refuse
        };
        let run = move |module: &mut WasmModule| call.run(module);
        let done = self
            .inner
            .worker
            .queue(run, when_full)
            .await?
            .done()
            .await?;
        Ok((done.value.as_ref().map(ForwardedOutcome::from), done.offset))
    }

    /// The rows of every table at one committed state, once durable, for an edge to start
    /// from: the state's offset and the snapshot's bytes
    /// ([`replication::SNAPSHOT_TYPE`]).
    pub async fn snapshot(&self) -> Result<(u64, Vec<u8>), ApiError> {
        let database = self.inner.database.clone();
        tokio::task::spawn_blocking(move || replication::snapshot::take(&database))
            .await
            .map_err(|error| {
                ApiError::new(ErrorCode::Internal, format!("the snapshot failed: {error}"))
            })?
    }

    /// A page of the rows of the table `name` that `reader` may see, as `query` asks
    /// (`crate::tables`), its JSON charged to `holder` until it is sent. Refused with
    /// `no_such_table`, `private_table`, `unauthenticated` (a visibility filter that needs
    /// the reader's identity), `bad_request` (a limit or cursor that is not one), `busy` (as
    /// many reads in progress as [`NodeConfig::max_table_reads`]) or `too_many_calls` (the
    /// holder's share of the client memory taken).
    pub async fn read_page(
        &self,
        name: &str,
        reader: Reader,
        query: &PageQuery,
        holder: Holder,
    ) -> Result<TablePage, ApiError> {
        let table = tables::find(&self.inner.build, name, reader)?;
        let config = &self.inner.config;
        let limits = PageLimits {
            default_rows: config.table_page_rows,
            max_rows: config.max_table_page_rows,
            max_bytes: config.max_table_page_bytes,
        };
        tables::read_page(&self.inner.table_reads, limits, table, query, holder).await
    }

    /// The description of the build serving now, and how many rows each of its tables holds.
    pub async fn row_counts(&self) -> Result<(Arc<ModuleDef>, Vec<u64>), ApiError> {
        tables::row_counts(&self.inner.build).await
    }

    /// How the node is doing, for `/health`: whether it can serve, and why not.
    pub fn health(&self) -> Health {
        report::health(&report::Parts {
            worker: &self.inner.worker,
            log: &self.inner.log_health,
            evaluation: self.inner.realtime.stats.evaluation_lag().behind(),
            edge: self.inner.edge.as_ref(),
            cluster: self.cluster(),
        })
    }

    /// Why the node takes no writes, if its commit log failed (the reason, as `/health` says).
    pub fn log_failure(&self) -> Option<String> {
        self.inner.log_health.failure()
    }

    /// Every counter of the node in the Prometheus text format: calls, sockets and live
    /// queries, and replication's.
    pub fn metrics(&self) -> String {
        let mut text = self.inner.metrics.render();
        self.inner.realtime.stats.render(&mut text);
        if let Some(publish) = &self.inner.publish {
            publish.render(&mut text);
        }
        if let Some(edge) = &self.inner.edge {
            edge.stats.render(&mut text, edge.fresh);
        }
        if let Some(cluster) = self.cluster() {
            crate::cluster::render(&cluster, &mut text);
        }
        text
    }

    /// The node's place in its replicated deployment, on a node of one ([`Role::Replicated`]).
    pub fn cluster(&self) -> Option<ClusterStatus> {
        self.inner.cluster.as_ref().map(|(status, _)| status.get())
    }

    /// What completes when the node, a replicated deployment's primary, is deposed: its
    /// transport should then stop it and start it again, a standby, from its data directory
    /// (`crate::cluster`). `None` on a node of no deployment.
    pub fn deposed(&self) -> Option<Deposed> {
        self.inner
            .cluster
            .as_ref()
            .map(|(_, deposed)| deposed.clone())
    }

    /// Runs `work`, a request of `kind` other than a call (a table read, a new identity),
    /// counting it in the metrics as calls are.
    pub async fn measured<T>(
        &self,
        kind: &'static str,
        work: impl Future<Output = Result<T, ApiError>>,
    ) -> Result<T, ApiError> {
        self.inner.metrics.measure(kind, work).await
    }

    /// Counts a request of `kind` that the transport refused before it reached the node (a
    /// path or a token that is not valid), as the node counts its own refusals; gives the
    /// error back.
    pub fn refused(&self, kind: &'static str, error: ApiError) -> ApiError {
        self.inner.metrics.start(kind).refuse(error)
    }

    /// What the admin console shows: commits, open sockets, clients dropped, room in the
    /// module's queue.
    pub fn status(&self) -> Status {
        let stats = &self.inner.realtime.stats;
        Status {
            commits: self.inner.database.next_offset(),
            sockets: self.inner.realtime.open.list(),
            dropped: ClientsDropped {
                slow: stats.dropped_so_far(Dropped::Slow),
                idle: stats.dropped_so_far(Dropped::Idle),
                lagged: stats.dropped_so_far(Dropped::Lagged),
            },
            queue_free: self.inner.worker.capacity(),
        }
    }

    /// The module's database: its tables and the feed of its commits.
    pub fn database(&self) -> &Arc<Database> {
        &self.inner.database
    }

    /// The bytes clients make the node hold, under one ceiling (`crate::memory`).
    pub fn client_memory(&self) -> &Arc<ClientMemory> {
        &self.inner.realtime.memory
    }

    /// The connections open now (each with its `client_connected` run).
    pub fn connections_open(&self) -> usize {
        self.inner.connections.count()
    }

    /// The publisher's counters, if the node publishes its commits.
    pub fn publish_stats(&self) -> Option<PublishReading> {
        self.inner.publish.as_ref().map(|stats| stats.read())
    }

    /// The live connections, for the node's own tests.
    #[cfg(test)]
    pub(crate) fn connections(&self) -> &Connections {
        &self.inner.connections
    }

    /// The module's recent log lines, and each new one as it is logged: for the operator.
    pub fn logs(&self) -> &Arc<LogFeed> {
        &self.inner.logs
    }
}
