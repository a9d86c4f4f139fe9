//! The call pipeline: every call by name, whatever brings it, takes the same steps here.
//!
//! An HTTP route (`POST /v1/reducers/{name}` and its siblings), a WebSocket's `CallReducer`
//! (and its siblings), `wasmod call` in-process and a call an edge forwards to its primary all
//! go through one [`Pipeline`]:
//!
//! 1. **find** the entry point by name among the kinds the call reaches
//!    ([`CallKind::reaches`], the protocol's one rule), in the build serving now;
//! 2. **caller**: an entry point that runs as its caller needs an identity
//!    ([`Found::caller`]);
//! 3. **arguments**, JSON or already encoded ([`Args`]), encoded as the module takes them;
//! 4. **slot**: one of its requester's calls in progress ([`crate::slots`]);
//! 5. **queue or run** where the call belongs ([`crate::runner`]: the module's thread, or an
//!    edge's primary), refused or waiting when the queue is full as [`WhenFull`] says;
//! 6. **durability**: the answer waits until the call's commits are durable
//!    ([`crate::durable`]);
//! 7. **result**: a returned value bounded and converted ([`crate::results`]);
//! 8. **metrics**: counted per kind ([`crate::metrics`]).
//!
//! Steps 1 to 5 are [`Pipeline::find`] and [`Pipeline::queue`]; how a transport renders the
//! answer (HTTP's JSON, a socket's `CallResult` in either encoding) is its own, from the
//! [`Finished`](crate::worker::Finished) call. Everything that can be refused is refused
//! before the call is queued, so the module's thread only sees calls it can run.

mod http;
#[cfg(test)]
mod tests;

pub(crate) use crate::invocation::Args;
pub use http::{HttpAnswer, HttpRefusal};

use crate::invocation::Invocation;

use crate::build::CurrentBuild;
use crate::metrics::{InFlight, Metrics};
use crate::results::Results;
use crate::runner::Runner;
use crate::slots::{CallSlots, Requester};
use crate::worker::{Pending, WhenFull};
use std::future::Future;
use std::net::IpAddr;
use std::sync::Arc;
use wasmod_abi::{ConnectionId, Identity};
use wasmod_host::{Caller as RunAs, Claims, Outcome};
use wasmod_protocol::call::{self, CallKind};
use wasmod_protocol::errors::{ApiError, ErrorCode};
use wasmod_protocol::http::CallResponse;

/// Who makes a call, and over what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The identity the call runs as; `None` for a call without a token, which reaches only
    /// anonymous views.
    pub identity: Option<Identity>,
    /// The connection the call comes over; [`ConnectionId::ZERO`] for a call without one
    /// (HTTP).
    pub connection: ConnectionId,
    /// Where the call comes from: without an identity, its calls in progress are counted
    /// against it; `None` for a caller in the same process.
    pub source: Option<IpAddr>,
    /// The claims of the caller's verified token (an OpenID Connect token's payload), which
    /// the module reads if it asks; `None` for a token of the server's own, or none.
    pub claims: Option<Claims>,
}

impl Caller {
    /// A caller with `identity`, no connection and no claims, from `source`.
    pub fn new(identity: Option<Identity>, source: Option<IpAddr>) -> Self {
        Self {
            identity,
            connection: ConnectionId::ZERO,
            source,
            claims: None,
        }
    }

    /// This caller with `claims`, those of the token that proved its identity.
    pub fn with_claims(self, claims: Option<Claims>) -> Self {
        Self { claims, ..self }
    }

    /// The caller as the module sees it: the identity the call runs as (`identity`), the
    /// connection and the claims.
    pub(crate) fn running_as(&self, identity: Identity) -> RunAs {
        RunAs::new(identity, self.connection).with_claims(self.claims.clone())
    }
}

/// An entry point found by name in the build serving now: step 1 done.
#[derive(Debug)]
pub(crate) struct Found {
    invocation: Invocation,
}

