//! Scheduled reducers, the host's side: which tables are schedules, the checks a module
//! passes at load, and what a schedule table's row says.
//!
//! A table whose description has a [`ScheduleDef`](wasmod_abi::ScheduleDef)
//! (`#[table(scheduled(reducer))]`) is a *schedule*: each of its rows asks the host to call
//! the reducer with the row, at the time (or every period) its `ScheduleAt` column says. The
//! description comes from the module, so the host checks it before serving anything: the
//! reducer exists, is not a lifecycle reducer, and takes exactly one row of the table; the
//! column is a `ScheduleAt`; the table has a primary key, by which a row is known from one
//! version to the next. Keeping time, and calling reducers when it comes, is the server's
//! (the owner of the call queue): this module only reads the rows for it.
//!
//! Reading a row decodes it generically ([`Value`]), once per row a commit changes: schedule
//! tables are small and change rarely, so nothing here is on a hot path.

use wasmod_abi::{
    AlgebraicType, DecodeError, ModuleDef, Reader, ScheduleAt, TimeDuration, Timestamp, Value,
};

/// One schedule table of a module, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleTable {
    /// The table's id.
    pub table: u32,
    /// The id of the reducer called with its rows.
    pub reducer: u32,
    /// The position of its `ScheduleAt` column.
    at: usize,
    /// The position of its primary key's column.
    primary_key: usize,
}

/// What one row of a schedule table says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduledRow {
    /// The row's primary key, encoded: the same row from one version to the next.
    pub key: Vec<u8>,
    /// When it is due.
    pub at: ScheduleAt,
}

/// The schedule tables of one module.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedules {
    tables: Vec<ScheduleTable>,
}

impl Schedules {
    /// The schedule tables of `module`, checked. The error names the table and the reducer:
    /// a schedule that names no reducer, a lifecycle reducer, or a reducer whose parameters
    /// are not exactly one row of the table; a schedule column that is not a `ScheduleAt`;
    /// a schedule table without a primary key.
    pub fn of(module: &ModuleDef) -> Result<Self, String> {
        let mut tables = Vec::new();
        for (table, def) in (0u32..).zip(&module.tables) {
            let Some(schedule) = &def.schedule else {
                continue;
            };
            let what = format!(
                "table `{}` is the schedule of reducer `{}`",
                def.name, schedule.reducer
            );
            let reducer = module
                .reducers
                .iter()
                .position(|reducer| reducer.name == schedule.reducer)
                .ok_or_else(|| format!("{what}, but the module has no such reducer"))?;
            let reducer_def = &module.reducers[reducer];
            if let Some(lifecycle) = reducer_def.lifecycle {
                return Err(format!(
                    "{what}, which is the {} lifecycle reducer: only the host calls it, when its event happens",
                    lifecycle.as_str()
                ));
            }
            if !matches!(&reducer_def.params[..], [param] if param.ty == def.row_type) {
                return Err(format!(
                    "{what}, whose parameters are not exactly one row of the table (`fn {}(ctx, row)`)",
                    schedule.reducer
                ));
            }
            let at = usize::from(schedule.at);
            let column = def
                .columns
                .get(at)
                .ok_or_else(|| format!("{what} by its column {at}, which does not exist"))?;
            if !is_schedule_at(&column.ty, module) {
                return Err(format!(
                    "{what} by its column `{}`, which is not a `ScheduleAt`",
                    column.name
                ));
            }
            let primary_key = def
                .primary_key
                .ok_or_else(|| format!("{what}, but it has no primary key to know its rows by"))?;
            tables.push(ScheduleTable {
                table,
                reducer: reducer as u32,
                at,
                primary_key: usize::from(primary_key),
            });
        }
        Ok(Self { tables })
    }

    /// Every schedule table, in table order.
    pub fn tables(&self) -> &[ScheduleTable] {
        &self.tables
    }

    /// Whether the module has no schedule table.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// The schedule table `table`, if it is one.
    pub fn table(&self, table: u32) -> Option<&ScheduleTable> {
        self.tables.iter().find(|schedule| schedule.table == table)
    }

