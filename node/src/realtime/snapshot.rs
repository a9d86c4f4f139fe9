//! A query set's rows as it is subscribed, taken in the evaluation round and sent by the
//! connection's writer in parts.
//!
//! # Why parts
//!
//! A subscription to a large table is a large answer: a million chat rows are 77 MiB. Encoded
//! as one message, it costs the rows' size twice over while it is built (the row list, then
//! the frame), holds the evaluation task (and so every other client's updates) while it
//! encodes, and makes one message larger than clients accept. Rows in the datastore are shared
//! ([`Row`] is reference-counted), so the round takes only the list of the rows, a pointer
//! each, under its read transaction ([`Snapshot`]); the writer then encodes it in parts of at
//! most [`NodeConfig::subscription_part_bytes`](crate::NodeConfig::subscription_part_bytes)
//! ([`Snapshot::parts`]),
//! one at a time as the socket takes them: `SubscribeRows` for every part but the last, and
//! `SubscribeApplied` for the last. A connection holds at most one part's encoding at a time,
//! and the rows stay as of the round whatever commits while they are sent: the query set's
//! updates are queued behind the snapshot, and the client applies every part at once.
//!
//! What a queued snapshot holds is counted in the outbound queue as its pointers
//! ([`Snapshot::bytes`]): the rows themselves belong to the tables, and are kept alive by the
//! snapshot only when a commit deletes them before they are sent.
//!
//! A snapshot carries the description of the build whose tables its rows are of, and its
//! parts are encoded with it, whichever build serves the module by the time they are sent.

use super::rows::QueryRows;
use std::sync::Arc;
use wasmod_abi::ModuleDef;
use wasmod_host::datastore::Row;

/// A query set's rows to send: every row of each query, or, when resumed, what changed in
/// each since the client's offset.
#[derive(Debug)]
pub struct Snapshot {
    /// The description of the build whose tables the rows are of: what encodes them.
    pub module: Arc<ModuleDef>,
    /// The query set.
    pub query_set_id: u32,
    /// The offset of the last commit the rows include.
    pub offset: u64,
    /// Whether the rows are the changes since the client's `resume_from`.
    pub resumed: bool,
    queries: Vec<QuerySnapshot>,
}

/// One query's rows in a [`Snapshot`].
#[derive(Debug)]
struct QuerySnapshot {
    table: String,
    inserts: Vec<Row>,
    deletes: Vec<Row>,
}

/// One part of a snapshot, encoded: its rows, per query.
#[derive(Debug)]
pub struct Part {
    /// The rows, one entry per query that has rows in this part (and one, empty, for a query
    /// without rows).
    pub rows: Vec<QueryRows>,
    /// Whether this is the last part: it goes out as `SubscribeApplied`, the others as
    /// `SubscribeRows`.
    pub last: bool,
}

/// The parts of a snapshot, encoded one by one as they are taken.
#[derive(Debug)]
pub struct Parts {
    /// The description of the build whose tables the rows are of: what encodes them.
    pub module: Arc<ModuleDef>,
    /// The query set.
    pub query_set_id: u32,
    /// The offset of the last commit the rows include.
    pub offset: u64,
    /// Whether the rows are the changes since the client's `resume_from`.
    pub resumed: bool,
    queries: std::vec::IntoIter<QuerySnapshot>,
    current: Option<Cursor>,
    part_bytes: usize,
    done: bool,
}

/// How far the parts have got in one query's rows.
#[derive(Debug)]
struct Cursor {
    query: QuerySnapshot,
    inserts: usize,
    deletes: usize,
    /// Whether the query has an entry in a part yet.
    started: bool,
}

/// What a row costs in a part: its bytes and its end offset in the row list.
fn encoded_len(row: &Row) -> usize {
    row.len() + size_of::<u32>()
}

impl Snapshot {
    /// An empty snapshot of query set `query_set_id` as of commit `offset`, of the tables of
    /// the build `module` describes.
    pub fn new(module: Arc<ModuleDef>, query_set_id: u32, offset: u64, resumed: bool) -> Self {
        Self {
            module,
            query_set_id,
            offset,
            resumed,
            queries: Vec::new(),
        }
    }

    /// Adds one query's rows of table `table`: those in its result (or, resumed, that entered
    /// it) and, resumed, those that left it.
    pub fn push(&mut self, table: &str, inserts: Vec<Row>, deletes: Vec<Row>) {
        self.queries.push(QuerySnapshot {
            table: table.to_owned(),
            inserts,
            deletes,
        });
    }

    /// What the snapshot holds while it is queued: the rows' pointers (see the module docs).
    pub fn bytes(&self) -> usize {
        self.rows() * size_of::<Row>()
    }

    /// How many rows the snapshot has, inserted and deleted.
    pub fn rows(&self) -> usize {
        self.queries
            .iter()
            .map(|query| query.inserts.len() + query.deletes.len())
            .sum()
    }

    /// The snapshot in parts of at most `part_bytes` of encoded rows each (a row larger than
    /// that is a part of its own), the last one possibly empty: there is always one.
    pub fn parts(self, part_bytes: usize) -> Parts {
        Parts {
            module: self.module,
            query_set_id: self.query_set_id,
            offset: self.offset,
            resumed: self.resumed,
            queries: self.queries.into_iter(),
            current: None,
            part_bytes: part_bytes.max(1),
            done: false,
        }
    }
}

impl Cursor {
    fn new(query: QuerySnapshot) -> Self {
        Self {
            query,
            inserts: 0,
            deletes: 0,
            started: false,
        }
    }

    fn finished(&self) -> bool {
        self.started
            && self.inserts == self.query.inserts.len()
            && self.deletes == self.query.deletes.len()
    }

