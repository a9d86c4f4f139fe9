//! A connection's calls: reducers, procedures and views by name, through the node's one call
//! pipeline ([`crate::call`]), run as the connection's identity over its connection id.
//!
//! Calls are pipelined: a client may send up to [`MAX_CALLS_IN_FLIGHT`] before the first is
//! answered. Each call also takes one of its identity's slots ([`crate::slots`]), the same as
//! its HTTP calls take, held until the module is done with it: an identity's calls in progress are
//! bounded whatever sockets they come over (else one identity with many sockets could fill
//! the module's queue), and a call over that bound is answered `too_many_calls` without
//! running. Each is queued on the module's thread as soon as it is read (so they run in the
//! order they came) and answered in that same order, by one task per connection
//! (`answer_in_order`) that awaits them one after the other. A call over the limit is
//! answered at once with `busy`, ahead of the calls in flight (it never ran, so its place in
//! the order means nothing).
//!
//! When the module's queue is full, a call waits for room there ([`WhenFull::Wait`]) instead of
//! being refused, and the connection reads nothing more meanwhile: the client's own socket
//! pushes back. What a connection holds is bounded by its calls in flight, and connections
//! get room in the order they asked, so a full queue slows every caller alike instead of
//! refusing the calls of whoever came last (over HTTP, where a request would hold its
//! connection and body while it waited, a full queue still answers `busy`).
//!
//! Each call is found in the build serving the module when it is read,
//! and its returned value converted with that build's description.
//!
//! A reducer's answer is a [`ReducerAnswer`]: how it ended and the offset of its commit, if it
//! made one. The writer joins it with the commit's update, so that the caller sees its own
//! update once, carrying its `request_id` (see [`super::writer`]).

use super::limits::MAX_CALLS_IN_FLIGHT;
use super::queue::{self, Bounds, Weighed};
use super::wire::Wire;
use crate::call::{Caller, Pipeline};
use crate::invocation::{failure, Invocation};
use crate::results::Results;
use crate::worker::{last_commit, Finished, WhenFull};
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmod_abi::{EntryKind, Timestamp};
use wasmod_host::datastore::Database;
use wasmod_host::Outcome;
use wasmod_protocol::call::CallKind;
use wasmod_protocol::errors::{ApiError, ErrorCode};
use wasmod_protocol::ws::UpdateStatus;

/// The answer to one call.
#[derive(Debug)]
pub enum Answer<V> {
    /// A reducer ran.
    Reducer(ReducerAnswer),
    /// A procedure or view returned, or a call was refused (or failed before it ran).
    Result {
        /// The call's request id.
        request_id: u32,
        /// The offset of the last commit when the call ended (or was refused).
        offset: u64,
        /// The value, or why there is none.
        result: Result<V, ApiError>,
    },
}

/// How a reducer call ended.
#[derive(Debug)]
pub struct ReducerAnswer {
    /// The call's request id.
    pub request_id: u32,
    /// The reducer's name.
    pub name: String,
    /// The offset of the commit it made; `None` if it made none (it failed, or changed
    /// nothing).
    pub commit: Option<u64>,
    /// Without a commit, the offset of the last commit before the answer.
    pub offset: u64,
    /// When it was answered (a commit's update carries the commit's own time instead).
    pub timestamp: Timestamp,
    /// How it ended.
    pub status: UpdateStatus,
}

/// An answer still to come.
type Coming<V> = Pin<Box<dyn Future<Output = Answer<V>> + Send>>;

/// An answer still to come, with the slot it holds.
struct Pending<V> {
    answer: Coming<V>,
    slot: OwnedSemaphorePermit,
}

/// The bounds of a connection's queues of calls and of answers: as many as may be in flight
/// (answers count no bytes).
const IN_FLIGHT: Bounds = Bounds {
    messages: MAX_CALLS_IN_FLIGHT,
    bytes: 0,
};

impl<V> Weighed for Answer<V> {
    fn bytes(&self) -> usize {
        0
    }
}

impl<V> Weighed for Pending<V> {
    fn bytes(&self) -> usize {
        0
    }
}

/// The queue of a connection's answers, from its calls to its writer.
pub fn answers<V>() -> (queue::Sender<Answer<V>>, queue::Receiver<Answer<V>>) {
    queue::bounded(IN_FLIGHT)
}

/// A connection's side of its calls: queues them and hands their answers, in order, to the
/// answering task.
#[derive(Debug)]
pub struct Calls<W: Wire> {
    pipeline: Pipeline,
    database: Arc<Database>,
    caller: Caller,
    slots: Arc<Semaphore>,
    pending: queue::Sender<Pending<W::Value>>,
    answers: queue::Sender<Answer<W::Value>>,
    wire: PhantomData<W>,
}

impl<W: Wire> Calls<W> {
    /// The calls of `caller`'s connection, through `pipeline`, whose answers go to `answers`
    /// (with offsets read from `database`), and the task that answers them in order (to
    /// spawn).
    pub fn new(
        pipeline: Pipeline,
        database: Arc<Database>,
        caller: Caller,
        answers: queue::Sender<Answer<W::Value>>,
    ) -> (Self, impl Future<Output = ()> + Send + 'static) {
        let (pending, queue) = queue::bounded(IN_FLIGHT);
        let calls = Self {
            pipeline,
            database,
            caller,
            slots: Arc::new(Semaphore::new(MAX_CALLS_IN_FLIGHT)),
            pending,
            answers: answers.clone(),
            wire: PhantomData,
        };
        (calls, answer_in_order(queue, answers))
    }

