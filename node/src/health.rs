//! Whether the node's commit log still works, and how far behind its queues are.
//!
//! Once a write or sync of the log fails (a full disk, an I/O error), the database refuses every
//! later commit before applying it, since nothing more can be made durable in order
//! (`docs/durability.md`). The node is then **degraded**: calls that write are refused before
//! they are queued ([`LogHealth::take_writes`]), with `degraded` and a message naming the
//! failure, and a call whose commit could not be made durable answers the same error
//! ([`not_durable`]). The transports make it visible beyond that (the server's `/health` and
//! a header on every response).
//!
//! A node whose module's queue or evaluation task has fallen behind ([`Lag`]) still serves,
//! but a load balancer should hear of it before its clients do: calls wait, subscriptions
//! and updates are late. The server's `/health` reports it past [`BEHIND_BOUND`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmod_host::datastore::durability::DurabilityError;
use wasmod_host::datastore::Database;
use wasmod_protocol::errors::{ApiError, ErrorCode};

/// Whether the database's commit log has failed. Cheap to clone.
#[derive(Clone, Debug)]
pub struct LogHealth {
    database: Arc<Database>,
}

impl LogHealth {
    /// The health of `database`'s commit log (never failed for a database without one).
    pub fn new(database: Arc<Database>) -> Self {
        Self { database }
    }

    /// Why the log failed, if it did.
    pub fn failure(&self) -> Option<String> {
        self.database.log_failure()
    }

    /// `Ok` while the log works and takes writes; the `degraded` error once it failed, the
    /// `not_primary` error on a standby: for a call that writes, before it is queued.
    pub fn take_writes(&self) -> Result<(), ApiError> {
        if self.database.is_standby() {
            return Err(not_primary());
        }
        self.failure()
            .map_or(Ok(()), |reason| Err(degraded(&reason)))
    }
}

/// How far behind the module's queue or the evaluation task may be before the server's
/// `/health` says so.
pub const BEHIND_BOUND: Duration = Duration::from_secs(1);

/// How long the oldest work of a queue has waited, as the loop that takes it reports: the
/// time since the work it took last was queued, while more waits, zero once it has nothing
/// waiting. Read by any thread, written by the loop.
#[derive(Debug)]
pub struct Lag {
    epoch: Instant,
    /// Microseconds from `epoch` to when the oldest work waiting was queued, plus one; zero
    /// while nothing waits.
    since: AtomicU64,
}

impl Default for Lag {
    fn default() -> Self {
        Self {
            epoch: Instant::now(),
            since: AtomicU64::new(0),
        }
    }
}

impl Lag {
    /// The oldest work waiting was queued at `queued`.
    pub fn waiting_since(&self, queued: Instant) {
        let micros = queued.saturating_duration_since(self.epoch).as_micros();
        let micros = u64::try_from(micros).unwrap_or(u64::MAX - 1);
        self.since.store(micros + 1, Ordering::Relaxed);
    }

    /// Work waits from now, unless older work still does.
    pub fn waiting(&self) {
        if self.since.load(Ordering::Relaxed) == 0 {
            self.waiting_since(Instant::now());
        }
    }

    /// Nothing waits.
    pub fn caught_up(&self) {
        self.since.store(0, Ordering::Relaxed);
    }

    /// How long the oldest work waiting has waited (zero if none does).
    pub fn behind(&self) -> Duration {
        match self.since.load(Ordering::Relaxed) {
            0 => Duration::ZERO,
            since => self
                .epoch
                .elapsed()
                .saturating_sub(Duration::from_micros(since - 1)),
        }
    }
}

/// The error of a call whose commits the log could not make durable (`error`, from a
/// ticket's wait).
pub fn not_durable(error: &DurabilityError) -> ApiError {
    match error {
        DurabilityError::Failed(reason) => degraded(reason),
        DurabilityError::Standby => not_primary(),
        other => degraded(other),
    }
}

/// The error of a write sent to a standby of a replicated deployment.
pub fn not_primary() -> ApiError {
    ApiError::new(ErrorCode::NotPrimary, DurabilityError::Standby.to_string())
}

/// The error of a call that cannot be made durable because the log failed for `reason`.
pub fn degraded(reason: &dyn std::fmt::Display) -> ApiError {
    ApiError::new(
        ErrorCode::Degraded,
        format!(
            "the server is degraded: its commit log failed ({reason}); it takes no writes until \
             it is restarted"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lag_is_the_age_of_the_oldest_work_waiting() {
        let lag = Lag::default();
        assert_eq!(lag.behind(), Duration::ZERO);
        let queued = Instant::now();
        std::thread::sleep(Duration::from_millis(20));
        lag.waiting_since(queued);
        lag.waiting();
        assert!(
            lag.behind() >= Duration::from_millis(20),
            "older work still waits"
        );
        lag.caught_up();
        assert_eq!(lag.behind(), Duration::ZERO);
    }
}
