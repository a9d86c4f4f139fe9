//! The lease: one key of the deployment's bucket, `primary`, whose value names the node that
//! holds it. The bucket's messages expire after the lease's length, so the key disappears
//! unless its holder writes it again in time; the engine lets exactly one node create a key
//! that is not there, and lets only the holder of its last revision update it.
//!
//! The holder counts its lease from the moment it *sent* the write that the engine took, which
//! is before the engine stored it: its own deadline comes before the key's expiry, so a node
//! that believes it holds the lease does (clocks running at the same rate on one machine, or
//! close to it across machines; a tenth of the lease is kept as a margin).

use super::engine::Engine;
use super::status::PrimaryNode;
use async_nats::jetstream::kv;
use bytes::Bytes;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The key of the lease in the deployment's bucket.
const KEY: &str = "primary";

/// A lease this node holds: its term and until when it holds it. Cheap to clone.
#[derive(Clone, Debug)]
pub(super) struct Held {
    /// The revision the key was created with: grows with every new holder, so it numbers the
    /// terms.
    pub term: u64,
    revision: Arc<AtomicU64>,
    until: Arc<Mutex<Instant>>,
}

impl Held {
    /// Whether the lease still holds now, by this node's own count.
    pub fn holds(&self) -> bool {
        Instant::now() < *self.until.lock()
    }
}

/// Why a renewal did not extend the lease.
#[derive(Debug)]
pub(super) enum Renewal {
    /// Another node holds the key now (or it expired and was created again): the lease is
    /// lost for good.
    Lost,
    /// The engine did not answer: the lease holds until its deadline, and a later renewal may
    /// still extend it.
    Failed(String),
}

/// The lease of one node of a deployment.
#[derive(Clone, Debug)]
pub(super) struct Lease {
    bucket: kv::Store,
    holder: PrimaryNode,
    length: Duration,
}

impl Lease {
    /// The lease of `engine`'s deployment, lasting `length`, for the node `holder` names.
    pub fn new(engine: &Engine, holder: PrimaryNode, length: Duration) -> Self {
        Self {
            bucket: engine.bucket.clone(),
            holder,
            length,
        }
    }

    /// How often the holder renews it: four times a lease.
    pub fn renew_every(&self) -> Duration {
        self.length / 4
    }

    /// Who holds the lease now, if anyone does; `Err` if the engine did not say.
    pub async fn holder(&self) -> Result<Option<PrimaryNode>, String> {
        let entry = self
            .bucket
            .entry(KEY)
            .await
            .map_err(|error| format!("reading the lease: {error}"))?;
        Ok(entry
            .filter(|entry| entry.operation == kv::Operation::Put)
            .map(|entry| serde_json::from_slice(&entry.value).unwrap_or_default()))
    }

    /// Takes the lease if nobody holds it: `None` if another node does (or took it first).
    pub async fn try_take(&self) -> Result<Option<Held>, String> {
        let sent = Instant::now();
        match self.bucket.create(KEY, self.value()).await {
            Ok(revision) => Ok(Some(Held {
                term: revision,
                revision: Arc::new(AtomicU64::new(revision)),
                until: Arc::new(Mutex::new(self.deadline(sent))),
            })),
            Err(error) if error.kind() == kv::CreateErrorKind::AlreadyExists => Ok(None),
            Err(error) => Err(format!("taking the lease: {error}")),
        }
    }

    /// Writes the lease again, extending it to a lease from now if the engine takes it.
    pub async fn renew(&self, held: &Held) -> Result<(), Renewal> {
        let sent = Instant::now();
        let revision = held.revision.load(Ordering::Acquire);
        match self.bucket.update(KEY, self.value(), revision).await {
            Ok(revision) => {
                held.revision.store(revision, Ordering::Release);
                *held.until.lock() = self.deadline(sent);
                Ok(())
            }
            Err(error) if error.kind() == kv::UpdateErrorKind::WrongLastRevision => {
                Err(Renewal::Lost)
            }
            Err(error) => Err(Renewal::Failed(error.to_string())),
        }
    }

    /// Gives the lease up at once (a primary that stops), so that a standby need not wait for
    /// it to expire; only if this node still holds it.
    pub async fn release(&self, held: &Held) {
        let revision = held.revision.load(Ordering::Acquire);
        *held.until.lock() = Instant::now();
        if let Err(error) = self
            .bucket
            .delete_expect_revision(KEY, Some(revision))
            .await
        {
            tracing::debug!("the lease was not released ({error}); it expires on its own");
        }
    }

    /// The lease's value: who holds it.
    fn value(&self) -> Bytes {
        serde_json::to_vec(&self.holder)
            .map(Bytes::from)
            .unwrap_or_default()
    }

    /// Until when a write sent at `sent` holds the lease: a lease less a tenth.
    fn deadline(&self, sent: Instant) -> Instant {
        sent + self.length - self.length / 10
    }
}
