//! Counters for `GET /metrics`, in the Prometheus text format.
//!
//! Three families, enough to see load, errors and latency without a metrics library:
//!
//! - `wasmod_calls_total{kind, outcome}`: finished requests per kind (`reducer`, `procedure`,
//!   `view`, `http`, `table`, `identity`) and outcome (`ok`, an error code of the API such as
//!   `entry_failed`, or `abandoned` when the request was dropped before it answered: a timeout
//!   or a client that went away);
//! - `wasmod_call_duration_seconds{kind}`: a histogram of the time from the request's arrival
//!   at its handler to its answer (queueing included);
//! - `wasmod_calls_in_flight`: requests being handled now.
//!
//! A request is counted through an [`InFlight`] guard ([`Metrics::measure`]), so a request
//! dropped halfway is counted too.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;
use wasmod_protocol::errors::ApiError;

/// The upper bounds of the duration histogram's buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The node's counters of calls. Cheap to share (`Arc`).
#[derive(Debug, Default)]
pub struct Metrics {
    in_flight: AtomicI64,
    recorded: Mutex<Recorded>,
}

#[derive(Debug, Default)]
struct Recorded {
    calls: BTreeMap<(&'static str, &'static str), u64>,
    durations: BTreeMap<&'static str, Histogram>,
}

/// A Prometheus histogram of durations, over [`BUCKETS`].
#[derive(Debug, Default)]
pub(crate) struct Histogram {
    /// Counts per bucket (not cumulative), then the count above the last bound.
    buckets: [u64; BUCKETS.len() + 1],
    sum: f64,
    count: u64,
}

impl Histogram {
    /// Counts one observation of `seconds`.
    pub(crate) fn observe(&mut self, seconds: f64) {
        let bucket = BUCKETS
            .iter()
            .position(|&bound| seconds <= bound)
            .unwrap_or(BUCKETS.len());
        self.buckets[bucket] += 1;
        self.sum += seconds;
        self.count += 1;
    }

    /// Writes the histogram's series as `name`, with `labels` (`kind="reducer"`, or empty).
    pub(crate) fn write(&self, out: &mut String, name: &str, labels: &str) {
        let with = |extra: &str| match (labels.is_empty(), extra.is_empty()) {
            (true, true) => String::new(),
            (true, false) => format!("{{{extra}}}"),
            (false, true) => format!("{{{labels}}}"),
            (false, false) => format!("{{{labels},{extra}}}"),
        };
        let mut cumulative = 0;
        for (bound, count) in BUCKETS.iter().zip(self.buckets) {
            cumulative += count;
            let _ = writeln!(
                out,
                "{name}_bucket{} {cumulative}",
                with(&format!("le=\"{bound}\""))
            );
        }
        let _ = writeln!(out, "{name}_bucket{} {}", with("le=\"+Inf\""), self.count);
        let _ = writeln!(out, "{name}_sum{} {}", with(""), self.sum);
        let _ = writeln!(out, "{name}_count{} {}", with(""), self.count);
    }
}

/// One request being handled; count it with [`InFlight::finish`] (or it counts as
/// `abandoned` when dropped).
#[derive(Debug)]
pub struct InFlight {
    metrics: Arc<Metrics>,
    kind: &'static str,
    start: Instant,
    finished: bool,
}

impl Metrics {
    /// Starts counting a request of `kind`.
    pub fn start(self: &Arc<Self>, kind: &'static str) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight {
            metrics: self.clone(),
            kind,
            start: Instant::now(),
            finished: false,
        }
    }

    /// Runs `work`, a request of `kind`, counting it (as `abandoned` if it is dropped before
    /// it completes).
    pub async fn measure<T>(
        self: &Arc<Self>,
        kind: &'static str,
        work: impl Future<Output = Result<T, ApiError>>,
    ) -> Result<T, ApiError> {
        let in_flight = self.start(kind);
        in_flight.finish(work.await)
    }

    /// The counters in the Prometheus text exposition format.
    pub fn render(&self) -> String {
        let recorded = self.recorded.lock().unwrap_or_else(PoisonError::into_inner);
        let mut out = String::new();
        out.push_str("# HELP wasmod_calls_total Requests handled, by kind and outcome.\n");
        out.push_str("# TYPE wasmod_calls_total counter\n");
        for ((kind, outcome), count) in &recorded.calls {
            let _ = writeln!(
                out,
                "wasmod_calls_total{{kind=\"{kind}\",outcome=\"{outcome}\"}} {count}"
            );
        }
        out.push_str(
            "# HELP wasmod_call_duration_seconds Time from a request's arrival to its answer.\n",
        );
        out.push_str("# TYPE wasmod_call_duration_seconds histogram\n");
        for (kind, histogram) in &recorded.durations {
            histogram.write(
                &mut out,
                "wasmod_call_duration_seconds",
                &format!("kind=\"{kind}\""),
            );
        }
        out.push_str("# HELP wasmod_calls_in_flight Requests being handled now.\n");
        out.push_str("# TYPE wasmod_calls_in_flight gauge\n");
        let _ = writeln!(
            out,
            "wasmod_calls_in_flight {}",
            self.in_flight.load(Ordering::Relaxed)
        );
        out
    }

    fn record(&self, kind: &'static str, outcome: &'static str, seconds: f64) {
        let mut recorded = self.recorded.lock().unwrap_or_else(PoisonError::into_inner);
        *recorded.calls.entry((kind, outcome)).or_default() += 1;
        recorded.durations.entry(kind).or_default().observe(seconds);
    }
}

impl InFlight {
    /// Counts the request as finished with `result`, and passes the result on.
    pub fn finish<T>(mut self, result: Result<T, ApiError>) -> Result<T, ApiError> {
        let outcome = match &result {
            Ok(_) => "ok",
            Err(error) => error.code.as_str(),
        };
        self.close(outcome);
        result
    }

    /// Counts the request as refused with `error`, and gives the error back.
    pub fn refuse(mut self, error: ApiError) -> ApiError {
        self.close(error.code.as_str());
        error
    }

    fn close(&mut self, outcome: &'static str) {
        self.finished = true;
        self.metrics.in_flight.fetch_sub(1, Ordering::Relaxed);
        let seconds = self.start.elapsed().as_secs_f64();
        self.metrics.record(self.kind, outcome, seconds);
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if !self.finished {
            self.close("abandoned");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmod_protocol::errors::ErrorCode;

    #[test]
    fn requests_are_counted_by_kind_and_outcome() {
        let metrics = Arc::new(Metrics::default());
        let _ = metrics.start("reducer").finish(Ok(()));
        let _ = metrics
            .start("reducer")
            .finish::<()>(Err(ApiError::new(ErrorCode::EntryFailed, "no")));
        let pending = metrics.start("view");
        let text = metrics.render();
        assert!(text.contains("wasmod_calls_total{kind=\"reducer\",outcome=\"ok\"} 1"));
        assert!(text.contains("wasmod_calls_total{kind=\"reducer\",outcome=\"entry_failed\"} 1"));
        assert!(text.contains("wasmod_call_duration_seconds_count{kind=\"reducer\"} 2"));
        assert!(
            text.contains("wasmod_call_duration_seconds_bucket{kind=\"reducer\",le=\"+Inf\"} 2")
        );
        assert!(text.contains("wasmod_calls_in_flight 1"));
        drop(pending);
        let text = metrics.render();
        assert!(text.contains("wasmod_calls_total{kind=\"view\",outcome=\"abandoned\"} 1"));
        assert!(text.contains("wasmod_calls_in_flight 0"));
    }
}
