//! The tables as they were right after the commit being evaluated, when the tables at hand
//! are already past it.
//!
//! A join's delta looks up partners in the tables as they were right after its commit. An
//! evaluator that runs off the writer's lock reads the tables when it gets to a commit, and
//! by then later commits may be applied too: under one read transaction, it knows which (the
//! commits published before it took the lock). Rather than making it wait, the lookups
//! correct the tables by the net changes of those later commits ([`Later`]): a row a later
//! commit inserted is hidden, and a row a later commit deleted is seen again.

use super::scan::{self, IndexScan};
use crate::column::RowLayout;
use crate::error::QueryError;
use std::collections::{HashMap, HashSet};
use wasmod_datastore::{Row, Tables, TxData};

type Hasher = foldhash::fast::RandomState;

/// The net changes of a run of commits, per table: what the tables at hand have that they did
/// not have before the run, and what they had then but not now.
#[derive(Default)]
pub(crate) struct Later {
    tables: HashMap<u32, Net, Hasher>,
}

/// The net changes of a run of commits to one table.
#[derive(Default)]
struct Net {
    /// Rows present now, absent before the run.
    inserted: HashSet<Row, Hasher>,
    /// Rows present before the run, absent now.
    deleted: HashSet<Row, Hasher>,
}

impl Later {
    /// Makes the run start one commit earlier, with `changes` to the tables `kept` says (the
    /// others are never looked up).
    ///
    /// With `c` the commit and `L` the run after it: a row is inserted by both if `L`
    /// inserted it and `c` did not delete it, or `c` inserted it and `L` did not delete it; it
    /// is deleted by both if `c` deleted it and `L` did not insert it back, or `L` deleted it
    /// and `c` had not inserted it.
    pub(crate) fn prepend(&mut self, changes: &TxData, kept: impl Fn(u32) -> bool) {
        // In place, in the commit's size: a resume folds every commit since the client's
        // offset (after a crash, one per connection left open), so rebuilding the run's net
        // changes at each commit would cost the square of the commits. A commit's net changes
        // never insert and delete the same row, so its deletes are taken first, against the
        // run's inserts, and its inserts then against the run's deletes.
        for table in changes.tables.iter().filter(|table| kept(table.table)) {
            let net = self.tables.entry(table.table).or_default();
            for row in &table.deleted {
                if !net.inserted.remove(row) {
                    net.deleted.insert(row.clone());
                }
            }
            for row in &table.inserted {
                if !net.deleted.remove(row) {
                    net.inserted.insert(row.clone());
                }
            }
        }
    }
}

/// The tables right after the commit being evaluated: `tables` less the changes `later`.
#[derive(Clone, Copy)]
pub(crate) struct State<'a> {
    pub(crate) tables: &'a Tables,
    pub(crate) later: &'a Later,
}

impl<'a> State<'a> {
    /// The rows of `table` whose column `column` (the first column of `index`; `layout` is
    /// the table's) equals the encoded `value`, in this state.
    pub(crate) fn rows_with(
        &self,
        table: u32,
        index: u32,
        layout: &'a RowLayout,
        column: u16,
        value: &'a [u8],
    ) -> Result<impl Iterator<Item = &'a Row> + 'a, QueryError> {
        let net = self.later.tables.get(&table);
        let scan = IndexScan::equal(index, value);
        let now = scan::rows(self.tables, table, Some(&scan))?;
        let current = now.filter(move |row| net.is_none_or(|net| !net.inserted.contains(*row)));
        let gone = net
            .into_iter()
            .flat_map(|net| net.deleted.iter())
            .filter(move |row| layout.column(row, usize::from(column)) == Some(value));
        Ok(current.chain(gone))
    }
}
