//! The real-time side's counters, served with the others at `GET /metrics` (Prometheus text).
//!
//! What an operator needs to see whether the fanout keeps up and whom it drops:
//!
//! - `wasmod_ws_connections`, `wasmod_ws_query_sets`: WebSocket connections and the query sets
//!   they subscribed, now;
//! - `wasmod_ws_queries{kind="subscribed"|"distinct"}`: queries subscribed, counting each
//!   query set's, and distinct queries evaluated; the difference is what deduplication saves;
//! - `wasmod_ws_queue_high_water_messages`: the most messages ever waiting for one client;
//! - `wasmod_ws_dropped_total{reason="slow"|"idle"|"lagged"}`: clients closed because their
//!   queue was full, because they went silent, or because the evaluation fell behind;
//! - `wasmod_ws_updates_total`: transaction updates queued for clients (deliveries; their
//!   rate is deliveries per second);
//! - `wasmod_ws_sent_messages_total`, `wasmod_ws_sent_bytes_total`: messages written to
//!   sockets, and their bytes;
//! - `wasmod_ws_evaluation_seconds`: the time to evaluate one commit over every query (a
//!   round that evaluates several commits at once counts each at their mean).
//!
//! The counters are atomics, updated where the work happens without a lock; only the
//! histogram takes one, once per evaluation round.

use crate::health::Lag;
use crate::metrics::Histogram;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// Why a client was closed by the server, for `wasmod_ws_dropped_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dropped {
    /// Its outbound queue was full.
    Slow,
    /// It sent nothing, not even a pong.
    Idle,
    /// The evaluation fell behind the commit feed.
    Lagged,
}

/// The real-time side's counters. Shared (`Arc`) by the evaluation task, every outbox and
/// every writer.
#[derive(Debug, Default)]
pub struct Stats {
    connections: AtomicU64,
    query_sets: AtomicU64,
    subscribed_queries: AtomicU64,
    distinct_queries: AtomicU64,
    queue_high_water: AtomicU64,
    dropped: [AtomicU64; 3],
    updates: AtomicU64,
    sent_messages: AtomicU64,
    sent_bytes: AtomicU64,
    evaluation: Mutex<Histogram>,
    /// How long the evaluation task's oldest work has waited.
    behind: Lag,
}

/// The evaluation task's registry, as counted at the end of a round.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Registry {
    /// Connections.
    pub connections: usize,
    /// Query sets subscribed.
    pub query_sets: usize,
    /// Queries subscribed, each query set's counted.
    pub subscribed_queries: usize,
    /// Distinct queries evaluated.
    pub distinct_queries: usize,
}

impl Stats {
    /// Records the registry's sizes.
    pub fn registry(&self, registry: Registry) {
        let set = |gauge: &AtomicU64, value: usize| gauge.store(value as u64, Ordering::Relaxed);
        set(&self.connections, registry.connections);
        set(&self.query_sets, registry.query_sets);
        set(&self.subscribed_queries, registry.subscribed_queries);
        set(&self.distinct_queries, registry.distinct_queries);
    }

    /// Records that `depth` messages are waiting for one client. Every push to every queue
    /// records its depth: a depth under the high-water mark, nearly always, is only read.
    pub fn queued(&self, depth: usize) {
        let depth = depth as u64;
        if depth > self.queue_high_water.load(Ordering::Relaxed) {
            self.queue_high_water.fetch_max(depth, Ordering::Relaxed);
        }
    }

    /// Counts `count` clients closed for `reason`.
    pub fn dropped(&self, reason: Dropped, count: usize) {
        self.dropped[reason as usize].fetch_add(count as u64, Ordering::Relaxed);
    }

    /// Clients closed for `reason` so far.
    pub fn dropped_so_far(&self, reason: Dropped) -> u64 {
        self.dropped[reason as usize].load(Ordering::Relaxed)
    }

    /// Counts `count` transaction updates queued for clients.
    pub fn updates(&self, count: usize) {
        self.updates.fetch_add(count as u64, Ordering::Relaxed);
    }

