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

use crate::node::EdgeState;
use crate::worker::Worker;
use serde_json::{json, Value};
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

    /// `Ok` while the log works; the `degraded` error once it failed: for a call that writes,
    /// before it is queued.
    pub fn take_writes(&self) -> Result<(), ApiError> {
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

/// How a node is doing, as `GET /health` reports it (`docs/http-api.md`).
#[derive(Clone, Debug, PartialEq)]
pub struct Health {
    /// Whether the node serves as it should: `false` when its module's thread stopped, its
    /// commit log failed, it is behind by more than [`BEHIND_BOUND`], or it is an edge not
    /// caught up with its stream (a load balancer should send clients elsewhere).
    pub ok: bool,
    /// The report: `"status"` (`ok`, `stopped`, `degraded`, `catching_up`), `"queue_free"`,
    /// and as it applies `"reason"`, `"behind"` and an edge's `"edge"`.
    pub report: Value,
}

/// What a health report reads.
pub(crate) struct Parts<'a> {
    /// The module's thread and its queue.
    pub worker: &'a Worker,
    /// The commit log.
    pub log: &'a LogHealth,
    /// How long the oldest work of the evaluation task has waited.
    pub evaluation: Duration,
    /// The edge's counters, on an edge.
    pub edge: Option<&'a EdgeState>,
}

/// The health of a node made of `parts`: the first of stopped, degraded (the log failed, or
/// behind), catching up (an edge) that applies, else ok.
pub(crate) fn report(parts: &Parts<'_>) -> Health {
    let unwell = |report| Health { ok: false, report };
    if parts.worker.stopped() {
        return unwell(json!({
            "status": "stopped",
            "reason": "the module's thread has stopped (a panic in the host it could not \
                       recover from; the log says which): no call can run; restart the server",
            "queue_free": 0,
        }));
    }
    let queue_free = parts.worker.capacity();
    if let Some(reason) = parts.log.failure() {
        return unwell(json!({
            "status": "degraded",
            "reason": format!("the commit log failed: {reason}; restart the server"),
            "queue_free": queue_free,
        }));
    }
    let (module, evaluation) = (parts.worker.behind(), parts.evaluation);
    let late = if module > BEHIND_BOUND {
        Some(format!("calls have waited {module:.1?} for the module"))
    } else if evaluation > BEHIND_BOUND {
        Some(format!(
            "subscriptions and updates have waited {evaluation:.1?} for their evaluation"
        ))
    } else {
        None
    };
    if let Some(reason) = late {
        return unwell(json!({
            "status": "degraded",
            "reason": format!("{reason}, more than {BEHIND_BOUND:?}: the server is overloaded"),
            "queue_free": queue_free,
            "behind": {
                "module_seconds": module.as_secs_f64(),
                "evaluation_seconds": evaluation.as_secs_f64(),
            },
        }));
    }
    let Some(edge) = parts.edge else {
        return Health {
            ok: true,
            report: json!({ "status": "ok", "queue_free": queue_free }),
        };
    };
    let reading = edge.stats.read(edge.fresh);
    Health {
        ok: reading.caught_up,
        report: json!({
            "status": if reading.caught_up { "ok" } else { "catching_up" },
            "queue_free": queue_free,
            "edge": {
                "caught_up": reading.caught_up,
                "offset": reading.applied,
                "lag_offsets": reading.lag_offsets(),
                "lag_seconds": reading.lag.as_secs_f64(),
                "resyncs": reading.resyncs,
            },
        }),
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

#[cfg(test)]
mod tests {
    use super::*;
    use wasmod_host::{InstanceEnv, WasmConfig, WasmEngine, WasmModule};
    use wasmod_wasm_tests::{built, Profile};

    /// A panic payload whose drop panics too: it escapes the module thread's `catch_unwind`
    /// and ends the thread, as a failed recovery would.
    struct PanicsWhenDropped;

    impl Drop for PanicsWhenDropped {
        fn drop(&mut self) {
            panic!("a panic while dropping a panic");
        }
    }

    #[tokio::test]
    async fn health_is_stopped_once_the_module_thread_has_died() {
        let wasm = built(Profile::Release).library("quickstart");
        let compiled = WasmEngine::shared()
            .expect("the engine")
            .compile(&wasm)
            .expect("compiles");
        let module = WasmModule::load(&compiled, WasmConfig::default(), InstanceEnv::unloaded())
            .expect("loads");
        let log = LogHealth::new(module.database().clone());
        let (worker, _thread) = Worker::start(module, 4).expect("the thread starts");
        let health = |worker: &Worker| {
            report(&Parts {
                worker,
                log: &log,
                evaluation: Duration::ZERO,
                edge: None,
            })
        };
        assert!(health(&worker).ok, "a live thread is healthy");
        let lost = worker
            .run(|_| std::panic::panic_any(PanicsWhenDropped))
            .await;
        assert!(lost.is_err());
        let deadline = Instant::now() + Duration::from_secs(10);
        while !worker.stopped() {
            assert!(Instant::now() < deadline, "the thread never ends");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let Health { ok, report } = health(&worker);
        assert!(!ok);
        assert_eq!(report["status"], "stopped");
        assert!(
            report["reason"]
                .as_str()
                .unwrap()
                .contains("restart the server"),
            "{report}"
        );
        let refused = worker.run(|_| ()).await.expect_err("no call runs");
        assert_eq!(refused.code, ErrorCode::ShuttingDown);
    }

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

    /// `degraded`, with the reason, while calls wait for the module more than
    /// [`BEHIND_BOUND`], and `ok` again once they have run.
    #[tokio::test]
    async fn health_is_degraded_while_the_module_queue_is_behind() {
        let wasm = built(Profile::Release).library("quickstart");
        let compiled = WasmEngine::shared()
            .expect("the engine")
            .compile(&wasm)
            .expect("compiles");
        let module = WasmModule::load(&compiled, WasmConfig::default(), InstanceEnv::unloaded())
            .expect("loads");
        let log = LogHealth::new(module.database().clone());
        let (worker, _thread) = Worker::start(module, 4).expect("the thread starts");
        let health = |worker: &Worker| {
            report(&Parts {
                worker,
                log: &log,
                evaluation: Duration::ZERO,
                edge: None,
            })
        };
        assert_eq!(health(&worker).report["status"], "ok");
        let slow = BEHIND_BOUND + Duration::from_millis(500);
        let calls: Vec<_> = (0..2)
            .map(|_| {
                let worker = worker.clone();
                tokio::spawn(async move { worker.run(move |_| std::thread::sleep(slow)).await })
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(10);
        let behind = loop {
            let health = health(&worker);
            if !health.ok {
                break health.report;
            }
            assert!(Instant::now() < deadline, "never degraded");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert_eq!(behind["status"], "degraded");
        let reason = behind["reason"].as_str().expect("a reason");
        assert!(
            reason.contains("waited") && reason.contains("module"),
            "{reason}"
        );
        for call in calls {
            call.await.expect("joined").expect("ran");
        }
        assert!(health(&worker).ok, "{}", health(&worker).report);
    }
}
