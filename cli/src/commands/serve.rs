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
//! With `--publish redis://HOST:PORT/<stream>`, every durable commit is also appended to that
//! Redis stream for edge nodes (`docs/edges.md`), on a task of its own that never holds
//! commits back.
//!
//! Once the socket is bound, one line goes to stdout: `listening on http://<address>` (with the
//! actual port when `--listen` asks for port 0), for people and for scripts; then a line with
//! the admin console's address (`/admin`) and, unless `--operator-token` (or
//! `WASMOD_OPERATOR_TOKEN`) gave one, the operator token made up for this run: it opens the
//! console, the admin API and `wasmod logs`. The console's link carries it in the fragment
//! (`/admin#token=…`), which the browser keeps to itself: the page signs in with it. SIGINT or SIGTERM
//! stops the server gracefully: no new connections, the requests in progress finish, then the
//! process exits with status 0.

use crate::check;
use crate::failure::{Context, Failure, Result};
use crate::output;
use crate::source::Module;
use crate::units;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use wasmod_host::datastore::durability::{self, Mode};
use wasmod_host::{AllowList, InstanceEnv, OutboundHttp, Persistence, WasmConfig};
use wasmod_server::logfeed::LogFeed;
use wasmod_server::replication::{publisher, PublishSettings, StreamAddress};
use wasmod_server::{
    AdminOptions, DispatchReport, OperatorToken, Secret, Server, ServerConfig, Sides,
};

/// `wasmod serve`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// A module crate's directory (built first) or a compiled module (`.wasm`).
    module: PathBuf,
    /// A directory of static files (a web page for the module) served at `/`, beside the
    /// API, whose routes keep priority.
    #[arg(long, value_name = "DIR")]
    web: Option<PathBuf>,
    /// The address to listen on; port 0 picks a free port (the line printed says which).
    #[arg(long, default_value = "127.0.0.1:3000")]
    listen: SocketAddr,
    /// The data directory (holds the identity-signing secret and the tables' commit log)
    /// [default: `.wasmod` in the crate's directory, or beside the .wasm file].
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// When a commit is durable: `fsync` (each commit syncs the log), `group` (commits share
    /// syncs; same guarantee), `off` (no syncs, no waiting: a crash loses recent commits).
    #[arg(long, default_value_t = Mode::Group, value_name = "MODE")]
    durability: Mode,
    /// Snapshot the tables in the background after this many logged transactions (recovery
    /// then replays only the log after the snapshot); 0 for never.
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    snapshot_every: u64,
    /// How long issued tokens are valid: 30d, 12h, …
    #[arg(long, default_value = "30d", value_parser = units::duration)]
    token_ttl: Duration,
    /// The largest request body accepted: 1MiB, 64KiB, a number of bytes.
    #[arg(long, default_value = "1MiB", value_parser = units::size)]
    max_body: usize,
    /// The most calls one identity may have in progress at once.
    #[arg(long, default_value_t = ServerConfig::default().max_calls_per_identity)]
    max_calls_per_identity: usize,
    /// The longest a request may take before it is answered 504.
    #[arg(long, default_value = "30s", value_parser = units::duration)]
    request_timeout: Duration,
    /// The most calls waiting for the module before new ones are answered 503.
    #[arg(long, default_value_t = ServerConfig::default().queue)]
    queue: usize,
    /// The longest one call may run inside the module before it is aborted.
    #[arg(long, default_value = "5s", value_parser = units::duration)]
    deadline: Duration,
    /// The most messages queued for one WebSocket client before it is closed as too slow
    /// (`4001`).
    #[arg(long, default_value_t = ServerConfig::default().outbound_messages, value_name = "N")]
    outbound_messages: usize,
    /// The most bytes of rows queued for one WebSocket client before it is closed as too slow
    /// (`4001`); a subscription's rows count 16 bytes a row against it until they are sent.
    #[arg(long, default_value = "16MiB", value_parser = units::size)]
    outbound_bytes: usize,
    /// The recent commits kept (in memory, and read back from the log at start) so that
    /// reconnecting WebSocket clients are sent only what changed since their last offset;
    /// 0 for none.
    #[arg(long, default_value_t = ServerConfig::default().resume_commits, value_name = "N")]
    resume_commits: usize,
    /// The most new identities one source address is given a minute (`POST /v1/identity`,
    /// WebSocket connections without a token), beyond which it is answered 429; 0 for no
    /// limit.
    #[arg(long, default_value_t = ServerConfig::default().identities_per_minute, value_name = "N")]
    identities_per_minute: u32,
    /// How long a WebSocket client may stay silent before it is pinged; silent as long again,
    /// it is closed (`4003`).
    #[arg(long, default_value = "30s", value_parser = units::duration)]
    ping_interval: Duration,
    /// Publish every durable commit to this Redis stream, for edge nodes
    /// (`redis://HOST:PORT/<stream>`; see docs/edges.md). Publishing never holds commits
    /// back: if Redis is slow or down, the commits wait and the stream is refilled later.
    #[arg(long, value_name = "redis://HOST:PORT/STREAM")]
    publish: Option<StreamAddress>,
    /// The stream's bound: it is trimmed to about this many commits (`XADD … MAXLEN ~ N`).
    #[arg(long, default_value_t = publisher::DEFAULT_MAX_LEN, value_name = "N")]
    publish_max_len: u64,
    /// The most commits held in memory while Redis is behind; older ones are read back from
    /// the commit log.
    #[arg(long, default_value_t = publisher::DEFAULT_BACKLOG, value_name = "N")]
    publish_backlog: usize,
    /// A file holding the token edge nodes present to fetch the snapshot they bootstrap from
    /// (`GET /v1/replication/snapshot`); with `--publish` only. Without it, no edge can
    /// bootstrap from this server.
    #[arg(long, value_name = "FILE", requires = "publish")]
    edge_token_file: Option<PathBuf>,
    /// A host procedures may send HTTP requests to (`api.example.com`, `*.example.com`,
    /// `127.0.0.1:8080`); repeat for several. None by default.
    #[arg(long = "allow-http", value_name = "HOST")]
    allow_http: Vec<String>,
    /// The operator token, for the admin console (`/admin`), the admin API and `wasmod logs`
    /// (at least 16 characters) [default: a new random one, printed at start].
    #[arg(
        long,
        env = "WASMOD_OPERATOR_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    operator_token: Option<String>,
}

