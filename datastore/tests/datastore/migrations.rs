//! Upgrades of a data directory to a new build: added columns with defaults, what is refused,
//! the read-only check, and the stored description's format.

use crate::fixtures::{all, module, player, point, point_scan, PLAYER, POINT};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use wasmod_abi::encoding::to_vec;
use wasmod_abi::{AlgebraicType, ColumnDef, Field, IndexDef, ModuleDef};
use wasmod_datastore::durability::{self, DurabilityError, Mode, Options, Recovered, UpgradeCheck};
use wasmod_datastore::migrate::Migration;

pub(crate) fn options() -> Options {
    Options::default().with_mode(Mode::Fsync)
}

/// Commits players `ids` (name `p<id>`, age `id`) to the log open as `recovered`.
fn commit_players(recovered: &Recovered, ids: std::ops::RangeInclusive<u32>) {
    let mut tx = recovered.datastore.begin_mut();
    for id in ids {
        tx.insert(PLAYER, &mut player(id, &format!("p{id}"), u64::from(id)))
            .expect("the insert");
    }
    let ticket = tx
        .try_commit_with(|changes| recovered.durability.append(&changes))
        .expect("the log takes the record");
    ticket.wait().expect("durable");
}

/// A directory whose log holds players 1 to 3 and two points labelled alike, written for the
/// fixture module.
fn directory_of_three_players() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a directory");
    let recovered = durability::open(dir.path(), &module(), options()).expect("the log opens");
    commit_players(&recovered, 1..=3);
    let mut tx = recovered.datastore.begin_mut();
    for x in 1..=2 {
        tx.insert(POINT, &mut point(x, 0, "same")).expect("a point");
    }
    let ticket = tx
        .try_commit_with(|changes| recovered.durability.append(&changes))
        .expect("the log takes the record");
    ticket.wait().expect("durable");
    dir
}

/// Every file of `dir` with its bytes.
pub(crate) fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .expect("the directory")
        .map(|entry| {
            let path = entry.expect("an entry").path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, fs::read(&path).expect("the file"))
        })
        .collect()
}

/// `def` with the columns of table `table` changed by `change`, and its row type made to
/// match them.
fn reshape(mut def: ModuleDef, table: u32, change: impl FnOnce(&mut Vec<ColumnDef>)) -> ModuleDef {
    let table = &mut def.tables[table as usize];
    change(&mut table.columns);
    let AlgebraicType::Ref(row) = table.row_type else {
        panic!("a named row type")
    };
    def.typespace.types[row as usize].ty = AlgebraicType::Product(
        table
            .columns
            .iter()
            .map(|column| Field::named(&column.name, column.ty.clone()))
            .collect(),
    );
    def
}

/// `def` with column `name` of type `ty` (default `default`) inserted at `position` of table
/// `table`.
pub(crate) fn with_column(
    def: ModuleDef,
    table: u32,
    position: usize,
    name: &str,
    ty: AlgebraicType,
    default: Option<Vec<u8>>,
) -> ModuleDef {
    reshape(def, table, |columns| {
        columns.insert(
            position,
            ColumnDef {
                name: name.into(),
                ty,
                default,
            },
        )
    })
}

/// The fixture with `player.level: u16` (default 7) at the end and a btree index on it.
pub(crate) fn with_level() -> ModuleDef {
    let mut def = with_column(
        module(),
        PLAYER,
        3,
        "level",
        AlgebraicType::U16,
        Some(to_vec(&7u16)),
    );
    def.tables[PLAYER as usize].indexes.push(IndexDef {
        name: "player_level".into(),
        columns: vec![3],
        unique: false,
    });
    def
}

/// Player `id`'s row with a level.
pub(crate) fn leveled(id: u32, level: u16) -> Vec<u8> {
    to_vec(&(id, format!("p{id}"), u64::from(id), level))
}

#[test]
fn a_column_added_at_the_end_gives_the_stored_rows_its_default() {
    let dir = directory_of_three_players();
    let upgraded = with_level();
    let level_index = 3;

    let checked = durability::check(dir.path(), &upgraded).expect("the check");
    let UpgradeCheck::Upgrade { rows, changes } = &checked else {
        panic!("an upgrade: {checked:?}")
    };
    assert_eq!(*rows, 5);
    assert!(
        changes.contains(
            &"table `player`: column `level` is added; the stored rows get its default".to_owned()
        ),
        "{changes:?}"
    );
    assert!(
        changes.contains(&"table `player`: index `player_level` is added".to_owned()),
        "{changes:?}"
    );
    {
        let recovered = durability::open(dir.path(), &upgraded, options()).expect("the upgrade");
        assert!(recovered.report.upgraded, "the start says it upgraded");
        assert!(
            recovered.report.rows_reencoded,
            "the stored rows gained a column"
        );
        let read = recovered.datastore.begin_read();
        assert_eq!(
            all(&read, PLAYER),
            (1..=3).map(|id| leveled(id, 7)).collect::<Vec<_>>()
        );
        let by_level = read
            .index_scan(PLAYER, level_index, &point_scan(&[7u16]))
            .expect("the new index");
        assert_eq!(by_level.len(), 3);
        drop(read);
        let mut tx = recovered.datastore.begin_mut();
        // The sequence goes on where the old build left it.
        tx.insert(PLAYER, &mut leveled(0, 9)).expect("an insert");
        let ticket = tx
            .try_commit_with(|changes| recovered.durability.append(&changes))
            .expect("the log takes the record");
        ticket.wait().expect("durable");
    }
    assert_eq!(
        durability::check(dir.path(), &upgraded).expect("the check"),
        UpgradeCheck::Unchanged
    );
    let recovered = durability::open(dir.path(), &upgraded, options()).expect("a reopen");
    assert!(
        !recovered.report.upgraded,
        "nothing to upgrade the second time"
    );
    let read = recovered.datastore.begin_read();
    let mut expected: Vec<Vec<u8>> = (1..=3).map(|id| leveled(id, 7)).collect();
    expected.push(to_vec(&(4u32, "p0".to_owned(), 0u64, 9u16)));
    assert_eq!(all(&read, PLAYER), expected);
    let nines = read
        .index_scan(PLAYER, level_index, &point_scan(&[9u16]))
        .expect("the new index");
    assert_eq!(nines.len(), 1);
}

