//! Goal 5 of issue 11's benchmarks: the initial rows of a subscription to a large table,
//! the time from `Subscribe` sent to `SubscribeApplied` decoded (the last byte of the rows
//! received, whether they came in one message or in parts), and
//! the server's peak resident memory (`VmHWM`) while it answers (the peak is reset before
//! the subscription, so that the filling's does not count).
//!
//! The table (the quickstart's `message`) is filled by pipelined `send` calls over many
//! connections, up to each size asked in turn, on one server. At each size the SDK client
//! subscribes too ([`cached`](crate::cached)), and after the last one it applies a stream
//! of updates.

use crate::cached::{self, Applied, Cached};
use crate::caller::{self, Caller};
use crate::client;
use crate::process::Memory;
use crate::sample::{self, TABLE};
use crate::target::Target;
use crate::Paths;
use anyhow::{bail, Result};
use futures_util::future::try_join_all;
use std::time::{Duration, Instant};
use wasmod_client::socket::Received;
use wasmod_protocol::ws::{RowList, ServerMessage, TableRows};

/// Connections that fill the table.
const FILLERS: usize = 64;

/// How long the initial rows may take.
const SUBSCRIBE_TIMEOUT: Duration = Duration::from_secs(300);

/// One size's result.
#[derive(Clone, Debug)]
pub struct Initial {
    /// How long filling the table up to this size took (from the previous size).
    pub fill: Duration,
    /// The server's memory before subscribing.
    pub before: Memory,
    /// The answer: the time to the last byte and the rows, or the server's refusal.
    pub answer: Result<(Duration, u64), String>,
    /// The server's memory after the answer: its peak is the peak since just before the
    /// subscription (the filling's is forgotten).
    pub after: Memory,
    /// The same rows received into the SDK client's cache (when the server answered).
    pub cached: Option<Cached>,
}

/// One run: each size's subscriptions, then the updates one SDK client applied.
#[derive(Clone, Debug)]
pub struct Run {
    /// Per size, in order.
    pub sizes: Vec<Initial>,
    /// Updates applied by one SDK client.
    pub applied: Applied,
}

/// Fills the table to each of `sizes` (ascending) and subscribes to it at each, then has one
/// SDK client apply `updates` commits.
pub async fn measure(paths: &Paths, sizes: &[u64], updates: u64) -> Result<Run> {
    let queue = (FILLERS * crate::caller::IN_FLIGHT * 2).to_string();
    let started = Target::Wasmod.start(paths, &["--queue", &queue]).await?;
    let url = started.url();
    let mut fillers = try_join_all((0..FILLERS).map(|_| Caller::open(&url))).await?;
    let mut filled = 0;
    let mut results = Vec::new();
    for &size in sizes {
        let start = Instant::now();
        let calls = caller::call_all(
            &mut fillers,
            size.saturating_sub(filled),
            start + Duration::from_secs(3600),
        )
        .await?;
        if !calls.all_committed() {
            bail!("filling {TABLE} to {size} rows: {calls:?}");
        }
        filled = size;
        let fill = start.elapsed();
        eprintln!(
            "  filled {TABLE} to {size} rows in {:.1} s",
            fill.as_secs_f64()
        );
        started.served.reset_peak()?;
        let before = started.served.memory()?;
        let answer = subscribe(&url).await?;
        let after = started.served.memory()?;
        let cached = match answer {
            Ok(_) => Some(cached::subscribe(&url, size).await?),
            Err(_) => None,
        };
        results.push(Initial {
            fill,
            before,
            answer,
            after,
            cached,
        });
    }
    let applied = cached::apply(&url, &mut fillers, updates).await?;
    Ok(Run {
        sizes: results,
        applied,
    })
}

/// Subscribes one new client to the whole table: the time to the answer and its rows, or
/// the server's refusal.
async fn subscribe(url: &str) -> Result<Result<(Duration, u64), String>> {
    let mut connection = client::connect(url).await?;
    let start = Instant::now();
    connection.send(&sample::subscribe_to_table()).await?;
    let deadline = tokio::time::Instant::now() + SUBSCRIBE_TIMEOUT;
    let mut rows = 0;
    loop {
        let answer = tokio::time::timeout_at(deadline, connection.next())
            .await
            .map_err(|_| {
                anyhow::anyhow!("no answer to Subscribe within {SUBSCRIBE_TIMEOUT:?}")
            })??;
        let message = match answer {
            Received::Message(message) => message,
            Received::Closed(closed) => bail!("closed instead of subscribed: {closed}"),
        };
        let count = |tables: &[TableRows<RowList>]| -> u64 {
            tables.iter().map(|table| table.rows.len() as u64).sum()
        };
        match message {
            ServerMessage::SubscribeRows { tables, .. } => rows += count(&tables),
            ServerMessage::SubscribeApplied { tables, .. } => {
                return Ok(Ok((start.elapsed(), rows + count(&tables))));
            }
            ServerMessage::SubscriptionError { message, .. } => return Ok(Err(message)),
            other => bail!("the answer to Subscribe was {other:?}"),
        }
    }
}