impl Found {
    /// The identity the call runs as: the caller's, required by every kind but anonymous
    /// views (which run as nobody, and so as [`Identity::ZERO`]).
    pub(crate) fn caller(&self, caller: &Caller) -> Result<Identity, ApiError> {
        if !self.invocation.kind().takes_caller() {
            return Ok(caller.identity.unwrap_or(Identity::ZERO));
        }
        caller.identity.ok_or_else(|| {
            ApiError::new(
                ErrorCode::Unauthenticated,
                format!(
                    "{} `{}` runs as an identity: send `Authorization: Bearer <token>` \
                     (POST /v1/identity gives one)",
                    self.invocation.kind().as_str(),
                    self.invocation.name()
                ),
            )
        })
    }

    /// What runs: owned, for the module's thread.
    pub(crate) fn invocation(&self) -> &Invocation {
        &self.invocation
    }
}

/// The steps every call takes (see the module's documentation). Cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct Pipeline {
    build: CurrentBuild,
    runner: Runner,
    slots: CallSlots,
    results: Results,
    metrics: Arc<Metrics>,
}

impl Pipeline {
    /// The pipeline of calls to the build `build` serves, run by `runner`, each taking one of
    /// `slots`, their values bounded by `results` and counted in `metrics`.
    pub(crate) fn new(
        build: CurrentBuild,
        runner: Runner,
        slots: CallSlots,
        results: Results,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            build,
            runner,
            slots,
            results,
            metrics,
        }
    }

    /// Step 1: the entry point `name` among the kinds a call of `kind` reaches, in the build
    /// serving now. Fails with `no_such_entry`, `lifecycle_reducer` or `scheduled_reducer`.
    pub(crate) fn find(&self, kind: Option<CallKind>, name: &str) -> Result<Found, ApiError> {
        let module = self.build.get().module.clone();
        let point = call::find(&module, name, CallKind::reaches(kind))?;
        Ok(Found {
            invocation: Invocation::new(point.kind, point.name.to_owned(), module),
        })
    }

    /// Steps 2 to 5: the call `found` as `caller` with `args`, queued where it runs (refused
    /// or waiting for room as `when_full` says), holding one of its requester's slots until
    /// it ends; the wait for its answer.
    pub(crate) async fn queue(
        &self,
        found: &Found,
        caller: &Caller,
        args: Args,
        when_full: WhenFull,
    ) -> Result<Pending<Outcome>, ApiError> {
        let identity = found.caller(caller)?;
        let args = found.invocation.encode_args(args)?;
        let slot = self
            .slots
            .acquire(Requester::of(caller.identity, caller.source))?;
        self.runner
            .queue(
                found.invocation.clone(),
                caller.running_as(identity),
                args,
                slot,
                when_full,
            )
            .await
    }

    /// The whole pipeline for a call answered in JSON (HTTP, `wasmod call`): found, then its
    /// arguments awaited (an HTTP body is read only once the call is known to be good),
    /// refused with `busy` when the module's queue is full, and answered once durable.
    pub(crate) async fn call_json(
        &self,
        kind: Option<CallKind>,
        name: &str,
        caller: Caller,
        args: impl Future<Output = Result<serde_json::Value, ApiError>>,
    ) -> Result<CallResponse, ApiError> {
        let work = async {
            let found = self.find(kind, name)?;
            found.caller(&caller)?;
            let args = Args::Json(args.await?);
            let done = self
                .queue(&found, &caller, args, WhenFull::Refuse)
                .await?
                .done()
                .await?;
            self.results.answer(found.invocation(), done).await
        };
        self.metrics.measure(metric(kind), work).await
    }

    /// Step 8 for a call whose answer comes later (a socket's): counted from now until the
    /// returned [`InFlight`] is finished.
    pub(crate) fn count(&self, kind: CallKind) -> InFlight {
        self.metrics.start(kind.as_str())
    }

    /// Step 7's bound and conversions.
    pub(crate) fn results(&self) -> &Results {
        &self.results
    }
}

/// The `kind` label a call of `kind` is counted under (`call` when none is named).
fn metric(kind: Option<CallKind>) -> &'static str {
    kind.map_or("call", CallKind::as_str)
}
