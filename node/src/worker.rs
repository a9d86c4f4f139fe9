//! The thread that owns the module: every call into it runs there, one at a time.
//!
//! A [`WasmModule`] is `&mut` per call and runs each call to completion on the calling thread
//! (wasm code, host imports, outbound HTTP of procedures included). Running it inside an async
//! handler would block a runtime thread for the whole call, so the module lives on one
//! dedicated thread fed by a **bounded** channel of jobs. A handler sends a job carrying a
//! oneshot sender for the answer and awaits the receiver; the runtime threads never block.
//!
//! - A full queue is refused at once (`busy`, 503), rather than queued without bound.
//! - A job whose requester has gone (the request timed out, or the client disconnected) before
//!   the job started is skipped: nobody is waiting for its answer. A job that has started runs
//!   to completion, under the module's own deadline.
//! - When every [`Worker`] handle is dropped, the thread finishes the jobs already queued and
//!   ends; [`WorkerThread::join`] waits for it. This is how shutdown finishes in-flight calls.
//! - A panic in the host during a call (a bug: the host's code must not panic) fails that
//!   call (`internal`), rolls its transaction back, and replaces the module's instance, as a
//!   trap does; the thread goes on serving the next calls instead of ending for good. Should
//!   the thread end anyway (the recovery itself panicked), the error is logged, every call is
//!   refused (`shutting_down`) and `/health` answers `503` ([`Worker::stopped`]).
//! - A call runs inside the `tracing` span of the request that queued it, so the module's log
//!   lines (target `wasmod::module`) show which request they belong to.
//! - With a commit log and deferred durability (as `wasmod serve` sets up), a call's commits
//!   are synced after the thread has moved on: its answer goes to the durability thread
//!   ([`crate::durable`]), which sends it once the log has the commits. The module's thread
//!   does not wait for a disk, and the commits of calls that overlap share one sync.

use crate::durable::Acknowledger;
use crate::health::Lag;
use std::io;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};
use wasmod_host::datastore::Database;
use wasmod_host::WasmModule;
use wasmod_protocol::errors::{ApiError, ErrorCode};

/// A unit of work for the module's thread, which hands answers that wait for the commit log
/// to the acknowledger.
/// A call for the module's thread, with when it was queued.
type Job = (
    Instant,
    Box<dyn FnOnce(&mut WasmModule, &Acknowledger) + Send>,
);

/// What a call does when the queue it goes to (the module's, or an edge's calls in flight to
/// its primary) is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WhenFull {
    /// Fails at once with `busy`: the client may retry (an HTTP request, which would
    /// otherwise hold its connection and its body while it waits).
    Refuse,
    /// Waits for room: a WebSocket call, whose connection bounds what it has in flight and
    /// stops reading while it waits (so the client's socket pushes back), or work that must
    /// not be lost, such as closing a connection. Waiters get room in the order they came.
    Wait,
}

/// Sends calls to the module's thread. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Worker {
    jobs: mpsc::Sender<Job>,
    lag: Arc<Lag>,
}

/// The module's thread and the durability thread, to wait for at shutdown.
#[derive(Debug)]
pub struct WorkerThread {
    thread: JoinHandle<()>,
    durable: JoinHandle<()>,
}

impl Worker {
    /// Starts the thread that owns `module`, with room for `queue` waiting calls (at least
    /// one).
    pub fn start(mut module: WasmModule, queue: usize) -> io::Result<(Worker, WorkerThread)> {
        let (jobs, mut queued) = mpsc::channel::<Job>(queue.max(1));
        let (acknowledger, durable) = Acknowledger::start(queue)?;
        let lag = Arc::new(Lag::default());
        let behind = lag.clone();
        let thread = std::thread::Builder::new()
            .name("wasmod-module".into())
            .spawn(move || {
                let _watch = StopWatch;
                while let Some((queued_at, job)) = queued.blocking_recv() {
                    behind.waiting_since(queued_at);
                    let run = AssertUnwindSafe(|| job(&mut module, &acknowledger));
                    if std::panic::catch_unwind(run).is_err() {
                        tracing::error!(
                            "a call panicked in the host: it failed, its transaction was \
                             rolled back, and the module's thread goes on"
                        );
                        module.recover_from_panic();
                    }
                    if queued.is_empty() {
                        behind.caught_up();
                    }
                }
                tracing::debug!("the module's thread has finished its queue");
            })?;
        Ok((Worker { jobs, lag }, WorkerThread { thread, durable }))
    }

