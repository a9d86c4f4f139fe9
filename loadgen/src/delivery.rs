//! Goals 1 and 2 of issue 11's benchmarks: deliveries per second over loopback at
//! saturation, and commit-to-receipt latency at half of it, for `wasmod serve` and for the
//! bare broadcast floors (one per WebSocket library), measured side by side.
//!
//! One *target* is a server process with `clients` subscribed sockets and a publisher: for
//! wasmod, one caller committing the quickstart's `send` at a steady rate (each commit
//! inserts one row, so each delivery is one `TransactionUpdate` of one row); for a floor, the
//! floor's own paced broadcast of the same bytes. The search raises the rate by
//! [`Plan::factor`] per step until a step does not keep up (not every update arrived within
//! 10 % of its nominal time, or a client was closed); the saturation is the highest delivery
//! rate a step achieved. The latency is then measured at half of it, on a fresh server and
//! fresh clients (the search may have closed some).

use crate::audience::Audience;
use crate::caller::Caller;
use crate::pace::{Pace, TICK};
use crate::target::{Started, Target};
use crate::Paths;
use anyhow::{bail, Result};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How long the last deliveries of a step may lag its last publication.
const DRAIN: Duration = Duration::from_secs(5);

/// A step keeps up when it achieves this fraction of the offered delivery rate.
const KEEPS_UP: f64 = 0.9;

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Subscribed clients.
    pub clients: usize,
    /// The first step's rate, in commits (broadcasts) per second.
    pub start_rate: f64,
    /// Each step's rate over the one before.
    pub factor: f64,
    /// The most steps of the search.
    pub max_steps: usize,
    /// How long each step publishes.
    pub step: Duration,
    /// How long the latency run publishes.
    pub latency_run: Duration,
}

/// One step of a search.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    /// Commits (broadcasts) per second asked.
    pub rate: f64,
    /// Deliveries per second offered: the rate times the clients.
    pub offered: f64,
    /// Deliveries per second achieved: received over the time from the first publication
    /// to the last receipt.
    pub achieved: f64,
    /// Deliveries expected: the publications times the clients still connected.
    pub expected: u64,
    /// Deliveries received.
    pub received: u64,
    /// Clients lost during the step.
    pub lost: u64,
    /// Whether the step kept up.
    pub kept_up: bool,
    /// The step's median commit-to-receipt latency.
    pub p50: Option<Duration>,
    /// Its 99th percentile.
    pub p99: Option<Duration>,
}

/// One target's search and latency run.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The highest delivery rate a step achieved.
    pub saturation: f64,
    /// The latency run, at half the saturation.
    pub half: Step,
    /// Why the first client was lost, if one was.
    pub first_loss: Option<String>,
}

/// A server with its clients and its publisher.
struct Session {
    started: Started,
    audience: Audience,
    publisher: Publisher,
}

enum Publisher {
    Caller(Caller),
    Floor,
}

impl Session {
    async fn open(paths: &Paths, target: Target, clients: usize) -> Result<Self> {
        let started = target.start(paths, &["--durability", "group"]).await?;
        let url = started.url();
        let publisher = match target {
            Target::Wasmod => Publisher::Caller(Caller::open(&url).await?),
            Target::Floor(_) => Publisher::Floor,
        };
        let audience = Audience::join(&url, clients, target.subscribe()).await?;
        Ok(Self {
            started,
            audience,
            publisher,
        })
    }

    /// Publishes `count` updates at `rate` per second and waits for them to be delivered.
    async fn step(&mut self, rate: f64, count: u64) -> Result<Step> {
        let Self {
            started,
            audience,
            publisher,
        } = self;
        let publish = async {
            match publisher {
                Publisher::Caller(caller) => commit(caller, rate, count).await,
                Publisher::Floor => {
                    started.served.tell(&format!("broadcast {rate} {count}"))?;
                    let timeout = Duration::from_secs_f64(count as f64 / rate) + DRAIN;
                    let answer = started.served.next_line(timeout).await?;
                    if answer != format!("done {count}") {
                        bail!("the floor answered {answer:?} to a broadcast of {count}");
                    }
                    Ok(())
                }
            }
        };
        step(audience, rate, count, publish).await
    }
}

/// Commits `count` of the quickstart's `send` through `caller` at `rate` per second; fails
/// unless every one committed.
pub async fn commit(caller: &mut Caller, rate: f64, count: u64) -> Result<()> {
    let calls = caller
        .call(
            Pace::new(rate, count),
            Instant::now() + Duration::from_secs(3600),
        )
        .await?;
    if !calls.all_committed() {
        bail!("the writer's calls did not all commit: {calls:?}");
    }
    Ok(())
}

