//! Issue 29's write-path measurement: SpacetimeDB's "keynote-2" workload against
//! `wasmod serve` (`examples/transfer`), beside a floor that answers each call without
//! running anything ([`floor`]).
//!
//! A run seeds `accounts` accounts holding `balance` each, opens `connections` callers (each
//! its own identity) that keep `in_flight` calls of `transfer(from, to, amount)` going for
//! the run's length, the two accounts drawn from a Zipf distribution of exponent α
//! ([`zipf`]), over the binary WebSocket, the JSON WebSocket or HTTP (one call at a time per
//! connection there). Answers count when they arrive, after durability. It reports the
//! committed calls per second, the latency of committed calls (p50, p99), and the server's
//! CPU per committed call split by thread (read from `/proc` before and after the calls),
//! and then checks that the balances still sum to what was seeded (subscribing to every
//! account and adding them up): a transfer that committed half, or twice, fails the run.
//!
//! With durability `replicated` the server is a one-node deployment (`docs/high-availability.md`)
//! over a 3-node NATS JetStream cluster started for the run on the same machine: each commit
//! batch is acknowledged once a quorum of the engine holds it. The run waits until the node
//! has taken the lease (it starts as a standby) before seeding, and reports the engine's CPU
//! per committed call beside the server's: on one machine, the engine's work is the price of
//! the mode too.

pub mod calls;
pub mod floor;
mod http;
mod socket;
pub mod zipf;

use crate::client::CONNECT_TIMEOUT;
use crate::process::{self, Served, ThreadTime};
use crate::{deployment, latency, Paths};
use anyhow::{bail, Context, Result};
use calls::{Draw, Tally, Window};
use futures_util::future::try_join_all;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Barrier;
use wasmod_abi::encoding::{from_slice, to_vec};
use wasmod_client::socket::{Binary, Json, Received};
use wasmod_nats_cluster::NatsCluster;
use wasmod_protocol::ws::{ClientMessage, ServerMessage, UpdateStatus};
use zipf::{Random, Zipf};

/// What carries the calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Transport {
    /// The WebSocket's binary subprotocol (the SDK's).
    Binary,
    /// The WebSocket's JSON subprotocol.
    Json,
    /// `POST /v1/reducers/transfer`, one call at a time per keep-alive connection.
    Http,
}

impl Transport {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Binary => "binary WebSocket",
            Self::Json => "JSON WebSocket",
            Self::Http => "HTTP",
        }
    }
}

/// One run's parameters.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Accounts seeded.
    pub accounts: u32,
    /// Each account's balance when seeded.
    pub balance: i64,
    /// The Zipf exponent of the accounts drawn.
    pub alpha: f64,
    /// Calling connections.
    pub connections: usize,
    /// Calls each WebSocket connection keeps in flight.
    pub in_flight: usize,
    /// `wasmod serve --durability`.
    pub durability: String,
    /// What carries the calls.
    pub transport: Transport,
    /// How long the calls go on.
    pub run: Duration,
    /// More arguments for `wasmod serve` (flow control settings, say).
    pub serve_arguments: Vec<String>,
}

/// The durability that makes the server a node of a replicated deployment.
pub const REPLICATED: &str = "replicated";

/// How long a new deployment's one node may take to become the primary (a debug build
/// compiles the module first).
const PRIMARY_TIMEOUT: Duration = Duration::from_secs(120);

/// One run's result.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Every caller's answers together.
    pub tally: Tally,
    /// Committed calls per second: commits over the time to the last answer.
    pub per_second: f64,
    /// The median latency of committed calls.
    pub p50: Duration,
    /// Their 99th percentile.
    pub p99: Duration,
    /// The server's CPU time during the calls.
    pub cpu: Cpu,
    /// The engine's CPU time during the calls (its three servers together), with durability
    /// [`REPLICATED`].
    pub engine_cpu: Option<Duration>,
}

/// A process's CPU time over an interval, by thread name.
#[derive(Clone, Debug, Default)]
pub struct Cpu {
    /// The whole process's.
    pub total: Duration,
    /// Per thread name (threads of one name together), in name order. The process's time not
    /// found in a live thread (threads that ended during the interval) is under `(ended)`.
    pub threads: BTreeMap<String, Duration>,
}

impl Cpu {
    /// The CPU time of process `pid` between `before` and now.
    fn since(pid: u32, before: &Sample) -> Result<Self> {
        let after = Sample::take(pid)?;
        let total = after.total.saturating_sub(before.total);
        let mut threads: BTreeMap<String, Duration> = BTreeMap::new();
        for thread in &after.threads {
            let earlier = before
                .threads
                .iter()
                .find(|old| old.id == thread.id && old.name == thread.name)
                .map_or(Duration::ZERO, |old| old.cpu);
            *threads.entry(thread.name.clone()).or_default() += thread.cpu.saturating_sub(earlier);
        }
        let found: Duration = threads.values().sum();
        if total > found {
            threads.insert("(ended)".into(), total - found);
        }
        Ok(Self { total, threads })
    }
}