/// Runs `wasmod serve`.
pub fn run(args: Args) -> Result {
    if args.ping_interval.is_zero() {
        return Err(Failure::usage(
            "--ping-interval: must be more than zero (every socket would be closed at once)",
        ));
    }
    let module = Module::open(&args.module)?;
    let data = args
        .data
        .clone()
        .unwrap_or_else(|| module.home.join(".wasmod"));
    let secret = Secret::load_or_create(&data).map_err(Failure::usage)?;
    let allow = AllowList::from_rules(&args.allow_http)
        .map_err(|error| Failure::usage(format!("--allow-http: {error}")))?;
    let mut server_config = ServerConfig::default();
    server_config.max_body_bytes = args.max_body;
    server_config.max_calls_per_identity = args.max_calls_per_identity;
    server_config.request_timeout = args.request_timeout;
    server_config.queue = args.queue;
    server_config.token_ttl = args.token_ttl;
    server_config.outbound_messages = args.outbound_messages;
    server_config.outbound_bytes = args.outbound_bytes;
    server_config.resume_commits = args.resume_commits;
    server_config.ping_interval = args.ping_interval;
    server_config.identities_per_minute = args.identities_per_minute;
    // The last commits before a restart stay at hand for WebSocket clients that resume.
    let mut options = durability::Options::default()
        .with_mode(args.durability)
        .with_recent(server_config.resume_commits, server_config.resume_bytes);
    options.snapshot_every = (args.snapshot_every > 0).then_some(args.snapshot_every);
    let persistence = Persistence::new(data.join("db"), options);
    // The module's logs are kept for the operator from its `init` on.
    let logs = LogFeed::with_defaults();
    // The server waits for durability off the module's thread (see `wasmod_server::worker`).
    let env = InstanceEnv::unloaded()
        .with_log_tap(logs.clone())
        .with_http_client(Arc::new(OutboundHttp::new(allow)))
        .with_persistence(persistence)
        .with_deferred_durability();
    let mut config = WasmConfig::default();
    config.deadline = args.deadline;
    let loaded = check::load(&check::compile(&module.wasm)?, config, env)?;
    tracing::info!(
        module = %module.path.display(),
        data = %data.display(),
        durability = %args.durability,
        "loaded the module"
    );
    let (token, chosen) = match &args.operator_token {
        Some(text) => (
            OperatorToken::new(text)
                .map_err(|error| Failure::usage(format!("--operator-token: {error}")))?,
            true,
        ),
        None => (
            OperatorToken::generate().context("making an operator token")?,
            false,
        ),
    };
    // The console shows the served binary's dispatch report; a binary that cannot be
    // inspected is still served, without one.
    let dispatch_report = match wasmod_inspect::inspect(&module.wasm) {
        Ok(report) => Some(DispatchReport {
            json: report.to_json(),
            text: report.to_string(),
            clean: report.is_clean(),
        }),
        Err(error) => {
            tracing::warn!("no dispatch report for the admin console: {error}");
            None
        }
    };
    let admin = AdminOptions {
        token: token.clone(),
        dispatch_report,
        logs,
    };
    let publish = match args.publish {
        Some(address) => {
            let mut publish = PublishSettings::new(address);
            publish.max_len = args.publish_max_len;
            publish.backlog = args.publish_backlog;
            publish.edge_token = args
                .edge_token_file
                .as_deref()
                .map(edge_token)
                .transpose()?;
            Some(publish)
        }
        None => None,
    };
    let sides = Sides {
        admin: Some(admin),
        publish,
    };
    let mut server = Server::with_sides(loaded, secret, server_config, sides)
        .context("starting the module's thread")?;
    if let Some(web) = &args.web {
        if !web.is_dir() {
            return Err(Failure::usage(format!(
                "--web {}: not a directory",
                web.display()
            )));
        }
        server = server.with_static_files(web);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .context(format!("listening on {}", args.listen))?;
        let address = listener.local_addr().context("the bound address")?;
        let console = if chosen {
            format!("admin console: http://{address}/admin (with the operator token given)")
        } else {
            format!(
                "admin console: http://{address}/admin#token={0}, operator token: {0}",
                token.reveal()
            )
        };
        output::print(format!("listening on http://{address}\n{console}\n"))?;
        server
            .serve(listener, wasmod_server::shutdown_signal())
            .await
            .context("serving")
    })?;
    tracing::info!("stopped");
    Ok(())
}

/// The edge token in the file at `path`: its contents, surrounding whitespace trimmed.
fn edge_token(path: &std::path::Path) -> Result<String> {
    let token = std::fs::read_to_string(path)
        .context(format!("reading the edge token in {}", path.display()))?;
    let token = token.trim();
    if token.len() < 16 {
        return Err(Failure::usage(format!(
            "--edge-token-file: the token in {} is shorter than 16 characters",
            path.display()
        )));
    }
    Ok(token.to_owned())
}
