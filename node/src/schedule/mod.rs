//! The scheduler: calls the reducers of schedule tables when their rows are due.
//!
//! A schedule table (`#[table(scheduled(reducer))]`) asks for a call of its reducer with each
//! of its rows at the time, or every period, that the row's `ScheduleAt` says
//! ([`wasmod_host::schedule`] reads the rows). The scheduler is one task per node:
//!
//! - at start it subscribes to the database's commits, then reads every row of the schedule
//!   tables into its timer queue ([`timers`]); a one-shot row whose time passed while the
//!   server was stopped is due at once;
//! - each commit's changes to the schedule tables (rows inserted, updated, deleted, by any
//!   caller) set, move or cancel their timers (a repeating row inserted by a commit is first
//!   due one period after the commit's timestamp); if it falls behind the commit feed it
//!   reads the tables again;
//! - when a timer is due, the call goes to the module's thread through the same queue as
//!   clients' calls ([`Worker::run_when_room`]), so it is serialized with them, and it is
//!   counted in the metrics (kind `scheduled`) and logged (target `wasmod::schedule`) like
//!   them. The host makes the call ([`WasmModule::call_scheduled`]): the row as the reducer's
//!   argument, the host as the sender, a one-shot row deleted with the call (or after it, if
//!   the reducer fails).
//!
//! Time is read through a [`ScheduleClock`]: the system clock in production, a
//! [`ManualClock`] that a test moves. A repeating row's phase is not stored: after a restart
//! its first call is one period after the start. An edge node (a replica) schedules nothing:
//! its primary does.

pub(crate) mod clock;
pub(crate) mod timers;

use crate::health::LogHealth;
use crate::invocation::failure;
use crate::metrics::Metrics;
use crate::worker::Worker;
use clock::Wait;
use std::future::Future;
use std::sync::Arc;
use timers::{Due, Timers};
use tokio::sync::watch;
use wasmod_abi::ModuleDef;
use wasmod_host::datastore::{Commit, Database, FeedError};
use wasmod_host::schedule::Schedules;
use wasmod_host::{Outcome, WasmModule};
use wasmod_protocol::errors::ApiError;

pub use clock::{ManualClock, ScheduleClock, SystemClock};

/// The metrics' `kind` of scheduled calls.
pub const METRIC: &str = "scheduled";

/// The scheduler of one node's module, to run ([`Scheduler::run`]).
#[derive(Debug)]
pub struct Scheduler {
    module: Arc<ModuleDef>,
    schedules: Schedules,
    database: Arc<Database>,
    worker: Worker,
    clock: Arc<dyn ScheduleClock>,
    metrics: Arc<Metrics>,
    health: LogHealth,
}

/// What the scheduler needs besides the module's description: where to call, and how to
/// count and time the calls.
#[derive(Clone, Debug)]
pub struct Parts {
    /// The module's tables and the feed of their commits.
    pub database: Arc<Database>,
    /// The module's thread.
    pub worker: Worker,
    /// The time it goes by.
    pub clock: Arc<dyn ScheduleClock>,
    /// Where its calls are counted.
    pub metrics: Arc<Metrics>,
}

impl Scheduler {
    /// The scheduler of `module`, if it has schedule tables and its database is not a replica
    /// (whose primary schedules).
    pub fn new(module: Arc<ModuleDef>, parts: Parts) -> Option<Self> {
        let Parts {
            database,
            worker,
            clock,
            metrics,
        } = parts;
        // The host refused a module whose schedules are invalid when it loaded it.
        let schedules = Schedules::of(&module).ok()?;
        // An edge's primary schedules, and a standby's does until it is promoted.
        if schedules.is_empty() || database.is_replica() || database.is_standby() {
            return None;
        }
        Some(Self {
            module,
            schedules,
            health: LogHealth::new(database.clone()),
            database,
            worker,
            clock,
            metrics,
        })
    }

    /// Follows the commits and reads the schedule tables now, then returns the loop that calls
    /// the schedule tables' reducers as their rows come due, until `stop` says `true` (or the
    /// database closes). Scheduled calls already queued finish on the module's thread.
    ///
    /// The tables are read when this is called, not when the loop is first polled: a repeating
    /// row read from its table is first due one period after the reading, so a scheduler that
    /// read late (its task not yet run while a client commits a row and time passes) would
    /// push the row's first call back. Once the node has started, its schedule is read.
    pub fn run(self, mut stop: watch::Receiver<bool>) -> impl Future<Output = ()> + Send {
        let mut feed = self.database.feed().subscribe();
        let mut timers = Timers::default();
        self.read_tables(&mut timers);
        tracing::info!(
            target: "wasmod::schedule",
            rows = timers.len(),
            "the scheduler started"
        );
        async move {
            loop {
                let wait: Wait = match timers.next_due() {
                    Some(at) => self.clock.wait_until(at),
                    None => Box::pin(std::future::pending()),
                };
                tokio::select! {
                    _ = stop.wait_for(|stop| *stop) => break,
                    commit = feed.recv() => match commit {
                        Ok(commit) => self.follow(&mut timers, &commit),
                        Err(FeedError::Lagged { missed }) => {
                            tracing::warn!(
                                target: "wasmod::schedule",
                                missed,
                                "the scheduler fell behind the commits: reading the schedule tables again"
                            );
                            self.read_tables(&mut timers);
                        }
                        Err(FeedError::Closed | FeedError::Empty) => break,
                    },
                    () = wait => {
                        for due in timers.take_due(self.clock.now()) {
                            self.call(due);
                        }
                    }
                }
            }
            tracing::info!(target: "wasmod::schedule", "the scheduler stopped");
        }
    }

