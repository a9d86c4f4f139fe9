//! The property of incremental evaluation: after every commit, each query's view (its initial
//! rows plus every delta applied so far) equals the query evaluated from scratch, and both
//! equal a reference evaluation written here without the crate (every row decoded into values,
//! every pair of rows tried).
//!
//! Everything is random but deterministic (a seeded xorshift generator): the tables (a few
//! column types, some columns indexed, some indexes of two columns), the queries of the subset
//! (filters of `AND`, `OR` and every comparison, `:sender`, joins of two tables and of a table
//! with itself, returning either side), and the transactions (inserts, deletes, updates through
//! the primary key, several per commit, sometimes on both tables of a join), committed through
//! the datastore. Values come from small domains so that filters and joins match often.
//! Queries are added and removed along the way, so that initial rows are taken from tables
//! that are not empty, and the registry's routes are undone. The test counts the deltas it
//! applied and fails if there were too few to mean much.

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

use std::cmp::Ordering;
use std::collections::HashSet;
use std::sync::Arc;
use wasmod_abi::{AlgebraicType as T, Identity, IndexDef, ModuleDef, Reader, TableDef, Value};
use wasmod_datastore::{Datastore, Row, Tables, TxData};
use wasmod_subscription::{changes_since, BoundQuery, Catalog, Query, QueryId, Subscriptions};

/// How many random worlds (module, queries, transactions) are tried.
const WORLDS: u64 = 100;
/// Commits per world.
const COMMITS: usize = 80;
/// Queries subscribed per world (more are added along the way).
const QUERIES: usize = 14;

/// The column types of the random tables, with small domains of values.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    U8,
    I32,
    Str,
    Bool,
    Who,
    F64,
}

const KINDS: [Kind; 6] = [
    Kind::U8,
    Kind::I32,
    Kind::Str,
    Kind::Bool,
    Kind::Who,
    Kind::F64,
];

fn identity(n: usize) -> Identity {
    Identity::from_bytes([n as u8 + 1; 32])
}

impl Kind {
    fn ty(self) -> T {
        match self {
            Self::U8 => T::U8,
            Self::I32 => T::I32,
            Self::Str => T::String,
            Self::Bool => T::Bool,
            Self::Who => T::Identity,
            Self::F64 => T::F64,
        }
    }

    fn value(self, rng: &mut Rng) -> Value {
        match self {
            Self::U8 => Value::U8(rng.below(4) as u8),
            Self::I32 => Value::I32(rng.below(5) as i32 - 2),
            Self::Str => Value::String(["", "a", "b", "ab"][rng.below(4)].to_owned()),
            Self::Bool => Value::Bool(rng.chance(50)),
            Self::Who => Value::Identity(identity(rng.below(3))),
            Self::F64 => Value::F64([-1.5, 0.0, 2.25][rng.below(3)]),
        }
    }
}

/// A random table: `id u32` (the primary key) then a few random columns, some indexed.
struct TableShape {
    name: String,
    kinds: Vec<Kind>,
    /// Whether each column (after `id`) is the first column of an index.
    indexed: Vec<bool>,
}