    /// Runs `call` on the module's thread and returns what it returned.
    ///
    /// Fails with `busy` if the queue is full, `shutting_down` if the thread has stopped, and
    /// `internal` if the call did not answer (it panicked).
    pub async fn run<R, F>(&self, call: F) -> Result<R, ApiError>
    where
        R: Send + 'static,
        F: FnOnce(&mut WasmModule) -> R + Send + 'static,
    {
        self.submit(call, WhenFull::Refuse).await
    }

    /// Runs `call` like [`Worker::run`], but waits for room in the queue instead of refusing
    /// it: for work that must not be lost, such as closing a connection.
    pub async fn run_when_room<R, F>(&self, call: F) -> Result<R, ApiError>
    where
        R: Send + 'static,
        F: FnOnce(&mut WasmModule) -> R + Send + 'static,
    {
        self.submit(call, WhenFull::Wait).await
    }

    /// Queues `call`, refusing it or waiting for room when the queue is full as `room` says,
    /// and returns the wait for its answer. Calls queued one after the other run in that
    /// order, so a connection that queues several before awaiting any keeps them in order.
    pub async fn queue<R, F>(&self, call: F, when_full: WhenFull) -> Result<Pending<R>, ApiError>
    where
        R: Send + 'static,
        F: FnOnce(&mut WasmModule) -> R + Send + 'static,
    {
        let (job, answered) = job(call);
        match when_full {
            WhenFull::Refuse => self.jobs.try_send(job).map_err(|error| match error {
                mpsc::error::TrySendError::Full(_) => ApiError::new(
                    ErrorCode::Busy,
                    "too many calls are waiting for the module: retry later",
                ),
                mpsc::error::TrySendError::Closed(_) => shutting_down(),
            })?,
            WhenFull::Wait => self.jobs.send(job).await.map_err(|_| shutting_down())?,
        }
        Ok(Pending { answered })
    }

    async fn submit<R, F>(&self, call: F, when_full: WhenFull) -> Result<R, ApiError>
    where
        R: Send + 'static,
        F: FnOnce(&mut WasmModule) -> R + Send + 'static,
    {
        Ok(self.queue(call, when_full).await?.done().await?.value)
    }

    /// How long the oldest call not finished has waited since it was queued, while calls
    /// wait: zero when the thread has taken every call queued and finished all but the one it
    /// runs.
    pub fn behind(&self) -> Duration {
        self.lag.behind()
    }

    /// How many more calls the queue has room for now.
    pub fn capacity(&self) -> usize {
        self.jobs.capacity()
    }

    /// Whether the module's thread has ended while this handle can still send to it: it died
    /// (a panic it could not recover from), and no call can run until the server restarts.
    pub fn stopped(&self) -> bool {
        self.jobs.is_closed()
    }
}

/// Logs the end of the module's thread by a panic, which [`Worker::stopped`] then reports.
struct StopWatch;

impl Drop for StopWatch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            tracing::error!(
                "the module's thread stopped on a panic it could not recover from: every call \
                 is refused and /health answers 503; restart the server"
            );
        }
    }
}

impl WorkerThread {
    /// Waits for the thread to finish the queued calls and end, and for their answers to be
    /// sent once durable. It ends once every [`Worker`] handle has been dropped.
    pub fn join(self) {
        if self.thread.join().is_err() {
            tracing::error!("the module's thread panicked");
        }
        if self.durable.join().is_err() {
            tracing::error!("the durability thread panicked");
        }
    }
}

/// A queued call's answer, to wait for ([`Worker::queue`]).
#[derive(Debug)]
pub struct Pending<R> {
    answered: oneshot::Receiver<Result<Finished<R>, ApiError>>,
}

/// A finished call: what it returned, and whether its commits (if any) are durable.
#[derive(Debug)]
pub struct Finished<R> {
    /// What the call returned.
    pub value: R,
    /// `Ok` once the commit log has the call's commits (at once without a log); `degraded`
    /// if they could not be made durable, although they are visible in memory.
    pub durable: Result<(), ApiError>,
    /// The offset of the last commit when the call ended, read where it ran: every commit it
    /// made is at or before it. What a client waits for to read the call's writes
    /// (`WaitFor` in `docs/protocol.md`).
    pub offset: u64,
}