/// A process's CPU times at one moment.
struct Sample {
    total: Duration,
    threads: Vec<ThreadTime>,
}

impl Sample {
    fn take(pid: u32) -> Result<Self> {
        Ok(Self {
            threads: process::thread_times(pid)?,
            total: process::cpu_time(pid)?,
        })
    }
}

/// Runs the workload of `plan` against a fresh `wasmod serve` of `examples/transfer`.
pub async fn measure(paths: &Paths, plan: &Plan) -> Result<Outcome> {
    let dir = tempfile::tempdir().context("a data directory")?;
    let data = dir.path().join("data");
    std::fs::create_dir(&data).context("a data directory")?;
    let mut arguments = vec![
        "--max-calls-per-identity".to_owned(),
        plan.in_flight.to_string(),
    ];
    let engine = (plan.durability == REPLICATED).then(|| NatsCluster::start(3));
    match &engine {
        Some(engine) => {
            let secret = dir.path().join("identity-secret");
            deployment::write_secret(&secret)?;
            arguments.extend(deployment::node_arguments(engine, "n0", &secret));
        }
        None => arguments.extend(["--durability".to_owned(), plan.durability.clone()]),
    }
    arguments.extend(plan.serve_arguments.iter().cloned());
    let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
    let served =
        process::wasmod_serve(&paths.wasmod, &paths.transfer_module, &data, &arguments).await?;
    let engine_pids: Vec<u32> = match &engine {
        Some(engine) => {
            deployment::wait_for_role(address(&served)?, "primary", PRIMARY_TIMEOUT).await?;
            (0..3).filter_map(|node| engine.pid(node)).collect()
        }
        None => Vec::new(),
    };
    let url = format!("{}/v1/subscribe", served.ws_base);
    seed(&url, plan.accounts, plan.balance).await?;
    let outcome = call(&served, plan, plan.transport, &engine_pids).await?;
    check_balances(&url, plan).await?;
    Ok(outcome)
}

/// The same callers (binary WebSocket) against the answering floor.
pub async fn measure_floor(paths: &Paths, plan: &Plan) -> Result<Outcome> {
    let mut command = std::process::Command::new(&paths.loadgen);
    command.arg("answer-server");
    let served = Served::start(command).await?;
    call(&served, plan, Transport::Binary, &[]).await
}

/// The `host:port` that `served` listens on.
fn address(served: &Served) -> Result<&str> {
    served
        .ws_base
        .strip_prefix("ws://")
        .context("the server's address")
}

/// The CPU time of processes `pids` together so far.
fn cpu_of(pids: &[u32]) -> Result<Duration> {
    pids.iter().map(|&pid| process::cpu_time(pid)).sum()
}

/// Opens the callers, then has them call for the run's length; the server's CPU is read once
/// they are all connected and again when the last answer is in, and so is the CPU of the
/// engine's servers `engine` (none without one).
async fn call(
    served: &Served,
    plan: &Plan,
    transport: Transport,
    engine: &[u32],
) -> Result<Outcome> {
    let url = format!("{}/v1/subscribe", served.ws_base);
    let address = address(served)?.to_owned();
    let zipf = Zipf::new(plan.accounts, plan.alpha);
    let ready = Arc::new(Barrier::new(plan.connections + 1));
    let window = Window {
        run: plan.run,
        in_flight: plan.in_flight,
        ready: ready.clone(),
    };
    let callers = (0..plan.connections).map(|index| {
        let draw = Draw {
            zipf: zipf.clone(),
            random: Random::new(index as u64 + 1),
        };
        let (url, address, window) = (url.clone(), address.clone(), window.clone());
        tokio::spawn(async move {
            match transport {
                Transport::Binary => socket::call::<Binary>(&url, draw, window).await,
                Transport::Json => socket::call::<Json>(&url, draw, window).await,
                Transport::Http => http::call(&address, draw, window).await,
            }
        })
    });
    let callers: Vec<_> = callers.collect();
    if tokio::time::timeout(CONNECT_TIMEOUT, ready.wait())
        .await
        .is_err()
    {
        for caller in callers.into_iter().filter(|caller| caller.is_finished()) {
            caller.await.context("a caller panicked")??;
        }
        bail!("the callers did not all connect within {CONNECT_TIMEOUT:?}");
    }
    let before = Sample::take(served.pid())?;
    let engine_before = cpu_of(engine)?;
    let start = Instant::now();
    let tallies = try_join_all(callers).await.context("a caller panicked")?;
    let elapsed = start.elapsed();
    let cpu = Cpu::since(served.pid(), &before)?;
    let engine_cpu = if engine.is_empty() {
        None
    } else {
        Some(cpu_of(engine)?.saturating_sub(engine_before))
    };
    let mut tally = Tally::default();
    for caller in tallies {
        tally = tally.plus(caller?);
    }
    if let Some(error) = &tally.error {
        bail!("{} calls failed, the first with: {error}", tally.errors);
    }
    if tally.committed == 0 {
        bail!("no call committed: {tally:?}");
    }
    tally.latencies.sort_unstable();
    let quantile = |q: f64| {
        let micros = latency::quantile(&tally.latencies, q).unwrap_or_default();
        Duration::from_micros(u64::from(micros))
    };
    Ok(Outcome {
        per_second: tally.committed as f64 / elapsed.as_secs_f64(),
        p50: quantile(0.5),
        p99: quantile(0.99),
        cpu,
        engine_cpu,
        tally,
    })
}

