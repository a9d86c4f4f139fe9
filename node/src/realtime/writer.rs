//! The writer task: the only one that writes a socket's frames.
//!
//! It takes messages from two places and renders them in the connection's encoding:
//!
//! - the outbound queue ([`super::outbox`]): identity, subscription answers, commit updates,
//!   in commit order;
//! - the call answers ([`super::calls`]), in request order;
//! - the reader's requests for a ping, when the client has been silent (sent ahead of the
//!   queue, so that a client busy reading a backlog is not taken for a dead one).
//!
//! # The caller's own update
//!
//! A reducer call that commits is seen twice: by the evaluation task, as a commit made over
//! this connection (an [`Update`] marked `own`, which it queues even when no query set
//! changed), and by the call's answer ([`ReducerAnswer`], with the commit's offset, after the
//! commit is durable). The writer joins them into **one** `TransactionUpdate`, with the call's
//! `request_id` and status and the commit's changes, and sends it when it has both: whichever
//! comes first is held, and the writer stops taking messages from the other side's source
//! until its partner comes, so that both commit order and answer order are kept. A call that
//! made no commit (it failed, or changed nothing) is answered alone, as a `TransactionUpdate`
//! with no changes. So the caller sees its own update once, and only once it is durable.
//!
//! A held own update waits for answers, which come: the call is in flight. A held answer waits
//! for its update, which the evaluation task always queues (or it closes the connection).
//!
//! # One flush per batch
//!
//! A socket write is a system call, and pipelined calls are answered in bursts (a group sync
//! makes many calls durable at once). So the writer renders and feeds every message that is
//! already waiting (up to `BATCH`) before it flushes: a burst of answers goes out in a few
//! writes rather than one write each. It never waits for more to come before flushing.
//!
//! # Shared frames
//!
//! Every other update is its group's ([`super::broadcast`]): the writer takes the group's
//! frame in this connection's form (encoding and compression), which the first writer to need
//! it rendered, and sends the same bytes. Only the caller's own update, joined with its answer,
//! is rendered for this connection alone.
//!
//! # Subscriptions' rows
//!
//! A query set's rows come as a [`Snapshot`](super::snapshot::Snapshot) of row pointers; the
//! writer encodes it one part at a time, each after the one before it is written, so that a
//! large subscription never sits in the server encoded whole.
//!
//! # Which build's row types
//!
//! The writer holds no description of the module: every message with rows carries the
//! description of the build whose tables they are of (an update's, a snapshot's, a one-off
//! query's), and is encoded with it. So a message queued before a new build was published
//! (`wasmod publish`) is encoded with the old build's row types, one queued after it with
//! the new build's, whatever the writer takes when.

use super::broadcast;
use super::calls::{Answer, ReducerAnswer};
use super::close::{self, Close};
use super::frame::Frame;
use super::limits::CLOSE_TIMEOUT;
use super::outbox::{Introduction, OneOffRows, Outbound, OutboxReceiver, Update};
use super::queue;
use super::snapshot::{Part, Parts};
use super::wire::Wire;
use crate::memory::Charge;
use futures_util::{Sink, SinkExt};
use std::marker::PhantomData;
use tokio::sync::watch;
use wasmod_abi::{ConnectionId, EntryKind, Identity};
use wasmod_protocol::ws::{
    Compression, EntryPointName, ServerMessage, TableRows, TransactionUpdate,
};

/// Renders messages for one connection, in the encoding `W`.
#[derive(Debug)]
pub struct Renderer<W: Wire> {
    identity: Identity,
    connection: ConnectionId,
    compression: Compression,
    part_bytes: usize,
    wire: PhantomData<W>,
}

/// Which side the writer holds a message of, waiting for its partner.
#[derive(Debug)]
enum Held {
    Nothing,
    /// An own update, waiting for its call's answer.
    Update(Update),
    /// A reducer's answer, waiting for its commit's update.
    Answer(ReducerAnswer),
}