    /// Counts one message of `bytes` written to a socket.
    pub fn sent(&self, bytes: usize) {
        self.sent_messages.fetch_add(1, Ordering::Relaxed);
        self.sent_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Records that evaluating `commits` commits took `took`.
    pub fn evaluated(&self, commits: usize, took: Duration) {
        if commits == 0 {
            return;
        }
        let each = took.as_secs_f64() / commits as f64;
        let mut histogram = self
            .evaluation
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for _ in 0..commits {
            histogram.observe(each);
        }
    }

    /// How long the evaluation task's oldest work (a commit, a request) has waited, while it
    /// has work waiting: what the task reports as it goes, and the server's `/health` reads.
    pub fn evaluation_lag(&self) -> &Lag {
        &self.behind
    }

    /// Appends the counters to `out`, in the Prometheus text format.
    pub fn render(&self, out: &mut String) {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let mut family = |name: &str, kind: &str, help: &str, series: &[(&str, u64)]| {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} {kind}");
            for (labels, value) in series {
                let labels = if labels.is_empty() {
                    String::new()
                } else {
                    format!("{{{labels}}}")
                };
                let _ = writeln!(out, "{name}{labels} {value}");
            }
        };
        family(
            "wasmod_ws_evaluation_behind_milliseconds",
            "gauge",
            "How long the subscription evaluation's oldest work has waited (0 when it has none).",
            &[("", self.behind.behind().as_millis() as u64)],
        );
        family(
            "wasmod_ws_connections",
            "gauge",
            "WebSocket connections.",
            &[("", load(&self.connections))],
        );
        family(
            "wasmod_ws_query_sets",
            "gauge",
            "Query sets subscribed.",
            &[("", load(&self.query_sets))],
        );
        family(
            "wasmod_ws_queries",
            "gauge",
            "Queries subscribed (each query set's) and distinct queries evaluated.",
            &[
                ("kind=\"subscribed\"", load(&self.subscribed_queries)),
                ("kind=\"distinct\"", load(&self.distinct_queries)),
            ],
        );
        family(
            "wasmod_ws_queue_high_water_messages",
            "gauge",
            "The most messages ever waiting for one client.",
            &[("", load(&self.queue_high_water))],
        );
        family(
            "wasmod_ws_dropped_total",
            "counter",
            "Clients closed by the server, by reason.",
            &[
                (
                    "reason=\"slow\"",
                    load(&self.dropped[Dropped::Slow as usize]),
                ),
                (
                    "reason=\"idle\"",
                    load(&self.dropped[Dropped::Idle as usize]),
                ),
                (
                    "reason=\"lagged\"",
                    load(&self.dropped[Dropped::Lagged as usize]),
                ),
            ],
        );
        family(
            "wasmod_ws_updates_total",
            "counter",
            "Transaction updates queued for clients.",
            &[("", load(&self.updates))],
        );
        family(
            "wasmod_ws_sent_messages_total",
            "counter",
            "Messages written to WebSockets.",
            &[("", load(&self.sent_messages))],
        );
        family(
            "wasmod_ws_sent_bytes_total",
            "counter",
            "Bytes of messages written to WebSockets.",
            &[("", load(&self.sent_bytes))],
        );
        let _ = writeln!(
            out,
            "# HELP wasmod_ws_evaluation_seconds The time to evaluate one commit over every query."
        );
        let _ = writeln!(out, "# TYPE wasmod_ws_evaluation_seconds histogram");
        self.evaluation
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .write(out, "wasmod_ws_evaluation_seconds", "");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_what_was_counted() {
        let stats = Stats::default();
        stats.registry(Registry {
            connections: 3,
            query_sets: 4,
            subscribed_queries: 6,
            distinct_queries: 2,
        });
        stats.queued(5);
        stats.queued(2);
        stats.dropped(Dropped::Slow, 1);
        stats.dropped(Dropped::Lagged, 2);
        stats.updates(7);
        stats.sent(100);
        stats.sent(20);
        stats.evaluated(2, Duration::from_millis(2));
        let mut text = String::new();
        stats.render(&mut text);
        for line in [
            "wasmod_ws_connections 3",
            "wasmod_ws_query_sets 4",
            "wasmod_ws_queries{kind=\"subscribed\"} 6",
            "wasmod_ws_queries{kind=\"distinct\"} 2",
            "wasmod_ws_queue_high_water_messages 5",
            "wasmod_ws_dropped_total{reason=\"slow\"} 1",
            "wasmod_ws_dropped_total{reason=\"idle\"} 0",
            "wasmod_ws_dropped_total{reason=\"lagged\"} 2",
            "wasmod_ws_updates_total 7",
            "wasmod_ws_sent_messages_total 2",
            "wasmod_ws_sent_bytes_total 120",
            "wasmod_ws_evaluation_seconds_bucket{le=\"0.001\"} 2",
            "wasmod_ws_evaluation_seconds_count 2",
        ] {
            assert!(text.lines().any(|l| l == line), "no `{line}` in:\n{text}");
        }
    }
}