fn module(rng: &mut Rng) -> (ModuleDef, Vec<TableShape>) {
    let mut def = ModuleDef::default();
    let mut shapes = Vec::new();
    for table in 0..2 + rng.below(2) {
        let name = format!("t{table}");
        // Every table has an indexed `u8` column, so that joins always have a column to use.
        let mut kinds = vec![Kind::U8];
        let mut indexed = vec![true];
        for _ in 0..1 + rng.below(3) {
            kinds.push(*rng.pick(&KINDS));
            indexed.push(rng.chance(50));
        }
        let mut columns = vec![("id".to_owned(), T::U32)];
        columns.extend(
            kinds
                .iter()
                .enumerate()
                .map(|(n, kind)| (format!("c{n}"), kind.ty())),
        );
        let named: Vec<(&str, T)> = columns
            .iter()
            .map(|(name, ty)| (name.as_str(), ty.clone()))
            .collect();
        let mut table_def = TableDef::of_columns(&mut def.typespace, &name, &name, &named);
        table_def.primary_key = Some(0);
        table_def.indexes.push(IndexDef {
            name: "id".into(),
            columns: vec![0],
            unique: true,
        });
        for (n, _) in indexed.iter().enumerate().filter(|(_, indexed)| **indexed) {
            table_def.indexes.push(IndexDef {
                name: format!("c{n}"),
                // Some indexes have a second column: scans of their first column are prefixes.
                columns: match n + 2 <= kinds.len() && rng.chance(30) {
                    true => vec![n as u16 + 1, n as u16 + 2],
                    false => vec![n as u16 + 1],
                },
                unique: false,
            });
        }
        def.tables.push(table_def);
        shapes.push(TableShape {
            name,
            kinds,
            indexed,
        });
    }
    (def, shapes)
}

/// The comparison operators, as SQL and as the orderings they accept.
const OPS: [(&str, &[Ordering]); 6] = [
    ("=", &[Ordering::Equal]),
    ("!=", &[Ordering::Less, Ordering::Greater]),
    ("<", &[Ordering::Less]),
    ("<=", &[Ordering::Less, Ordering::Equal]),
    (">", &[Ordering::Greater]),
    (">=", &[Ordering::Greater, Ordering::Equal]),
];

/// A random condition, kept as a tree so that the test evaluates it on its own, without the
/// crate.
enum Condition {
    /// `side.c{column} op literal`; side 0 is `a`, side 1 is `b`.
    Compare {
        side: usize,
        column: usize,
        op: usize,
        /// The literal's value, and whether it is written `:sender`.
        value: Value,
        sender: bool,
    },
    Group {
        and: bool,
        parts: Vec<Condition>,
    },
}

/// A random query of the subset: the rows of `a` (or of `b`, for a join returning `b`).
struct Spec {
    /// `a`'s table, and for a join `b`'s table with the join columns `a.c{x} = b.c{y}`.
    a: usize,
    join: Option<(usize, usize, usize)>,
    /// Whether a join returns `b`'s rows.
    returns_b: bool,
    filter: Option<Condition>,
    sender: Identity,
}

fn condition(rng: &mut Rng, shapes: &[&TableShape], depth: usize, sender: Identity) -> Condition {
    if depth > 0 && rng.chance(40) {
        let parts = (0..2 + rng.below(2))
            .map(|_| condition(rng, shapes, depth - 1, sender))
            .collect();
        return Condition::Group {
            and: rng.chance(50),
            parts,
        };
    }
    let side = rng.below(shapes.len());
    let column = rng.below(shapes[side].kinds.len());
    let mut value = shapes[side].kinds[column].value(rng);
    let sender_literal = matches!(value, Value::Identity(_)) && rng.chance(50);
    if sender_literal {
        value = Value::Identity(sender);
    }
    Condition::Compare {
        side,
        column,
        // Equalities are frequent, so that queries get routed by value.
        op: if rng.chance(40) {
            0
        } else {
            rng.below(OPS.len())
        },
        value,
        sender: sender_literal,
    }
}

fn spec(rng: &mut Rng, shapes: &[TableShape]) -> Spec {
    let sender = identity(rng.below(3));
    let a = rng.below(shapes.len());
    let join = rng.chance(40).then(|| {
        let b = rng.below(shapes.len());
        let joinable = |shape: &TableShape| -> Vec<usize> {
            (0..shape.kinds.len())
                .filter(|&n| shape.indexed[n] && shape.kinds[n] == Kind::U8)
                .collect()
        };
        let x = *rng.pick(&joinable(&shapes[a]));
        let y = *rng.pick(&joinable(&shapes[b]));
        (b, x, y)
    });
    let mut tables = vec![&shapes[a]];
    tables.extend(join.map(|(b, _, _)| &shapes[b]));
    let filter = rng.chance(85).then(|| condition(rng, &tables, 2, sender));
    Spec {
        a,
        join,
        returns_b: join.is_some() && rng.chance(50),
        filter,
        sender,
    }
}

