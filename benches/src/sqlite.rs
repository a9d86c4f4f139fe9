//! The SQLite side: the same tables and work, in memory, with prepared statements.

use benchmarks::synthetic::{UniqueU32U64Str, UniqueU32U64U64};
use rusqlite::{params, Connection};
use std::hint::black_box;

/// An in-memory SQLite database holding the benchmark tables.
pub struct Sqlite {
    connection: Connection,
}

impl Default for Sqlite {
    fn default() -> Self {
        Self::new()
    }
}

impl Sqlite {
    /// A new database with the tables of the synthetic workloads.
    pub fn new() -> Self {
        let connection = Connection::open_in_memory().expect("SQLite opens an in-memory database");
        connection
            .execute_batch(
                "CREATE TABLE unique_0_u32_u64_str (id INTEGER PRIMARY KEY NOT NULL, age INTEGER NOT NULL, name TEXT NOT NULL);
                 CREATE TABLE unique_0_u32_u64_u64 (id INTEGER PRIMARY KEY NOT NULL, x INTEGER NOT NULL, y INTEGER NOT NULL);
                 CREATE TABLE btree_each_column_u32_u64_u64 (id INTEGER NOT NULL, x INTEGER NOT NULL, y INTEGER NOT NULL);
                 CREATE INDEX btree_u64_id ON btree_each_column_u32_u64_u64 (id);
                 CREATE INDEX btree_u64_x ON btree_each_column_u32_u64_u64 (x);
                 CREATE INDEX btree_u64_y ON btree_each_column_u32_u64_u64 (y);",
            )
            .expect("the schema is valid");
        Self { connection }
    }

    /// Inserts `(id, age, name)` rows in one transaction.
    pub fn insert_people(&mut self, rows: &[UniqueU32U64Str]) {
        let tx = self.connection.transaction().expect("a transaction opens");
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO unique_0_u32_u64_str (id, age, name) VALUES (?1, ?2, ?3)",
                )
                .expect("the statement is valid");
            for row in rows {
                insert
                    .execute(params![row.id, row.age as i64, row.name])
                    .expect("the row inserts");
            }
        }
        tx.commit().expect("the transaction commits");
    }

    /// Inserts `(id, x, y)` rows into `table` in one transaction.
    pub fn insert_points(&mut self, table: &str, rows: &[UniqueU32U64U64]) {
        let tx = self.connection.transaction().expect("a transaction opens");
        {
            let sql = format!("INSERT INTO {table} (id, x, y) VALUES (?1, ?2, ?3)");
            let mut insert = tx.prepare_cached(&sql).expect("the statement is valid");
            for row in rows {
                let (id, x, y) = (row.id, row.x, row.y);
                insert
                    .execute(params![id, x as i64, y as i64])
                    .expect("the row inserts");
            }
        }
        tx.commit().expect("the transaction commits");
    }

    /// Reads every `(id, x, y)` row of `unique_0_u32_u64_u64`, in one transaction.
    pub fn iterate_points(&mut self) -> usize {
        self.query_points("SELECT id, x, y FROM unique_0_u32_u64_u64", None)
    }

    /// Reads the `(id, x, y)` rows of the btree table whose `y` is `y`, in one transaction.
    pub fn filter_points_by_y(&mut self, y: u64) -> usize {
        self.query_points(
            "SELECT id, x, y FROM btree_each_column_u32_u64_u64 WHERE y = ?1",
            Some(y),
        )
    }

    fn query_points(&mut self, sql: &str, parameter: Option<u64>) -> usize {
        let tx = self.connection.transaction().expect("a transaction opens");
        let mut count = 0;
        {
            let mut query = tx.prepare_cached(sql).expect("the statement is valid");
            let mut rows = match parameter {
                Some(value) => query.query(params![value as i64]),
                None => query.query([]),
            }
            .expect("the query runs");
            while let Some(row) = rows.next().expect("rows read") {
                let point: (u32, i64, i64) = (
                    row.get(0).expect("id"),
                    row.get(1).expect("x"),
                    row.get(2).expect("y"),
                );
                black_box(point);
                count += 1;
            }
        }
        tx.commit().expect("the transaction commits");
        count
    }
}
