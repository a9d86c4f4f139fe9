//! Where a call runs: on the module's thread, or, on an edge node, on the primary for every
//! call that may write.
//!
//! Routes, sockets and connections hand their calls to a [`Runner`] and never ask where they
//! run. A primary (or a lone server) runs everything on its module's thread ([`Worker`]). An
//! edge holds a replica, which only its primary's commits may change, so it runs views there
//! but forwards reducers, procedures, HTTP handlers and the lifecycle reducers of its clients'
//! connections to the primary ([`replication::forward`](crate::replication::forward)); the
//! answer waits until the edge has applied the call's commit, so that what the client reads
//! next on this edge includes its own write.
//!
//! Forwarded calls in flight are bounded (as many as the module's queue holds); past that they
//! are refused with `busy`, as a full queue is. A primary that cannot be reached fails the
//! call with `busy` too: nothing ran, so the client may retry.

use crate::build::CurrentBuild;
use crate::health::LogHealth;
use crate::invocation::{accepted, Invocation};
use crate::replication::edge::Applied;
use crate::replication::forward::{Forwarded, ForwardedCall};
use crate::replication::primary::Primary;
use crate::worker::{Done, Finished, Pending, WhenFull, Worker};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use wasmod_abi::http::Request;
use wasmod_abi::EntryKind;
use wasmod_host::{Caller, Claims, Outcome, WasmModule};
use wasmod_protocol::errors::{ApiError, ErrorCode};

/// Runs calls where they belong. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Runner {
    worker: Worker,
    /// The build serving now, against which HTTP requests were routed.
    build: CurrentBuild,
    /// Calls that write are refused once the commit log failed.
    health: LogHealth,
    forwarding: Option<Arc<Forwarding>>,
}

/// An edge's way to its primary, for the calls that may write.
#[derive(Debug)]
pub struct Forwarding {
    primary: Arc<Primary>,
    applied: Applied,
    apply_wait: Duration,
    in_flight: Arc<Semaphore>,
}

impl Forwarding {
    /// Calls forwarded to `primary`, at most `in_flight` at once, each answered once
    /// `applied` has its commit or after `apply_wait`, whichever comes first.
    pub fn new(
        primary: Arc<Primary>,
        applied: Applied,
        apply_wait: Duration,
        in_flight: usize,
    ) -> Self {
        Self {
            primary,
            applied,
            apply_wait,
            in_flight: Arc::new(Semaphore::new(in_flight.max(1))),
        }
    }

    /// Sends `call` to the primary on a task of its own; `answer` makes the answer of its
    /// outcome once the edge holds the call's commit (it runs even if the requester has gone).
    /// With too many calls in flight it is refused with `busy`, or, for work that must not be
    /// lost ([`WhenFull::Wait`]), waits for room.
    fn queue<R: Send + 'static>(
        self: &Arc<Self>,
        call: ForwardedCall,
        when_full: WhenFull,
        answer: impl FnOnce(Option<Outcome>) -> R + Send + 'static,
    ) -> Result<Pending<R>, ApiError> {
        let permit = match when_full {
            WhenFull::Refuse => Some(self.in_flight.clone().try_acquire_owned().map_err(|_| {
                ApiError::new(
                    ErrorCode::Busy,
                    "too many calls are waiting for the primary: retry later",
                )
            })?),
            WhenFull::Wait => None,
        };
        let forwarding = self.clone();
        Ok(Pending::spawn(async move {
            let _permit = match permit {
                Some(permit) => permit,
                None => forwarding
                    .in_flight
                    .clone()
                    .acquire_owned()
                    .await
                    .map_err(|_| {
                        ApiError::new(ErrorCode::ShuttingDown, "the edge is shutting down")
                    })?,
            };
            let (outcome, offset) = forwarding.primary.forward(&call).await?;
            // What the call wrote (a reducer's commit, a procedure's or handler's
            // transactions) is at or before `offset`: the client reads it here next.
            let wrote = outcome.as_ref().is_some_and(Outcome::is_success);
            if wrote
                && !forwarding
                    .applied
                    .wait_for(offset, forwarding.apply_wait)
                    .await
            {
                tracing::warn!(
                    offset,
                    "a forwarded call ended on the primary, but this edge has not applied its \
                     commits within {:?}: answering before the client can read them here",
                    forwarding.apply_wait
                );
            }
            Ok(Finished {
                value: answer(outcome),
                durable: Ok(()),
                offset,
            })
        }))
    }
}

/// A request to the module's HTTP handlers, with the handler its route found in the build
/// that served when it came: routed once, by the transport, which answers `404`/`405` before
/// it reads a body.
#[derive(Debug)]
pub struct RoutedRequest {
    /// The number of the build whose routes found the handler ([`crate::build::Build`]).
    pub build: u64,
    /// The handler's id in that build.
    pub handler: u32,
    /// The request.
    pub request: Request,
    /// The claims of the request's verified token, if it had one: the handler reads them.
    pub claims: Option<Claims>,
}

impl RoutedRequest {
    /// Runs the request on `module`, which `serving` says is serving now: by the handler found
    /// if that build still serves, or routed again in the build that took over since (a
    /// `wasmod publish` between the routing and the call: its ids may differ).
    fn run(&self, module: &mut WasmModule, serving: &CurrentBuild) -> Outcome {
        let claims = self.claims.clone();
        if serving.get().number == self.build {
            module.call_http_handler(self.handler, &self.request, claims)
        } else {
            module.call_http(&self.request, claims)
        }
    }
}

