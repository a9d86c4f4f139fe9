//! The replicated log: the stream's messages, and the appender that is a primary's
//! [`Replica`].
//!
//! A message holds the records of consecutive transactions, framed as the local commit logs
//! hold them (`durability::decode_records` reads them back), or none for a term's marker.
//! Its headers say which: [`FIRST`] and [`NEXT`] (the offsets `first..next` it holds) and
//! [`TERM`] (the term of the primary that appended it). Offsets grow with the stream's
//! sequences, so the message a standby needs next is found by bisection ([`find_start`]).
//!
//! Every append names the sequence of the stream's last message as the appender knows it
//! (`Nats-Expected-Last-Sequence`): the engine refuses it if another message came in between,
//! which can only be a later term's marker. That refusal is how a deposed primary learns it is
//! deposed, before it acknowledges anything. An append whose answer did not come is sent again
//! with the same message id (`Nats-Msg-Id`, the term and first offset), which the engine
//! recognises within its duplicate window instead of storing it twice.

use super::engine::Engine;
use super::lease::Held;
use async_nats::jetstream::context::PublishErrorKind;
use async_nats::jetstream::message::PublishMessage;
use async_nats::HeaderMap;
use bytes::Bytes;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use wasmod_host::datastore::durability::Replica;

/// The header of the first offset a message holds.
pub(super) const FIRST: &str = "Wasmod-First";
/// The header of the offset after the last one a message holds.
pub(super) const NEXT: &str = "Wasmod-Next";
/// The header of the term of the primary that appended a message.
pub(super) const TERM: &str = "Wasmod-Term";

/// How long to wait before sending an append again after no answer.
const RETRY: Duration = Duration::from_millis(100);

/// What the headers of one message say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Span {
    /// The first offset it holds.
    pub first: u64,
    /// The offset after its last.
    pub next: u64,
    /// The term that appended it.
    pub term: u64,
}

impl Span {
    /// The span that `headers` give, or what is missing.
    pub fn of(headers: Option<&HeaderMap>) -> Result<Self, String> {
        let number = |name: &str| {
            headers
                .and_then(|headers| headers.get(name))
                .and_then(|value| value.as_str().parse::<u64>().ok())
                .ok_or_else(|| format!("a message of the replicated log has no `{name}` header"))
        };
        Ok(Self {
            first: number(FIRST)?,
            next: number(NEXT)?,
            term: number(TERM)?,
        })
    }
}

/// Why an append was not taken.
#[derive(Debug)]
pub(super) enum Refused {
    /// Another message came first: a later term began, and this appender is deposed.
    Fenced,
    /// The lease ran out before the engine answered: whether it holds the message is unknown.
    LeaseLapsed,
    /// The engine refused the message for another reason.
    Other(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Fenced => f.write_str(
                "another node became the primary (the replicated log has a later term): this \
                 one is deposed, and none of these commits happened",
            ),
            Self::LeaseLapsed => f.write_str(
                "the lease ran out before the engine held these commits: they may still have \
                 happened, on the next primary",
            ),
            Self::Other(reason) => f.write_str(reason),
        }
    }
}

/// Appends to the replicated log for the primary of one term.
#[derive(Debug)]
pub(super) struct Appender {
    engine: Engine,
    lease: Held,
    /// The sequence of the stream's last message, as this appender knows it.
    last: AtomicU64,
    runtime: tokio::runtime::Handle,
}

impl Appender {
    /// An appender for the holder of `lease`, the stream's last message being `last`.
    pub fn new(engine: Engine, lease: Held, last: u64) -> Self {
        Self {
            engine,
            lease,
            last: AtomicU64::new(last),
            runtime: tokio::runtime::Handle::current(),
        }
    }

    /// Appends the term's marker, which holds no commit and starts at `next`: from then on the
    /// primary before is fenced. Returns its sequence.
    pub async fn mark(&self, next: u64) -> Result<u64, Refused> {
        self.append(next, next, Bytes::new()).await
    }

