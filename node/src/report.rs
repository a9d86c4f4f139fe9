//! How a node is doing, as a whole: its module's thread, its commit log, how far behind its
//! queues are and, on an edge, how far behind its primary's stream. `GET /health` answers
//! this report ([`crate::NodeHandle::health`]); the parts it reads are each their own module's
//! ([`crate::worker`], [`crate::health`], [`crate::replication`]).

use crate::cluster::{ClusterRole, ClusterStatus};
use crate::health::{LogHealth, BEHIND_BOUND};
use crate::replication::EdgeState;
use crate::worker::Worker;
use serde_json::{json, Value};
use std::time::Duration;

/// How a node is doing, as `GET /health` reports it (`docs/http-api.md`).
#[derive(Clone, Debug, PartialEq)]
pub struct Health {
    /// Whether the node serves as it should: `false` when its module's thread stopped, its
    /// commit log failed, it is behind by more than `BEHIND_BOUND`, or it is an edge not
    /// caught up with its stream (a load balancer should send clients elsewhere).
    pub ok: bool,
    /// The report: `"status"` (`ok`, `stopped`, `degraded`, `catching_up`, `starting`,
    /// `deposed`), `"queue_free"`, and as it applies `"reason"`, `"behind"`, an edge's
    /// `"edge"` and a replicated deployment's `"cluster"`.
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
    /// The node's place in its deployment, on a node of a replicated one.
    pub cluster: Option<ClusterStatus>,
}

/// The health of a node made of `parts`: the first of stopped, degraded (the log failed, or
/// behind), catching up (an edge), starting or deposed (a node of a replicated deployment)
/// that applies, else ok; with the edge's and the deployment's state.
pub(crate) fn health(parts: &Parts<'_>) -> Health {
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
    let mut health = Health {
        ok: true,
        report: json!({ "status": "ok", "queue_free": queue_free }),
    };
    if let Some(edge) = parts.edge {
        let reading = edge.stats.read(edge.fresh);
        health.ok = reading.caught_up;
        health.report["status"] = json!(if reading.caught_up {
            "ok"
        } else {
            "catching_up"
        });
        health.report["edge"] = json!({
            "caught_up": reading.caught_up,
            "offset": reading.applied,
            "lag_offsets": reading.lag_offsets(),
            "lag_seconds": reading.lag.as_secs_f64(),
            "resyncs": reading.resyncs,
        });
    }
    if let Some(cluster) = &parts.cluster {
        let serving = matches!(cluster.role, ClusterRole::Standby | ClusterRole::Primary);
        if !serving {
            health.ok = false;
            health.report["status"] = json!(cluster.role.as_str());
        }
        if let Some(problem) = &cluster.problem {
            health.ok = false;
            health.report["reason"] = json!(problem);
        }
        health.report["cluster"] = json!(cluster);
    }
    health
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::LogHealth;
    use crate::worker::WorkerThread;
    use std::time::Instant;
    use wasmod_protocol::errors::ErrorCode;

    /// A panic payload whose drop panics too: it escapes the module thread's `catch_unwind`
    /// and ends the thread, as a failed recovery would.
    struct PanicsWhenDropped;

    impl Drop for PanicsWhenDropped {
        fn drop(&mut self) {
            panic!("a panic while dropping a panic");
        }
    }

    /// The quickstart's thread, started, and its commit log's health.
    fn started() -> (Worker, WorkerThread, LogHealth) {
        let module = crate::test_support::quickstart();
        let log = LogHealth::new(module.database().clone());
        let (worker, thread) = Worker::start(module, 4).expect("the thread starts");
        (worker, thread, log)
    }

    /// The health of a node that is `worker` and `log`, no more.
    fn report(worker: &Worker, log: &LogHealth) -> Health {
        health(&Parts {
            worker,
            log,
            evaluation: Duration::ZERO,
            edge: None,
            cluster: None,
        })
    }

    #[tokio::test]
    async fn health_is_stopped_once_the_module_thread_has_died() {
        let (worker, _thread, log) = started();
        assert!(report(&worker, &log).ok, "a live thread is healthy");
        let lost = worker
            .run(|_| std::panic::panic_any(PanicsWhenDropped))
            .await;
        assert!(lost.is_err());
        let deadline = Instant::now() + Duration::from_secs(10);
        while !worker.stopped() {
            assert!(Instant::now() < deadline, "the thread never ends");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let Health { ok, report } = report(&worker, &log);
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

    /// `degraded`, with the reason, while calls wait for the module more than
    /// [`BEHIND_BOUND`], and `ok` again once they have run.
    #[tokio::test]
    async fn health_is_degraded_while_the_module_queue_is_behind() {
        let (worker, _thread, log) = started();
        assert_eq!(report(&worker, &log).report["status"], "ok");
        let slow = BEHIND_BOUND + Duration::from_millis(500);
        let calls: Vec<_> = (0..2)
            .map(|_| {
                let worker = worker.clone();
                tokio::spawn(async move { worker.run(move |_| std::thread::sleep(slow)).await })
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(10);
        let behind = loop {
            let health = report(&worker, &log);
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
        // The thread marks itself caught up just after it answers the last call.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !report(&worker, &log).ok {
            assert!(
                Instant::now() < deadline,
                "{}",
                report(&worker, &log).report
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}
