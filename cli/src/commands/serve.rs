//! `wasmod serve <module> [--listen ADDR] [--data DIR] [--web DIR] [limits…]`: serves a module
//! over HTTP, and with `--web` a directory of static files at `/` (its web page).
//!
//! The module (a crate directory is built first) is compiled, checked against the ABI and
//! loaded. The data directory (`--data`, by default `.wasmod` in the module's crate directory,
//! or beside the `.wasm` file) holds the identity-signing secret, created on first start (see
//! [`wasmod_server::secret`]; keep it to keep the tokens already issued valid), and the
//! commit log of the module's tables in `db/`: the tables are recovered from it on start
//! (`init` runs only on the first start), and a reducer's success is answered only once its
//! commit is durable as `--durability` says (`group` by default; see `docs/durability.md`).
//!
//! With `--cluster nats://HOST:PORT,…` (and `--durability replicated`), the server is a node of
//! a replicated deployment on NATS JetStream (`docs/high-availability.md`): a standby that
//! follows the replicated log and serves reads, until it takes the lease and becomes the
//! primary, whose commits are acknowledged once a quorum of the engine holds them. A primary
//! that is deposed is stopped and started again, a standby, on the same socket. With
//! `--publish` too, the deployment's primary publishes for edges, which follow it across
//! failovers (`wasmod edge --primary` with every node's URL).
//!
//! With `--publish redis://HOST:PORT/<stream>`, every durable commit is also appended to that
//! Redis stream for edge nodes (`docs/edges.md`), on a task of its own that never holds
//! commits back.
//!
//! Once the socket is bound, one line goes to stdout: `listening on http://<address>` (with the
//! actual port when `--listen` asks for port 0), for people and for scripts; then a line with
//! the admin console's address (`/admin`) and, unless `--operator-token-file` (or
//! `--operator-token`, or `WASMOD_OPERATOR_TOKEN`) gave one, the operator token made up for this run: it opens the
//! console, the admin API and `wasmod logs`. The console's link carries it in the fragment
//! (`/admin#token=…`), which the browser keeps to itself: the page signs in with it. SIGINT or SIGTERM
//! stops the server gracefully: no new connections, the requests in progress finish, then the
//! process exits with status 0.

use super::serving::{self, Serving};
use crate::check;
use crate::failure::{Context, Failure, Result};
use crate::source::Module;
use crate::units::Span;
use std::path::PathBuf;
use std::time::Duration;
use wasmod_host::datastore::durability::{self, Mode};
use wasmod_host::Persistence;
use wasmod_node::cluster::ClusterSettings;
use wasmod_node::replication::{PublishSettings, StreamAddress, DEFAULT_BACKLOG, DEFAULT_MAX_LEN};
use wasmod_node::LogFeed;
use wasmod_node::PUBLISHED_FILE;
use wasmod_server::{Secret, Server, Sides};

