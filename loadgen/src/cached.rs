//! Issue 12's end-to-end client figures, with the SDK itself (`wasmod-client`, through the
//! quickstart's generated bindings) rather than the load generator's bare protocol clients:
//!
//! - the initial rows of a subscription to the whole table received **into the client's
//!   cache**: the time from subscribing to the subscription applied (every row decoded,
//!   stored and counted), and how much this process's peak resident memory grew meanwhile
//!   (the peak is reset first);
//! - **updates a single client applies per second**: one subscribed client counts the rows its
//!   `on_insert` callback sees while many connections commit `send` calls as fast as the
//!   server takes them; both rates are reported, since the client cannot apply more commits
//!   than the server makes.

use crate::caller::{self, Caller};
use crate::process::Memory;
use crate::sample::TABLE;
use anyhow::{bail, Context, Result};
use quickstart_client::bindings::DbConnection;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the client may take to apply its initial rows, or to see the updates.
const TIMEOUT: Duration = Duration::from_secs(300);

/// One initial subscription through the SDK.
#[derive(Clone, Copy, Debug)]
pub struct Cached {
    /// Subscribing to the subscription applied with every row in the cache.
    pub took: Duration,
    /// How much this process's peak resident memory grew meanwhile.
    pub peak_growth: u64,
}

/// Updates applied by one client.
#[derive(Clone, Copy, Debug)]
pub struct Applied {
    /// Rows the client's `on_insert` saw per second, from the first call to the last row.
    pub client_rate: f64,
    /// Commits per second the server made meanwhile (the calls' own rate).
    pub server_rate: f64,
}

/// Subscribes a new SDK client to the whole table of `rows` rows at `url` and waits until
/// its cache holds them.
pub async fn subscribe(url: &str, rows: u64) -> Result<Cached> {
    reset_own_peak()?;
    let before = Memory::of(std::process::id())?;
    let connection = connect(url).await?;
    let start = Instant::now();
    subscribe_to_table(&connection).await?;
    let took = start.elapsed();
    let after = Memory::of(std::process::id())?;
    let held = connection.db().message().count() as u64;
    connection.client().disconnect().await;
    if held != rows {
        bail!("the SDK client's cache holds {held} of {rows} rows");
    }
    Ok(Cached {
        took,
        peak_growth: after.peak.saturating_sub(before.resident),
    })
}

/// Sends `count` calls over `callers` as fast as the server takes them while one SDK client,
/// subscribed to the table, counts the rows inserted.
pub async fn apply(url: &str, callers: &mut [Caller], count: u64) -> Result<Applied> {
    let connection = connect(url).await?;
    let seen = Arc::new(AtomicU64::new(0));
    let counter = seen.clone();
    connection.db().message().on_insert(move |_| {
        counter.fetch_add(1, Ordering::Relaxed);
    });
    subscribe_to_table(&connection).await?;
    let initial = seen.load(Ordering::Relaxed);
    let start = Instant::now();
    let calls = caller::call_all(callers, count, start + TIMEOUT).await?;
    let committed_in = start.elapsed();
    if !calls.all_committed() {
        bail!("calls while the SDK client applied them: {calls:?}");
    }
    let deadline = start + TIMEOUT;
    while seen.load(Ordering::Relaxed) - initial < count {
        if Instant::now() > deadline {
            bail!(
                "the SDK client saw {} of {count} inserts within {TIMEOUT:?}",
                seen.load(Ordering::Relaxed) - initial
            );
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let applied_in = start.elapsed();
    connection.client().disconnect().await;
    Ok(Applied {
        client_rate: count as f64 / applied_in.as_secs_f64(),
        server_rate: count as f64 / committed_in.as_secs_f64(),
    })
}

/// Subscribes `connection` to the whole table and waits until its rows are in the cache.
async fn subscribe_to_table(connection: &DbConnection) -> Result<()> {
    let subscription = connection
        .client()
        .subscription()
        .subscribe([format!("SELECT * FROM {TABLE}")]);
    tokio::time::timeout(TIMEOUT, subscription.applied())
        .await
        .with_context(|| format!("the SDK client's subscription within {TIMEOUT:?}"))??;
    Ok(())
}

/// The quickstart's typed connection, not reconnecting (a lost connection fails the run).
async fn connect(url: &str) -> Result<DbConnection> {
    let client = DbConnection::builder(url)
        .reconnect(None)
        .connect()
        .await
        .context("connecting the SDK client")?;
    Ok(DbConnection::new(client))
}

/// Resets this process's peak resident memory (`VmHWM`) to what is resident now (Linux's
/// `clear_refs`, value 5).
fn reset_own_peak() -> Result<()> {
    std::fs::write("/proc/self/clear_refs", "5").context("writing /proc/self/clear_refs")
}