    /// The schedule table whose rows reducer `reducer` is called with, if there is one.
    pub fn of_reducer(&self, reducer: u32) -> Option<&ScheduleTable> {
        self.tables
            .iter()
            .find(|schedule| schedule.reducer == reducer)
    }
}

impl ScheduleTable {
    /// What the encoded row `row` of this table (of `module`) says: its key and its schedule.
    pub fn read(&self, module: &ModuleDef, row: &[u8]) -> Result<ScheduledRow, DecodeError> {
        let bad = DecodeError::InvalidTag {
            tag: 0,
            type_name: "ScheduleAt",
        };
        let def = module.tables.get(self.table as usize).ok_or(bad)?;
        let mut reader = Reader::new(row);
        let Value::Product(fields) = Value::decode(&def.row_type, &module.typespace, &mut reader)?
        else {
            return Err(bad);
        };
        reader.finish()?;
        let at = match fields.get(self.at) {
            Some(Value::Sum { tag: 0, value }) => match **value {
                Value::Timestamp(time) => ScheduleAt::Time(time),
                _ => return Err(bad),
            },
            Some(Value::Sum { tag: 1, value }) => match &**value {
                Value::Product(micros) => match micros[..] {
                    [Value::I64(micros)] => ScheduleAt::Interval(TimeDuration::from_micros(micros)),
                    _ => return Err(bad),
                },
                _ => return Err(bad),
            },
            _ => return Err(bad),
        };
        let key = fields.get(self.primary_key).ok_or(bad)?.to_bytes();
        Ok(ScheduledRow { key, at })
    }

    /// The encoded index scan that selects the row whose primary key is `key` in the primary
    /// key's index (the table's index 0).
    pub fn key_scan(key: &[u8]) -> Vec<u8> {
        let mut scan = Vec::with_capacity(key.len() + 6);
        scan.extend_from_slice(&1u32.to_le_bytes());
        scan.extend_from_slice(key);
        // Both bounds of the next column unbounded: exactly the rows with this key.
        scan.extend_from_slice(&[0, 0]);
        scan
    }
}

impl ScheduledRow {
    /// When a row of this schedule first comes due, for a row written (or found at start) at
    /// `now`: its time for `Time` (which may have passed: then at once), one period after
    /// `now` for `Interval`.
    pub fn first_due(&self, now: Timestamp) -> Timestamp {
        match self.at {
            ScheduleAt::Time(time) => time,
            ScheduleAt::Interval(period) => now + period,
        }
    }
}

/// Whether `ty` is [`ScheduleAt`]'s type: a sum of a `Timestamp` and a product of one `i64`.
fn is_schedule_at(ty: &AlgebraicType, module: &ModuleDef) -> bool {
    let resolve = |ty| module.typespace.resolve(ty);
    let Some(AlgebraicType::Sum(variants)) = resolve(ty) else {
        return false;
    };
    let [time, interval] = &variants[..] else {
        return false;
    };
    time.ty == AlgebraicType::Timestamp
        && matches!(resolve(&interval.ty), Some(AlgebraicType::Product(fields))
            if matches!(&fields[..], [micros] if micros.ty == AlgebraicType::I64))
}

#[cfg(test)]
mod tests {
    use super::{ScheduleTable, ScheduledRow, Schedules};
    use wasmod_abi::encoding::to_vec;
    use wasmod_abi::{
        AlgebraicType, Encode, Lifecycle, ModuleDef, ParamDef, ReducerDef, ScheduleAt, ScheduleDef,
        SchemaType, TableDef, TimeDuration, Timestamp,
    };

