//! A steady rate: how many sends are due by now, so that a sender that fell behind catches up
//! in a burst instead of drifting to a lower rate than it announces.

use std::time::{Duration, Instant};

/// The finest step a paced sender sleeps for.
pub const TICK: Duration = Duration::from_millis(1);

/// `count` sends at `per_second`, from the moment the pace is made.
#[derive(Clone, Copy, Debug)]
pub struct Pace {
    start: Instant,
    per_second: f64,
    count: u64,
}

impl Pace {
    /// `count` sends at `per_second` (at least one per second), starting now.
    pub fn new(per_second: f64, count: u64) -> Self {
        Self {
            start: Instant::now(),
            per_second: per_second.max(1.0),
            count,
        }
    }

    /// How many sends should have happened by `now`, at most the pace's count.
    pub fn due(&self, now: Instant) -> u64 {
        let elapsed = now.saturating_duration_since(self.start).as_secs_f64();
        ((elapsed * self.per_second).floor() as u64)
            .saturating_add(1)
            .min(self.count)
    }

    /// How many sends the pace makes in all.
    pub fn count(&self) -> u64 {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_are_due_at_the_rate_and_never_beyond_the_count() {
        let pace = Pace::new(1000.0, 500);
        let start = pace.start;
        assert_eq!(pace.due(start), 1);
        assert_eq!(pace.due(start + Duration::from_millis(100)), 101);
        assert_eq!(pace.due(start + Duration::from_secs(10)), 500);
    }

    #[test]
    fn an_unbounded_pace_has_everything_due_without_overflowing() {
        let pace = Pace::new(f64::MAX, u64::MAX);
        assert_eq!(pace.due(pace.start + Duration::from_millis(1)), u64::MAX);
    }

    #[test]
    fn a_zero_rate_is_one_per_second() {
        let pace = Pace::new(0.0, 3);
        assert_eq!(pace.due(pace.start + Duration::from_millis(1500)), 2);
    }
}
