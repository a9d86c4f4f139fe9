//! The timer queue: every row of the schedule tables, by the time it is next due.
//!
//! A timer is one row, known by its table and primary key. The queue is kept in step with
//! the tables by the commits' changes ([`Timers::apply`]): an inserted row sets its key's
//! timer, a deleted one removes it, and an update (the old row deleted, the new inserted in
//! one commit) moves it only if its `ScheduleAt` changed, so that writing another column of
//! a repeating row does not reset its period. [`Timers::take_due`] hands over the rows whose
//! time has come: a one-shot row's timer goes (its row is deleted by the call), a repeating
//! row's moves to the first of its periods after now, so a long stop or a slow call skips the
//! missed periods instead of firing them all at once.

use std::collections::{BTreeSet, HashMap};
use wasmod_abi::{ModuleDef, ScheduleAt, TimeDuration, Timestamp};
use wasmod_host::datastore::{Row, TableChanges};
use wasmod_host::schedule::{ScheduledRow, Schedules};

/// The shortest period a repeating row fires at: shorter ones (zero or negative included) are
/// taken as this, so that no row can keep the module's thread busy with its calls alone.
pub const SHORTEST_PERIOD: TimeDuration = TimeDuration::from_micros(1_000);

/// A row of a schedule table, by table id and encoded primary key.
type Key = (u32, Vec<u8>);

/// One row's timer.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Timer {
    due: Timestamp,
    row: Row,
    at: ScheduleAt,
}

/// A row whose time has come: the call to make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Due {
    /// The schedule table.
    pub table: u32,
    /// The row, as the table held it when the timer was set.
    pub row: Row,
}

/// The timers of a module's schedule tables.
#[derive(Debug, Default)]
pub struct Timers {
    by_due: BTreeSet<(Timestamp, Key)>,
    by_key: HashMap<Key, Timer>,
}

impl Timers {
    /// How many rows have a timer.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// Whether no row has a timer.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// When the next timer is due, if any is set.
    pub fn next_due(&self) -> Option<Timestamp> {
        self.by_due.first().map(|(due, _)| *due)
    }

    /// Sets the timers of `rows` (each with its table), all the rows of the schedule tables,
    /// replacing every timer: at start, or after missing commits. A row that already had a
    /// timer with the same schedule keeps its due time.
    pub fn reset(
        &mut self,
        module: &ModuleDef,
        schedules: &Schedules,
        rows: impl IntoIterator<Item = (u32, Row)>,
        now: Timestamp,
    ) {
        let mut old = std::mem::take(&mut self.by_key);
        self.by_due.clear();
        for (table, row) in rows {
            if let Some(read) = read(module, schedules, table, &row) {
                let kept = old.remove(&(table, read.key.clone()));
                self.set(table, read, row, kept, now);
            }
        }
    }

    /// Follows one commit's changes to table `changes.table`, a schedule table, at `now`.
    pub fn apply(
        &mut self,
        module: &ModuleDef,
        schedules: &Schedules,
        changes: &TableChanges,
        now: Timestamp,
    ) {
        let table = changes.table;
        let mut removed = HashMap::new();
        for row in &changes.deleted {
            if let Some(read) = read(module, schedules, table, row) {
                if let Some(timer) = self.remove(&(table, read.key.clone())) {
                    removed.insert(read.key, timer);
                }
            }
        }
        for row in &changes.inserted {
            if let Some(read) = read(module, schedules, table, row) {
                let kept = removed.remove(&read.key);
                self.set(table, read, row.clone(), kept, now);
            }
        }
    }

    /// Takes the rows due at `now`, in due order: one-shot rows' timers are removed,
    /// repeating rows' move to their first period after `now`.
    pub fn take_due(&mut self, now: Timestamp) -> Vec<Due> {
        let mut due = Vec::new();
        while let Some((at, key)) = self.by_due.first().cloned() {
            if at > now {
                break;
            }
            let Some(timer) = self.remove(&key) else {
                continue;
            };
            let (table, _) = key;
            due.push(Due {
                table,
                row: timer.row.clone(),
            });
            if let ScheduleAt::Interval(period) = timer.at {
                let next = next_period(timer.due, period, now);
                self.insert(key, Timer { due: next, ..timer });
            }
        }
        due
    }

