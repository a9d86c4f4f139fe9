//! Row visibility: a table's filter is checked when the catalog is built (a module whose
//! filter cannot be applied is refused, naming the table and the reason), and ANDed into every
//! query of the table bound to the reader, so that initial rows, deltas, joins and row-by-row
//! reads all see only the rows the reader may see.

use std::sync::Arc;
use wasmod_abi::{AlgebraicType as T, Identity, IndexDef, ModuleDef, TableDef, Value};
use wasmod_datastore::{Datastore, Row};
use wasmod_subscription::{Catalog, Query, QueryError, RowFilter, Subscriptions};

/// Table ids.
const NOTE: u32 = 0;
const TAG: u32 = 1;
const BOARD: u32 = 2;

/// `note (id u64 pk, owner Identity indexed, text String)` shown to its owner; `tag (id u64
/// pk, note u64 indexed)` without a filter; `board (id u64, open bool)` showing open boards
/// to everyone. `note_filter` replaces the note's filter.
fn module(note_filter: &str) -> ModuleDef {
    let mut def = ModuleDef::default();
    let index = |name: &str, column: u16, unique: bool| IndexDef {
        name: name.into(),
        columns: vec![column],
        unique,
    };
    let note = TableDef::of_columns(
        &mut def.typespace,
        "Note",
        "note",
        &[("id", T::U64), ("owner", T::Identity), ("text", T::String)],
    );
    def.tables.push(TableDef {
        primary_key: Some(0),
        indexes: vec![index("id", 0, true), index("owner", 1, false)],
        visibility: Some(note_filter.to_owned()),
        ..note
    });
    let tag = TableDef::of_columns(
        &mut def.typespace,
        "Tag",
        "tag",
        &[("id", T::U64), ("note", T::U64)],
    );
    def.tables.push(TableDef {
        primary_key: Some(0),
        indexes: vec![index("id", 0, true), index("note", 1, false)],
        ..tag
    });
    let board = TableDef::of_columns(
        &mut def.typespace,
        "Board",
        "board",
        &[("id", T::U64), ("open", T::Bool)],
    );
    def.tables.push(TableDef {
        visibility: Some("open = true".to_owned()),
        ..board
    });
    def
}

fn owner(n: u8) -> Identity {
    Identity::from_bytes([n; 32])
}

fn note(id: u64, owner: Identity, text: &str) -> Vec<u8> {
    Value::Product(vec![
        Value::U64(id),
        Value::Identity(owner),
        Value::String(text.to_owned()),
    ])
    .to_bytes()
}

fn tag(id: u64, note: u64) -> Vec<u8> {
    Value::Product(vec![Value::U64(id), Value::U64(note)]).to_bytes()
}

fn board(id: u64, open: bool) -> Vec<u8> {
    Value::Product(vec![Value::U64(id), Value::Bool(open)]).to_bytes()
}

/// The module with notes 1 and 2 of owner 1, note 3 of owner 2, a tag on notes 1 and 3, and
/// an open and a closed board.
fn world() -> (Datastore, Arc<Catalog>) {
    let def = module("owner = :sender");
    let datastore = Datastore::new(&def).expect("a valid module");
    let catalog = Arc::new(Catalog::new(&def).expect("the filters apply"));
    let mut tx = datastore.begin_mut();
    for row in [
        note(1, owner(1), "a"),
        note(2, owner(1), "b"),
        note(3, owner(2), "c"),
    ] {
        tx.insert(NOTE, &mut row.clone()).expect("a new note");
    }
    for row in [tag(10, 1), tag(30, 3)] {
        tx.insert(TAG, &mut row.clone()).expect("a new tag");
    }
    for row in [board(1, true), board(2, false)] {
        tx.insert(BOARD, &mut row.clone()).expect("a new board");
    }
    tx.commit();
    (datastore, catalog)
}