impl Condition {
    fn sql(&self) -> String {
        match self {
            Self::Compare {
                side,
                column,
                op,
                value,
                sender,
            } => {
                let literal = match value {
                    _ if *sender => ":sender".to_owned(),
                    Value::U8(value) => value.to_string(),
                    Value::I32(value) => value.to_string(),
                    Value::String(text) => format!("'{text}'"),
                    Value::Bool(value) => value.to_string(),
                    Value::Identity(who) => format!("0x{}", who.to_hex()),
                    Value::F64(value) => format!("{value:?}"),
                    other => unreachable!("{other:?}"),
                };
                format!("{}.c{column} {} {literal}", ["a", "b"][*side], OPS[*op].0)
            }
            Self::Group { and, parts } => {
                let parts: Vec<String> = parts.iter().map(Self::sql).collect();
                format!("({})", parts.join(if *and { " AND " } else { " OR " }))
            }
        }
    }

    /// Whether the condition holds for the decoded rows `rows` (of `a`, then `b`).
    fn holds(&self, rows: &[&[Value]]) -> bool {
        match self {
            Self::Compare {
                side,
                column,
                op,
                value,
                ..
            } => OPS[*op].1.contains(&rows[*side][column + 1].cmp(value)),
            Self::Group { and: true, parts } => parts.iter().all(|part| part.holds(rows)),
            Self::Group { and: false, parts } => parts.iter().any(|part| part.holds(rows)),
        }
    }
}

impl Spec {
    fn sql(&self, shapes: &[TableShape]) -> String {
        let where_ = self
            .filter
            .as_ref()
            .map_or_else(String::new, |filter| format!(" WHERE {}", filter.sql()));
        let a = &shapes[self.a].name;
        let Some((b, x, y)) = self.join else {
            return format!("SELECT * FROM {a} a{where_}");
        };
        let b = &shapes[b].name;
        match self.returns_b {
            false => format!("SELECT a.* FROM {a} a JOIN {b} b ON a.c{x} = b.c{y}{where_}"),
            true => format!("SELECT b.* FROM {b} b JOIN {a} a ON b.c{y} = a.c{x}{where_}"),
        }
    }

    /// The rows the query returns from `tables`, found by decoding every row and trying
    /// every pair: slow, obvious, and independent of the crate.
    fn reference(&self, def: &ModuleDef, tables: &Tables) -> HashSet<Row> {
        let decoded = |table: usize| -> Vec<(Row, Vec<Value>)> {
            let row_type = &def.tables[table].row_type;
            tables
                .scan(table as u32)
                .expect("a table")
                .into_iter()
                .map(|row| {
                    let value = Value::decode(row_type, &def.typespace, &mut Reader::new(&row));
                    match value {
                        Ok(Value::Product(fields)) => (row, fields),
                        other => panic!("a row decodes to a product: {other:?}"),
                    }
                })
                .collect()
        };
        let holds = |rows: &[&[Value]]| self.filter.as_ref().is_none_or(|f| f.holds(rows));
        let a_rows = decoded(self.a);
        let Some((b, x, y)) = self.join else {
            return a_rows
                .into_iter()
                .filter(|(_, a)| holds(&[a]))
                .map(|(row, _)| row)
                .collect();
        };
        let b_rows = decoded(b);
        let mut found = HashSet::new();
        for (a_row, a) in &a_rows {
            for (b_row, b) in &b_rows {
                if a[x + 1] == b[y + 1] && holds(&[a, b]) {
                    found.insert(if self.returns_b { b_row } else { a_row }.clone());
                }
            }
        }
        found
    }
}

/// A random row of `shape` with id `id`.
fn row(rng: &mut Rng, shape: &TableShape, id: u32) -> Vec<u8> {
    let mut values = vec![Value::U32(id)];
    values.extend(shape.kinds.iter().map(|kind| kind.value(rng)));
    Value::Product(values).to_bytes()
}

