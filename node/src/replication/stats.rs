//! The counters of both sides of replication, for `/metrics`, `/health` and tests: on the
//! primary, how far the stream is behind the durable commits, what is held in memory for it,
//! and what went wrong ([`PublishStats`]); on an edge, how far its copy is behind the stream
//! and the primary ([`EdgeStats`]).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The publisher's counters. Shared (`Arc`) between the publisher and `/metrics`.
#[derive(Debug, Default)]
pub struct PublishStats {
    /// The offset the stream needs next: every commit below it is in the stream (or behind
    /// a marker).
    pub(crate) published: AtomicU64,
    /// The offset after the last durable commit the publisher knows of.
    pub(crate) durable: AtomicU64,
    /// The commits held in memory for the stream.
    pub(crate) backlog: AtomicU64,
    /// The commits dropped from memory (the log provides them, or a marker replaces them).
    pub(crate) dropped: AtomicU64,
    /// The commits written to the stream, refilled from the log included.
    pub(crate) written: AtomicU64,
    /// The commits written to the stream that were read back from the log.
    pub(crate) refilled: AtomicU64,
    /// The resynchronisation markers written.
    pub(crate) resyncs: AtomicU64,
    /// The failed exchanges with Redis (connections, reads, writes).
    pub(crate) errors: AtomicU64,
    /// Microseconds from the last published commit's timestamp to Redis's acknowledgement.
    pub(crate) latency_micros: AtomicU64,
    /// Whether the last exchange with Redis succeeded.
    pub(crate) connected: AtomicBool,
}

/// A reading of `PublishStats`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PublishReading {
    /// The offset the stream needs next.
    pub published: u64,
    /// The offset after the last durable commit.
    pub durable: u64,
    /// The commits held in memory for the stream.
    pub backlog: u64,
    /// The commits dropped from memory.
    pub dropped: u64,
    /// The commits written to the stream.
    pub written: u64,
    /// The commits written that were read back from the log.
    pub refilled: u64,
    /// The resynchronisation markers written.
    pub resyncs: u64,
    /// The failed exchanges with Redis.
    pub errors: u64,
    /// Whether the last exchange with Redis succeeded.
    pub connected: bool,
}

impl PublishReading {
    /// How many durable commits the stream does not have yet.
    pub fn lag(&self) -> u64 {
        self.durable.saturating_sub(self.published)
    }
}

impl PublishStats {
    /// The counters now.
    pub fn read(&self) -> PublishReading {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        PublishReading {
            published: load(&self.published),
            durable: load(&self.durable),
            backlog: load(&self.backlog),
            dropped: load(&self.dropped),
            written: load(&self.written),
            refilled: load(&self.refilled),
            resyncs: load(&self.resyncs),
            errors: load(&self.errors),
            connected: self.connected.load(Ordering::Relaxed),
        }
    }

    /// Appends the counters to `out` in the Prometheus text format.
    pub fn render(&self, out: &mut String) {
        let reading = self.read();
        let latency = self.latency_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let series: [Series<'_>; 10] = [
            (
                "wasmod_publish_offset",
                "gauge",
                "The offset the stream needs next.",
                reading.published.to_string(),
            ),
            (
                "wasmod_publish_lag_offsets",
                "gauge",
                "Durable commits not in the stream yet.",
                reading.lag().to_string(),
            ),
            (
                "wasmod_publish_lag_seconds",
                "gauge",
                "From the last published commit to Redis's acknowledgement.",
                latency.to_string(),
            ),
            (
                "wasmod_publish_backlog",
                "gauge",
                "Commits held in memory for the stream.",
                reading.backlog.to_string(),
            ),
            (
                "wasmod_publish_dropped_total",
                "counter",
                "Commits dropped from memory while Redis was behind.",
                reading.dropped.to_string(),
            ),
            (
                "wasmod_publish_written_total",
                "counter",
                "Commits written to the stream.",
                reading.written.to_string(),
            ),
            (
                "wasmod_publish_refilled_total",
                "counter",
                "Commits written to the stream from the commit log.",
                reading.refilled.to_string(),
            ),
            (
                "wasmod_publish_resyncs_total",
                "counter",
                "Resynchronisation markers written.",
                reading.resyncs.to_string(),
            ),
            (
                "wasmod_publish_errors_total",
                "counter",
                "Failed exchanges with Redis.",
                reading.errors.to_string(),
            ),
            (
                "wasmod_publish_connected",
                "gauge",
                "Whether the last exchange with Redis succeeded.",
                u8::from(reading.connected).to_string(),
            ),
        ];
        write_series(out, &series);
    }
}