/// `wasmod serve`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// A module crate's directory (built first) or a compiled module (`.wasm`).
    module: PathBuf,
    /// The data directory (holds the identity-signing secret and the tables' commit log)
    /// [default: `.wasmod` in the crate's directory, or beside the .wasm file].
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// When a commit is durable: `fsync` (each commit syncs the log), `group` (commits share
    /// syncs; same guarantee), `off` (no syncs, no waiting: a crash loses recent commits),
    /// `replicated` (a quorum of the engine `--cluster` names holds it; with `--cluster`).
    #[arg(long, default_value_t = Mode::Group, value_name = "MODE")]
    durability: Mode,
    /// Make this server a node of a replicated deployment on this NATS JetStream cluster
    /// (several servers comma-separated; see docs/high-availability.md): a standby until it
    /// takes the lease, then the primary. Needs `--durability replicated` and `--node-name`.
    #[arg(
        long,
        value_name = "nats://HOST:PORT,…",
        requires_all = ["node_name", "secret_file"]
    )]
    cluster: Option<String>,
    /// The deployment's name, the same on each of its nodes (it names the stream of commits
    /// and the lease on the engine).
    #[arg(
        long,
        default_value = "main",
        value_name = "NAME",
        requires = "cluster"
    )]
    deployment: String,
    /// The identity-signing secret every node of the deployment shares (an `identity-secret`
    /// file, as a data directory holds), so that a client's token is good on whichever node is
    /// the primary. Needed with `--cluster`.
    #[arg(long, value_name = "FILE", requires = "cluster")]
    secret_file: Option<PathBuf>,
    /// This node's name in the deployment, unique in it (letters, digits, `-`, `_`).
    #[arg(long, value_name = "NAME", requires = "cluster")]
    node_name: Option<String>,
    /// The URL clients reach this node at, published with the lease so that standbys can say
    /// where the primary is [default: none].
    #[arg(long, value_name = "URL", requires = "cluster")]
    advertise: Option<String>,
    /// How long the lease lasts unless the primary renews it: the longest a deployment waits
    /// before a standby takes the place of a lost primary.
    #[arg(
        long,
        default_value = "3s",
        value_name = "DURATION",
        requires = "cluster"
    )]
    lease: Span,
    /// How long the log's flusher lets commits gather before it writes them (modes `group`
    /// and `replicated`): a longer window makes fewer, larger writes (with `replicated`, fewer
    /// messages to the engine, each costing it the same) and each commit waits up to that
    /// much longer [default: 0 with `group`, 1ms with `replicated`].
    #[arg(long, value_name = "DURATION")]
    group_window: Option<Span>,
    /// Snapshot the tables in the background after this many logged transactions (recovery
    /// then replays only the log after the snapshot); 0 for never.
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    snapshot_every: u64,
    /// Publish every durable commit to this Redis stream, for edge nodes
    /// (`redis://HOST:PORT/<stream>`; see docs/edges.md). Publishing never holds commits
    /// back: if Redis is slow or down, the commits wait and the stream is refilled later.
    #[arg(long, value_name = "redis://HOST:PORT/STREAM")]
    publish: Option<StreamAddress>,
    /// The stream's bound: it is trimmed to about this many commits (`XADD … MAXLEN ~ N`).
    #[arg(long, default_value_t = DEFAULT_MAX_LEN, value_name = "N")]
    publish_max_len: u64,
    /// The most commits held in memory while Redis is behind; older ones are read back from
    /// the commit log.
    #[arg(long, default_value_t = DEFAULT_BACKLOG, value_name = "N")]
    publish_backlog: usize,
    /// A file holding the token edge nodes present to bootstrap from this server and to
    /// forward their clients' calls to it (`/v1/replication/*`); with `--publish` only.
    /// Without it, no edge can follow this server. Readable by its owner only (`chmod 600`).
    #[arg(long, value_name = "FILE", requires = "publish")]
    edge_token_file: Option<PathBuf>,
    #[command(flatten)]
    serving: Serving,
}