    /// The next rows of this query that fit in `budget` bytes, deletes first, and the budget
    /// left; `None` if not one fits. With `at_least_one`, the first row is taken whatever its
    /// size, so that a row larger than a part still goes. A query without rows gets one empty
    /// entry, so that every query's table appears in the answer.
    fn take(
        &mut self,
        budget: usize,
        at_least_one: bool,
    ) -> Result<Option<(QueryRows, usize)>, String> {
        let mut left = budget;
        let mut must = at_least_one;
        let mut fill = |rows: &[Row], from: &mut usize| {
            let start = *from;
            while let Some(row) = rows.get(*from) {
                let cost = encoded_len(row);
                if cost > left && !must {
                    break;
                }
                must = false;
                left = left.saturating_sub(cost);
                *from += 1;
            }
            start..*from
        };
        let deletes = fill(&self.query.deletes, &mut self.deletes);
        let inserts = fill(&self.query.inserts, &mut self.inserts);
        let rowless = self.query.inserts.is_empty() && self.query.deletes.is_empty();
        if deletes.is_empty() && inserts.is_empty() && (self.started || !rowless) {
            return Ok(None);
        }
        self.started = true;
        let rows = QueryRows::new(
            &self.query.table,
            &self.query.inserts[inserts],
            &self.query.deletes[deletes],
        )
        .ok_or_else(|| "a row is more than one message can carry (4 GiB)".to_owned())?;
        Ok(Some((rows, left)))
    }
}

impl Iterator for Parts {
    type Item = Result<Part, String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut rows = Vec::new();
        let mut budget = self.part_bytes;
        loop {
            let cursor = match &mut self.current {
                Some(cursor) if !cursor.finished() => cursor,
                _ => match self.queries.next() {
                    Some(query) => self.current.insert(Cursor::new(query)),
                    None => {
                        self.done = true;
                        return Some(Ok(Part { rows, last: true }));
                    }
                },
            };
            match cursor.take(budget, rows.is_empty()) {
                Ok(Some((part, left))) => {
                    rows.push(part);
                    budget = left;
                }
                Ok(None) => return Some(Ok(Part { rows, last: false })),
                Err(error) => {
                    self.done = true;
                    return Some(Err(error));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(sizes: &[usize]) -> Vec<Row> {
        sizes
            .iter()
            .enumerate()
            .map(|(index, &size)| vec![index as u8; size].into())
            .collect()
    }

    /// One entry of a part: its table, and the lengths of its inserted and deleted rows.
    type Entry = (String, Vec<usize>, Vec<usize>);

    /// The parts as their entries, and whether each is the last.
    fn shape(parts: Parts) -> Vec<(Vec<Entry>, bool)> {
        parts
            .map(|part| {
                let part = part.expect("small rows");
                let entries = part
                    .rows
                    .iter()
                    .map(|rows| {
                        let lens = |list: &wasmod_protocol::ws::RowList| {
                            list.iter().map(<[u8]>::len).collect()
                        };
                        (rows.table.clone(), lens(&rows.inserts), lens(&rows.deletes))
                    })
                    .collect();
                (entries, part.last)
            })
            .collect()
    }

    #[test]
    fn an_empty_snapshot_is_one_last_part_with_an_entry_per_query() {
        let snapshot = Snapshot::new(Default::default(), 1, 0, false);
        assert_eq!(shape(snapshot.parts(100)), vec![(vec![], true)]);
        let mut snapshot = Snapshot::new(Default::default(), 1, 0, false);
        snapshot.push("t", Vec::new(), Vec::new());
        snapshot.push("u", Vec::new(), Vec::new());
        assert_eq!(
            shape(snapshot.parts(100)),
            vec![(
                vec![("t".into(), vec![], vec![]), ("u".into(), vec![], vec![])],
                true
            )]
        );
    }

    #[test]
    fn rows_that_fit_go_in_one_last_part() {
        let mut snapshot = Snapshot::new(Default::default(), 1, 0, false);
        snapshot.push("a", rows(&[10, 20]), Vec::new());
        snapshot.push("b", rows(&[5]), Vec::new());
        assert_eq!(snapshot.rows(), 3);
        assert_eq!(snapshot.bytes(), 3 * size_of::<Row>());
        assert_eq!(
            shape(snapshot.parts(1000)),
            vec![(
                vec![
                    ("a".into(), vec![10, 20], vec![]),
                    ("b".into(), vec![5], vec![])
                ],
                true
            )]
        );
    }

    #[test]
    fn parts_stay_within_the_budget_and_keep_every_row_in_order() {
        let mut snapshot = Snapshot::new(Default::default(), 1, 0, true);
        snapshot.push("a", rows(&[6, 6, 6]), rows(&[6, 6]));
        snapshot.push("b", rows(&[16, 6]), Vec::new());
        // 10 bytes a row of 6 (with its offset), 20 for the row of 16: two rows a part.
        assert_eq!(
            shape(snapshot.parts(20)),
            vec![
                (vec![("a".into(), vec![], vec![6, 6])], false),
                (vec![("a".into(), vec![6, 6], vec![])], false),
                (vec![("a".into(), vec![6], vec![])], false),
                (vec![("b".into(), vec![16], vec![])], false),
                (vec![("b".into(), vec![6], vec![])], true),
            ]
        );
    }

    #[test]
    fn a_row_larger_than_a_part_goes_alone() {
        let mut snapshot = Snapshot::new(Default::default(), 1, 0, false);
        snapshot.push("a", rows(&[3, 100, 3]), Vec::new());
        assert_eq!(
            shape(snapshot.parts(10)),
            vec![
                (vec![("a".into(), vec![3], vec![])], false),
                (vec![("a".into(), vec![100], vec![])], false),
                (vec![("a".into(), vec![3], vec![])], true),
            ]
        );
    }
}