    /// Starts the call `name` of kind `kind` with `args`, answered under `request_id`.
    pub async fn call(&self, kind: CallKind, request_id: u32, name: String, args: W::Args) {
        let Ok(slot) = self.slots.clone().try_acquire_owned() else {
            let busy = ApiError::new(
                ErrorCode::Busy,
                format!("more than {MAX_CALLS_IN_FLIGHT} calls in flight on this connection"),
            );
            let _ = self.answers.send(self.refused(request_id, busy)).await;
            return;
        };
        let answer = match self.start(kind, request_id, &name, args).await {
            Ok(answer) => answer,
            Err(error) => Box::pin(std::future::ready(self.refused(request_id, error))),
        };
        // The slot makes room in the queue: this cannot wait long.
        let _ = self.pending.send(Pending { answer, slot }).await;
    }

    /// The answer to the call `request_id`, refused with `error` before it ran.
    fn refused(&self, request_id: u32, error: ApiError) -> Answer<W::Value> {
        Answer::Result {
            request_id,
            offset: last_commit(&self.database),
            result: Err(error),
        }
    }

    /// Queues the call on the module's thread through the pipeline, waiting for room there,
    /// and returns its answer to come, counted in the metrics until it is there.
    async fn start(
        &self,
        kind: CallKind,
        request_id: u32,
        name: &str,
        args: W::Args,
    ) -> Result<Coming<W::Value>, ApiError> {
        let counted = self.pipeline.count(kind);
        let queued = async {
            let found = self.pipeline.find(Some(kind), name)?;
            let pending = self
                .pipeline
                .queue(&found, &self.caller, W::args(args), WhenFull::Wait)
                .await?;
            Ok((found.invocation().clone(), pending))
        };
        let (invocation, pending) = match queued.await {
            Ok(queued) => queued,
            Err(error) => return counted.finish(Err(error)),
        };
        let database = self.database.clone();
        let results = self.pipeline.results().clone();
        Ok(Box::pin(async move {
            let finished = match pending.finish().await {
                Ok(finished) => finished,
                Err(error) => {
                    let offset = last_commit(&database);
                    return Answer::Result {
                        request_id,
                        offset,
                        result: counted.finish(Err(error)),
                    };
                }
            };
            if invocation.kind() == EntryKind::Reducer {
                let answer = reducer_answer(request_id, invocation.name(), finished);
                let _ = counted.finish(match &answer.status {
                    UpdateStatus::Committed => Ok(()),
                    UpdateStatus::Failed { message } => {
                        Err(ApiError::new(ErrorCode::EntryFailed, message.clone()))
                    }
                    _ => Err(ApiError::new(ErrorCode::Aborted, "the reducer aborted")),
                });
                return Answer::Reducer(answer);
            }
            let offset = finished.offset;
            let result = match finished.durable {
                Ok(()) => returned::<W>(&results, invocation, finished.value).await,
                Err(error) => Err(error),
            };
            Answer::Result {
                request_id,
                offset,
                result: counted.finish(result),
            }
        }))
    }
}

/// A procedure's or view's value in `W`'s encoding (within `results`' bound), or the error
/// its outcome is.
async fn returned<W: Wire>(
    results: &Results,
    invocation: Invocation,
    outcome: Outcome,
) -> Result<W::Value, ApiError> {
    match outcome {
        Outcome::Returned { bytes, .. } => {
            let called = invocation.clone();
            let convert = move |bytes| W::value(&called, bytes);
            results.convert(&invocation, bytes, convert).await
        }
        failed => Err(failure(failed)),
    }
}

/// How the reducer call `request_id` of `name` ended.
fn reducer_answer(request_id: u32, name: &str, finished: Finished<Outcome>) -> ReducerAnswer {
    let commit = match &finished.value {
        Outcome::Committed {
            commit: Some(commit),
            ..
        } => Some(commit.offset),
        _ => None,
    };
    let status = match (finished.value, finished.durable) {
        (_, Err(error)) => UpdateStatus::Aborted {
            reason: error.message,
        },
        (Outcome::Committed { .. }, Ok(())) => UpdateStatus::Committed,
        (Outcome::Failed { message, .. }, Ok(())) => UpdateStatus::Failed { message },
        (Outcome::Aborted { reason }, Ok(())) => UpdateStatus::Aborted { reason },
        (Outcome::Returned { .. }, Ok(())) => UpdateStatus::Aborted {
            reason: "the reducer returned a value".to_owned(),
        },
    };
    ReducerAnswer {
        request_id,
        name: name.to_owned(),
        commit,
        offset: commit.unwrap_or(finished.offset),
        timestamp: Timestamp::now(),
        status,
    }
}

/// Awaits each call's answer in the order the calls came, and hands it to the writer.
async fn answer_in_order<V: Send + 'static>(
    mut queue: queue::Receiver<Pending<V>>,
    answers: queue::Sender<Answer<V>>,
) {
    while let Some(Pending { answer, slot }) = queue.recv().await {
        let answer = answer.await;
        drop(slot);
        if answers.send(answer).await.is_err() {
            return;
        }
    }
}