/// One random transaction of a few inserts, deletes and updates, committed.
fn transact(rng: &mut Rng, datastore: &Datastore, shapes: &[TableShape]) -> TxData {
    let mut tx = datastore.begin_mut();
    for _ in 0..1 + rng.below(4) {
        let table = rng.below(shapes.len());
        let shape = &shapes[table];
        let id = rng.below(10) as u32;
        let existing = tx.scan(table as u32).unwrap_or_default();
        match rng.below(3) {
            0 => {
                let mut bytes = row(rng, shape, id);
                // A clash with an existing id is refused and changes nothing.
                let _ = tx.insert(table as u32, &mut bytes);
            }
            1 if !existing.is_empty() => {
                let victim = rng.pick(&existing).clone();
                let deleted = tx.delete_rows(table as u32, &victim);
                assert_eq!(deleted.ok(), Some(1));
            }
            _ if !existing.is_empty() => {
                let victim = rng.pick(&existing);
                let id = u32::from_le_bytes([victim[0], victim[1], victim[2], victim[3]]);
                let bytes = row(rng, shape, id);
                tx.update_by_unique(table as u32, 0, &bytes)
                    .expect("the row with this id exists");
            }
            _ => {}
        }
    }
    tx.commit()
}

/// A query subscribed to, with its view kept from its deltas.
struct Subscribed {
    id: QueryId,
    spec: Spec,
    query: BoundQuery,
    text: String,
    view: HashSet<Row>,
    /// Its rows when it was subscribed, and how many commits had been made then: a client
    /// that resumes from there applies [`changes_since`] of the commits after.
    initial: HashSet<Row>,
    since: usize,
}

fn subscribe(
    rng: &mut Rng,
    world: &World,
    subscriptions: &mut Subscriptions,
    since: usize,
) -> Subscribed {
    let spec = spec(rng, &world.shapes);
    let text = spec.sql(&world.shapes);
    let parsed =
        Query::parse(&world.catalog, &text).unwrap_or_else(|error| panic!("`{text}`: {error}"));
    let bound = parsed.bind(spec.sender);
    let id = subscriptions.add(bound.clone()).expect("one catalog");
    let tables = world.datastore.begin_read();
    let initial = bound.evaluate(&tables).expect("evaluates");
    let view: HashSet<Row> = initial.iter().cloned().collect();
    assert_eq!(
        view.len(),
        initial.len(),
        "`{text}`: initial rows are a set"
    );
    assert_eq!(
        view,
        spec.reference(&world.def, &tables),
        "`{text}`: initial rows"
    );
    Subscribed {
        id,
        spec,
        query: bound,
        text,
        initial: view.clone(),
        view,
        since,
    }
}

/// One random module with its tables.
struct World {
    def: ModuleDef,
    shapes: Vec<TableShape>,
    datastore: Datastore,
    catalog: Arc<Catalog>,
}

/// What a world exercised: deltas applied, of one-table queries and of joins.
#[derive(Default)]
struct Coverage {
    single: usize,
    joins: usize,
    /// Resumptions that had changes to apply.
    resumed: usize,
}