impl Runner {
    /// Every call runs on `worker`'s module thread, which serves `build`; calls that write
    /// are refused with `degraded` once `health` says the commit log failed.
    pub fn local(worker: Worker, build: CurrentBuild, health: LogHealth) -> Self {
        Self {
            worker,
            build,
            health,
            forwarding: None,
        }
    }

    /// Views run on `worker`'s module thread; calls that may write go through `forwarding`
    /// (`health`, of the edge's replica, never fails: it has no log of its own).
    pub fn forwarding(
        worker: Worker,
        build: CurrentBuild,
        health: LogHealth,
        forwarding: Forwarding,
    ) -> Self {
        Self {
            worker,
            build,
            health,
            forwarding: Some(Arc::new(forwarding)),
        }
    }

    /// Queues `invocation` as `caller` (identity, connection, claims) with the encoded `args`, refusing it
    /// or waiting when there is no room as `room` says ([`Worker::queue`]), and returns the
    /// wait for its answer. Calls queued one after the other start in that order. `held` (a
    /// call slot, say) is kept until the call has ended, even if nobody waits for its answer
    /// any more. A call that may write is refused with `degraded` once the commit log failed.
    pub async fn queue(
        &self,
        invocation: Invocation,
        caller: Caller,
        args: Vec<u8>,
        held: impl Send + 'static,
        when_full: WhenFull,
    ) -> Result<Pending<Outcome>, ApiError> {
        if invocation.writes() {
            self.health.take_writes()?;
        }
        let Some(forwarding) = self.forwarding.as_ref().filter(|_| invocation.writes()) else {
            let call = move |module: &mut WasmModule| {
                let _held = held;
                invocation.run(module, &caller, &args)
            };
            return self.worker.queue(call, when_full).await;
        };
        let name = invocation.name().to_owned();
        let call = match invocation.kind() {
            EntryKind::Procedure => Forwarded::Procedure { name, args },
            _ => Forwarded::Reducer { name, args },
        };
        forwarding.queue(
            ForwardedCall::new(&caller, call),
            when_full,
            move |outcome| {
                let _held = held;
                answered(outcome)
            },
        )
    }

    /// Sends `routed` to the module's HTTP handler its route found, keeping `held` until the
    /// call has ended (as [`Runner::queue`]). On an edge, the request goes to the primary,
    /// which routes it against its own build.
    pub async fn http(
        &self,
        routed: RoutedRequest,
        held: impl Send + 'static,
    ) -> Result<Done<Outcome>, ApiError> {
        let Some(forwarding) = &self.forwarding else {
            let build = self.build.clone();
            let call = move |module: &mut WasmModule| {
                let _held = held;
                routed.run(module, &build)
            };
            return self
                .worker
                .queue(call, WhenFull::Refuse)
                .await?
                .done()
                .await;
        };
        let caller = Caller::HOST.with_claims(routed.claims);
        let call = ForwardedCall::new(&caller, Forwarded::http(&routed.request));
        let answer = move |outcome| {
            let _held = held;
            answered(outcome)
        };
        forwarding
            .queue(call, WhenFull::Refuse, answer)?
            .done()
            .await
    }

    /// Runs the module's `client_connected` for `caller` (its identity, connection and
    /// claims, which the module may refuse it by), and `opened` once the module has accepted
    /// it (on the module's thread, or as soon as the primary
    /// answered, even if the requester has gone meanwhile). Fails with `connection_refused`
    /// if the module refused it, `degraded` once the commit log failed (the connection would
    /// be recorded in a commit), or as the call could not run.
    pub async fn connect(
        &self,
        caller: Caller,
        opened: impl FnOnce() + Send + 'static,
    ) -> Result<(), ApiError> {
        self.health.take_writes()?;
        let Some(forwarding) = &self.forwarding else {
            return self
                .worker
                .run(move |module| {
                    accepted(module.client_connected_as(&caller))?;
                    opened();
                    Ok(())
                })
                .await?;
        };
        let call = ForwardedCall::new(&caller, Forwarded::Connect);
        let answer = move |outcome| {
            accepted(outcome)?;
            opened();
            Ok(())
        };
        forwarding
            .queue(call, WhenFull::Refuse, answer)?
            .finish()
            .await?
            .value
    }

    /// Runs the module's `client_disconnected` for `caller`, waiting for room on the module's
    /// thread rather than being refused; `None` if the module has no such reducer.
    pub async fn disconnect(&self, caller: Caller) -> Result<Option<Outcome>, ApiError> {
        let Some(forwarding) = &self.forwarding else {
            return self
                .worker
                .run_when_room(move |module| module.client_disconnected_as(&caller))
                .await;
        };
        let call = ForwardedCall::new(&caller, Forwarded::Disconnect);
        Ok(forwarding
            .queue(call, WhenFull::Wait, |outcome| outcome)?
            .finish()
            .await?
            .value)
    }
}

/// A forwarded entry point's outcome: the primary answers one for every call but lifecycle
/// reducers the module lacks.
fn answered(outcome: Option<Outcome>) -> Outcome {
    outcome.unwrap_or_else(|| Outcome::Aborted {
        reason: "the primary ran no entry point for the call".to_owned(),
    })
}
