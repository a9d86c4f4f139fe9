//! Goal 4 of issue 11's benchmarks: the server's resident memory with many idle subscribed
//! connections (`VmRSS` and `VmHWM` of the `wasmod serve` process, before and after), and
//! the floors' with as many connections, to tell the WebSocket library's share from wasmod's.
//!
//! Every connection is a file descriptor in the load generator and one in the server (which
//! inherits the load generator's limit), and a loopback ephemeral port: the soft limit is
//! raised as far as the hard limit allows, and a hard limit too low for the run is reported
//! before anything starts.

use crate::audience::Audience;
use crate::process::{raise_open_files, Memory};
use crate::target::Target;
use crate::Paths;
use anyhow::{bail, Result};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Descriptors beyond the connections: the runtime, the log, the module, the listener.
const SPARE_DESCRIPTORS: u64 = 512;

/// How long the connections stay idle before the memory is read again.
const SETTLE: Duration = Duration::from_secs(2);

/// One run's result.
#[derive(Clone, Copy, Debug)]
pub struct IdleMemory {
    /// Connections held.
    pub connections: usize,
    /// The server's memory after it started.
    pub before: Memory,
    /// The server's memory with every connection subscribed and idle.
    pub after: Memory,
}

impl IdleMemory {
    /// What each connection added to the server's resident memory, in bytes.
    pub fn per_connection(&self) -> f64 {
        self.after.resident.saturating_sub(self.before.resident) as f64 / self.connections as f64
    }
}

/// Connects `connections` subscribed clients to a fresh `target` and reads its memory.
pub async fn measure(paths: &Paths, target: Target, connections: usize) -> Result<IdleMemory> {
    let needed = connections as u64 + SPARE_DESCRIPTORS;
    let limit = raise_open_files(needed)?;
    if limit < needed {
        bail!(
            "{connections} connections need {needed} open files per process, and the hard \
             limit is {limit}: raise it (`ulimit -Hn`, or /etc/security/limits.conf) or ask for \
             fewer connections"
        );
    }
    let started = target.start(paths, &[]).await?;
    let before = started.served.memory()?;
    let audience = Audience::join(&started.url(), connections, target.subscribe()).await?;
    tokio::time::sleep(SETTLE).await;
    let after = started.served.memory()?;
    let lost = audience.tally.lost.load(Ordering::Relaxed);
    if lost > 0 {
        bail!(
            "{lost} of {connections} idle connections were lost: {}",
            audience.tally.first_loss().unwrap_or_default()
        );
    }
    Ok(IdleMemory {
        connections,
        before,
        after,
    })
}
