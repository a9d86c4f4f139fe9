//! Latencies, recorded from many tasks at once into one histogram.
//!
//! A thousand clients each record every update they receive, at hundreds of thousands of
//! updates per second: a shared `Vec` behind a lock would serialise them, and keeping every
//! sample would cost memory proportional to the run. The histogram has a fixed set of atomic
//! buckets instead: exact to the microsecond below 128 µs, then 64 buckets per doubling (under
//! 1.6 % error), up to about 70 minutes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Bucket resolution: `2^SUB_BITS` buckets per doubling above the linear range.
const SUB_BITS: u32 = 6;
/// Values below this are their own bucket.
const LINEAR: u64 = 2 << SUB_BITS;
/// Doublings covered above the linear range (up to 2^32 µs).
const DOUBLINGS: u32 = 32 - (SUB_BITS + 1);

/// A histogram of microsecond latencies that many tasks record into at once.
#[derive(Debug)]
pub struct Histogram {
    buckets: Vec<AtomicU64>,
}

impl Default for Histogram {
    fn default() -> Self {
        let len = LINEAR as usize + (DOUBLINGS as usize) * (1 << SUB_BITS);
        Self {
            buckets: (0..len).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

impl Histogram {
    /// Records one latency of `micros` microseconds (saturating at the largest bucket).
    pub fn record(&self, micros: u64) {
        let index = bucket(micros).min(self.buckets.len() - 1);
        self.buckets[index].fetch_add(1, Ordering::Relaxed);
    }

    /// How many latencies were recorded.
    pub fn count(&self) -> u64 {
        self.buckets
            .iter()
            .map(|bucket| bucket.load(Ordering::Relaxed))
            .sum()
    }

    /// The latency below which a fraction `quantile` (0 to 1) of the recorded ones lie, as
    /// the upper bound of its bucket; `None` if nothing was recorded.
    pub fn quantile(&self, quantile: f64) -> Option<Duration> {
        let total = self.count();
        if total == 0 {
            return None;
        }
        let rank = ((quantile.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (index, bucket) in self.buckets.iter().enumerate() {
            seen += bucket.load(Ordering::Relaxed);
            if seen >= rank {
                return Some(Duration::from_micros(upper_bound(index)));
            }
        }
        None
    }

    /// Forgets every recorded latency.
    pub fn clear(&self) {
        for bucket in &self.buckets {
            bucket.store(0, Ordering::Relaxed);
        }
    }
}

/// The bucket of `micros`.
fn bucket(micros: u64) -> usize {
    if micros < LINEAR {
        return micros as usize;
    }
    // `micros` has `bits` significant bits; keep the top SUB_BITS + 1 of them.
    let bits = 64 - micros.leading_zeros();
    let shift = bits - (SUB_BITS + 1);
    let top = (micros >> shift) - (1 << SUB_BITS);
    LINEAR as usize + ((shift - 1) as usize) * (1 << SUB_BITS) + top as usize
}

/// The largest value that falls into bucket `index`.
fn upper_bound(index: usize) -> u64 {
    let index = index as u64;
    if index < LINEAR {
        return index;
    }
    let above = index - LINEAR;
    let shift = above / (1 << SUB_BITS) + 1;
    let top = above % (1 << SUB_BITS) + (1 << SUB_BITS);
    ((top + 1) << shift) - 1
}

/// The value at quantile `q` (0 to 1) of `sorted` (ascending): the nearest rank, `None` for
/// no value. For runs that keep every latency (few enough), where the histogram above would
/// round them.
pub fn quantile<T: Copy>(sorted: &[T], q: f64) -> Option<T> {
    let last = sorted.len().checked_sub(1)?;
    sorted
        .get((last as f64 * q.clamp(0.0, 1.0)).round() as usize)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_lies_in_a_bucket_whose_upper_bound_is_within_two_percent() {
        let mut value = 0u64;
        while value < 1 << 31 {
            let index = bucket(value);
            let upper = upper_bound(index);
            assert!(upper >= value, "{value} -> bucket {index} -> {upper}");
            assert!(
                (upper - value) as f64 <= value as f64 / 50.0,
                "{value} -> bucket {index} -> {upper}"
            );
            if index > 0 {
                assert!(
                    upper_bound(index - 1) < value,
                    "{value} also fits bucket {}",
                    index - 1
                );
            }
            value = value * 9 / 8 + 1;
        }
    }

    #[test]
    fn quantiles_of_a_known_distribution() {
        let histogram = Histogram::default();
        for micros in 1..=1000 {
            histogram.record(micros);
        }
        assert_eq!(histogram.count(), 1000);
        let p50 = histogram.quantile(0.5).expect("recorded").as_micros() as f64;
        let p99 = histogram.quantile(0.99).expect("recorded").as_micros() as f64;
        assert!((500.0..=510.0).contains(&p50), "p50 {p50}");
        assert!((990.0..=1006.0).contains(&p99), "p99 {p99}");
        histogram.clear();
        assert_eq!(histogram.count(), 0);
        assert_eq!(histogram.quantile(0.5), None);
    }

    #[test]
    fn huge_values_saturate_instead_of_panicking() {
        let histogram = Histogram::default();
        histogram.record(u64::MAX);
        assert!(histogram.quantile(1.0).is_some());
    }

    #[test]
    fn quantiles_are_nearest_ranks() {
        let values: Vec<u32> = (1..=100).collect();
        assert_eq!(quantile(&values, 0.5), Some(51));
        assert_eq!(quantile(&values, 0.99), Some(99));
        assert_eq!(quantile(&values, 1.0), Some(100));
        assert_eq!(quantile(&[7], 0.99), Some(7));
        assert_eq!(quantile::<u32>(&[], 0.5), None);
    }
}