#[test]
fn refused_upgrades_name_the_change_and_leave_the_files_alone() {
    use AlgebraicType as T;
    let dir = directory_of_three_players();
    let before = files(dir.path());
    let retyped = reshape(module(), PLAYER, |columns| columns[2].ty = T::U32);
    let renamed = reshape(module(), PLAYER, |columns| columns[1].name = "nick".into());
    let mut removed = reshape(module(), PLAYER, |columns| {
        columns.pop();
    });
    removed.tables[PLAYER as usize].indexes.pop();
    let mut table_removed = module();
    table_removed.tables.remove(POINT as usize);
    let mut unique_label = module();
    unique_label.tables[POINT as usize].indexes[1].unique = true;
    let unique_default = {
        let mut def = with_column(module(), PLAYER, 3, "code", T::U8, Some(vec![1]));
        def.tables[PLAYER as usize].indexes.push(IndexDef {
            name: "player_code".into(),
            columns: vec![3],
            unique: true,
        });
        def
    };
    let cases = [
        (
            with_column(module(), PLAYER, 3, "level", T::U16, None),
            "table `player`: column `level` was added without a default: add `#[default(..)]` to it",
        ),
        (
            with_column(module(), PLAYER, 1, "level", T::U16, Some(to_vec(&7u16))),
            "table `player`: column `level` was added in the middle, before `name`: add new columns at the end of the table",
        ),
        (
            removed,
            "table `player`: column `age` was removed: a stored column cannot be removed",
        ),
        (
            renamed,
            "table `player`: column `name` was renamed to `nick`",
        ),
        (retyped, "table `player`: column `age` changed type"),
        (table_removed, "table `point` was removed"),
        (
            unique_label,
            "table `point`: the stored rows do not fit the new table",
        ),
        (
            unique_default,
            "table `player`: the stored rows do not fit the new table",
        ),
    ];
    for (def, expected) in cases {
        let checked = durability::check(dir.path(), &def).expect_err("the check refuses it");
        let opened = durability::open(dir.path(), &def, options()).expect_err("refused");
        for error in [&checked, &opened] {
            assert!(
                matches!(error, DurabilityError::Incompatible { .. }),
                "{error}"
            );
            assert!(error.to_string().contains(expected), "{expected}: {error}");
        }
        assert_eq!(
            files(dir.path()),
            before,
            "{expected}: nothing on disk changed"
        );
    }
    let recovered = durability::open(dir.path(), &module(), options()).expect("the old build");
    assert_eq!(recovered.report.transactions, 2);
}

#[test]
fn a_default_that_is_not_a_value_of_its_column_s_type_is_refused() {
    let dir = directory_of_three_players();
    let before = files(dir.path());
    let def = with_column(
        module(),
        PLAYER,
        3,
        "level",
        AlgebraicType::U16,
        Some(vec![7]),
    );
    let expected =
        "table `player`: column `level`: its default is not one value of the column's type";
    let opened = durability::open(dir.path(), &def, options()).expect_err("refused");
    assert!(matches!(opened, DurabilityError::Schema(_)), "{opened}");
    let checked = durability::check(dir.path(), &def).expect_err("refused");
    for error in [opened, checked] {
        assert!(error.to_string().contains(expected), "{error}");
    }
    assert_eq!(files(dir.path()), before);
}

#[test]
fn every_problem_of_a_build_is_named_at_once() {
    let def = with_column(module(), PLAYER, 3, "level", AlgebraicType::U16, None);
    let def = reshape(def, POINT, |columns| columns[0].name = "left".into());
    let problems = Migration::plan(&module(), &def)
        .expect_err("refused")
        .problems;
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].contains("`player`: column `level` was added without a default"));
    assert!(problems[1].contains("`point`: column `x` was renamed to `left`"));
}