    /// Appends the records of the transactions `first..next`, as one message; returns its
    /// sequence once the engine holds it. Sent again, under the same id, while the engine
    /// does not answer and the lease holds.
    pub async fn append(&self, first: u64, next: u64, records: Bytes) -> Result<u64, Refused> {
        let term = self.lease.term;
        loop {
            if !self.lease.holds() {
                return Err(Refused::LeaseLapsed);
            }
            let last = self.last.load(Ordering::Acquire);
            let message = PublishMessage::build()
                .payload(records.clone())
                .expected_last_sequence(last)
                .message_id(format!("{term}-{first}-{next}"))
                .header(FIRST, first.to_string().as_str())
                .header(NEXT, next.to_string().as_str())
                .header(TERM, term.to_string().as_str());
            let answer = match self
                .engine
                .jetstream
                .send_publish(self.engine.subject.clone(), message)
                .await
            {
                Ok(pending) => pending.await,
                Err(error) => Err(error),
            };
            match answer {
                // An answer that came after the lease ran out acknowledges nothing: the next
                // primary may have begun (its marker after this message, which it applies).
                Ok(_) if !self.lease.holds() => return Err(Refused::LeaseLapsed),
                Ok(ack) => {
                    self.last.store(ack.sequence, Ordering::Release);
                    return Ok(ack.sequence);
                }
                Err(error) if error.kind() == PublishErrorKind::WrongLastSequence => {
                    // Either a later term's marker, or this very message, stored by an attempt
                    // whose answer was lost.
                    return match self.stored_last(term, first, next).await {
                        Some(sequence) => {
                            self.last.store(sequence, Ordering::Release);
                            Ok(sequence)
                        }
                        None => Err(Refused::Fenced),
                    };
                }
                Err(error) if error.kind() == PublishErrorKind::MaxPayloadExceeded => {
                    return Err(Refused::Other(format!(
                        "the engine refused a batch of {} bytes: {error}",
                        records.len()
                    )))
                }
                Err(error) => {
                    tracing::debug!(
                        first,
                        next,
                        "an append got no answer ({error}): sending it again"
                    );
                    tokio::time::sleep(RETRY).await;
                }
            }
        }
    }

    /// The sequence of the stream's last message if it is this term's `first..next`.
    async fn stored_last(&self, term: u64, first: u64, next: u64) -> Option<u64> {
        let last = self.engine.last_sequence().await.ok()?;
        let message = self.engine.stream.get_raw_message(last).await.ok()?;
        let span = Span::of(Some(&message.headers)).ok()?;
        (span == Span { first, next, term }).then_some(last)
    }
}

impl Replica for Appender {
    /// Appends the batch in messages the engine takes (split between records), one after the
    /// other, from the flusher's thread.
    fn hold(&self, first: u64, next: u64, records: &[u8]) -> Result<(), String> {
        let limit = self.engine.max_payload.saturating_sub(1024).max(1);
        for part in wasmod_host::datastore::durability::split_records(records, limit, first, next)?
        {
            let bytes = Bytes::copy_from_slice(part.records);
            self.runtime
                .block_on(self.append(part.first, part.next, bytes))
                .map_err(|refused| refused.to_string())?;
        }
        Ok(())
    }
}

/// The sequence of the first message of `engine`'s stream a node that holds every commit below
/// `next` needs (one past the stream's end if it needs none), found by bisection on the
/// messages' offsets. `Err` if the stream no longer holds commit `next`.
pub(super) async fn find_start(engine: &Engine, next: u64) -> Result<u64, String> {
    let info = engine
        .stream
        .get_info()
        .await
        .map_err(|error| format!("reading the stream: {error}"))?;
    let (mut low, mut high) = (
        info.state.first_sequence.max(1),
        info.state.last_sequence + 1,
    );
    if low >= high {
        return Ok(high.max(1));
    }
    let first = span_at(engine, low).await?;
    if first.first > next {
        return Err(format!(
            "the replicated log starts at commit {}, after the {next} this node needs next: \
             start it with an empty data directory",
            first.first
        ));
    }
    // The first message whose span ends after `next` is the one that holds it.
    while low < high {
        let middle = low + (high - low) / 2;
        if span_at(engine, middle).await?.next > next {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    Ok(low)
}

/// The span of the message at `sequence`.
async fn span_at(engine: &Engine, sequence: u64) -> Result<Span, String> {
    let message = engine
        .stream
        .get_raw_message(sequence)
        .await
        .map_err(|error| format!("reading message {sequence} of the stream: {error}"))?;
    Span::of(Some(&message.headers))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_is_read_from_its_three_headers_or_refused() {
        let mut headers = HeaderMap::new();
        headers.insert(FIRST, "10");
        headers.insert(NEXT, "12");
        headers.insert(TERM, "3");
        assert_eq!(
            Span::of(Some(&headers)),
            Ok(Span {
                first: 10,
                next: 12,
                term: 3
            })
        );
        headers.insert(TERM, "three");
        assert!(Span::of(Some(&headers)).unwrap_err().contains(TERM));
        assert!(Span::of(None).unwrap_err().contains(FIRST));
    }
}