/// A call that ended and whose commits are durable: what it returned, and the offset to wait
/// for to read its writes ([`Finished::offset`]).
#[derive(Debug)]
pub struct Done<R> {
    /// What the call returned.
    pub value: R,
    /// The offset of the last commit when the call ended.
    pub offset: u64,
}

impl<R> Pending<R> {
    /// Waits for the call to finish and for its commits to be durable.
    ///
    /// Fails with `internal` if the call did not answer (it panicked).
    pub async fn finish(self) -> Result<Finished<R>, ApiError> {
        self.answered.await.map_err(|_| {
            ApiError::new(
                ErrorCode::Internal,
                "the module's thread dropped the call without answering",
            )
        })?
    }

    /// Waits for the call as [`finish`](Self::finish) does, and fails with its durability
    /// error (`degraded`) if its commits could not be made durable.
    pub async fn done(self) -> Result<Done<R>, ApiError> {
        let finished = self.finish().await?;
        finished.durable?;
        Ok(Done {
            value: finished.value,
            offset: finished.offset,
        })
    }
}

impl<R: Send + 'static> Pending<R> {
    /// The answer of `call` run on a task of its own instead of the module's thread (a call
    /// an edge forwards to its primary, [`crate::runner`]), or the error it failed with.
    pub(crate) fn spawn(
        call: impl std::future::Future<Output = Result<Finished<R>, ApiError>> + Send + 'static,
    ) -> Self {
        let (answer, answered) = oneshot::channel();
        tokio::spawn(async move {
            let _ = answer.send(call.await);
        });
        Self { answered }
    }
}

/// The offset of `database`'s last commit (`0` before the first).
pub fn last_commit(database: &Database) -> u64 {
    database.next_offset().saturating_sub(1)
}

/// The job that runs `call` on the module's thread, and the receiver of its answer.
fn job<R, F>(call: F) -> (Job, oneshot::Receiver<Result<Finished<R>, ApiError>>)
where
    R: Send + 'static,
    F: FnOnce(&mut WasmModule) -> R + Send + 'static,
{
    let (answer, answered) = oneshot::channel();
    // The module's logs during the call belong to the request's span.
    let span = tracing::Span::current();
    let job: Job = (
        Instant::now(),
        Box::new(move |module, acknowledger| {
            let _entered = span.enter();
            if answer.is_closed() {
                tracing::debug!("skipped a call whose requester has gone");
                return;
            }
            // The requester may go while the call runs; the call's effects stand regardless.
            let value = call(module);
            let offset = last_commit(module.database());
            // Nobody hears of a commit before the log has it.
            match module.env_mut().take_durability() {
                None => {
                    let _ = answer.send(Ok(Finished {
                        value,
                        durable: Ok(()),
                        offset,
                    }));
                }
                Some(ticket) => acknowledger.after(
                    ticket,
                    Box::new(move |durable| {
                        let _ = answer.send(Ok(Finished {
                            value,
                            durable,
                            offset,
                        }));
                    }),
                ),
            }
        }),
    );
    (job, answered)
}

fn shutting_down() -> ApiError {
    ApiError::new(ErrorCode::ShuttingDown, "the server is shutting down")
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmod_abi::encoding::to_vec;
    use wasmod_abi::{ConnectionId, Identity};
    use wasmod_host::Outcome;

    /// A panic in the host during a call fails that call (`internal`); the module's thread
    /// goes on serving, with a fresh instance (before, the thread ended, and every later call
    /// was answered 503 while `/health` said ok).
    #[tokio::test]
    async fn a_panic_in_the_host_fails_its_call_and_the_module_thread_goes_on() {
        let module = crate::test_support::quickstart();
        let (worker, thread) = Worker::start(module, 4).expect("started");
        let panicked: Result<(), _> = worker.run(|_| panic!("a host bug")).await;
        let error = panicked.expect_err("the call failed");
        assert_eq!(error.code, ErrorCode::Internal, "{error:?}");
        let outcome = worker
            .run(|module| {
                let args = to_vec(&("after the panic".to_owned(),));
                let sender = Identity::from_bytes([3; 32]);
                module.call_reducer("send", sender, ConnectionId::ZERO, &args)
            })
            .await
            .expect("the thread still serves");
        assert!(matches!(outcome, Outcome::Committed { .. }), "{outcome:?}");
        drop(worker);
        thread.join();
    }
}
