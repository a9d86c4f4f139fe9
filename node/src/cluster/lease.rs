//! The lease: the last message on one subject of the deployment's lease stream, whose payload
//! names the node that holds it. The stream keeps one message a subject and drops messages
//! older than the lease's length, so the lease disappears unless its holder writes it again in
//! time. Each write names the sequence of the subject's last message
//! (`Nats-Expected-Last-Subject-Sequence`), which the engine checks: exactly one node takes a
//! lease that is free (none on the subject, or a release), and only the holder of the last
//! write can renew it. (A key-value bucket is the same thing with a client API; the client
//! cannot make one on JetStream's 2.9 servers, whose account information it does not read, so
//! the stream is used as is.)
//!
//! The holder counts its lease from the moment it *sent* the write that the engine took, which
//! is before the engine stored it: its own deadline comes before the message's expiry, so a
//! node that believes it holds the lease does (clocks running at the same rate on one machine,
//! or close to it across machines; a tenth of the lease is kept as a margin).

use super::engine::Engine;
use super::status::PrimaryNode;
use async_nats::jetstream::context::PublishErrorKind;
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::stream::{LastRawMessageErrorKind, Stream};
use bytes::Bytes;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A lease this node holds: its term and until when it holds it. Cheap to clone.
#[derive(Clone, Debug)]
pub(super) struct Held {
    /// The sequence of the write that took the lease: grows with every new holder, so it
    /// numbers the terms.
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
    /// Another node wrote the lease since (or it expired and was taken again): it is lost
    /// for good.
    Lost,
    /// The engine did not answer: the lease holds until its deadline, and a later renewal may
    /// still extend it.
    Failed(String),
}

/// What the lease's subject holds now.
enum Last {
    /// Nothing, or a release written at this sequence: the lease is free.
    Free(u64),
    /// A holder, written at this sequence.
    Held(PrimaryNode),
}

/// The lease of one node of a deployment.
#[derive(Clone, Debug)]
pub(super) struct Lease {
    jetstream: async_nats::jetstream::Context,
    stream: Stream,
    subject: String,
    holder: PrimaryNode,
    length: Duration,
}

impl Lease {
    /// The lease of `engine`'s deployment, lasting `length`, for the node `holder` names.
    pub fn new(engine: &Engine, holder: PrimaryNode, length: Duration) -> Self {
        Self {
            jetstream: engine.jetstream.clone(),
            stream: engine.leases.clone(),
            subject: engine.lease_subject("primary"),
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
        Ok(match self.last().await? {
            Last::Free(_) => None,
            Last::Held(holder) => Some(holder),
        })
    }

    /// Takes the lease if nobody holds it: `None` if another node does (or took it first).
    pub async fn try_take(&self) -> Result<Option<Held>, String> {
        let Last::Free(after) = self.last().await? else {
            return Ok(None);
        };
        let sent = Instant::now();
        match self.write(self.value(), after).await {
            Ok(term) => Ok(Some(Held {
                term,
                revision: Arc::new(AtomicU64::new(term)),
                until: Arc::new(Mutex::new(self.deadline(sent))),
            })),
            Err(Renewal::Lost) => Ok(None),
            Err(Renewal::Failed(reason)) => Err(format!("taking the lease: {reason}")),
        }
    }

    /// Writes the lease again, extending it to a lease from now if the engine takes it.
    pub async fn renew(&self, held: &Held) -> Result<(), Renewal> {
        let sent = Instant::now();
        let revision = self
            .write(self.value(), held.revision.load(Ordering::Acquire))
            .await?;
        held.revision.store(revision, Ordering::Release);
        *held.until.lock() = self.deadline(sent);
        Ok(())
    }

    /// Gives the lease up at once (a primary that stops), so that a standby need not wait for
    /// it to expire; only if this node still holds it.
    pub async fn release(&self, held: &Held) {
        *held.until.lock() = Instant::now();
        let revision = held.revision.load(Ordering::Acquire);
        if let Err(error) = self.write(Bytes::new(), revision).await {
            tracing::debug!("the lease was not released ({error:?}); it expires on its own");
        }
    }

    /// What the lease's subject holds now.
    async fn last(&self) -> Result<Last, String> {
        match self
            .stream
            .get_last_raw_message_by_subject(&self.subject)
            .await
        {
            Ok(message) if message.payload.is_empty() => Ok(Last::Free(message.sequence)),
            Ok(message) => Ok(Last::Held(
                serde_json::from_slice(&message.payload).unwrap_or_default(),
            )),
            Err(error) if error.kind() == LastRawMessageErrorKind::NoMessageFound => {
                Ok(Last::Free(0))
            }
            Err(error) => Err(format!("reading the lease: {error}")),
        }
    }

    /// Writes `value` on the lease's subject if its last message is still the one at
    /// `after` (0: none); the new message's sequence.
    async fn write(&self, value: Bytes, after: u64) -> Result<u64, Renewal> {
        let message = PublishMessage::build().payload(value).header(
            "Nats-Expected-Last-Subject-Sequence",
            after.to_string().as_str(),
        );
        let answer = match self
            .jetstream
            .send_publish(self.subject.clone(), message)
            .await
        {
            Ok(pending) => pending.await,
            Err(error) => Err(error),
        };
        match answer {
            Ok(ack) => Ok(ack.sequence),
            Err(error) if error.kind() == PublishErrorKind::WrongLastSequence => Err(Renewal::Lost),
            Err(error) => Err(Renewal::Failed(error.to_string())),
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