    /// Sets the timer of `read`, the row `row` of `table`; `kept` is the timer the row's key
    /// had until this change, whose due time stays if its schedule did not change.
    fn set(
        &mut self,
        table: u32,
        read: ScheduledRow,
        row: Row,
        kept: Option<Timer>,
        now: Timestamp,
    ) {
        let due = match kept {
            Some(timer) if timer.at == read.at => timer.due,
            _ => read.first_due(now),
        };
        let timer = Timer {
            due,
            row,
            at: read.at,
        };
        if let Some(old) = self.by_key.get(&(table, read.key.clone())) {
            self.by_due.remove(&(old.due, (table, read.key.clone())));
        }
        self.insert((table, read.key), timer);
    }

    fn insert(&mut self, key: Key, timer: Timer) {
        self.by_due.insert((timer.due, key.clone()));
        self.by_key.insert(key, timer);
    }

    fn remove(&mut self, key: &Key) -> Option<Timer> {
        let timer = self.by_key.remove(key)?;
        self.by_due.remove(&(timer.due, key.clone()));
        Some(timer)
    }
}

/// What row `row` of `table` says, if `table` is a schedule table; a row the table holds
/// always reads.
fn read(module: &ModuleDef, schedules: &Schedules, table: u32, row: &[u8]) -> Option<ScheduledRow> {
    let schedule = schedules.table(table)?;
    match schedule.read(module, row) {
        Ok(read) => Some(read),
        Err(error) => {
            tracing::error!(table, "a row of a schedule table does not read: {error}");
            None
        }
    }
}

/// The first of the times `due + k * period` (k ≥ 1) after `now`, with `period` at least
/// [`SHORTEST_PERIOD`].
fn next_period(due: Timestamp, period: TimeDuration, now: Timestamp) -> Timestamp {
    let period = period.max(SHORTEST_PERIOD).to_micros();
    let behind = now.duration_since(due).to_micros().max(0);
    let periods = behind / period + 1;
    due + TimeDuration::from_micros(periods.saturating_mul(period))
}

#[cfg(test)]
mod tests {
    use super::{next_period, Due, Timers, SHORTEST_PERIOD};
    use std::sync::Arc;
    use wasmod_abi::encoding::to_vec;
    use wasmod_abi::{
        AlgebraicType, Encode, ModuleDef, ParamDef, ReducerDef, ScheduleAt, ScheduleDef,
        SchemaType, TableDef, TimeDuration, Timestamp,
    };
    use wasmod_host::datastore::{Row, TableChanges};
    use wasmod_host::schedule::Schedules;

    fn time(micros: i64) -> Timestamp {
        Timestamp::from_micros_since_unix_epoch(micros)
    }

    /// `job (id u64, at ScheduleAt, note u8)`, table 0, scheduled for `run`.
    fn module() -> (ModuleDef, Schedules) {
        let mut module = ModuleDef::default();
        let at = ScheduleAt::schema(&mut module.typespace);
        let mut table = TableDef::of_columns(
            &mut module.typespace,
            "Job",
            "job",
            &[
                ("id", AlgebraicType::U64),
                ("at", at),
                ("note", AlgebraicType::U8),
            ],
        );
        table.primary_key = Some(0);
        table.schedule = Some(ScheduleDef {
            reducer: "run".into(),
            at: 1,
        });
        module.reducers.push(ReducerDef {
            name: "run".into(),
            params: vec![ParamDef {
                name: "job".into(),
                ty: table.row_type.clone(),
            }],
            lifecycle: None,
        });
        module.tables.push(table);
        let schedules = Schedules::of(&module).expect("valid");
        (module, schedules)
    }

    fn row(id: u64, at: ScheduleAt, note: u8) -> Row {
        let mut bytes = to_vec(&id);
        at.encode(&mut bytes);
        note.encode(&mut bytes);
        Arc::from(bytes)
    }

    fn changes(inserted: Vec<Row>, deleted: Vec<Row>) -> TableChanges {
        TableChanges {
            table: 0,
            inserted,
            deleted,
        }
    }

    fn due(rows: &[&Row]) -> Vec<Due> {
        rows.iter()
            .map(|row| Due {
                table: 0,
                row: (*row).clone(),
            })
            .collect()
    }

