//! `wasmod build --data <dir>`: the built quickstart checked against data directories written
//! for other builds of it, read-only: what the upgrade will do, or a warning naming why the
//! build cannot serve the data (status 1).

mod support;

use std::fs;
use std::path::Path;
use support::{text, wasmod};
use wasmod_abi::{AlgebraicType, ColumnDef, Field, ModuleDef};
use wasmod_host::datastore::durability::Options;
use wasmod_host::datastore::Database;
use wasmod_host::{WasmConfig, WasmEngine};
use wasmod_wasm_tests::{built, workspace_root, Profile};

/// The quickstart's description, from the build the wasm tests share.
fn quickstart() -> ModuleDef {
    let wasm = built(Profile::Release).library("quickstart");
    WasmEngine::shared()
        .expect("an engine")
        .compile(&wasm)
        .expect("the quickstart compiles")
        .describe(WasmConfig::default())
        .expect("the quickstart describes itself")
}

/// A data directory (as `serve --data` takes it) whose log is written for `def`, with no rows.
fn data_for(def: &ModuleDef) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a directory");
    drop(Database::open(&dir.path().join("db"), def, Options::default()).expect("a log"));
    dir
}

/// Every file of `dir` with its bytes.
fn contents(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = fs::read_dir(dir)
        .expect("the directory")
        .map(|entry| {
            let path = entry.expect("an entry").path();
            let bytes = fs::read(&path).expect("the file");
            (path, bytes)
        })
        .collect();
    files.sort();
    files
}

/// `wasmod build examples/quickstart --data <data>`: its status and output.
fn build_against(data: &Path) -> (Option<i32>, String) {
    let quickstart = workspace_root().join("examples").join("quickstart");
    let out = wasmod(
        &[
            "build",
            quickstart.to_str().expect("a UTF-8 path"),
            "--data",
            data.to_str().expect("a UTF-8 path"),
        ],
        workspace_root(),
    );
    (
        out.status.code(),
        format!("{}{}", text(&out.stdout), text(&out.stderr)),
    )
}

#[test]
fn build_says_what_the_upgrade_of_a_data_directory_will_do_or_why_it_cannot() {
    let current = quickstart();

    let same = data_for(&current);
    let (status, out) = build_against(same.path());
    assert_eq!(status, Some(0), "{out}");
    assert!(out.contains("dispatch: clean"), "{out}");
    assert!(out.contains("nothing to upgrade"), "{out}");

    // Data of a build without the `config` table: this build adds it.
    let mut older = current.clone();
    older.tables.retain(|table| table.name != "config");
    let fewer = data_for(&older);
    let (status, out) = build_against(fewer.path());
    assert_eq!(status, Some(0), "{out}");
    assert!(out.contains("will be upgraded on start"), "{out}");
    assert!(out.contains("table `config` is added"), "{out}");

    // Data of a build whose `message` had one more column: this build would lose it.
    let mut newer = current.clone();
    let message = newer
        .tables
        .iter_mut()
        .find(|table| table.name == "message")
        .expect("the message table");
    message.columns.push(ColumnDef {
        name: "edited".into(),
        ty: AlgebraicType::Bool,
        default: None,
    });
    let AlgebraicType::Ref(row) = message.row_type else {
        panic!("a named row type")
    };
    let AlgebraicType::Product(fields) = &mut newer.typespace.types[row as usize].ty else {
        panic!("a product")
    };
    fields.push(Field::named("edited", AlgebraicType::Bool));
    let more = data_for(&newer);
    let before = contents(&more.path().join("db"));
    let (status, out) = build_against(more.path());
    assert_eq!(status, Some(1), "{out}");
    assert!(
        out.contains("warning: this build cannot serve the data in"),
        "{out}"
    );
    assert!(
        out.contains("table `message`: column `edited` was removed"),
        "{out}"
    );
    assert_eq!(
        contents(&more.path().join("db")),
        before,
        "the check changes nothing"
    );
}
