//! Issue 14's benchmarks: what edge nodes cost and give, on this machine.
//!
//! One run starts a `redis-server`, the quickstart served by `wasmod serve --publish` (the
//! primary) and two `wasmod edge`s of it, every one a child process on loopback, and one caller
//! that commits the quickstart's `send` on the primary at a steady rate. Side by side, in the
//! same run:
//!
//! - **the primary's CPU per commit** (its user plus system time over the run, from
//!   `/proc/<pid>/stat`, over the commits) with no subscriber anywhere, then with `clients`
//!   subscribers spread over the two edges: the goal is that subscribers on edges cost the
//!   primary nothing measurable;
//! - **replication lag**: each delivery's commit-to-receipt latency (the update's timestamp,
//!   taken on the primary when the call ran, to its decoding by a client on an edge: the same
//!   clock), p50 and p99, against as many clients subscribed to one `wasmod serve` (one node,
//!   a server of its own);
//! - **deliveries per second** that the two edges and the one node each achieve at that rate.

use crate::audience::{Audience, Subscribe};
use crate::caller::Caller;
use crate::delivery::{self, Step};
use crate::process::{self, Served};
use crate::Paths;
use anyhow::{bail, Context, Result};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The stream the primary publishes to.
const STREAM: &str = "bench";

/// How long Redis may take to answer after it starts.
const REDIS_START: Duration = Duration::from_secs(20);

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Subscribed clients, spread over the two edges (and as many on the one node).
    pub clients: usize,
    /// Commits per second.
    pub rate: f64,
    /// How long each phase commits.
    pub run: Duration,
}

/// The figures of one run.
#[derive(Clone, Copy, Debug)]
pub struct Outcome {
    /// The primary's CPU per commit with no subscriber.
    pub cpu_alone: Duration,
    /// The primary's CPU per commit with the clients on the edges.
    pub cpu_with_edges: Duration,
    /// The clients on the two edges.
    pub edges: Step,
    /// The same clients on the primary itself.
    pub one_node: Step,
}

/// A `redis-server` on a free loopback port, without persistence; killed on drop (and by
/// the kernel if this process dies first).
struct Redis {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Redis {
    async fn start() -> Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .context("a free port")?
            .port();
        let dir = tempfile::tempdir().context("a directory for Redis")?;
        let mut command = Command::new("redis-server");
        command
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: the closure runs in the child between fork and exec and only makes one
        // async-signal-safe system call.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command
            .spawn()
            .context("starting redis-server (apt-get install redis-server)")?;
        let started = Instant::now();
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            if started.elapsed() > REDIS_START {
                bail!("redis-server did not listen within {REDIS_START:?}");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(Self {
            child,
            port,
            _dir: dir,
        })
    }

    fn stream(&self) -> String {
        format!("redis://127.0.0.1:{}/{STREAM}", self.port)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the plan (see the module docs).
pub async fn measure(paths: &Paths, plan: &Plan) -> Result<Outcome> {
    let redis = Redis::start().await?;
    let data = tempfile::tempdir().context("a data directory")?;
    let token = data.path().join("edge-token");
    std::fs::write(&token, "the load generator's edge token").context("the edge token")?;
    // `wasmod` refuses a token file other users may read.
    #[cfg(unix)]
    std::fs::set_permissions(&token, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .context("the edge token's mode")?;
    let token = token.to_string_lossy().into_owned();
    let stream = redis.stream();
    let primary = process::wasmod_serve(
        &paths.wasmod,
        &paths.module,
        &data.path().join("primary"),
        &["--publish", &stream, "--edge-token-file", &token],
    )
    .await?;
    let http = primary.ws_base.replacen("ws://", "http://", 1);
    let secret = data.path().join("primary").join("identity-secret");
    let mut edges = Vec::new();
    for _ in 0..2 {
        let mut command = Command::new(&paths.wasmod);
        command
            .args(["--log", "warn", "edge"])
            .arg(&paths.module)
            .args(["--listen", "127.0.0.1:0", "--identities-per-minute", "0"])
            .args(["--max-connections", process::UNCAPPED_CONNECTIONS])
            .args([
                "--max-connections-per-address",
                process::UNCAPPED_CONNECTIONS,
            ])
            .args(["--primary", &http, "--follow", &stream])
            .args(["--edge-token-file", &token])
            .arg("--secret-file")
            .arg(&secret);
        edges.push(Served::start(command).await?);
    }
    let primary_url = format!("{}/v1/subscribe", primary.ws_base);
    let mut caller = Caller::open(&primary_url).await?;
    let count = (plan.rate * plan.run.as_secs_f64()).ceil() as u64;

    let cpu_alone = cpu_per_commit(&primary, &mut caller, plan.rate, count).await?;
    let edge_urls: Vec<String> = edges
        .iter()
        .map(|edge| format!("{}/v1/subscribe", edge.ws_base))
        .collect();
    let edge_urls: Vec<&str> = edge_urls.iter().map(String::as_str).collect();
    let audience = Audience::join_over(&edge_urls, plan.clients, Subscribe::Messages).await?;
    let before = process::cpu_time(primary.pid())?;
    let publish = delivery::commit(&mut caller, plan.rate, count);
    let on_edges = delivery::step(&audience, plan.rate, count, publish).await?;
    let cpu_with_edges = (process::cpu_time(primary.pid())? - before) / count as u32;
    check(&on_edges, "the edges")?;
    drop(audience);

    // One node: a server of its own, so that the edges' clients, leaving, do not fill its
    // queue with their disconnections while these join.
    let alone = tempfile::tempdir().context("a data directory")?;
    let node = process::wasmod_serve(&paths.wasmod, &paths.module, alone.path(), &[]).await?;
    let node_url = format!("{}/v1/subscribe", node.ws_base);
    let mut caller = Caller::open(&node_url).await?;
    let audience = Audience::join(&node_url, plan.clients, Subscribe::Messages).await?;
    let publish = delivery::commit(&mut caller, plan.rate, count);
    let one_node = delivery::step(&audience, plan.rate, count, publish).await?;
    check(&one_node, "the one node")?;
    Ok(Outcome {
        cpu_alone,
        cpu_with_edges,
        edges: on_edges,
        one_node,
    })
}

/// The primary's CPU time per commit over `count` commits at `rate`, with whatever listens.
async fn cpu_per_commit(
    primary: &Served,
    caller: &mut Caller,
    rate: f64,
    count: u64,
) -> Result<Duration> {
    let before = process::cpu_time(primary.pid())?;
    delivery::commit(caller, rate, count).await?;
    Ok((process::cpu_time(primary.pid())? - before) / count as u32)
}

/// Fails a phase whose clients did not all get every update: a broken setup, not a slow one.
fn check(step: &Step, clients: &str) -> Result<()> {
    if step.received < step.expected || step.lost > 0 {
        bail!(
            "the clients of {clients} received {} of {} updates ({} lost)",
            step.received,
            step.expected,
            step.lost
        );
    }
    Ok(())
}
