//! The deployment under test: the engine (a 3-node NATS JetStream cluster) and three
//! `wasmod serve --durability replicated` nodes of the quickstart, each on a fixed loopback
//! port (a restarted node comes back where the clients look for it), with its data directory
//! and its log in the run's directory, and one shared identity secret.

use crate::deployment::{self, role};
use crate::process::{self, Served};
use crate::Paths;
use anyhow::{bail, Context, Result};
use futures_util::future::join_all;
use std::fs::File;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};
use wasmod_nats_cluster::NatsCluster;

/// Nodes of the deployment.
pub const NODES: usize = 3;

/// The lease the nodes are started with: a standby takes a lost primary's place after at most
/// this long (plus the time to apply what it lacks). The end-to-end test's, too.
pub const LEASE: &str = "2s";

/// How often the nodes' `/health` are read while waiting for a primary.
const POLL: Duration = Duration::from_millis(50);

/// The deployment: the engine and the nodes, the processes stopped when it is dropped, in
/// the order of the fields: the nodes first (SIGTERM: a node's shutdown is quick while the
/// engine answers), then the engine, then the directory they wrote in.
pub struct Nodes {
    /// Each node's process while it runs.
    served: Vec<Option<Served>>,
    /// The engine.
    pub engine: NatsCluster,
    /// The data directories, the secret and the nodes' logs.
    dir: tempfile::TempDir,
    wasmod: PathBuf,
    module: PathBuf,
    /// Each node's `host:port`.
    addresses: Vec<String>,
}

impl Nodes {
    /// Starts the engine and the three nodes, and waits until one is the primary.
    pub async fn start(paths: &Paths, patience: Duration) -> Result<Self> {
        let engine = NatsCluster::start(3);
        let dir = tempfile::Builder::new()
            .prefix("wasmod-failover")
            .tempdir()
            .context("a directory for the deployment")?;
        deployment::write_secret(&dir.path().join("identity-secret"))?;
        let addresses = (0..NODES).map(|_| free_address()).collect::<Result<_>>()?;
        let mut nodes = Self {
            engine,
            dir,
            wasmod: paths.wasmod.clone(),
            module: paths.module.clone(),
            addresses,
            served: (0..NODES).map(|_| None).collect(),
        };
        for node in 0..NODES {
            nodes.start_node(node).await?;
        }
        nodes.wait_for_primary(None, patience).await?;
        Ok(nodes)
    }

    /// Every node's `host:port`, running or not.
    pub fn addresses(&self) -> &[String] {
        &self.addresses
    }

    /// Every node's base URL, what clients of the deployment are given.
    pub fn urls(&self) -> Vec<String> {
        self.addresses
            .iter()
            .map(|address| format!("http://{address}"))
            .collect()
    }

    /// Starts node `node` (again) over its data directory, at its address; returns once it
    /// listens (a standby, or starting).
    pub async fn start_node(&mut self, node: usize) -> Result<()> {
        let name = format!("n{node}");
        let data = self.dir.path().join(&name);
        std::fs::create_dir_all(&data).context("a node's data directory")?;
        let secret = self.dir.path().join("identity-secret");
        let mut arguments = deployment::node_arguments(&self.engine, &name, &secret);
        let advertise = format!("http://{}", self.addresses[node]);
        arguments.extend([
            "--lease".into(),
            LEASE.into(),
            "--advertise".into(),
            advertise,
        ]);
        let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
        let command = process::serve_command(
            &self.wasmod,
            &self.module,
            &data,
            &self.addresses[node],
            &arguments,
        )?;
        let log = File::options()
            .create(true)
            .append(true)
            .open(self.dir.path().join(format!("{name}.log")))
            .context("a node's log")?;
        self.served[node] = Some(Served::start_logging(command, Stdio::from(log)).await?);
        Ok(())
    }

    /// Kills node `node` at once (SIGKILL, as a lost machine).
    pub fn kill(&mut self, node: usize) {
        if let Some(served) = self.served[node].take() {
            served.kill();
        }
    }

    /// Sends `signal` (SIGSTOP, SIGCONT) to node `node`.
    pub fn signal(&self, node: usize, signal: libc::c_int) -> Result<()> {
        match &self.served[node] {
            Some(served) => served.signal(signal),
            None => bail!("node n{node} does not run"),
        }
    }

    /// What each node says it is (`None`: no answer).
    pub async fn roles(&self) -> Vec<Option<String>> {
        join_all(self.addresses.iter().map(|address| role(address))).await
    }

    /// Waits until a node other than `except` says it is the primary, at most `patience`;
    /// which.
    pub async fn wait_for_primary(
        &self,
        except: Option<usize>,
        patience: Duration,
    ) -> Result<usize> {
        let started = Instant::now();
        loop {
            let roles = self.roles().await;
            let primary = (0..NODES)
                .find(|&node| Some(node) != except && roles[node].as_deref() == Some("primary"));
            if let Some(primary) = primary {
                return Ok(primary);
            }
            if started.elapsed() > patience {
                bail!("no node became the primary within {patience:?}: the nodes say {roles:?}");
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Waits until node `node` says it plays `role`, at most `patience`.
    pub async fn wait_for_role(&self, node: usize, role: &str, patience: Duration) -> Result<()> {
        deployment::wait_for_role(&self.addresses[node], role, patience)
            .await
            .with_context(|| format!("node n{node}"))
    }

    /// Keeps the run's directory (the nodes' data and logs), with the engine's logs copied
    /// into it, for a failure to be looked into; where.
    pub fn keep(self) -> PathBuf {
        let Self {
            served,
            engine,
            dir,
            ..
        } = self;
        drop(served);
        for node in 0..3 {
            let log = dir.path().join(format!("nats-n{node}.log"));
            let _ = std::fs::write(log, engine.log(node));
        }
        drop(engine);
        dir.keep()
    }
}

/// A free loopback address, `127.0.0.1:PORT`: bound, read and released (another process could
/// take it in between, which on a test machine's loopback does not happen in practice).
fn free_address() -> Result<String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("a free port")?;
    Ok(listener.local_addr().context("a bound port")?.to_string())
}