/// The first column (`id`) of each row, sorted.
fn ids(rows: &[Row]) -> Vec<u64> {
    let mut ids: Vec<u64> = rows
        .iter()
        .map(|row| u64::from_le_bytes(row[..8].try_into().expect("an id")))
        .collect();
    ids.sort_unstable();
    ids
}

/// The ids of the rows `text` returns for `reader`.
fn read(datastore: &Datastore, catalog: &Arc<Catalog>, text: &str, reader: Identity) -> Vec<u64> {
    let query = Query::parse(catalog, text).expect("a query of the subset");
    ids(&query
        .bind(reader)
        .evaluate(&datastore.begin_read())
        .expect("evaluates"))
}

#[test]
fn the_filter_is_anded_into_every_query_of_the_table() {
    let (datastore, catalog) = world();
    let all = "SELECT * FROM note";
    assert_eq!(read(&datastore, &catalog, all, owner(1)), [1, 2]);
    assert_eq!(read(&datastore, &catalog, all, owner(2)), [3]);
    assert_eq!(read(&datastore, &catalog, all, owner(3)), Vec::<u64>::new());
    let other_owners = "SELECT * FROM note WHERE id = 3 OR owner = 0x0202020202020202020202020202020202020202020202020202020202020202";
    assert_eq!(
        read(&datastore, &catalog, other_owners, owner(1)),
        Vec::<u64>::new(),
        "a query cannot widen what the table shows"
    );
    assert_eq!(
        read(
            &datastore,
            &catalog,
            "SELECT * FROM note WHERE text = 'b'",
            owner(1)
        ),
        [2]
    );

    let whole = Query::parse(&catalog, all).expect("a query");
    assert!(whole.uses_sender(), "the filter's `:sender` is the query's");
    assert_ne!(whole.bind(owner(1)), whole.bind(owner(2)));
    let written =
        Query::parse(&catalog, "SELECT * FROM note WHERE owner = :sender").expect("a query");
    assert_eq!(
        whole.bind(owner(1)),
        written.bind(owner(1)),
        "the filter is part of the plan: one query for subscribers of either text"
    );
    let boards = Query::parse(&catalog, "SELECT * FROM board").expect("a query");
    assert!(
        !boards.uses_sender(),
        "a filter without `:sender` is shared by everyone"
    );
    assert_eq!(boards.bind(owner(1)), boards.bind(owner(2)));
    assert_eq!(
        read(&datastore, &catalog, "SELECT * FROM board", owner(1)),
        [1]
    );
    let unfiltered = Query::parse(&catalog, "SELECT * FROM tag").expect("a query");
    assert!(!unfiltered.uses_sender());
    assert_eq!(
        read(&datastore, &catalog, "SELECT * FROM tag", owner(3)),
        [10, 30]
    );
}

#[test]
fn a_join_finds_partners_only_among_rows_the_reader_may_see() {
    let (datastore, catalog) = world();
    let tags = "SELECT tag.* FROM tag JOIN note ON tag.note = note.id";
    assert_eq!(read(&datastore, &catalog, tags, owner(1)), [10]);
    assert_eq!(read(&datastore, &catalog, tags, owner(2)), [30]);
    let notes = "SELECT n.* FROM tag t JOIN note n ON t.note = n.id";
    assert_eq!(read(&datastore, &catalog, notes, owner(2)), [3]);
    assert!(Query::parse(&catalog, tags).expect("a query").uses_sender());
}

