//! The time the scheduler goes by, behind a trait so that tests can move it by hand.
//!
//! The scheduler asks a clock two things: what time it is, and to wake it when a time has
//! come. [`SystemClock`] answers from the system's wall clock and tokio's timers; a test
//! gives the server a [`ManualClock`] instead, which stands still until the test moves it
//! ([`ManualClock::advance`]), so that "a timer fires once its time has passed" is checked
//! without sleeping and without races against the machine's speed. Neither busy-waits: a wait
//! is a tokio timer, or a wait for the manual clock's next move.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;
use tokio::sync::watch;
use wasmod_abi::{TimeDuration, Timestamp};

/// The longest the system clock sleeps before the scheduler looks at the time again, so that
/// a change of the wall clock (which tokio's monotonic timers do not see) is followed within
/// it.
pub const LONGEST_SLEEP: Duration = Duration::from_secs(60);

/// A wait for a time, from [`ScheduleClock::wait_until`].
pub type Wait = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// Where the scheduler reads the time.
pub trait ScheduleClock: Send + Sync + fmt::Debug {
    /// The time now.
    fn now(&self) -> Timestamp;

    /// Completes once the time is `at` or later, or sooner: the scheduler reads
    /// [`ScheduleClock::now`] again when it completes, and waits again if `at` has not come.
    fn wait_until(&self, at: Timestamp) -> Wait;
}

/// The system's wall clock: what a server runs on.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl ScheduleClock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }

    fn wait_until(&self, at: Timestamp) -> Wait {
        let left = Duration::try_from(at.duration_since(self.now())).unwrap_or(Duration::ZERO);
        Box::pin(tokio::time::sleep(left.min(LONGEST_SLEEP)))
    }
}

/// A clock that reads what it was last set to: for tests, which move it.
#[derive(Debug)]
pub struct ManualClock {
    time: watch::Sender<Timestamp>,
}

impl ManualClock {
    /// A clock that reads `start` until it is moved.
    pub fn new(start: Timestamp) -> Self {
        Self {
            time: watch::Sender::new(start),
        }
    }

    /// Moves the clock forward by `by`, waking the waits whose time has come.
    pub fn advance(&self, by: Duration) {
        self.time
            .send_modify(|now| *now = *now + TimeDuration::from(by));
    }

    /// Sets the clock to `time` (forward or back).
    pub fn set(&self, time: Timestamp) {
        self.time.send_replace(time);
    }
}

impl ScheduleClock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.time.borrow()
    }

    fn wait_until(&self, at: Timestamp) -> Wait {
        let mut time = self.time.subscribe();
        Box::pin(async move {
            // The sender lives as long as the clock, which the scheduler holds.
            let _ = time.wait_for(|now| *now >= at).await;
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{ManualClock, ScheduleClock, SystemClock};
    use std::time::Duration;
    use wasmod_abi::Timestamp;

    #[tokio::test]
    async fn a_manual_wait_ends_only_once_the_clock_reaches_its_time() {
        let clock = ManualClock::new(Timestamp::from_micros_since_unix_epoch(1_000));
        let mut wait = clock.wait_until(Timestamp::from_micros_since_unix_epoch(3_000));
        let not_yet = tokio::time::timeout(Duration::from_millis(20), &mut wait).await;
        assert!(not_yet.is_err(), "the clock has not moved");
        clock.advance(Duration::from_millis(1));
        let not_yet = tokio::time::timeout(Duration::from_millis(20), &mut wait).await;
        assert!(not_yet.is_err(), "2 000 µs is still before 3 000 µs");
        clock.advance(Duration::from_millis(1));
        tokio::time::timeout(Duration::from_secs(5), wait)
            .await
            .expect("the time has come");
        assert_eq!(clock.now().to_micros_since_unix_epoch(), 3_000);
        clock.set(Timestamp::UNIX_EPOCH);
        assert_eq!(clock.now(), Timestamp::UNIX_EPOCH);
    }

    #[tokio::test]
    async fn a_system_wait_for_a_past_time_ends_at_once() {
        let clock = SystemClock;
        let past = Timestamp::from_micros_since_unix_epoch(0);
        tokio::time::timeout(Duration::from_secs(5), clock.wait_until(past))
            .await
            .expect("no wait for a time that has passed");
    }
}
