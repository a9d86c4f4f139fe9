//! Goal 3 of issue 11's benchmarks: committed reducer calls per second over WebSocket, with
//! durability `group`, over 1 and over many connections, each keeping [`IN_FLIGHT`] calls
//! queued (the server's limit) for a fixed time.
//!
//! The server's module queue (`--queue`) is sized for every call in flight, and each identity
//! (one per connection) may have as many calls in progress as a connection
//! (`--max-calls-per-identity`), so that `busy` answers, if any, come from the per-connection
//! limit and are reported as such.

use crate::caller::{Caller, Calls, IN_FLIGHT};
use crate::pace::Pace;
use crate::target::Target;
use crate::Paths;
use anyhow::{bail, Result};
use futures_util::future::try_join_all;
use std::time::{Duration, Instant};

/// One run's result.
#[derive(Clone, Copy, Debug)]
pub struct Throughput {
    /// The answers.
    pub calls: Calls,
    /// Committed calls per second: commits over the time to the last answer.
    pub per_second: f64,
}

/// Opens `connections` callers on a fresh server and keeps them calling for `run`. Fails if
/// nothing committed or a call failed (busy answers are counted, not failures).
pub async fn measure(paths: &Paths, connections: usize, run: Duration) -> Result<Throughput> {
    let queue = (connections * IN_FLIGHT * 2).to_string();
    let in_flight = IN_FLIGHT.to_string();
    let arguments = [
        "--durability",
        "group",
        "--queue",
        &queue,
        "--max-calls-per-identity",
        &in_flight,
    ];
    let started = Target::Wasmod.start(paths, &arguments).await?;
    let url = started.url();
    let mut callers = try_join_all((0..connections).map(|_| Caller::open(&url))).await?;
    let start = Instant::now();
    let stop = start + run;
    let runs = callers
        .iter_mut()
        .map(|caller| caller.call(Pace::new(f64::MAX, u64::MAX), stop));
    let calls = try_join_all(runs)
        .await?
        .into_iter()
        .fold(Calls::default(), Calls::plus);
    let elapsed = start.elapsed().as_secs_f64();
    drop(started);
    if calls.committed == 0 || calls.failed > 0 {
        bail!("{connections} connections: {calls:?}");
    }
    Ok(Throughput {
        calls,
        per_second: calls.committed as f64 / elapsed,
    })
}
