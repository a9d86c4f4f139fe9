//! A client that calls the quickstart's `send` reducer over its socket, pipelined: up to
//! [`IN_FLIGHT`] calls queued at once (the server's limit; beyond it a call is answered
//! `busy`), each answered by its commit's `TransactionUpdate`, in order.
//!
//! The writer of the delivery measurement is one caller at a steady pace; the pipelined-calls
//! measurement runs many callers as fast as their answers come back.

use crate::client;
use crate::pace::{Pace, TICK};
use crate::sample::{message_text, REDUCER};
use anyhow::{bail, Context, Result};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use wasmod_abi::encoding::to_vec;
use wasmod_client::socket::{Received, Sender};
use wasmod_protocol::ws::{ClientMessage, ServerMessage, UpdateStatus};
use wasmod_protocol::ErrorCode;

/// The most calls one connection may have in flight (`MAX_CALLS_IN_FLIGHT` of the server).
pub const IN_FLIGHT: usize = 16;

/// How long the last answers may take once the last call is sent.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// How the calls of one run ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Calls {
    /// Calls sent.
    pub sent: u64,
    /// Answered `Committed`.
    pub committed: u64,
    /// Answered `busy`.
    pub busy: u64,
    /// Answered anything else (a failure, an abort, another error).
    pub failed: u64,
}

impl Calls {
    /// Every call answered, and every answer a commit.
    pub fn all_committed(&self) -> bool {
        self.committed == self.sent
    }

    /// The sum of two runs.
    pub fn plus(self, other: Self) -> Self {
        Self {
            sent: self.sent + other.sent,
            committed: self.committed + other.committed,
            busy: self.busy + other.busy,
            failed: self.failed + other.failed,
        }
    }
}

/// Answers counted by a caller's reading task.
#[derive(Debug, Default)]
struct Answers {
    committed: AtomicU64,
    busy: AtomicU64,
    failed: AtomicU64,
}

impl Answers {
    fn total(&self) -> u64 {
        self.committed.load(Ordering::Relaxed)
            + self.busy.load(Ordering::Relaxed)
            + self.failed.load(Ordering::Relaxed)
    }
}

/// One calling connection.
#[derive(Debug)]
pub struct Caller {
    sender: Sender,
    answers: Arc<Answers>,
    slots: Arc<Semaphore>,
    reading: tokio::task::JoinHandle<Result<()>>,
    next_request: u32,
}

impl Caller {
    /// Connects to `url` (the server's `/v1/subscribe`).
    pub async fn open(url: &str) -> Result<Self> {
        let (sender, mut receiver) = client::connect(url).await?.split();
        let answers = Arc::new(Answers::default());
        let slots = Arc::new(Semaphore::new(IN_FLIGHT));
        let reading = tokio::spawn({
            let (answers, slots) = (answers.clone(), slots.clone());
            async move {
                loop {
                    let message = match receiver.next().await? {
                        Received::Message(message) => message,
                        Received::Closed(closed) => bail!("the caller's socket: {closed}"),
                    };
                    let counter = match message {
                        ServerMessage::TransactionUpdate(update) if update.request_id.is_some() => {
                            match update.status {
                                UpdateStatus::Committed => &answers.committed,
                                _ => &answers.failed,
                            }
                        }
                        ServerMessage::CallResult {
                            result: Err(error), ..
                        } if error.code == ErrorCode::Busy => &answers.busy,
                        ServerMessage::CallResult { .. } => &answers.failed,
                        _ => continue,
                    };
                    counter.fetch_add(1, Ordering::Relaxed);
                    slots.add_permits(1);
                }
            }
        });
        Ok(Self {
            sender,
            answers,
            slots,
            reading,
            next_request: 0,
        })
    }

    /// Calls `send` as `pace` says, until its count or until `stop` (whichever is first),
    /// never more than [`IN_FLIGHT`] at once; then waits for every answer.
    pub async fn call(&mut self, pace: Pace, stop: Instant) -> Result<Calls> {
        let before = self.counts();
        let answered_before = self.answers.total();
        let mut sent = 0;
        while sent < pace.count() && Instant::now() < stop {
            let due = pace.due(Instant::now());
            while sent < due && Instant::now() < stop {
                let permit = self.slots.acquire().await.context("the caller's slots")?;
                permit.forget();
                self.next_request = self.next_request.wrapping_add(1);
                let message = ClientMessage::CallReducer {
                    request_id: self.next_request,
                    name: REDUCER.into(),
                    args: to_vec(&message_text(u64::from(self.next_request))),
                };
                self.sender.send(&message).await?;
                sent += 1;
            }
            if sent < pace.count() {
                tokio::time::sleep(TICK).await;
            }
        }
        let expected = answered_before + sent;
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        while self.answers.total() < expected {
            if self.reading.is_finished() {
                return match (&mut self.reading).await {
                    Ok(Err(error)) => Err(error),
                    _ => bail!("the caller's reading task ended"),
                };
            }
            if Instant::now() > deadline {
                bail!(
                    "{} of {sent} calls unanswered after {ANSWER_TIMEOUT:?}",
                    expected - self.answers.total()
                );
            }
            tokio::time::sleep(TICK).await;
        }
        let after = self.counts();
        Ok(Calls {
            sent,
            committed: after.committed - before.committed,
            busy: after.busy - before.busy,
            failed: after.failed - before.failed,
        })
    }

    /// The answers so far, of every run.
    fn counts(&self) -> Calls {
        Calls {
            sent: 0,
            committed: self.answers.committed.load(Ordering::Relaxed),
            busy: self.answers.busy.load(Ordering::Relaxed),
            failed: self.answers.failed.load(Ordering::Relaxed),
        }
    }
}

impl Drop for Caller {
    fn drop(&mut self) {
        self.reading.abort();
    }
}

/// Has `callers` send `count` calls in all, as fast as the server takes them, shared evenly
/// (the first ones take one more when `count` does not divide), until `stop`; the calls of
/// all of them.
pub async fn call_all(callers: &mut [Caller], count: u64, stop: Instant) -> Result<Calls> {
    let each = count / callers.len().max(1) as u64;
    let extra = count % callers.len().max(1) as u64;
    let runs = callers.iter_mut().enumerate().map(|(index, caller)| {
        let share = each + u64::from((index as u64) < extra);
        caller.call(Pace::new(f64::MAX, share), stop)
    });
    Ok(futures_util::future::try_join_all(runs)
        .await?
        .into_iter()
        .fold(Calls::default(), Calls::plus))
}
