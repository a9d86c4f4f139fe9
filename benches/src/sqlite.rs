//! The SQLite side: the same tables and the same work, in memory, in the same process.
//!
//! Every measured operation is one transaction (`BEGIN` .. `COMMIT`, like a reducer's), runs
//! prepared statements (cached on the connection, so only the first run of a bench compiles
//! its SQL), and reads every column of every row it selects into Rust values, as the module
//! decodes every row it visits. The schema follows SpacetimeDB's SQLite baseline: the unique
//! variant's `id` is `INTEGER PRIMARY KEY` (the rowid), the btree variant has one index per
//! column, the third has none.

use crate::data::{Rows, Shape, Table, Variant};
use benchmarks::synthetic::{UniqueU32U64Str, UniqueU32U64U64};
use rusqlite::types::ToSql;
use rusqlite::{params, Connection, Transaction};
use std::hint::black_box;

/// An in-memory SQLite database.
pub struct Sqlite {
    connection: Connection,
}

impl Default for Sqlite {
    fn default() -> Self {
        Self::new()
    }
}

/// A value to filter a column by.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A `TEXT` value.
    Str(String),
    /// An `INTEGER` value: a `u64` column.
    U64(u64),
}

/// SQLite's integers are `i64`; every `u64` the workloads use fits, and goes through as is.
fn int(value: u64) -> i64 {
    value as i64
}

impl Sqlite {
    /// A new, empty in-memory database.
    pub fn new() -> Self {
        Self {
            connection: Connection::open_in_memory().expect("SQLite opens an in-memory database"),
        }
    }

    /// Creates `table` and its indexes.
    pub fn create(&mut self, table: Table) {
        let name = table.name();
        let [id, a, b] = table.shape.columns();
        let b_type = match table.shape {
            Shape::Str => "TEXT",
            Shape::U64 => "INTEGER",
        };
        let id_type = match table.variant {
            Variant::Unique => "INTEGER PRIMARY KEY",
            Variant::Btree | Variant::NoIndex => "INTEGER",
        };
        let mut sql = format!(
            "CREATE TABLE {name} ({id} {id_type} NOT NULL, {a} INTEGER NOT NULL, {b} {b_type} NOT NULL);"
        );
        if table.variant == Variant::Btree {
            for column in table.shape.columns() {
                sql += &format!("CREATE INDEX {name}_{column} ON {name} ({column});");
            }
        }
        self.connection
            .execute_batch(&sql)
            .expect("the schema is valid");
    }

    /// An empty transaction: the floor of any operation.
    pub fn empty_transaction(&mut self) {
        self.transaction(|_| 0);
    }

    /// Inserts `rows` into `table`, in one transaction. Returns the count.
    pub fn insert(&mut self, table: Table, rows: &Rows) -> usize {
        let [id, a, b] = table.shape.columns();
        let sql = format!(
            "INSERT INTO {} ({id}, {a}, {b}) VALUES (?1, ?2, ?3)",
            table.name()
        );
        self.transaction(|tx| {
            let mut insert = tx.prepare_cached(&sql).expect("the statement is valid");
            each_row(rows, |row| insert.execute(row).expect("the row inserts"))
        })
    }

    /// Reads the first `count` rows of `table` and writes each back through its `id` with its
    /// second column incremented (the whole row replaced, as the module's update does), in one
    /// transaction. Returns the count updated.
    pub fn update_first(&mut self, table: Table, count: u32) -> usize {
        let [id, a, b] = table.shape.columns();
        let name = table.name();
        let select = format!("SELECT {id}, {a}, {b} FROM {name} LIMIT ?1");
        let update = format!("UPDATE {name} SET {a} = ?2, {b} = ?3 WHERE {id} = ?1");
        self.transaction(|tx| {
            let mut select = tx.prepare_cached(&select).expect("the statement is valid");
            let mut rows = read_rows(table.shape, select.query(params![count]));
            match &mut rows {
                Rows::Str(rows) => rows.iter_mut().for_each(|row| row.age += 1),
                Rows::U64(rows) => rows.iter_mut().for_each(|row| row.x += 1),
            }
            let mut update = tx.prepare_cached(&update).expect("the statement is valid");
            each_row(&rows, |row| update.execute(row).expect("the row updates"))
        })
    }

    /// Reads every row of `table`, in one transaction. Returns the count.
    pub fn iterate(&mut self, table: Table) -> usize {
        let [id, a, b] = table.shape.columns();
        let sql = format!("SELECT {id}, {a}, {b} FROM {}", table.name());
        self.select(table.shape, &sql, &[])
    }

    /// Reads the rows of `table` whose `column` is `value`, in one transaction. Returns the
    /// count.
    pub fn filter(&mut self, table: Table, column: &str, value: &Value) -> usize {
        let [id, a, b] = table.shape.columns();
        let sql = format!(
            "SELECT {id}, {a}, {b} FROM {} WHERE {column} = ?1",
            table.name()
        );
        match value {
            Value::Str(value) => self.select(table.shape, &sql, params![value]),
            Value::U64(value) => self.select(table.shape, &sql, params![int(*value)]),
        }
    }