    #[test]
    fn one_shot_rows_fire_once_in_due_order_and_missed_ones_at_once() {
        let (module, schedules) = module();
        let late = row(1, ScheduleAt::Time(time(300)), 0);
        let early = row(2, ScheduleAt::Time(time(200)), 0);
        let missed = row(3, ScheduleAt::Time(time(50)), 0);
        let mut timers = Timers::default();
        let rows = [&late, &early, &missed].map(|row| (0, row.clone()));
        timers.reset(&module, &schedules, rows, time(100));
        assert_eq!(timers.next_due(), Some(time(50)));
        assert_eq!(timers.take_due(time(100)), due(&[&missed]));
        assert_eq!(timers.take_due(time(199)), []);
        assert_eq!(timers.take_due(time(1_000)), due(&[&early, &late]));
        assert!(timers.is_empty());
        assert_eq!(timers.take_due(time(2_000)), []);
    }

    #[test]
    fn repeating_rows_fire_each_period_and_skip_the_missed_ones() {
        let (module, schedules) = module();
        let every = row(
            1,
            ScheduleAt::Interval(TimeDuration::from_micros(10_000)),
            0,
        );
        let mut timers = Timers::default();
        timers.apply(
            &module,
            &schedules,
            &changes(vec![every.clone()], vec![]),
            time(0),
        );
        assert_eq!(
            timers.next_due(),
            Some(time(10_000)),
            "one period after insert"
        );
        assert_eq!(timers.take_due(time(10_000)), due(&[&every]));
        assert_eq!(timers.next_due(), Some(time(20_000)));
        // A long stop: one call, then the next period after now, not a burst.
        assert_eq!(timers.take_due(time(95_000)), due(&[&every]));
        assert_eq!(timers.next_due(), Some(time(100_000)));
        assert_eq!(timers.len(), 1);
        assert_eq!(
            next_period(time(0), TimeDuration::ZERO, time(0)),
            time(0) + SHORTEST_PERIOD,
            "a zero period is the shortest one"
        );
    }

    #[test]
    fn deleting_cancels_and_changing_the_schedule_moves_the_timer() {
        let (module, schedules) = module();
        let every = row(
            1,
            ScheduleAt::Interval(TimeDuration::from_micros(10_000)),
            0,
        );
        let once = row(2, ScheduleAt::Time(time(500)), 0);
        let mut timers = Timers::default();
        let inserted = changes(vec![every.clone(), once.clone()], vec![]);
        timers.apply(&module, &schedules, &inserted, time(0));

        // Another column of the repeating row changes: its period goes on.
        let noted = row(
            1,
            ScheduleAt::Interval(TimeDuration::from_micros(10_000)),
            7,
        );
        let update = changes(vec![noted.clone()], vec![every]);
        timers.apply(&module, &schedules, &update, time(4_000));
        // The one-shot row moves later.
        let moved = row(2, ScheduleAt::Time(time(20_000)), 0);
        timers.apply(
            &module,
            &schedules,
            &changes(vec![moved.clone()], vec![once]),
            time(4_000),
        );
        assert_eq!(
            timers.take_due(time(10_000)),
            due(&[&noted]),
            "500 µs has gone"
        );
        assert_eq!(timers.take_due(time(20_000)), due(&[&noted, &moved]));

        timers.apply(
            &module,
            &schedules,
            &changes(vec![], vec![noted]),
            time(25_000),
        );
        assert!(timers.is_empty(), "deleted: cancelled");
        assert_eq!(timers.take_due(time(1_000_000)), []);
    }

    #[test]
    fn a_reset_keeps_the_due_times_of_unchanged_rows_and_drops_the_gone() {
        let (module, schedules) = module();
        let every = row(
            1,
            ScheduleAt::Interval(TimeDuration::from_micros(10_000)),
            0,
        );
        let once = row(2, ScheduleAt::Time(time(500)), 0);
        let mut timers = Timers::default();
        let both = [(0, every.clone()), (0, once.clone())];
        timers.reset(&module, &schedules, both, time(0));
        timers.reset(&module, &schedules, [(0, every.clone())], time(6_000));
        assert_eq!(timers.len(), 1);
        assert_eq!(timers.next_due(), Some(time(10_000)), "not reset to 16 000");
    }
}