/// Writes the socket's frames into `sink` (the transport's sending half) until it must close:
/// when asked to (through the outbox), at shutdown, or when the socket fails. Returns why it
/// closed.
pub async fn run<W: Wire, S: Sink<Frame> + Unpin>(
    mut sink: S,
    mut outbound: OutboxReceiver,
    mut answers: queue::Receiver<Answer<W::Value>>,
    renderer: Renderer<W>,
    mut shutdown: watch::Receiver<bool>,
) -> Close {
    let signal = outbound.close_signal();
    let stats = outbound.stats().clone();
    let mut sources = Sources {
        held: Held::Nothing,
        answers_open: true,
    };
    loop {
        let mut frames = tokio::select! {
            biased;
            close = signal.closing() => return finish(&mut sink, close).await,
            () = crate::stopped(&mut shutdown) => {
                let close = Close::new(close::GOING_AWAY, "the server is shutting down");
                return finish(&mut sink, close).await;
            }
            () = signal.ping_asked() => Ok(vec![Frame::Ping(Default::default())].into()),
            answer = answers.recv(), if sources.takes_answers() => {
                sources.answered(&renderer, answer)
            }
            message = outbound.recv(), if sources.takes_updates() => match message {
                Some(message) => renderer.outbound(message, &mut sources.held),
                None => return finish(&mut sink, Close::new(close::NORMAL, "")).await,
            },
        };
        let mut taken = 1;
        // What the batch's frames are charged to the client, given back once it is flushed:
        // a frame the client does not read waits in the socket's buffer until then.
        let mut charges = Vec::new();
        loop {
            let mut ready = match frames {
                Ok(ready) => ready,
                Err(reason) => return failed(&mut sink, reason).await,
            };
            // A snapshot's parts go out one by one (each written before the next is encoded);
            // other frames are fed, and the batch flushed once.
            let one_by_one = matches!(ready, Frames::Snapshot(_));
            charges.extend(ready.take_charge());
            while let Some(frame) = renderer.next_frame(&mut ready) {
                let frame = match frame {
                    Ok(frame) => frame,
                    Err(reason) => return failed(&mut sink, reason).await,
                };
                let bytes = frame.len();
                tokio::select! {
                    written = async {
                        if one_by_one { sink.send(frame).await } else { sink.feed(frame).await }
                    } => match written {
                        Ok(()) => stats.sent(bytes),
                        Err(_) => return Close::new(close::NORMAL, "the socket is closed"),
                    },
                    close = signal.closing() => return finish(&mut sink, close).await,
                }
            }
            if taken == BATCH {
                break;
            }
            match sources.ready(&renderer, &mut answers, &mut outbound) {
                Some(more) => frames = more,
                None => break,
            }
            taken += 1;
        }
        tokio::select! {
            flushed = sink.flush() => if flushed.is_err() {
                return Close::new(close::NORMAL, "the socket is closed");
            },
            close = signal.closing() => return finish(&mut sink, close).await,
        }
        drop(charges);
    }
}

/// The most messages the writer takes, when they are waiting already, before it flushes the
/// socket: enough that a burst of answers shares a few writes, few enough that the first of
/// them does not wait long for the last to be rendered.
const BATCH: usize = 64;

/// Where the writer stands between its two sources: what it holds, waiting for its partner,
/// and whether answers can still come.
#[derive(Debug)]
struct Sources {
    held: Held,
    answers_open: bool,
}

impl Sources {
    /// Whether the writer takes call answers now: not while it holds an answer, which waits
    /// for an update.
    fn takes_answers(&self) -> bool {
        self.answers_open && !matches!(self.held, Held::Answer(_))
    }

    /// Whether the writer takes from the outbound queue now: not while it holds an own
    /// update, which waits for an answer.
    fn takes_updates(&self) -> bool {
        !matches!(self.held, Held::Update(_))
    }

    /// The frames for `answer`, the next from the call answers (`None` once they have ended).
    fn answered<W: Wire>(
        &mut self,
        renderer: &Renderer<W>,
        answer: Option<Answer<W::Value>>,
    ) -> Rendered {
        let ready = match answer {
            Some(answer) => renderer.answer(answer, &mut self.held),
            None => {
                self.answers_open = false;
                renderer.release(&mut self.held)
            }
        };
        ready.map(Frames::from)
    }

    /// The frames for a message that is waiting already on either source, in the order the
    /// writer's wait prefers (answers first); `None` when neither has one to take now. The
    /// end of either source is left for the wait to see.
    fn ready<W: Wire>(
        &mut self,
        renderer: &Renderer<W>,
        answers: &mut queue::Receiver<Answer<W::Value>>,
        outbound: &mut OutboxReceiver,
    ) -> Option<Rendered> {
        if self.takes_answers() {
            if let Some(answer) = answers.try_recv() {
                return Some(renderer.answer(answer, &mut self.held).map(Frames::from));
            }
        }
        if self.takes_updates() {
            if let Some(message) = outbound.try_recv() {
                return Some(renderer.outbound(message, &mut self.held));
            }
        }
        None
    }
}

