//! A module whose `timer` table schedules its `fire` reducer, for the scheduler's tests.
//!
//! Clients write timers through ordinary reducers (`once`, `every`, `move_to`, `cancel`); each
//! call of `fire` records the timer's id and the caller in `fired`, or fails if the timer asks
//! it to, so a test can see exactly which calls the host made, and as whom.

use wasmod::prelude::*;

/// The module: a schedule table, the record of its calls, and the reducers that write timers.
#[wasmod::module]
pub mod scheduled {
    use super::*;

    /// A timer: `fire` is called with it when `at` says.
    #[table(public, scheduled(fire))]
    pub struct Timer {
        /// Chosen by the client.
        #[primary_key]
        pub id: u64,
        /// When `fire` is called.
        pub at: ScheduleAt,
        /// Whether `fire` fails when called with this timer.
        pub fail: bool,
    }

    /// One call of `fire`.
    #[table(public)]
    pub struct Fired {
        /// In call order.
        #[primary_key]
        #[auto_inc]
        pub seq: u64,
        /// The timer it was called with.
        pub timer: u64,
        /// Who called it: the host.
        pub caller: Identity,
    }

    /// The scheduled reducer: records the call, or fails if the timer says so.
    #[reducer]
    fn fire(ctx: &ReducerContext, timer: Timer) -> Result<(), String> {
        if timer.fail {
            return Err(format!("timer {} fails on purpose", timer.id));
        }
        ctx.db.fired().insert(Fired {
            seq: 0,
            timer: timer.id,
            caller: ctx.sender(),
        });
        Ok(())
    }

    /// A one-shot timer `id` at `micros` since the Unix epoch, failing if `fail`.
    #[reducer]
    fn once(ctx: &ReducerContext, id: u64, micros: i64, fail: bool) {
        let at = ScheduleAt::Time(Timestamp::from_micros_since_unix_epoch(micros));
        ctx.db.timer().insert(Timer { id, at, fail });
    }

    /// A repeating timer `id`, every `micros` microseconds.
    #[reducer]
    fn every(ctx: &ReducerContext, id: u64, micros: i64) {
        let at = ScheduleAt::Interval(TimeDuration::from_micros(micros));
        ctx.db.timer().insert(Timer {
            id,
            at,
            fail: false,
        });
    }

    /// Moves timer `id` to one shot at `micros` since the Unix epoch.
    #[reducer]
    fn move_to(ctx: &ReducerContext, id: u64, micros: i64) -> Result<(), String> {
        let timers = ctx.db.timer();
        let timer = timers.id().find(id).ok_or("no such timer")?;
        let at = ScheduleAt::Time(Timestamp::from_micros_since_unix_epoch(micros));
        timers.id().update(Timer { at, ..timer });
        Ok(())
    }

    /// Deletes timer `id`.
    #[reducer]
    fn cancel(ctx: &ReducerContext, id: u64) {
        ctx.db.timer().id().delete(id);
    }
}