    /// A module with the table `job (id u64, at ScheduleAt)` scheduled for `run`, whose
    /// parameters are `params` (`None`: one row of the table).
    fn module(params: Option<Vec<AlgebraicType>>, lifecycle: Option<Lifecycle>) -> ModuleDef {
        let mut module = ModuleDef::default();
        let schedule_at = ScheduleAt::schema(&mut module.typespace);
        let mut table = TableDef::of_columns(
            &mut module.typespace,
            "Job",
            "job",
            &[("id", AlgebraicType::U64), ("at", schedule_at)],
        );
        table.primary_key = Some(0);
        table.schedule = Some(ScheduleDef {
            reducer: "run".into(),
            at: 1,
        });
        let params = params.unwrap_or_else(|| vec![table.row_type.clone()]);
        module.tables.push(table);
        module.reducers.push(ReducerDef {
            name: "run".into(),
            params: params
                .into_iter()
                .map(|ty| ParamDef {
                    name: "row".into(),
                    ty,
                })
                .collect(),
            lifecycle,
        });
        module
    }

    fn refusal(module: &ModuleDef) -> String {
        Schedules::of(module).expect_err("refused")
    }

    #[test]
    fn a_schedule_table_is_found_and_its_rows_read() {
        let module = module(None, None);
        let schedules = Schedules::of(&module).expect("valid");
        let [table] = schedules.tables() else {
            panic!("one schedule table: {schedules:?}");
        };
        assert_eq!((table.table, table.reducer), (0, 0));
        assert_eq!(schedules.of_reducer(0), Some(table));
        assert_eq!(schedules.table(1), None);

        let mut row = to_vec(&7u64);
        Encode::encode(
            &ScheduleAt::Interval(TimeDuration::from_micros(500)),
            &mut row,
        );
        let read = table.read(&module, &row).expect("a row");
        assert_eq!(read.key, to_vec(&7u64));
        let now = Timestamp::from_micros_since_unix_epoch(1_000);
        assert_eq!(read.first_due(now).to_micros_since_unix_epoch(), 1_500);
        let once = ScheduledRow {
            key: Vec::new(),
            at: ScheduleAt::Time(Timestamp::UNIX_EPOCH),
        };
        assert_eq!(once.first_due(now), Timestamp::UNIX_EPOCH);
        assert!(table.read(&module, &row[..row.len() - 1]).is_err());
        assert_eq!(
            ScheduleTable::key_scan(&[9]),
            [1, 0, 0, 0, 9, 0, 0],
            "a prefix of one column, then two unbounded ends"
        );
    }

    #[test]
    fn a_schedule_naming_no_reducer_is_refused() {
        let mut module = module(None, None);
        module.reducers[0].name = "other".into();
        let message = refusal(&module);
        assert!(message.contains("table `job`"), "{message}");
        assert!(message.contains("has no such reducer"), "{message}");
    }

    #[test]
    fn a_lifecycle_reducer_cannot_be_scheduled() {
        let message = refusal(&module(None, Some(Lifecycle::Init)));
        assert!(message.contains("`run`"), "{message}");
        assert!(message.contains("init lifecycle reducer"), "{message}");
    }

    #[test]
    fn the_reducer_takes_exactly_one_row_of_the_table() {
        for params in [
            vec![],
            vec![AlgebraicType::U64],
            vec![AlgebraicType::Ref(1), AlgebraicType::U64],
        ] {
            let message = refusal(&module(Some(params.clone()), None));
            assert!(
                message.contains("not exactly one row"),
                "{params:?}: {message}"
            );
        }
    }

    #[test]
    fn the_schedule_column_is_a_schedule_at_and_the_table_has_a_primary_key() {
        let mut wrong_column = module(None, None);
        if let Some(schedule) = &mut wrong_column.tables[0].schedule {
            schedule.at = 0;
        }
        let message = refusal(&wrong_column);
        assert!(
            message.contains("column `id`, which is not a `ScheduleAt`"),
            "{message}"
        );

        let mut past_the_end = module(None, None);
        if let Some(schedule) = &mut past_the_end.tables[0].schedule {
            schedule.at = 2;
        }
        assert!(refusal(&past_the_end).contains("column 2, which does not exist"));

        let mut no_key = module(None, None);
        no_key.tables[0].primary_key = None;
        assert!(refusal(&no_key).contains("no primary key"));
    }
}