/// Closes the socket for a message that could not be rendered (`1011`).
async fn failed<S: Sink<Frame> + Unpin>(sink: &mut S, reason: String) -> Close {
    tracing::error!("a message could not be rendered: {reason}");
    let reason = format!("a message could not be rendered: {reason}");
    finish(sink, Close::new(close::INTERNAL, reason)).await
}

/// Sends the close frame, for at most [`CLOSE_TIMEOUT`] (a client that stopped reading never
/// takes it), and returns `close`.
async fn finish<S: Sink<Frame> + Unpin>(sink: &mut S, close: Close) -> Close {
    if close.code != close::NORMAL {
        tracing::info!(code = close.code, reason = %close.reason, "closing a WebSocket");
    }
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, sink.send(Frame::closing(&close))).await;
    close
}

/// The frames of one message: ready to send (with what their bytes are charged to the
/// client, for a one-off answer: [`crate::memory`]), or a snapshot's parts, each encoded once
/// the one before it is written.
#[derive(Debug)]
enum Frames {
    Ready(std::vec::IntoIter<Frame>, Option<Charge>),
    Snapshot(Parts),
}

impl From<Vec<Frame>> for Frames {
    fn from(frames: Vec<Frame>) -> Self {
        Self::Ready(frames.into_iter(), None)
    }
}

impl Frames {
    /// What the frames are charged to the client: to be given back once they are written.
    fn take_charge(&mut self) -> Option<Charge> {
        match self {
            Self::Ready(_, charge) => charge.take(),
            Self::Snapshot(_) => None,
        }
    }
}

/// What rendering gives: the frames to send, or why a message could not be rendered.
type Rendered = Result<Frames, String>;

/// The frames of a message that are ready at once, or why it could not be rendered.
type Ready = Result<Vec<Frame>, String>;

impl<W: Wire> Renderer<W> {
    /// A renderer for the connection `connection` of `identity`, whose binary frames are
    /// compressed with `compression` (see [`Wire::encode`]), and whose subscriptions' rows go
    /// in parts of at most `part_bytes`.
    pub fn new(
        identity: Identity,
        connection: ConnectionId,
        compression: Compression,
        part_bytes: usize,
    ) -> Self {
        Self {
            identity,
            connection,
            compression,
            part_bytes,
            wire: PhantomData,
        }
    }

    /// The frames for a message of the outbound queue, holding an own update until its answer.
    fn outbound(&self, message: Outbound, held: &mut Held) -> Rendered {
        let mut charge = None;
        let message = match message {
            Outbound::Identity(introduction) => {
                let Introduction {
                    identity,
                    token,
                    connection_id,
                } = *introduction;
                ServerMessage::IdentityToken {
                    identity,
                    token,
                    connection_id,
                }
            }
            Outbound::Applied(snapshot) => {
                return Ok(Frames::Snapshot(snapshot.parts(self.part_bytes)));
            }
            Outbound::SubscriptionError {
                query_set_id,
                message,
            } => ServerMessage::SubscriptionError {
                query_set_id,
                message,
            },
            Outbound::CaughtUp { request_id, offset } => {
                ServerMessage::CaughtUp { request_id, offset }
            }
            Outbound::Refused {
                request_id,
                offset,
                error,
            } => ServerMessage::CallResult {
                request_id,
                offset,
                result: Err(*error),
            },
            Outbound::OneOff { request_id, result } => {
                let result = match result {
                    Ok(found) => {
                        let (inserts, _) = W::rows(&found.module, &found.rows)?;
                        let OneOffRows {
                            rows, charge: held, ..
                        } = *found;
                        charge = Some(held);
                        Ok(vec![TableRows {
                            table: rows.table.clone(),
                            rows: inserts,
                        }])
                    }
                    Err(message) => Err(message),
                };
                ServerMessage::OneOffQueryResult { request_id, result }
            }
            Outbound::Update(update) if update.own => {
                return match std::mem::replace(held, Held::Nothing) {
                    Held::Answer(answer) if answer.commit == Some(update.shared.commit.offset) => {
                        Ok(vec![self.update(&update, Some(&answer))?].into())
                    }
                    Held::Answer(answer) => {
                        *held = Held::Answer(answer);
                        Ok(vec![self.update(&update, None)?].into())
                    }
                    Held::Nothing | Held::Update(_) => {
                        *held = Held::Update(update);
                        Ok(Vec::new().into())
                    }
                };
            }
            Outbound::Update(update) => return Ok(vec![self.update(&update, None)?].into()),
        };
        let frames = vec![W::encode(&message, self.compression)];
        Ok(Frames::Ready(frames.into_iter(), charge))
    }

