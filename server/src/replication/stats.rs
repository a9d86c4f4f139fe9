//! The publisher's counters, for `/metrics` and for tests: how far the stream is behind the
//! durable commits, what is held in memory for it, and what went wrong.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

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

/// A reading of [`PublishStats`].
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
        let series: [(&str, &str, &str, String); 9] = [
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
        ];
        for (name, kind, help, value) in series {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
            );
        }
        let _ = writeln!(
            out,
            "# HELP wasmod_publish_connected Whether the last exchange with Redis succeeded.\n\
             # TYPE wasmod_publish_connected gauge\nwasmod_publish_connected {}",
            u8::from(reading.connected)
        );
    }
}