/// Runs `publish` (which publishes `count` updates at `rate` per second) and waits for every
/// client of `audience` to have them, or for [`DRAIN`] after the last: the step's deliveries,
/// rates and latency.
pub async fn step(
    audience: &Audience,
    rate: f64,
    count: u64,
    publish: impl std::future::Future<Output = Result<()>>,
) -> Result<Step> {
    let tally = audience.tally.clone();
    let clients = audience.len() as u64;
    let before = tally.deliveries.load(Ordering::Relaxed);
    let lost_before = tally.lost.load(Ordering::Relaxed);
    tally.latency.clear();
    let start = Instant::now();
    publish.await?;
    let expected = count * clients.saturating_sub(lost_before);
    let drained_by = Instant::now() + DRAIN;
    let received = loop {
        let received = tally.deliveries.load(Ordering::Relaxed) - before;
        if received >= expected || Instant::now() > drained_by {
            break received;
        }
        tokio::time::sleep(TICK).await;
    };
    let elapsed = start.elapsed().as_secs_f64();
    let lost = tally.lost.load(Ordering::Relaxed) - lost_before;
    let offered = rate * clients as f64;
    let achieved = received as f64 / elapsed;
    Ok(Step {
        rate,
        offered,
        achieved,
        expected,
        received,
        lost,
        kept_up: received >= expected && lost == 0 && achieved >= KEEPS_UP * offered,
        p50: tally.latency.quantile(0.5),
        p99: tally.latency.quantile(0.99),
    })
}

/// Runs the search and the latency run on `target`. Fails if the first step does not
/// deliver every update (a broken server, not a slow one: the first rate is low).
pub async fn measure(paths: &Paths, target: Target, plan: &Plan) -> Result<Outcome> {
    let mut session = Session::open(paths, target, plan.clients).await?;
    let mut steps = Vec::new();
    let mut rate = plan.start_rate;
    for index in 0..plan.max_steps {
        let count = (rate * plan.step.as_secs_f64()).ceil() as u64;
        let step = session.step(rate, count).await?;
        eprintln!("  {}: {}", target.name(), describe(&step));
        if index == 0 && (step.received != step.expected || step.lost > 0) {
            bail!(
                "{}: at {rate}/s only {} of {} deliveries arrived ({} clients lost: {})",
                target.name(),
                step.received,
                step.expected,
                step.lost,
                session.audience.tally.first_loss().unwrap_or_default()
            );
        }
        let rows = session.audience.tally.rows.load(Ordering::Relaxed);
        let deliveries = session.audience.tally.deliveries.load(Ordering::Relaxed);
        if rows != deliveries {
            bail!(
                "{}: {deliveries} updates carried {rows} rows (one each expected)",
                target.name()
            );
        }
        let unexpected = session.audience.tally.unexpected.load(Ordering::Relaxed);
        if unexpected > 0 {
            bail!("{}: {unexpected} unexpected messages", target.name());
        }
        steps.push(step);
        if !step.kept_up {
            break;
        }
        rate *= plan.factor;
    }
    let first_loss = session.audience.tally.first_loss();
    drop(session);
    let saturation = steps.iter().map(|step| step.achieved).fold(0.0, f64::max);
    let mut session = Session::open(paths, target, plan.clients).await?;
    let half_rate = (saturation / 2.0 / plan.clients as f64).max(1.0);
    let count = (half_rate * plan.latency_run.as_secs_f64()).ceil() as u64;
    let half = session.step(half_rate, count).await?;
    eprintln!("  {} at half: {}", target.name(), describe(&half));
    Ok(Outcome {
        saturation,
        half,
        first_loss,
    })
}

/// A step in one line.
pub fn describe(step: &Step) -> String {
    format!(
        "{:.0} commits/s: offered {:.0}/s, achieved {:.0} deliveries/s, {}/{} received, {} lost, p50 {}, p99 {}{}",
        step.rate,
        step.offered,
        step.achieved,
        step.received,
        step.expected,
        step.lost,
        millis(step.p50),
        millis(step.p99),
        if step.kept_up { "" } else { " (did not keep up)" }
    )
}

/// A latency in milliseconds, or `-`.
pub fn millis(latency: Option<Duration>) -> String {
    latency.map_or("-".into(), |latency| {
        format!("{:.2} ms", latency.as_secs_f64() * 1e3)
    })
}