#[test]
fn deltas_move_rows_in_and_out_of_each_readers_view() {
    let (datastore, catalog) = world();
    let all = Query::parse(&catalog, "SELECT * FROM note").expect("a query");
    let mut subscriptions = Subscriptions::new(catalog.clone());
    let first = subscriptions.add(all.bind(owner(1))).expect("one catalog");
    let second = subscriptions.add(all.bind(owner(2))).expect("one catalog");
    assert_ne!(first, second, "each identity has its own query");
    let again = subscriptions.add(all.bind(owner(1))).expect("one catalog");
    assert_eq!(again, first, "one identity's subscribers share theirs");

    // Note 2 changes owner: it leaves owner 1's view and enters owner 2's.
    let mut tx = datastore.begin_mut();
    tx.update_by_unique(NOTE, 0, &note(2, owner(2), "b"))
        .expect("note 2 exists");
    let changes = tx.commit();
    let deltas = subscriptions.evaluate(&changes, &datastore.begin_read());
    let delta_of = |id| {
        deltas
            .iter()
            .find(|(query, _)| *query == id)
            .map(|(_, delta)| delta.clone().expect("evaluates"))
            .expect("the query is affected")
    };
    let left = delta_of(first);
    assert_eq!((ids(&left.inserted), ids(&left.deleted)), (vec![], vec![2]));
    let entered = delta_of(second);
    assert_eq!(
        (ids(&entered.inserted), ids(&entered.deleted)),
        (vec![2], vec![])
    );

    // A change to a row owner 1 does not see reaches no query of owner 1.
    let mut tx = datastore.begin_mut();
    tx.update_by_unique(NOTE, 0, &note(3, owner(2), "changed"))
        .expect("note 3 exists");
    let changes = tx.commit();
    let deltas = subscriptions.evaluate(&changes, &datastore.begin_read());
    assert!(
        deltas
            .iter()
            .all(|(query, delta)| *query != first || delta.as_ref().is_ok_and(|d| d.is_empty())),
        "{deltas:?}"
    );
}

#[test]
fn row_filters_admit_exactly_the_rows_queries_return() {
    let (datastore, catalog) = world();
    let read = datastore.begin_read();
    let admitted = |table: u32, reader: Option<Identity>| {
        let filter = RowFilter::new(&catalog, table, reader).expect("a readable table");
        let rows: Vec<Row> = read
            .rows_from(table, 0)
            .expect("a table")
            .filter(|(_, row)| filter.admits(row))
            .map(|(_, row)| row.clone())
            .collect();
        ids(&rows)
    };
    assert_eq!(admitted(NOTE, Some(owner(1))), [1, 2]);
    assert_eq!(admitted(NOTE, Some(owner(2))), [3]);
    assert_eq!(admitted(TAG, None), [10, 30]);
    assert_eq!(
        admitted(BOARD, None),
        [1],
        "no identity needed for `open = true`"
    );
    assert_eq!(
        RowFilter::new(&catalog, NOTE, None).map(|_| ()),
        Err(QueryError::NeedsIdentity("note".to_owned()))
    );
    assert!(matches!(
        RowFilter::new(&catalog, 9, Some(owner(1))),
        Err(QueryError::UnknownTable(_))
    ));
}

#[test]
fn a_filter_that_cannot_be_applied_refuses_the_module_naming_the_table() {
    for (filter, reason) in [
        ("owner =", "not valid SQL"),
        ("owner = :sender; DROP TABLE note", "not valid SQL"),
        ("owner = :sender extra", "not valid SQL"),
        ("nobody = :sender", "table `note` has no column `nobody`"),
        (
            "text = :sender",
            "column `text` (String): `:sender` is an Identity",
        ),
        ("id = 'one'", "column `id` (u64): expected an integer"),
        ("owner IN (:sender)", "IN is not supported"),
        ("tag.note = 1", "`tag` names no table of the query"),
    ] {
        let error = Catalog::new(&module(filter)).expect_err(filter);
        assert_eq!(error.table, "note", "{filter}");
        assert_eq!(error.filter, filter);
        assert!(error.reason.contains(reason), "{filter}: {}", error.reason);
        let message = error.to_string();
        assert!(
            message.starts_with(&format!(
                "table `note` has the visibility filter `{filter}`"
            )),
            "{message}"
        );
    }
    assert!(Catalog::new(&module("note.owner = :sender OR id < 3")).is_ok());

    let mut private = module("owner = :sender");
    private.tables[0].public = false;
    let error = Catalog::new(&private).expect_err("a filter on a private table");
    assert!(error.reason.contains("private"), "{}", error.reason);
}