    /// The next frame of `frames` to send, encoding a snapshot's next part.
    fn next_frame(&self, frames: &mut Frames) -> Option<Result<Frame, String>> {
        match frames {
            Frames::Ready(ready, _) => ready.next().map(Ok),
            Frames::Snapshot(parts) => {
                let part = parts.next()?;
                Some(part.and_then(|part| self.part(parts, &part)))
            }
        }
    }

    /// A snapshot's part `part`: `SubscribeRows`, or, the last, `SubscribeApplied`.
    fn part(&self, parts: &Parts, part: &Part) -> Result<Frame, String> {
        let mut tables = Vec::with_capacity(part.rows.len());
        let mut deletes = Vec::new();
        for rows in &part.rows {
            let (inserted, deleted) = W::rows(&parts.module, rows)?;
            tables.push(TableRows {
                table: rows.table.clone(),
                rows: inserted,
            });
            if parts.resumed {
                deletes.push(TableRows {
                    table: rows.table.clone(),
                    rows: deleted,
                });
            }
        }
        let query_set_id = parts.query_set_id;
        let message = if part.last {
            ServerMessage::SubscribeApplied {
                query_set_id,
                offset: parts.offset,
                tables,
                deletes,
                resumed: parts.resumed,
            }
        } else {
            ServerMessage::SubscribeRows {
                query_set_id,
                tables,
                deletes,
            }
        };
        Ok(W::encode(&message, self.compression))
    }

    /// The frames for a call's answer, holding a reducer's answer until its commit's update.
    fn answer(&self, answer: Answer<W::Value>, held: &mut Held) -> Ready {
        let reducer = match answer {
            Answer::Result {
                request_id,
                offset,
                result,
            } => {
                let message = ServerMessage::CallResult {
                    request_id,
                    offset,
                    result,
                };
                return Ok(vec![W::encode(&message, self.compression)]);
            }
            Answer::Reducer(reducer) => reducer,
        };
        let Some(commit) = reducer.commit else {
            return Ok(vec![self.alone(&reducer)]);
        };
        match std::mem::replace(held, Held::Nothing) {
            Held::Update(update) if update.shared.commit.offset == commit => {
                Ok(vec![self.update(&update, Some(&reducer))?])
            }
            Held::Update(update) => {
                *held = Held::Update(update);
                Ok(vec![self.alone(&reducer)])
            }
            Held::Nothing | Held::Answer(_) => {
                *held = Held::Answer(reducer);
                Ok(Vec::new())
            }
        }
    }

    /// Sends what is held without its partner: no answer will come any more.
    fn release(&self, held: &mut Held) -> Ready {
        match std::mem::replace(held, Held::Nothing) {
            Held::Nothing => Ok(Vec::new()),
            Held::Update(update) => Ok(vec![self.update(&update, None)?]),
            Held::Answer(answer) => Ok(vec![self.alone(&answer)]),
        }
    }

    /// A commit's update: its group's shared frame, or, joined with the answer of the call
    /// that made it, this connection's own.
    fn update(&self, update: &Update, answer: Option<&ReducerAnswer>) -> Result<Frame, String> {
        match answer {
            None => update.shared.frame::<W>(self.compression),
            Some(answer) => broadcast::render::<W>(&update.shared, Some(answer), self.compression),
        }
    }

