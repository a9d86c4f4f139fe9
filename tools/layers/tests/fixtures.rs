//! The check on small crates written to a temporary directory: what it reports as a circle,
//! and the ordinary shapes it must not report.

use std::path::Path;
use wasmod_layers::{check, Circle};

/// The circles of a crate made of `files` (paths below `src/`, the root being `lib.rs`).
fn circles(files: &[(&str, &str)]) -> Vec<Circle> {
    let dir = tempfile::tempdir().expect("temporary directory");
    for (path, source) in files {
        let file = dir.path().join("src").join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("directory");
        std::fs::write(file, source).expect("write");
    }
    check(&dir.path().join("src/lib.rs")).expect("the crate reads")
}

/// Each circle as `parent: modules`, and each of its dependencies as `from -> to: written`.
fn summary(circles: &[Circle]) -> Vec<String> {
    let mut lines = Vec::new();
    for circle in circles {
        lines.push(format!("{}: {}", circle.parent, circle.modules.join(", ")));
        for edge in &circle.edges {
            let written: Vec<&str> = edge.names.iter().map(|n| n.written.as_str()).collect();
            lines.push(format!(
                "  {} -> {}: {}",
                edge.from,
                edge.to,
                written.join(", ")
            ));
        }
    }
    lines
}

#[test]
fn two_modules_that_use_each_other_are_a_circle() {
    let found = circles(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "pub struct A;\npub fn f(_: crate::b::B) {}\n"),
        ("b.rs", "use crate::a::A;\npub struct B(pub A);\n"),
    ]);
    assert_eq!(
        summary(&found),
        [
            "crate: a, b",
            "  a -> b: crate::b::B",
            "  b -> a: crate::a::A"
        ]
    );
    let shown = found[0].to_string();
    assert!(
        shown.contains("a circle among the children of `crate`: a, b"),
        "{shown}"
    );
    assert!(shown.contains("in crate::b: `crate::a::A`"), "{shown}");
}

#[test]
fn a_parent_and_its_children_are_no_circle() {
    // The root declares and re-exports its children and uses them; they use the root's
    // items and each other's in one direction only.
    let found = circles(&[
        (
            "lib.rs",
            "mod table;\nmod index;\npub use table::Table;\npub struct Error;\n\
             pub fn open() -> table::Table { table::Table::new() }\n",
        ),
        (
            "table.rs",
            "use super::*;\nuse crate::Error;\nmod inner;\npub struct Table;\n\
             impl Table { pub fn new() -> Self { inner::make() } }\n\
             pub fn lookup() -> crate::index::Index { todo!() }\n",
        ),
        (
            "table/inner.rs",
            "pub fn make() -> super::Table { let _: crate::Error; super::Table }\n",
        ),
        (
            "index.rs",
            "pub struct Index;\npub fn error() -> super::Error { crate::Error }\n",
        ),
    ]);
    assert_eq!(summary(&found), Vec::<String>::new());
}

#[test]
fn a_re_export_does_not_hide_where_a_name_is_defined() {
    // `a` names `crate::B`, which the root re-exports from `b`: `a` depends on `b`.
    let found = circles(&[
        ("lib.rs", "mod a;\nmod b;\npub use b::B;\n"),
        ("a.rs", "use crate::B;\npub struct A(B);\n"),
        (
            "b.rs",
            "pub struct B;\npub fn f() -> crate::a::A { todo!() }\n",
        ),
    ]);
    assert_eq!(
        summary(&found),
        ["crate: a, b", "  a -> b: crate::B", "  b -> a: crate::a::A"]
    );
    assert_eq!(found[0].edges[0].names[0].names, "crate::b::B");
}

#[test]
fn a_circle_is_reported_between_the_children_of_the_lowest_common_ancestor() {
    let found = circles(&[
        ("lib.rs", "pub mod outer;\n"),
        ("outer/mod.rs", "mod x;\nmod y;\n"),
        (
            "outer/x.rs",
            "pub mod deep {\n    pub struct T(pub super::super::y::U);\n}\n",
        ),
        (
            "outer/y.rs",
            "pub struct U;\npub fn f(_: crate::outer::x::deep::T) {}\n",
        ),
    ]);
    let expected = [
        "crate::outer: x, y",
        "  x -> y: super::super::y::U",
        "  y -> x: crate::outer::x::deep::T",
    ];
    assert_eq!(summary(&found), expected);
    assert_eq!(found[0].edges[0].names[0].module, "crate::outer::x::deep");
}

#[test]
fn a_circle_through_three_modules_is_one_circle() {
    // a -> b -> c -> a, and d -> a (d is in no circle): also a glob import, a path in a
    // macro call's tokens, and a `$crate` path in a `macro_rules!` count.
    let found = circles(&[
        ("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\n"),
        ("a.rs", "use crate::b::*;\npub fn a() {}\n"),
        ("b.rs", "pub fn b() { let _ = vec![super::c::c()]; }\n"),
        (
            "c.rs",
            "pub fn c() {}\nmacro_rules! call { () => { $crate::a::a() }; }\n",
        ),
        ("d.rs", "pub fn d() { crate::a::a() }\n"),
    ]);
    let expected = [
        "crate: a, b, c",
        "  a -> b: crate::b",
        "  b -> c: super::c::c",
        "  c -> a: crate::a::a",
    ];
    assert_eq!(summary(&found), expected);
}

#[test]
fn a_path_through_an_import_of_a_module_is_followed() {
    let found = circles(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        (
            "a.rs",
            "use crate::b as other;\npub struct A;\npub fn f() { other::g() }\n",
        ),
        (
            "b.rs",
            "pub fn g() {}\npub fn h() -> super::a::A { super::a::A }\n",
        ),
    ]);
    assert_eq!(found.len(), 1);
    let a_to_b: Vec<(&str, &str)> = found[0].edges[0]
        .names
        .iter()
        .map(|n| (n.written.as_str(), n.names.as_str()))
        .collect();
    assert_eq!(
        a_to_b,
        [("crate::b", "crate::b"), ("other::g", "crate::b::g")]
    );
}

#[test]
fn tests_and_other_crates_are_left_out() {
    // `a`'s tests use `b`, and both name other crates' items: no circle.
    let found = circles(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        (
            "a.rs",
            "pub struct A(std::vec::Vec<u8>);\n\
             #[cfg(test)]\nmod tests {\n    use crate::b::make;\n}\n\
             #[cfg(test)]\nfn helper() { crate::b::make(); }\n",
        ),
        (
            "b.rs",
            "use std::fmt;\npub fn make() -> crate::a::A { todo!() }\n",
        ),
    ]);
    assert_eq!(summary(&found), Vec::<String>::new());
}

#[test]
fn a_missing_module_file_is_an_error() {
    let dir = tempfile::tempdir().expect("temporary directory");
    std::fs::create_dir(dir.path().join("src")).expect("directory");
    std::fs::write(dir.path().join("src/lib.rs"), "mod gone;\n").expect("write");
    let error = check(&dir.path().join("src/lib.rs")).expect_err("gone.rs is missing");
    let shown = error.to_string();
    assert!(
        shown.contains(&format!("gone{}mod.rs", std::path::MAIN_SEPARATOR)),
        "{shown}"
    );
    assert!(check(Path::new("/nonexistent/src/lib.rs")).is_err());
}
