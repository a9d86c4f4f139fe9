//! The live commit rate the admin API reports: commits a second, measured between reads.
//!
//! The database counts its commits (its next log offset); the rate is the count's change over
//! the time since the sample before, taken again once a second has passed, so that readers
//! polling at any pace (the console, several consoles) see the rate of the last second or so
//! and never one of a few microseconds.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The shortest time between two samples.
const WINDOW: Duration = Duration::from_secs(1);

/// The last sample and the rate it gave.
#[derive(Debug)]
pub struct CommitRate {
    sample: Mutex<Sample>,
}

#[derive(Clone, Copy, Debug)]
struct Sample {
    at: Instant,
    commits: u64,
    per_second: f64,
}

impl CommitRate {
    /// A rate starting from `commits` commits now.
    pub fn new(commits: u64) -> Self {
        Self::starting_at(commits, Instant::now())
    }

    fn starting_at(commits: u64, at: Instant) -> Self {
        Self {
            sample: Mutex::new(Sample {
                at,
                commits,
                per_second: 0.0,
            }),
        }
    }

    /// The rate, given that `commits` have been made so far.
    pub fn observe(&self, commits: u64) -> f64 {
        self.observe_at(commits, Instant::now())
    }

    fn observe_at(&self, commits: u64, now: Instant) -> f64 {
        let mut sample = self.sample.lock().unwrap_or_else(PoisonError::into_inner);
        let elapsed = now.saturating_duration_since(sample.at);
        if elapsed >= WINDOW {
            let made = commits.saturating_sub(sample.commits);
            *sample = Sample {
                at: now,
                commits,
                per_second: made as f64 / elapsed.as_secs_f64(),
            };
        }
        sample.per_second
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_is_measured_over_at_least_a_second() {
        let start = Instant::now();
        let rate = CommitRate::starting_at(100, start);
        assert_eq!(rate.observe_at(150, start + Duration::from_millis(10)), 0.0);
        assert_eq!(rate.observe_at(300, start + Duration::from_secs(2)), 100.0);
        assert_eq!(
            rate.observe_at(310, start + Duration::from_millis(2500)),
            100.0,
            "within the window: the last rate"
        );
        assert_eq!(rate.observe_at(310, start + Duration::from_secs(4)), 5.0);
    }
}