    fn select(&mut self, shape: Shape, sql: &str, parameters: &[&dyn ToSql]) -> usize {
        self.transaction(|tx| {
            let mut query = tx.prepare_cached(sql).expect("the statement is valid");
            let rows = read_rows(shape, query.query(parameters));
            let count = match &rows {
                Rows::Str(rows) => rows.len(),
                Rows::U64(rows) => rows.len(),
            };
            black_box(rows);
            count
        })
    }

    /// Runs `work` in a transaction and commits it.
    fn transaction(&mut self, work: impl FnOnce(&Transaction<'_>) -> usize) -> usize {
        let tx = self.connection.transaction().expect("a transaction opens");
        let count = work(&tx);
        tx.commit().expect("the transaction commits");
        count
    }
}

/// Calls `f` with the three column values of each row, in order; returns how many rows
/// `f` touched (the sum of what it returns).
fn each_row(rows: &Rows, mut f: impl FnMut(&[&dyn ToSql]) -> usize) -> usize {
    match rows {
        Rows::Str(rows) => rows
            .iter()
            .map(|row| f(params![row.id, int(row.age), row.name]))
            .sum(),
        Rows::U64(rows) => rows
            .iter()
            .map(|row| {
                let (id, x, y) = (row.id, row.x, row.y);
                f(params![id, int(x), int(y)])
            })
            .sum(),
    }
}

/// Reads every row a query returns, every column converted to the shape's Rust types.
fn read_rows(shape: Shape, rows: rusqlite::Result<rusqlite::Rows<'_>>) -> Rows {
    let rows = rows.expect("the query runs");
    let column = "a column has the schema's type";
    match shape {
        Shape::Str => Rows::Str(
            rows.mapped(|row| {
                Ok(UniqueU32U64Str {
                    id: row.get(0)?,
                    age: row.get::<_, i64>(1)? as u64,
                    name: row.get(2)?,
                })
            })
            .map(|row| row.expect(column))
            .collect(),
        ),
        Shape::U64 => Rows::U64(
            rows.mapped(|row| {
                Ok(UniqueU32U64U64 {
                    id: row.get(0)?,
                    x: row.get::<_, i64>(1)? as u64,
                    y: row.get::<_, i64>(2)? as u64,
                })
            })
            .map(|row| row.expect(column))
            .collect(),
        ),
    }
}

/// The SQLite side of one workload: what to set up, and what to measure.
#[derive(Clone, Debug)]
pub enum SqliteWork {
    /// An empty transaction.
    Empty,
    /// Insert `batch` into `table`, which holds `preload`.
    Insert {
        /// The table.
        table: Table,
        /// Its rows before.
        preload: Rows,
        /// The rows inserted.
        batch: Rows,
    },
    /// Update the first `count` rows of `table`, which holds `preload`.
    Update {
        /// The table.
        table: Table,
        /// Its rows.
        preload: Rows,
        /// How many are updated.
        count: u32,
    },
    /// Read every row of `table`, which holds `preload`.
    Iterate {
        /// The table.
        table: Table,
        /// Its rows.
        preload: Rows,
    },
    /// Read the rows of `table` (holding `preload`) whose `column` is `value`.
    Filter {
        /// The table.
        table: Table,
        /// Its rows.
        preload: Rows,
        /// The indexed column filtered.
        column: &'static str,
        /// The value looked for.
        value: Value,
    },
}

impl SqliteWork {
    /// A new database in the state the measured operation starts from.
    pub fn prepare(&self) -> Sqlite {
        let mut db = Sqlite::new();
        match self {
            SqliteWork::Empty => {}
            SqliteWork::Insert { table, preload, .. }
            | SqliteWork::Update { table, preload, .. }
            | SqliteWork::Iterate { table, preload }
            | SqliteWork::Filter { table, preload, .. } => {
                db.create(*table);
                db.insert(*table, preload);
            }
        }
        db
    }

    /// The measured operation. Returns how many rows it inserted, updated or read.
    pub fn run(&self, db: &mut Sqlite) -> usize {
        match self {
            SqliteWork::Empty => {
                db.empty_transaction();
                0
            }
            SqliteWork::Insert { table, batch, .. } => db.insert(*table, batch),
            SqliteWork::Update { table, count, .. } => db.update_first(*table, *count),
            SqliteWork::Iterate { table, .. } => db.iterate(*table),
            SqliteWork::Filter {
                table,
                column,
                value,
                ..
            } => db.filter(*table, column, value),
        }
    }

    /// Whether the operation changes the database, so that each measured run needs a fresh
    /// one.
    pub fn mutates(&self) -> bool {
        matches!(self, SqliteWork::Insert { .. } | SqliteWork::Update { .. })
    }
}