#[test]
fn changes_the_data_does_not_depend_on_do_not_carry_it_over() {
    let dir = directory_of_three_players();
    let mut def = module();
    def.tables[PLAYER as usize].public = !def.tables[PLAYER as usize].public;
    def.tables[PLAYER as usize].columns[1].default = Some(to_vec(&"x".to_owned()));
    def.tables[PLAYER as usize].visibility = Some("name = 'p1'".into());
    def.tables[POINT as usize].schedule = Some(wasmod_abi::ScheduleDef {
        reducer: "added".into(),
        at: 0,
    });
    def.reducers.push(wasmod_abi::ReducerDef {
        name: "added".into(),
        params: Vec::new(),
        lifecycle: None,
    });
    assert_eq!(
        durability::check(dir.path(), &def).expect("the check"),
        UpgradeCheck::Unchanged
    );
    let before = files(dir.path());
    let recovered = durability::open(dir.path(), &def, options()).expect("it opens");
    assert_eq!(recovered.report.transactions, 2);
    drop(recovered);
    assert_eq!(
        files(dir.path()).keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>(),
        "no snapshot was written"
    );
}

#[test]
fn an_empty_directory_is_checked_without_creating_anything() {
    let dir = tempfile::tempdir().expect("a directory");
    let missing = dir.path().join("data");
    assert_eq!(
        durability::check(&missing, &module()).expect("the check"),
        UpgradeCheck::Empty
    );
    assert!(!missing.exists());
}

#[test]
fn the_check_leaves_a_torn_tail_in_place() {
    let dir = directory_of_three_players();
    let segment = files(dir.path())
        .into_keys()
        .find(|name| name.ends_with(".wlog"))
        .expect("a segment");
    let path = dir.path().join(segment);
    let mut torn = fs::read(&path).expect("the segment");
    torn.extend_from_slice(&[9, 0, 0, 0, 1, 2]);
    fs::write(&path, &torn).expect("a torn tail");
    let checked = durability::check(dir.path(), &with_level()).expect("the check");
    assert!(
        matches!(checked, UpgradeCheck::Upgrade { rows: 5, .. }),
        "{checked:?}"
    );
    assert_eq!(fs::read(&path).expect("the segment"), torn, "nothing cut");
}

#[test]
fn a_stored_description_of_an_older_format_is_refused_clearly() {
    let dir = directory_of_three_players();
    let file = dir.path().join("tables.def");
    // What wasmod wrote before the description had a version: the bare encoding.
    fs::write(&file, to_vec(&module())).expect("an older file");
    for error in [
        durability::open(dir.path(), &module(), options()).expect_err("refused"),
        durability::check(dir.path(), &module()).expect_err("refused"),
    ] {
        assert!(
            matches!(error, DurabilityError::Unreadable { .. }),
            "{error}"
        );
        let message = error.to_string();
        assert!(message.contains("tables.def"), "{message}");
        assert!(
            message.contains("older than description format 2"),
            "{message}"
        );
    }
}

#[test]
fn a_migration_in_memory_carries_rows_and_sequences_over() {
    let before = crate::fixtures::datastore();
    let mut tx = before.begin_mut();
    tx.insert(PLAYER, &mut player(0, "a", 1))
        .expect("an insert");
    tx.insert(PLAYER, &mut player(0, "b", 2))
        .expect("an insert");
    tx.commit();
    let migration = Migration::plan(&module(), &with_level()).expect("compatible");
    let after = migration.carry_over(&before).expect("carried over");
    let mut tx = after.begin_mut();
    tx.insert(PLAYER, &mut to_vec(&(0u32, "c".to_owned(), 3u64, 1u16)))
        .expect("an insert");
    tx.commit();
    let ids: Vec<Vec<u8>> = all(&after.begin_read(), PLAYER);
    assert_eq!(
        ids,
        [
            to_vec(&(1u32, "a".to_owned(), 1u64, 7u16)),
            to_vec(&(2u32, "b".to_owned(), 2u64, 7u16)),
            to_vec(&(3u32, "c".to_owned(), 3u64, 1u16)),
        ]
    );
    assert_eq!(
        all(&before.begin_read(), PLAYER).len(),
        2,
        "the old tables are kept"
    );
}

#[test]
fn a_database_is_checked_with_its_system_tables() {
    let dir = tempfile::tempdir().expect("a directory");
    drop(wasmod_datastore::Database::open(dir.path(), &module(), options()).expect("opens"));
    assert_eq!(
        wasmod_datastore::Database::check(dir.path(), &module()).expect("the check"),
        UpgradeCheck::Unchanged
    );
    let checked = wasmod_datastore::Database::check(dir.path(), &with_level()).expect("the check");
    let UpgradeCheck::Upgrade { changes, .. } = &checked else {
        panic!("an upgrade: {checked:?}")
    };
    assert!(
        changes.iter().all(|change| !change.contains("__wasmod_")),
        "the system tables are unchanged: {changes:?}"
    );
    // The bare durability check sees the system tables as removed.
    let bare = durability::check(dir.path(), &module()).expect_err("refused");
    assert!(bare.to_string().contains("table `__wasmod_"), "{bare}");
}