/// Runs `wasmod serve`.
pub fn run(args: Args) -> Result {
    let server_config = args.serving.config()?;
    let operator_token = args.serving.operator_token()?;
    let oidc = args.serving.oidc()?;
    let edge_token = args
        .edge_token_file
        .as_deref()
        .map(|path| serving::token_file(path, "--edge-token-file"))
        .transpose()?;
    let module = Module::open(&args.module)?;
    let data = args
        .data
        .clone()
        .unwrap_or_else(|| module.home.join(".wasmod"));
    let secret = match &args.secret_file {
        Some(path) => {
            Secret::load(path).map_err(|error| Failure::usage(format!("--secret-file: {error}")))?
        }
        None => Secret::load_or_create(&data).map_err(Failure::usage)?,
    };
    let cluster = cluster_settings(&args)?;
    // The last commits before a restart stay at hand for WebSocket clients that resume.
    let mut options = durability::Options::default()
        .with_mode(args.durability)
        .with_recent(
            server_config.node.resume_commits,
            server_config.node.resume_bytes,
        );
    options.snapshot_every = (args.snapshot_every > 0).then_some(args.snapshot_every);
    let default_window = match cluster {
        Some(_) => REPLICATED_GROUP_WINDOW,
        None => Duration::ZERO,
    };
    options.group_window = args.group_window.map_or(default_window, |window| window.0);
    if cluster.is_some() {
        options.max_frame_bytes = REPLICATED_MAX_RECORD;
    }
    let compiled = check::compile(&module.wasm)?;
    let published = data.join(PUBLISHED_FILE);
    let (admin, announcement) = args.serving.operator(operator_token, &module.wasm)?;
    let publish = match args.publish {
        Some(address) => {
            let mut publish = PublishSettings::new(address);
            publish.max_len = args.publish_max_len;
            publish.backlog = args.publish_backlog;
            publish.edge_token = edge_token;
            Some(publish)
        }
        None => None,
    };
    // Each server over the tables as the data directory holds them: the first, and for a node
    // of a deployment that was deposed, the standby that replaces it.
    let next = || {
        let logs = LogFeed::with_defaults();
        // The server waits for durability off the module's thread (`docs/architecture.md`).
        let env = args
            .serving
            .env(logs.clone())?
            .with_persistence(Persistence::new(data.join("db"), options))
            .with_deferred_durability();
        let loaded =
            check::load(&compiled, args.serving.wasm_config(), env).map_err(|failure| {
                match published.is_file() {
                    true => failure.hint(format!(
                    "a build was published to this data directory with `wasmod publish` and is \
                     kept in {}: serve that build, or a newer one",
                    published.display()
                )),
                    false => failure,
                }
            })?;
        tracing::info!(
            module = %module.path.display(),
            data = %data.display(),
            durability = %args.durability,
            "loaded the module"
        );
        let mut admin = admin.clone();
        admin.keep_published = Some(published.clone());
        let sides = Sides {
            admin: Some(admin),
            publish: publish.clone(),
            edge: None,
            clock: None,
            logs: Some(logs),
            cluster: cluster.clone(),
            oidc: oidc.clone(),
        };
        Server::with_sides(loaded, secret.clone(), server_config, sides)
            .context("starting the module's thread")
    };
    args.serving
        .serve(&serving::runtime()?, next, &announcement)
}

/// How long a replicated log's flusher lets commits gather by default: each batch is one
/// message to the engine, which costs the engine's servers about the same CPU whatever its
/// size (`benches/RESULTS.md`, "High availability"), so fewer, larger batches carry more
/// commits on the same cores.
const REPLICATED_GROUP_WINDOW: Duration = Duration::from_millis(1);

/// The most bytes one transaction's changes may take in a replicated deployment: a commit batch
/// is one message of the engine, and NATS takes at most 1 MB in one by default (`max_payload`),
/// headers included.
const REPLICATED_MAX_RECORD: u64 = (1 << 20) - (16 << 10);

/// The deployment `--cluster` and its flags name, if they do; refused unless the durability
/// is `replicated` exactly then.
fn cluster_settings(args: &Args) -> Result<Option<ClusterSettings>> {
    let replicated = args.durability == Mode::Replicated;
    let (Some(servers), Some(node)) = (&args.cluster, &args.node_name) else {
        if replicated {
            return Err(Failure::usage(
                "--durability replicated needs the engine that holds the commits: give \
                 --cluster nats://HOST:PORT,… and --node-name",
            ));
        }
        return Ok(None);
    };
    if !replicated {
        return Err(Failure::usage(
            "--cluster makes this server a node of a replicated deployment, whose commits are \
             durable once the engine holds them: give --durability replicated too",
        ));
    }
    let mut settings = ClusterSettings::new(servers.clone(), args.deployment.clone(), node.clone());
    settings.advertise = args.advertise.clone().unwrap_or_default();
    settings.lease = args.lease.0;
    Ok(Some(settings))
}