    /// Sets every timer from the schedule tables' rows.
    fn read_tables(&self, timers: &mut Timers) {
        let tables = self.database.begin_read();
        let rows = self.schedules.tables().iter().flat_map(|schedule| {
            let rows = tables.rows(schedule.table).into_iter().flatten();
            rows.map(|row| (schedule.table, row.clone()))
        });
        timers.reset(&self.module, &self.schedules, rows, self.clock.now());
    }

    /// Follows a commit's changes to the schedule tables. A repeating row it inserts is first
    /// due one period after the commit.
    fn follow(&self, timers: &mut Timers, commit: &Commit) {
        for table in &commit.changes.tables {
            if self.schedules.table(table.table).is_some() {
                timers.apply(&self.module, &self.schedules, table, commit.meta.timestamp);
            }
        }
    }

    /// Queues the call `due` asks for on the module's thread, and logs and counts it when it
    /// ends, on a task of its own.
    fn call(&self, due: Due) {
        let Due { table, row } = due;
        let table_name = self.module.tables[table as usize].name.clone();
        if let Err(error) = self.health.take_writes() {
            tracing::error!(
                target: "wasmod::schedule",
                table = %table_name,
                "a scheduled call was not made: {}",
                error.message
            );
            return;
        }
        let in_flight = self.metrics.start(METRIC);
        let worker = self.worker.clone();
        tokio::spawn(async move {
            let call = move |module: &mut WasmModule| module.call_scheduled(table, &row);
            let answered = match worker.run_when_room(call).await {
                Ok(None) => {
                    // Deleted or changed since the timer fired: the change has its own timer.
                    tracing::debug!(target: "wasmod::schedule", table = %table_name, "a due row was gone by its call");
                    drop(in_flight);
                    return;
                }
                Ok(Some(outcome)) => answer(outcome),
                Err(error) => Err(error),
            };
            match in_flight.finish(answered) {
                Ok(outcome) => tracing::info!(
                    target: "wasmod::schedule",
                    table = %table_name,
                    "scheduled call: {outcome}"
                ),
                Err(error) => tracing::error!(
                    target: "wasmod::schedule",
                    table = %table_name,
                    code = error.code.as_str(),
                    "scheduled call failed: {}",
                    error.message
                ),
            }
        });
    }
}

/// The scheduler of whichever build serves the module: started with the node, stopped
/// before a new build takes over and started again for it ([`crate::swap`]), stopped for good
/// at shutdown. Builds without schedule tables have none running.
#[derive(Debug)]
pub struct Scheduling {
    state: tokio::sync::Mutex<SchedulingState>,
}

#[derive(Debug)]
struct SchedulingState {
    /// What a scheduler is made of; `None` once shut down (it holds a handle on the module's
    /// thread, which must go for the thread to end).
    parts: Option<Parts>,
    /// The scheduler running now: what stops it, and its task.
    running: Option<(watch::Sender<bool>, tokio::task::JoinHandle<()>)>,
}

impl Scheduling {
    /// No scheduler running yet; [`Scheduling::start`] starts one from `parts`.
    pub fn new(parts: Parts) -> Self {
        let state = SchedulingState {
            parts: Some(parts),
            running: None,
        };
        Self {
            state: tokio::sync::Mutex::new(state),
        }
    }

    /// Starts the scheduler of the build described by `module` on the current runtime, if it
    /// has schedule tables (stopping the one running, if any); nothing after shutdown.
    pub async fn start(&self, module: Arc<ModuleDef>) {
        let mut state = self.state.lock().await;
        stop(&mut state).await;
        let Some(scheduler) = state
            .parts
            .clone()
            .and_then(|parts| Scheduler::new(module, parts))
        else {
            return;
        };
        let (stopper, stopped) = watch::channel(false);
        state.running = Some((stopper, tokio::spawn(scheduler.run(stopped))));
    }

    /// Stops the scheduler running, if any, and waits for it to end.
    pub async fn stop(&self) {
        stop(&mut *self.state.lock().await).await;
    }

    /// Stops the scheduler for good: nothing starts after this, and the scheduler's handle on
    /// the module's thread is dropped.
    pub async fn shut_down(&self) {
        let mut state = self.state.lock().await;
        stop(&mut state).await;
        state.parts = None;
    }
}

/// Stops `state`'s running scheduler and waits for its task.
async fn stop(state: &mut SchedulingState) {
    if let Some((stopper, task)) = state.running.take() {
        stopper.send_replace(true);
        let _ = task.await;
    }
}

/// A scheduled call's outcome as the metrics count it: a success, or the error a client
/// calling it would have got.
fn answer(outcome: Outcome) -> Result<Outcome, ApiError> {
    if outcome.is_success() {
        Ok(outcome)
    } else {
        Err(failure(outcome))
    }
}
