//! `wasmod edge <module> --primary URL --follow redis://HOST:PORT/<stream> --edge-token-file F
//! --secret-file F [serving options…]`: serves a module as an edge node of a primary
//! (`docs/edges.md`).
//!
//! The edge holds no data of its own. At start it takes the primary's snapshot (retrying for
//! up to `--bootstrap-timeout` while the primary is not up yet), loads the module over a copy
//! of those rows in memory (no `init`: the primary ran it), and from then on follows the
//! primary's stream, applying each commit in order and taking a new snapshot whenever the
//! stream cannot take it further. It serves what clients read from that copy (WebSocket
//! subscriptions, one-off queries, public tables, views) and forwards every call that may
//! write (reducers, procedures, HTTP handlers, connections) to the primary, answering once it
//! has applied the call's commit. It checks clients' tokens with the primary's signing secret
//! (`--secret-file`, the `identity-secret` of the primary's data directory), so a token the
//! primary issued is good on every edge and the other way round.
//!
//! `/health` answers 503 (`catching_up`) until the copy has caught up with the stream, and
//! `/metrics` has the `wasmod_edge_*` series (lag in offsets and seconds).

use super::serving::{self, Serving};
use crate::check;
use crate::failure::{Context, Failure, Result};
use crate::source::Module;
use crate::units;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmod_node::replication::{EdgeSettings, Primary, PrimaryError, Snapshot, StreamAddress};
use wasmod_node::EdgeOptions;
use wasmod_node::LogFeed;
use wasmod_server::{Secret, Server, Sides};

/// How long one exchange with the primary may take.
const PRIMARY_TIMEOUT: Duration = Duration::from_secs(30);

/// `wasmod edge`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The module the primary serves: a crate's directory (built first) or a `.wasm`.
    module: PathBuf,
    /// The primary's URL (`http://HOST:PORT`), for the snapshot and the forwarded calls; or
    /// the URLs of a replicated deployment's nodes, comma-separated: the calls go to
    /// whichever is the primary (docs/high-availability.md).
    #[arg(long, value_name = "URL[,URL…]")]
    primary: String,
    /// The primary's stream (`redis://HOST:PORT/<stream>`, as `wasmod serve --publish`).
    #[arg(long, value_name = "redis://HOST:PORT/STREAM")]
    follow: StreamAddress,
    /// A file holding the primary's edge token (`wasmod serve --edge-token-file`), readable
    /// by its owner only (`chmod 600`).
    #[arg(long, value_name = "FILE")]
    edge_token_file: PathBuf,
    /// The primary's identity-signing secret (the `identity-secret` file of its data
    /// directory), to check the tokens it issues.
    #[arg(long, value_name = "FILE")]
    secret_file: PathBuf,
    /// How long to keep trying to take the primary's first snapshot.
    #[arg(long, default_value = "30s", value_parser = units::duration)]
    bootstrap_timeout: Duration,
    #[command(flatten)]
    serving: Serving,
}

/// Runs `wasmod edge`.
pub fn run(args: Args) -> Result {
    let server_config = args.serving.config()?;
    let oidc = args.serving.oidc()?;
    let operator_token = args.serving.operator_token()?;
    let edge_token = serving::token_file(&args.edge_token_file, "--edge-token-file")?;
    let module = Module::open(&args.module)?;
    let secret = Secret::load(&args.secret_file)
        .map_err(|error| Failure::usage(format!("--secret-file: {error}")))?;
    let primary = Primary::new(&args.primary, &edge_token, PRIMARY_TIMEOUT)
        .map_err(|error| Failure::usage(format!("--primary: {error}")))?;
    let compiled = check::compile(&module.wasm)?;
    let runtime = serving::runtime()?;
    let Snapshot { offset, rows } =
        runtime.block_on(bootstrap(&primary, args.bootstrap_timeout))?;
    let logs = LogFeed::with_defaults();
    let env = args.serving.env(logs.clone())?.with_replica(offset, rows);
    let loaded = check::load(&compiled, args.serving.wasm_config(), env)?;
    tracing::info!(
        module = %module.path.display(),
        primary = %args.primary,
        stream = %args.follow,
        offset,
        "loaded the module over the primary's snapshot"
    );
    let (admin, announcement) = args.serving.operator(operator_token, &module.wasm)?;
    let sides = Sides {
        admin: Some(admin),
        publish: None,
        edge: Some(EdgeOptions {
            primary: Arc::new(primary),
            settings: EdgeSettings::new(args.follow),
        }),
        clock: None,
        logs: Some(logs),
        cluster: None,
        oidc,
    };
    let mut server = Some(
        Server::with_sides(loaded, secret, server_config, sides)
            .context("starting the module's thread")?,
    );
    // An edge is never deposed: its server is served once.
    let next = move || {
        server
            .take()
            .ok_or_else(|| Failure::usage("an edge node is served once"))
    };
    args.serving.serve(&runtime, next, &announcement)
}

/// The primary's snapshot, retried every half second for up to `patience` while the primary
/// cannot be reached; a refusal (a wrong edge token, a primary without edges) fails at once.
async fn bootstrap(primary: &Primary, patience: Duration) -> Result<Snapshot> {
    let started = Instant::now();
    loop {
        match primary.snapshot().await {
            Ok(snapshot) => return Ok(snapshot),
            Err(PrimaryError::Unreachable(reason)) if started.elapsed() < patience => {
                tracing::info!("waiting for the primary at {}: {reason}", primary.url());
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(error) => {
                return Err(Failure::usage(format!(
                    "no snapshot from the primary at {}: {error}",
                    primary.url()
                )))
            }
        }
    }
}