    /// A reducer's answer without a commit to join: a `TransactionUpdate` with no changes.
    fn alone(&self, answer: &ReducerAnswer) -> Frame {
        let message: ServerMessage<W::Rows, W::Value> =
            ServerMessage::TransactionUpdate(TransactionUpdate {
                offset: answer.offset,
                timestamp: answer.timestamp,
                caller_identity: self.identity,
                caller_connection_id: self.connection,
                entry_point: EntryPointName {
                    kind: EntryKind::Reducer,
                    name: answer.name.clone(),
                },
                status: answer.status.clone(),
                request_id: Some(answer.request_id),
                changes: Vec::new(),
            });
        W::encode(&message, self.compression)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::realtime::broadcast::SharedUpdate;
    use crate::realtime::outbox::{self, Bounds};
    use crate::realtime::snapshot::Snapshot;
    use crate::realtime::wire::{Binary, Json};
    use std::sync::Arc;
    use wasmod_host::datastore::{Commit, CommitMeta, EntryPoint, Row};
    use wasmod_protocol::ws::{BinaryServerMessage, JsonServerMessage, UpdateStatus};

    const ME: ConnectionId = ConnectionId::from_bytes([1; 16]);
    const PART_BYTES: usize = 1000;

    fn renderer() -> Renderer<Json> {
        Renderer::new(Identity::ZERO, ME, Compression::None, PART_BYTES)
    }

    fn own_update(offset: u64) -> Outbound {
        let meta = CommitMeta {
            connection_id: ME,
            entry: Some(EntryPoint::new(EntryKind::Reducer, "send")),
            ..CommitMeta::host()
        };
        let commit = Arc::new(Commit {
            offset,
            meta,
            changes: Default::default(),
        });
        Outbound::Update(Update {
            shared: Arc::new(SharedUpdate::new(Default::default(), commit, Vec::new())),
            own: true,
        })
    }

    fn answer(request_id: u32, commit: Option<u64>) -> Answer<Box<serde_json::value::RawValue>> {
        Answer::Reducer(ReducerAnswer {
            request_id,
            name: "send".into(),
            commit,
            offset: commit.unwrap_or(0),
            timestamp: wasmod_abi::Timestamp::now(),
            status: UpdateStatus::Committed,
        })
    }

    /// Every frame of `frames`, in order.
    fn sent<W: Wire>(renderer: &Renderer<W>, frames: impl Into<Frames>) -> Vec<Frame> {
        let mut frames = frames.into();
        std::iter::from_fn(|| renderer.next_frame(&mut frames))
            .collect::<Result<_, _>>()
            .expect("rendered")
    }

    /// The request id and offset of each `TransactionUpdate` frame.
    fn updates(frames: Vec<Frame>) -> Vec<(Option<u32>, u64)> {
        frames
            .into_iter()
            .map(|frame| {
                let Frame::Text(text) = frame else {
                    panic!("a text frame")
                };
                match JsonServerMessage::from_json(std::str::from_utf8(&text).expect("UTF-8"))
                    .expect("a message")
                {
                    ServerMessage::TransactionUpdate(update) => (update.request_id, update.offset),
                    other => panic!("not an update: {other:?}"),
                }
            })
            .collect()
    }

    #[test]
    fn an_own_update_waits_for_its_answer_and_goes_out_once_with_its_request_id() {
        let (renderer, mut held) = (renderer(), Held::Nothing);
        let frames = renderer
            .outbound(own_update(5), &mut held)
            .expect("rendered");
        assert!(sent(&renderer, frames).is_empty() && matches!(held, Held::Update(_)));
        let frames = renderer
            .answer(answer(9, Some(5)), &mut held)
            .expect("rendered");
        assert_eq!(updates(frames), [(Some(9), 5)]);
        assert!(matches!(held, Held::Nothing));
    }

    #[test]
    fn an_answer_waits_for_its_commits_update() {
        let (renderer, mut held) = (renderer(), Held::Nothing);
        let frames = renderer
            .answer(answer(3, Some(8)), &mut held)
            .expect("rendered");
        assert!(frames.is_empty() && matches!(held, Held::Answer(_)));
        let frames = renderer
            .outbound(own_update(8), &mut held)
            .expect("rendered");
        assert_eq!(updates(sent(&renderer, frames)), [(Some(3), 8)]);
    }

    #[test]
    fn an_answer_without_a_commit_goes_out_alone() {
        let (renderer, mut held) = (renderer(), Held::Nothing);
        let frames = renderer
            .answer(answer(4, None), &mut held)
            .expect("rendered");
        assert_eq!(updates(frames), [(Some(4), 0)]);
        assert!(matches!(held, Held::Nothing));
    }

    /// Everything `sources` takes without waiting, as the writer takes a batch.
    fn batch(
        sources: &mut Sources,
        answers: &mut queue::Receiver<JsonAnswer>,
        outbound: &mut OutboxReceiver,
    ) -> Vec<(Option<u32>, u64)> {
        let renderer = renderer();
        let frames = std::iter::from_fn(|| sources.ready(&renderer, answers, outbound))
            .flat_map(|frames| sent(&renderer, frames.expect("rendered")))
            .collect();
        updates(frames)
    }

    type JsonAnswer = Answer<Box<serde_json::value::RawValue>>;

    /// A writer's two sources, empty, and where it stands between them.
    fn writer_sources() -> (
        outbox::Outbox,
        OutboxReceiver,
        queue::Sender<JsonAnswer>,
        queue::Receiver<JsonAnswer>,
        Sources,
    ) {
        let bounds = Bounds {
            messages: 16,
            bytes: 1 << 20,
        };
        let (outbox, outbound) = outbox::channel(bounds, Default::default());
        let (send, answers) = crate::realtime::calls::answers();
        let sources = Sources {
            held: Held::Nothing,
            answers_open: true,
        };
        (outbox, outbound, send, answers, sources)
    }

    #[test]
    fn a_batch_joins_each_answer_with_its_update_in_order() {
        let (outbox, mut outbound, send, mut answers, mut sources) = writer_sources();
        for offset in [5, 6, 7] {
            outbox.push(own_update(offset)).expect("room");
        }
        for (request_id, commit) in [(1, Some(5)), (2, None), (3, Some(6)), (4, Some(7))] {
            send.push(answer(request_id, commit)).expect("room");
        }
        assert_eq!(
            batch(&mut sources, &mut answers, &mut outbound),
            [(Some(1), 5), (Some(2), 0), (Some(3), 6), (Some(4), 7)],
            "every answer once, joined with its own update, in request order"
        );
        assert!(matches!(sources.held, Held::Nothing));
    }

    #[test]
    fn a_batch_stops_at_a_held_message_whose_partner_has_not_come() {
        let (outbox, mut outbound, send, mut answers, mut sources) = writer_sources();
        send.push(answer(1, Some(5))).expect("room");
        send.push(answer(2, Some(6))).expect("room");
        assert!(batch(&mut sources, &mut answers, &mut outbound).is_empty());
        assert!(
            matches!(&sources.held, Held::Answer(answer) if answer.request_id == 1),
            "the second answer is not taken while the first waits for its update"
        );
        outbox.push(own_update(5)).expect("room");
        assert_eq!(
            batch(&mut sources, &mut answers, &mut outbound),
            [(Some(1), 5)]
        );
        assert!(matches!(&sources.held, Held::Answer(answer) if answer.request_id == 2));
    }

    #[test]
    fn what_is_held_goes_out_alone_when_no_answer_can_come() {
        let (renderer, mut held) = (renderer(), Held::Nothing);
        renderer
            .outbound(own_update(2), &mut held)
            .expect("rendered");
        let frames = renderer.release(&mut held).expect("rendered");
        assert_eq!(updates(frames), [(None, 2)]);
    }

    #[test]
    fn a_large_snapshot_goes_out_in_parts_ending_with_subscribe_applied() {
        let renderer = Renderer::<Binary>::new(Identity::ZERO, ME, Compression::None, PART_BYTES);
        let row = |byte: u8| Row::from(vec![byte; PART_BYTES * 3 / 5]);
        let mut snapshot = Snapshot::new(Default::default(), 7, 12, false);
        snapshot.push("t", vec![row(1), row(2), row(3)], Vec::new());
        let frames = renderer
            .outbound(Outbound::Applied(Box::new(snapshot)), &mut Held::Nothing)
            .expect("rendered");
        let messages: Vec<_> = sent(&renderer, frames)
            .into_iter()
            .map(|frame| {
                let Frame::Binary(bytes) = frame else {
                    panic!("a binary frame")
                };
                BinaryServerMessage::from_bytes(&bytes).expect("a message")
            })
            .collect();
        let firsts: Vec<_> = messages
            .iter()
            .map(|message| match message {
                ServerMessage::SubscribeRows {
                    query_set_id: 7,
                    tables,
                    deletes,
                } if deletes.is_empty() => ("rows", tables),
                ServerMessage::SubscribeApplied {
                    query_set_id: 7,
                    offset: 12,
                    tables,
                    resumed: false,
                    ..
                } => ("applied", tables),
                other => panic!("not a part: {other:?}"),
            })
            .map(|(kind, tables)| {
                let rows: Vec<u8> = tables
                    .iter()
                    .flat_map(|table| table.rows.iter().map(|row| row[0]))
                    .collect();
                (kind, rows)
            })
            .collect();
        assert_eq!(
            firsts,
            [("rows", vec![1]), ("rows", vec![2]), ("applied", vec![3])]
        );
    }
}
