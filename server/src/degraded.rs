//! A server whose commit log failed is **degraded**: it must not go on as if nothing happened.
//! The node knows it ([`NodeHandle::health`]); this is how the server shows it over HTTP.
//!
//! Once a write or sync of the log fails (a full disk, an I/O error), the database refuses every
//! later commit before applying it, since nothing more can be made durable in order
//! (`docs/durability.md`). The server makes that visible instead of answering each call with a
//! 500 and serving reads as if all were well:
//!
//! - calls that write (reducers, procedures, new connections, whose `client_connected` commits)
//!   are refused before they are queued, with `degraded` (503) and a message naming the
//!   failure; an HTTP handler still runs (it may only read), and a commit it makes is refused,
//!   its answer `degraded` too (the call's wait for durability fails);
//! - every response carries [`DEGRADED_HEADER`], so that a client reading tables or views
//!   knows that what it reads may include commits a restart loses (those not yet durable when
//!   the log failed);
//! - `/health` answers 503 with `"status": "degraded"` and the reason, so that a load balancer
//!   or an operator's probe takes the server out and someone restarts it.

use axum::extract::{Request, State};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use wasmod_node::NodeHandle;

/// The response header a degraded server adds to every response, with the value
/// [`DEGRADED_VALUE`].
pub const DEGRADED_HEADER: &str = "wasmod-degraded";

/// The value of [`DEGRADED_HEADER`]: the reason is in `/health` and in refused calls' errors.
pub const DEGRADED_VALUE: &str = "commit-log-failed";

/// Middleware: adds [`DEGRADED_HEADER`] to every response while the log has failed.
pub(crate) async fn mark(State(node): State<NodeHandle>, request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    if node.log_failure().is_some() {
        response
            .headers_mut()
            .insert(DEGRADED_HEADER, HeaderValue::from_static(DEGRADED_VALUE));
    }
    response
}
