//! Issue 40's randomized run: a replicated deployment under load while its processes are
//! killed, paused and restarted at random moments, checked at the end for every acknowledged
//! write, and timed on each failover.
//!
//! One run starts a 3-node NATS JetStream cluster (the engine) and three `wasmod serve
//! --durability replicated` nodes of the quickstart ([`nodes`]); then, for the run's length:
//!
//! - **writers** ([`writers`]) commit the quickstart's `send` with texts never sent before:
//!   over HTTP, to whichever node acknowledges, trying the nodes in turn; and over the
//!   WebSocket, with the Rust client given the three nodes' URLs, which follows the primary.
//!   Every text sent, and every one acknowledged, is written down;
//! - **subscribers** ([`subscribers`]): Rust clients given the three URLs, subscribed to
//!   `SELECT * FROM message`, each keeping the rows it is sent; an insert of a row it holds,
//!   a delete of one it does not hold, or a row that changes (messages never do) fails the
//!   run at once;
//! - **chaos** ([`chaos`]) at random moments, from a seeded generator (the seed is printed,
//!   and `--seed` replays the same choices): SIGKILL the primary and restart it a while later;
//!   SIGSTOP the primary past its lease, then SIGCONT; kill and restart a standby; kill and
//!   restart one engine node. One at a time, each waited out (a primary again, the node back
//!   as a standby) before the next: two engine nodes down at once is a majority lost, and the
//!   engine's recovery from it can take 30 s.
//!
//! At the end, with every process running and the writers stopped ([`check`]): every
//! acknowledged write is in the table exactly once, nothing is there that was never sent,
//! every node holds the same rows and has applied the same offset, and every subscriber's
//! rows are the table's. Any of them violated fails the run (non-zero exit); a slow failover
//! never does, it is measured: from each SIGKILL of a primary to the first write the next one
//! acknowledged (p50, p99, max).
//!
//! `--kills N` only kills the primary, N times: the failover measurement of the issue.
//!
//! A failed run keeps its directory (the nodes' data and logs, the engine's logs) and says
//! where.

mod chaos;
mod check;
mod nodes;
mod subscribers;
mod writers;

pub use chaos::Action;
pub use nodes::LEASE;

use anyhow::{bail, Result};
use nodes::Nodes;
use quickstart_client::bindings::{DbConnection, Message};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use wasmod_client::Client;

/// How long the deployment may take to do what it must: elect a primary, take a restarted
/// node back as a standby, converge at the end. A debug `wasmod serve` compiles the module
/// when it starts; and an engine node's restart can take 30 s (`tools/nats-cluster`'s
/// docs). Waiting longer than this is a failure: a node that never rejoins, a deployment
/// left without a primary.
const PATIENCE: Duration = Duration::from_secs(120);

/// What to run.
#[derive(Clone, Debug)]
pub struct Plan {
    /// How long the chaos goes on.
    pub run: Duration,
    /// Kill only the primary, this many times (instead of random chaos for [`Plan::run`]).
    pub kills: Option<usize>,
    /// The chaos's seed (a new one, printed, if none).
    pub seed: Option<u64>,
    /// Writers over HTTP.
    pub http_writers: usize,
    /// Writers over the WebSocket (the Rust client).
    pub socket_writers: usize,
    /// Subscribers.
    pub subscribers: usize,
}

/// One run's result (it is returned only if every check held).
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The chaos's seed.
    pub seed: u64,
    /// From the deployment started to the checks done.
    pub took: Duration,
    /// How many times each action was taken.
    pub actions: BTreeMap<Action, usize>,
    /// Each primary kill's failover: the SIGKILL to the first write acknowledged after it,
    /// ascending.
    pub failovers: Vec<Duration>,
    /// Primary kills after which no write was acknowledged (none expected).
    pub failovers_missed: usize,
    /// The writes: sent, acknowledged, refused, unknown.
    pub writes: writers::Tally,
    /// Rows in the table at the end.
    pub rows: usize,
    /// The offset every node had applied at the end.
    pub applied: u64,
    /// Subscribers whose rows were the table's at the end.
    pub subscribers: usize,
}

/// Runs [`Plan`] once (see the module docs).
pub async fn measure(paths: &crate::Paths, plan: &Plan) -> Result<Outcome> {
    let seed = plan.seed.unwrap_or_else(new_seed);
    eprintln!("failover: seed {seed} (`failover --seed {seed}` makes the same choices again)");
    let started = Instant::now();
    let mut nodes = Nodes::start(paths, PATIENCE).await?;
    match run(&mut nodes, plan, seed, started).await {
        Ok(outcome) => Ok(outcome),
        Err(error) => {
            let kept = nodes.keep();
            Err(error.context(format!(
                "failover run, seed {seed}; the nodes' data and logs and the engine's logs are \
                 kept in {}",
                kept.display()
            )))
        }
    }
}

/// The run over the deployment `nodes` once it has a primary.
async fn run(nodes: &mut Nodes, plan: &Plan, seed: u64, started: Instant) -> Result<Outcome> {
    let alarm = Alarm::default();
    let urls = nodes.urls();
    let subscribers = subscribers::subscribe(&urls, plan.subscribers, &alarm).await?;
    let writers = writers::Writers::start(nodes, plan, &alarm);
    let chaos = chaos::run(nodes, plan, seed, &alarm).await;
    eprintln!("failover: stopping the writers");
    let ledger = writers.stop().await;
    let record = chaos?;
    alarm.check()?;
    eprintln!("failover: checking every node, every write and every subscriber");
    nodes.wait_for_primary(None, PATIENCE).await?;
    let (table, applied) = check::converge(nodes, PATIENCE).await?;
    check::writes(&table, &ledger)?;
    check::subscribers(&subscribers, &table, PATIENCE).await?;
    alarm.check()?;
    let (failovers, failovers_missed) = check::failovers(&record.kills, &ledger.acks);
    Ok(Outcome {
        seed,
        took: started.elapsed(),
        actions: record.actions,
        failovers,
        failovers_missed,
        writes: ledger.tally(),
        rows: table.len(),
        applied,
        subscribers: subscribers.len(),
    })
}

/// A seed from the clock, for a run not given one.
fn new_seed() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos() as u64)
}

/// The first violation seen by a task of the run (a subscriber's callback, a writer), which
/// the chaos loop and the end of the run look at: the run fails at once, not at the end.
#[derive(Clone, Default)]
pub struct Alarm(Arc<Mutex<Option<String>>>);

impl Alarm {
    /// Records `what` went wrong, unless something already did.
    pub fn raise(&self, what: String) {
        let mut first = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        first.get_or_insert(what);
    }

    /// An error if something went wrong.
    pub fn check(&self) -> Result<()> {
        match &*self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
        {
            Some(what) => bail!("{what}"),
            None => Ok(()),
        }
    }
}

/// A Rust client of the deployment at `urls` (the quickstart's `message` rows typed), as the
/// docs show (`docs/client.md`, "Several servers"): connected to the primary, and following
/// it. Tries for [`PATIENCE`]: while the deployment has no primary, every node refuses it.
pub async fn connect(urls: &[String]) -> Result<DbConnection> {
    let started = Instant::now();
    loop {
        let client = Client::builder_with_servers(urls)
            .keyed_table::<Message>("message", "id")
            .connect()
            .await;
        match client {
            Ok(client) => return Ok(DbConnection::new(client)),
            Err(error) if started.elapsed() > PATIENCE => {
                bail!("no node of {urls:?} took a client within {PATIENCE:?}: {error}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}
