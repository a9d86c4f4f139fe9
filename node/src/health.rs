//! Whether the node's commit log still works.
//!
//! Once a write or sync of the log fails (a full disk, an I/O error), the database refuses every
//! later commit before applying it, since nothing more can be made durable in order
//! (`docs/durability.md`). The node is then **degraded**: calls that write are refused before
//! they are queued ([`LogHealth::take_writes`]), with `degraded` and a message naming the
//! failure, and a call whose commit could not be made durable answers the same error
//! ([`not_durable`]). The transports make it visible beyond that (the server's `/health` and
//! a header on every response).

use std::sync::Arc;
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

    /// `Ok` while the log works; the `degraded` error once it failed: for a call that writes,
    /// before it is queued.
    pub fn take_writes(&self) -> Result<(), ApiError> {
        self.failure()
            .map_or(Ok(()), |reason| Err(degraded(&reason)))
    }
}

/// The error of a call whose commits the log could not make durable (`error`, from a
/// ticket's wait).
pub fn not_durable(error: &DurabilityError) -> ApiError {
    match error {
        DurabilityError::Failed(reason) => degraded(reason),
        other => degraded(other),
    }
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
