//! What one calling connection does, whatever carries its calls: draws account pairs, keeps
//! its calls in flight, and tallies the answers ([`Tally`]).

use super::zipf::{Random, Zipf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Barrier;

/// The reducer every call calls.
pub const REDUCER: &str = "transfer";

/// The amounts moved: small against the balances, so that a refusal for insufficient funds
/// stays rare even on the hottest accounts.
const MAX_AMOUNT: u64 = 100;

/// What a caller needs to draw its calls.
#[derive(Clone, Debug)]
pub struct Draw {
    /// The accounts' distribution.
    pub zipf: Zipf,
    /// The caller's generator.
    pub random: Random,
}

impl Draw {
    /// The next call's arguments: two different accounts and an amount.
    pub fn next(&mut self) -> (u32, u32, i64) {
        let (from, to) = self.zipf.pair(&mut self.random).unwrap_or((0, 1));
        let amount = 1 + self.random.next_u64() % MAX_AMOUNT;
        (from, to, amount as i64)
    }
}

/// How a call was answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// Committed.
    Committed,
    /// The reducer refused the transfer (insufficient funds): nothing committed, and the
    /// server did its work.
    Refused,
    /// The server refused the call (`busy`) before running it.
    Busy,
    /// Anything else: an abort, an error. Fails the run.
    Error(String),
}

/// The answers of one caller.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Calls sent.
    pub sent: u64,
    /// Committed.
    pub committed: u64,
    /// Refused by the reducer.
    pub refused: u64,
    /// Answered `busy`.
    pub busy: u64,
    /// The first error, if any (the others are counted in `errors`).
    pub error: Option<String>,
    /// Answers that were errors.
    pub errors: u64,
    /// Each committed call's time from sent to answered, in microseconds.
    pub latencies: Vec<u32>,
}

impl Tally {
    /// Counts `answer`, which came `latency` after its call was sent.
    pub fn count(&mut self, answer: Answer, latency: Duration) {
        match answer {
            Answer::Committed => {
                self.committed += 1;
                self.latencies
                    .push(latency.as_micros().try_into().unwrap_or(u32::MAX));
            }
            Answer::Refused => self.refused += 1,
            Answer::Busy => self.busy += 1,
            Answer::Error(error) => {
                self.errors += 1;
                self.error.get_or_insert(error);
            }
        }
    }

    /// The tallies of two callers together.
    pub fn plus(mut self, other: Self) -> Self {
        self.sent += other.sent;
        self.committed += other.committed;
        self.refused += other.refused;
        self.busy += other.busy;
        self.errors += other.errors;
        self.error = self.error.or(other.error);
        self.latencies.extend(other.latencies);
        self
    }
}

/// When a caller calls: once every caller is connected (they all wait at `ready`, with the
/// measurement), for `run`.
#[derive(Clone, Debug)]
pub struct Window {
    /// How long the calls go on.
    pub run: Duration,
    /// How many calls a caller keeps in flight (over WebSocket).
    pub in_flight: usize,
    /// Where the callers and the measurement wait for each other.
    pub ready: Arc<Barrier>,
}

impl Window {
    /// Waits for every caller; then the instant the calls stop.
    pub async fn open(&self) -> Instant {
        self.ready.wait().await;
        Instant::now() + self.run
    }
}

/// How long the last answers may take once sending stopped.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);