/// How long a call of `seed` and the check may take (50,000 accounts in one transaction, on a
/// debug server too).
const SEED_TIMEOUT: Duration = Duration::from_secs(120);

/// Accounts opened per call of `seed`: 800 KB of records, under the 1 MiB that a replicated
/// deployment takes in one transaction (every durability seeds alike).
const SEED_CHUNK: u32 = 50_000;

/// Opens accounts `0..accounts` holding `balance` each, [`SEED_CHUNK`] per call of `seed`.
async fn seed(url: &str, accounts: u32, balance: i64) -> Result<()> {
    let mut connection = crate::client::connect(url).await?;
    for (first, request_id) in (0..accounts).step_by(SEED_CHUNK as usize).zip(1..) {
        let count = SEED_CHUNK.min(accounts - first);
        connection
            .send(&ClientMessage::CallReducer {
                request_id,
                name: "seed".into(),
                args: to_vec(&(first, count, balance)),
            })
            .await?;
        let answer = tokio::time::timeout(SEED_TIMEOUT, async {
            loop {
                match connection.next().await? {
                    Received::Message(ServerMessage::TransactionUpdate(update))
                        if update.request_id == Some(request_id) =>
                    {
                        return Ok(update.status);
                    }
                    Received::Message(_) => continue,
                    Received::Closed(closed) => bail!("seeding: the socket closed: {closed}"),
                }
            }
        })
        .await
        .context("seeding took too long")??;
        if answer != UpdateStatus::Committed {
            bail!("seeding accounts {first}..{}: {answer:?}", first + count);
        }
    }
    Ok(())
}

/// Subscribes to every account and checks that there are as many as seeded and that their
/// balances add up to what was seeded.
async fn check_balances(url: &str, plan: &Plan) -> Result<()> {
    let mut connection = crate::client::connect(url).await?;
    connection
        .send(&ClientMessage::Subscribe {
            query_set_id: 1,
            queries: vec!["SELECT * FROM accounts".into()],
            resume_from: None,
        })
        .await?;
    let (mut count, mut sum) = (0u64, 0i128);
    let mut add = |tables: &[wasmod_protocol::ws::TableRows<wasmod_protocol::ws::RowList>]| {
        for row in tables.iter().flat_map(|table| table.rows.iter()) {
            let (_, balance): (u32, i64) = from_slice(row).context("an account's row")?;
            count += 1;
            sum += i128::from(balance);
        }
        anyhow::Ok(())
    };
    tokio::time::timeout(SEED_TIMEOUT, async {
        loop {
            match connection.next().await? {
                Received::Message(ServerMessage::SubscribeRows { tables, .. }) => add(&tables)?,
                Received::Message(ServerMessage::SubscribeApplied { tables, .. }) => {
                    return add(&tables);
                }
                Received::Message(ServerMessage::SubscriptionError { message, .. }) => {
                    bail!("subscribing to the accounts: {message}")
                }
                Received::Message(_) => continue,
                Received::Closed(closed) => bail!("checking: the socket closed: {closed}"),
            }
        }
    })
    .await
    .context("reading the accounts took too long")??;
    let expected = i128::from(plan.accounts) * i128::from(plan.balance);
    if count != u64::from(plan.accounts) || sum != expected {
        bail!(
            "the accounts do not add up: {count} accounts holding {sum} in all, where {} \
             accounts held {expected}",
            plan.accounts
        );
    }
    Ok(())
}

/// The runs of a transfer measurement: every combination of the lists.
#[derive(Clone, Debug)]
pub struct Sizes {
    /// Accounts seeded (each with [`BALANCE`]).
    pub accounts: u32,
    /// Calls each WebSocket connection keeps in flight.
    pub in_flight: usize,
    /// How long each run calls.
    pub run: Duration,
    /// Zipf exponents.
    pub alphas: Vec<f64>,
    /// Connection counts.
    pub connections: Vec<usize>,
    /// Transports.
    pub transports: Vec<Transport>,
    /// `wasmod serve --durability` values.
    pub durabilities: Vec<String>,
    /// More arguments for `wasmod serve`.
    pub serve_arguments: Vec<String>,
}

/// Each account's balance when seeded: 100,000 accounts then hold 10^11 in all.
pub const BALANCE: i64 = 1_000_000;

impl Sizes {
    /// The plan of one run.
    pub fn plan(
        &self,
        connections: usize,
        alpha: f64,
        transport: Transport,
        durability: &str,
    ) -> Plan {
        Plan {
            accounts: self.accounts,
            balance: BALANCE,
            alpha,
            connections,
            in_flight: self.in_flight,
            durability: durability.into(),
            transport,
            run: self.run,
            serve_arguments: self.serve_arguments.clone(),
        }
    }
}
