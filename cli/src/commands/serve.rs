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
use std::path::PathBuf;
use wasmod_host::datastore::durability::{self, Mode};
use wasmod_host::Persistence;
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
    /// syncs; same guarantee), `off` (no syncs, no waiting: a crash loses recent commits).
    #[arg(long, default_value_t = Mode::Group, value_name = "MODE")]
    durability: Mode,
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
    let secret = Secret::load_or_create(&data).map_err(Failure::usage)?;
    // The last commits before a restart stay at hand for WebSocket clients that resume.
    let mut options = durability::Options::default()
        .with_mode(args.durability)
        .with_recent(
            server_config.node.resume_commits,
            server_config.node.resume_bytes,
        );
    options.snapshot_every = (args.snapshot_every > 0).then_some(args.snapshot_every);
    let persistence = Persistence::new(data.join("db"), options);
    let logs = LogFeed::with_defaults();
    // The server waits for durability off the module's thread (see `docs/architecture.md`).
    let env = args
        .serving
        .env(logs.clone())?
        .with_persistence(persistence)
        .with_deferred_durability();
    let published = data.join(PUBLISHED_FILE);
    let loaded = check::load(
        &check::compile(&module.wasm)?,
        args.serving.wasm_config(),
        env,
    )
    .map_err(|failure| match published.is_file() {
        true => failure.hint(format!(
            "a build was published to this data directory with `wasmod publish` and is kept in \
             {}: serve that build, or a newer one",
            published.display()
        )),
        false => failure,
    })?;
    tracing::info!(
        module = %module.path.display(),
        data = %data.display(),
        durability = %args.durability,
        "loaded the module"
    );
    let (mut admin, announcement) = args.serving.operator(operator_token, &module.wasm)?;
    admin.keep_published = Some(published);
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
    let sides = Sides {
        admin: Some(admin),
        publish,
        edge: None,
        clock: None,
        logs: Some(logs),
    };
    let server = Server::with_sides(loaded, secret, server_config, sides)
        .context("starting the module's thread")?;
    args.serving
        .serve(&serving::runtime()?, server, &announcement)
}