/// One series of the Prometheus text format: name, type, help, value.
type Series<'a> = (&'a str, &'a str, &'a str, String);

/// Appends `series` to `out` in the Prometheus text format.
fn write_series(out: &mut String, series: &[Series<'_>]) {
    for (name, kind, help, value) in series {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
        );
    }
}

/// An edge's counters. Shared (`Arc`) between the task that follows the stream, `/metrics`
/// and `/health`.
#[derive(Debug, Default)]
pub struct EdgeStats {
    /// The offset the edge's copy needs next: every commit below it is applied.
    pub(crate) applied: AtomicU64,
    /// The offset after the newest commit the stream was last seen to hold.
    pub(crate) stream: AtomicU64,
    /// Microseconds from the last applied commit's timestamp (on the primary) to its
    /// application here; 0 for commits whose time is unknown (refilled from the log).
    pub(crate) lag_micros: AtomicU64,
    /// The commits applied.
    pub(crate) commits: AtomicU64,
    /// The times the copy was brought up to date from a snapshot after a gap.
    pub(crate) resyncs: AtomicU64,
    /// The failed exchanges with Redis or the primary.
    pub(crate) errors: AtomicU64,
    /// Whether the copy is behind a gap it has not closed yet.
    pub(crate) gap: AtomicBool,
    /// When the stream last had nothing more for the edge (a read that came back short).
    pub(crate) caught_up_at: Mutex<Option<Instant>>,
}

/// A reading of [`EdgeStats`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdgeReading {
    /// The offset the copy needs next.
    pub applied: u64,
    /// The offset after the newest commit seen in the stream.
    pub stream: u64,
    /// From the last applied commit's time on the primary to its application here.
    pub lag: Duration,
    /// The commits applied.
    pub commits: u64,
    /// The resynchronisations from a snapshot.
    pub resyncs: u64,
    /// The failed exchanges.
    pub errors: u64,
    /// Whether the copy has everything the stream had at a read within `fresh` of now
    /// ([`EdgeStats::read`]), with no gap open.
    pub caught_up: bool,
}

impl EdgeReading {
    /// How many commits of the stream the copy has not applied yet.
    pub fn lag_offsets(&self) -> u64 {
        self.stream.saturating_sub(self.applied)
    }
}

impl EdgeStats {
    /// The counters now; the edge counts as caught up if a read found nothing more within
    /// `fresh` of now.
    pub fn read(&self, fresh: Duration) -> EdgeReading {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let recent = self
            .caught_up_at
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some_and(|at| at.elapsed() <= fresh);
        EdgeReading {
            applied: load(&self.applied),
            stream: load(&self.stream),
            lag: Duration::from_micros(load(&self.lag_micros)),
            commits: load(&self.commits),
            resyncs: load(&self.resyncs),
            errors: load(&self.errors),
            caught_up: recent && !self.gap.load(Ordering::Relaxed),
        }
    }

    /// Notes that a read found nothing beyond what the copy holds.
    pub(crate) fn caught_up_now(&self) {
        *self
            .caught_up_at
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Instant::now());
    }

    /// Appends the counters to `out` in the Prometheus text format; `fresh` as in
    /// [`EdgeStats::read`].
    pub fn render(&self, out: &mut String, fresh: Duration) {
        let reading = self.read(fresh);
        write_series(
            out,
            &[
                (
                    "wasmod_edge_offset",
                    "gauge",
                    "The offset the edge's copy needs next.",
                    reading.applied.to_string(),
                ),
                (
                    "wasmod_edge_lag_offsets",
                    "gauge",
                    "Commits in the stream not applied yet.",
                    reading.lag_offsets().to_string(),
                ),
                (
                    "wasmod_edge_lag_seconds",
                    "gauge",
                    "From the last applied commit on the primary to its application here.",
                    reading.lag.as_secs_f64().to_string(),
                ),
                (
                    "wasmod_edge_commits_total",
                    "counter",
                    "Commits applied.",
                    reading.commits.to_string(),
                ),
                (
                    "wasmod_edge_resyncs_total",
                    "counter",
                    "Resynchronisations from a snapshot after a gap.",
                    reading.resyncs.to_string(),
                ),
                (
                    "wasmod_edge_errors_total",
                    "counter",
                    "Failed exchanges with Redis or the primary.",
                    reading.errors.to_string(),
                ),
                (
                    "wasmod_edge_caught_up",
                    "gauge",
                    "Whether the copy has everything the stream has.",
                    u8::from(reading.caught_up).to_string(),
                ),
            ],
        );
    }
}