fn world(seed: u64, coverage: &mut Coverage) {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let (def, shapes) = module(&mut rng);
    let world = World {
        datastore: Datastore::new(&def).expect("a valid module"),
        catalog: Arc::new(Catalog::new(&def).expect("no visibility filters")),
        def,
        shapes,
    };
    let mut subscriptions = Subscriptions::new(world.catalog.clone());
    let mut live: Vec<Subscribed> = Vec::new();
    let mut history: Vec<TxData> = Vec::new();
    for _ in 0..QUERIES / 2 {
        live.push(subscribe(&mut rng, &world, &mut subscriptions, 0));
    }
    for commit in 0..COMMITS {
        if commit % 10 == 5 {
            for _ in 0..QUERIES / 4 {
                live.push(subscribe(
                    &mut rng,
                    &world,
                    &mut subscriptions,
                    history.len(),
                ));
            }
            let gone = live.swap_remove(rng.below(live.len()));
            subscriptions.remove(gone.id);
        }
        // Most commits are evaluated one by one; some in a batch, against the tables after
        // the last commit of the batch (as an evaluator that fell behind does).
        let batch: Vec<TxData> = (0..if rng.chance(25) { 2 + rng.below(3) } else { 1 })
            .map(|_| transact(&mut rng, &world.datastore, &world.shapes))
            .collect();
        let tables = world.datastore.begin_read();
        let deltas = match batch.as_slice() {
            [one] => vec![subscriptions.evaluate(one, &tables)],
            many => subscriptions.evaluate_batch(&many.iter().collect::<Vec<_>>(), &tables),
        };
        for subscribed in &mut live {
            let context = || format!("seed {seed}, commit {commit}, `{}`", subscribed.text);
            for deltas in &deltas {
                let Some((_, delta)) = deltas.iter().find(|(id, _)| *id == subscribed.id) else {
                    continue;
                };
                let delta = delta
                    .as_ref()
                    .unwrap_or_else(|error| panic!("{}: {error}", context()));
                match subscribed.spec.join.is_some() {
                    true => coverage.joins += 1,
                    false => coverage.single += 1,
                }
                for row in &delta.deleted {
                    assert!(
                        subscribed.view.remove(row),
                        "{}: deleted a row it did not have",
                        context()
                    );
                }
                for row in &delta.inserted {
                    assert!(
                        subscribed.view.insert(row.clone()),
                        "{}: inserted a row it had",
                        context()
                    );
                }
            }
            let fresh: HashSet<Row> = subscribed
                .query
                .evaluate(&tables)
                .expect("evaluates")
                .into_iter()
                .collect();
            assert_eq!(subscribed.view, fresh, "{}: after {batch:?}", context());
            let reference = subscribed.spec.reference(&world.def, &tables);
            assert_eq!(fresh, reference, "{}: from scratch", context());
        }
        history.extend(batch);
        if commit % 10 == 9 {
            resume_every_query(&live, &history, &tables, coverage);
        }
    }
}

/// Checks that each of `live`, caught up from its initial rows with the net changes of every
/// commit since it was subscribed (evaluated all at once, as for a client that resumes), holds
/// what its view holds.
fn resume_every_query(
    live: &[Subscribed],
    history: &[TxData],
    tables: &Tables,
    coverage: &mut Coverage,
) {
    for subscribed in live {
        let commits: Vec<&TxData> = history[subscribed.since..].iter().collect();
        let [net] = changes_since(std::slice::from_ref(&subscribed.query), &commits, tables)
            .unwrap_or_else(|error| panic!("`{}`: {error}", subscribed.text))
            .try_into()
            .expect("one delta per query");
        let mut resumed = subscribed.initial.clone();
        for row in &net.deleted {
            assert!(
                resumed.remove(row),
                "`{}`: resuming deleted a row it did not have",
                subscribed.text
            );
        }
        for row in &net.inserted {
            assert!(
                resumed.insert(row.clone()),
                "`{}`: resuming inserted a row it had",
                subscribed.text
            );
        }
        assert_eq!(
            resumed,
            subscribed.view,
            "`{}`: resumed after {} commits",
            subscribed.text,
            commits.len()
        );
        coverage.resumed += usize::from(!net.is_empty());
    }
}

#[test]
fn every_view_follows_its_query_commit_after_commit() {
    let mut coverage = Coverage::default();
    for seed in 0..WORLDS {
        world(seed, &mut coverage);
    }
    assert!(
        coverage.single > 500 && coverage.joins > 500 && coverage.resumed > 200,
        "too few deltas to mean much: {} of one-table queries, {} of joins, {} resumptions",
        coverage.single,
        coverage.joins,
        coverage.resumed
    );
}
