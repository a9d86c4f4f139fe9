//! What every run of a replicated deployment (`docs/high-availability.md`) needs: the
//! engine's servers given to a node, the deployment's shared identity secret, and each node's
//! `/health`, which says what part it plays.
//!
//! The transfer workload serves a one-node deployment (the commit path of `replicated`
//! against `group`); the failover run serves three. Both start the engine with
//! [`NatsCluster::start`], which blocks until the cluster has formed: they call it from the
//! runtime's `block_on` future, which runs on the main thread, so that the engine's servers,
//! whose `PR_SET_PDEATHSIG` fires when the thread that started them ends, live until the
//! measurement drops them (or the load generator dies).

use crate::http::Http;
use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};
use wasmod_nats_cluster::NatsCluster;

/// How long one `/health` may take: a paused node accepts the connection (the kernel does)
/// and never answers.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(1);

/// How often a node's `/health` is read while waiting for its part to change.
const POLL: Duration = Duration::from_millis(50);

/// Writes the deployment's identity-signing secret to `path`: 64 random hex digits, readable
/// by the owner only (`wasmod serve --secret-file` refuses a file others may read). Every node
/// signs with it, so a token is good on whichever node is the primary.
pub fn write_secret(path: &Path) -> Result<()> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(&mut bytes))
        .context("reading /dev/urandom")?;
    let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    std::fs::write(path, format!("{hex}\n"))
        .with_context(|| format!("writing {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("chmod 600 {}", path.display()))
}

/// The arguments of `wasmod serve` that make it node `name` of the deployment whose engine is
/// `engine` and whose secret is in `secret`, with durability `replicated`.
pub fn node_arguments(engine: &NatsCluster, name: &str, secret: &Path) -> Vec<String> {
    vec![
        "--durability".into(),
        "replicated".into(),
        "--cluster".into(),
        engine.url_list(),
        "--node-name".into(),
        name.into(),
        "--secret-file".into(),
        secret.display().to_string(),
    ]
}

/// The `/health` of the node at `address` (`host:port`), `None` if it does not answer within
/// [`HEALTH_TIMEOUT`] (killed, paused, restarting).
pub async fn health(address: &str) -> Option<Value> {
    let read = async {
        let (_, body) = Http::connect(address).await?.get("/health").await?;
        anyhow::Ok(serde_json::from_slice(&body)?)
    };
    tokio::time::timeout(HEALTH_TIMEOUT, read).await.ok()?.ok()
}

/// The part the node at `address` says it plays (`cluster.role` of its `/health`: `starting`,
/// `standby`, `primary`, `deposed`), `None` if it does not answer.
pub async fn role(address: &str) -> Option<String> {
    let health = health(address).await?;
    health["cluster"]["role"].as_str().map(str::to_owned)
}

/// Waits until the node at `address` says it plays `wanted`, at most `patience`.
pub async fn wait_for_role(address: &str, wanted: &str, patience: Duration) -> Result<()> {
    let started = Instant::now();
    loop {
        let now = role(address).await;
        if now.as_deref() == Some(wanted) {
            return Ok(());
        }
        if started.elapsed() > patience {
            bail!("the node at {address} is not the {wanted} after {patience:?} (it says {now:?})");
        }
        tokio::time::sleep(POLL).await;
    }
}
