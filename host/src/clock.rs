//! The clock of calls: each call's timestamp and duration, for a few nanoseconds.
//!
//! Every call reads the time twice: at its start, for the timestamp the module sees
//! (microseconds since the Unix epoch), and at its end, for the duration its outcome reports.
//! The system's clocks cost 25–35 ns a read on the virtual machines we measure on
//! (`clock_gettime` through the vDSO), which was a third of an empty reducer's whole call. So the
//! reads go through [`quanta`], which reads the CPU's time-stamp counter where it is invariant
//! (about 10 ns) and the system's monotonic clock where it is not, and the wall-clock time is
//! that reading plus an offset taken from the system clock. The offset is taken again once a
//! second has passed, so timestamps follow adjustments of the system clock within a second.

use std::time::Duration;
use wasmod_abi::Timestamp;

/// How long an offset between the monotonic and the wall clock is trusted.
const REANCHOR_AFTER: Duration = Duration::from_secs(1);

/// The clock one instance's calls are timed with.
#[derive(Debug)]
pub(crate) struct CallClock {
    clock: quanta::Clock,
    /// A monotonic reading, and the wall-clock time then.
    anchor: (quanta::Instant, Timestamp),
}

impl CallClock {
    /// A clock anchored to the system clock now.
    pub(crate) fn new() -> Self {
        let clock = quanta::Clock::new();
        let anchor = (clock.now(), Timestamp::now());
        Self { clock, anchor }
    }

    /// Starts timing a call: the timer for its duration, and its timestamp.
    pub(crate) fn start(&mut self) -> (CallTimer, Timestamp) {
        let ticks = self.clock.raw();
        let now = self.clock.scaled(ticks);
        let (at, wall) = self.anchor;
        let since = now.saturating_duration_since(at);
        let timestamp = if since < REANCHOR_AFTER {
            // Under a second: the microseconds fit.
            wall.plus_micros(since.as_micros() as i64)
        } else {
            let wall = Timestamp::now();
            self.anchor = (now, wall);
            wall
        };
        (CallTimer(ticks), timestamp)
    }

    /// The time since `timer` started.
    pub(crate) fn elapsed(&self, timer: CallTimer) -> Duration {
        self.clock.delta(timer.0, self.clock.raw())
    }
}

/// When one call started, in the clock's raw ticks: [`CallClock::elapsed`] tells how long ago.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CallTimer(u64);

#[cfg(test)]
mod tests {
    use super::CallClock;
    use std::time::Duration;
    use wasmod_abi::Timestamp;

    #[test]
    fn timestamps_follow_the_system_clock_and_durations_grow() {
        let mut clock = CallClock::new();
        let before = Timestamp::now().to_micros_since_unix_epoch();
        let (timer, timestamp) = clock.start();
        std::thread::sleep(Duration::from_millis(20));
        let elapsed = clock.elapsed(timer);
        let after = Timestamp::now().to_micros_since_unix_epoch();
        let timestamp = timestamp.to_micros_since_unix_epoch();
        // The anchor was taken just before `before`; allow for the conversion's rounding.
        assert!(
            (before - 1..=after).contains(&timestamp),
            "{before} <= {timestamp} <= {after}"
        );
        assert!(elapsed >= Duration::from_millis(20), "{elapsed:?}");
        assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
    }

    #[test]
    fn an_old_anchor_is_taken_again() {
        let mut clock = CallClock::new();
        // Pretend the anchor was taken two seconds ago, when the wall clock said the epoch.
        let (now, _) = clock.anchor;
        let old = now.checked_sub(Duration::from_secs(2)).expect("a reading");
        clock.anchor = (old, Timestamp::UNIX_EPOCH);
        let (_, timestamp) = clock.start();
        let now = Timestamp::now().to_micros_since_unix_epoch();
        assert!(
            now - timestamp.to_micros_since_unix_epoch() < 1_000_000,
            "the timestamp comes from the system clock again, not the stale anchor"
        );
    }
}
