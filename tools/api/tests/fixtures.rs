//! What the lister lists, and that the check fails on a changed surface: small crates written
//! to a temporary directory, and a copy of a real crate of the workspace with one signature
//! changed against its committed api.txt.

use std::fs;
use std::path::Path;
use wasmod_api::{compare, snapshot_text, surface};

/// The surface of a crate whose files are `files` (path below `src/`, text).
fn surface_of(files: &[(&str, &str)]) -> Vec<String> {
    let dir = tempfile::tempdir().expect("temporary directory");
    for (path, text) in files {
        let path = dir.path().join("src").join(path);
        fs::create_dir_all(path.parent().expect("parent")).expect("directories");
        fs::write(&path, text).expect("write");
    }
    surface(&dir.path().join("src/lib.rs"), "fixture").expect("surface")
}

const LIB: &str = r#"
mod private {
    pub struct Hidden;
    pub fn helper() {}
    pub struct Exported { pub a: u32, b: u64 }
    impl Exported {
        pub fn new() -> Self { Exported { a: 0, b: 0 } }
        fn internal(&self) {}
    }
}
pub mod open;
pub use private::Exported as Renamed;
pub use std::collections::HashMap;
pub use std::fmt::{self as formatting};
pub use std::io;
pub mod prelude { pub use crate::io::Write; }
#[non_exhaustive]
#[derive(Debug)]
pub enum Error { Bad { at: usize }, Worse(String) }
impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { Ok(()) }
}
pub(crate) fn crate_only() {}
#[cfg(test)]
pub fn test_only() {}
#[macro_export]
macro_rules! shout { () => {} }
"#;

const OPEN: &str = r#"
pub trait Greet { fn hello(&self) -> String; fn bye(&self) {} }
pub(super) struct NotOut;
pub use self::inner::*;
mod inner { pub const LIMIT: u32 = 7; }
"#;

#[test]
fn lists_what_other_crates_can_name_and_nothing_else() {
    let lines = surface_of(&[("lib.rs", LIB), ("open.rs", OPEN)]);
    let expected = [
        "fixture: mod",
        "fixture::Error: #[non_exhaustive] #[derive(Debug)] pub enum Error",
        "fixture::Error: impl std::fmt::Display for Error",
        "fixture::Error::Bad: Bad { at: usize }",
        "fixture::Error::Worse: Worse(String)",
        "fixture::HashMap: use std::collections::HashMap",
        "fixture::Renamed: (and private fields)",
        "fixture::Renamed: pub struct Exported { .. }",
        "fixture::Renamed::a: pub u32",
        "fixture::Renamed::new: impl Exported: pub fn new() -> Self",
        "fixture::formatting: use std::fmt",
        "fixture::io: use std::io",
        "fixture::open: mod",
        "fixture::open::Greet: pub trait Greet",
        "fixture::open::Greet::bye: fn bye(&self) {}",
        "fixture::open::Greet::hello: fn hello(&self) -> String;",
        "fixture::open::LIMIT: pub const LIMIT: u32 = ..;",
        "fixture::prelude: mod",
        "fixture::prelude::Write: use std::io::Write",
        "fixture::shout: macro_rules! shout",
    ];
    assert_eq!(lines, expected, "{lines:#?}");
}

#[test]
fn a_changed_signature_a_new_field_and_a_removed_item_all_fail_the_check() {
    let before = surface_of(&[("lib.rs", LIB), ("open.rs", OPEN)]);
    let snapshot = snapshot_text(&before);
    assert_eq!(compare(&before, &snapshot), Ok(()));

    let changed = LIB
        .replace("pub fn new() -> Self", "pub fn new(seed: u64) -> Self")
        .replace("pub a: u32, b: u64", "pub a: u32, pub c: bool, b: u64")
        .replace("#[macro_export]\nmacro_rules! shout { () => {} }", "");
    let after = surface_of(&[("lib.rs", &changed), ("open.rs", OPEN)]);
    let mismatch = compare(&after, &snapshot).expect_err("the surface changed");
    assert_eq!(
        mismatch.added,
        [
            "fixture::Renamed::c: pub bool",
            "fixture::Renamed::new: impl Exported: pub fn new(seed: u64) -> Self",
        ]
    );
    assert_eq!(
        mismatch.removed,
        [
            "fixture::Renamed::new: impl Exported: pub fn new() -> Self",
            "fixture::shout: macro_rules! shout",
        ]
    );
    let shown = mismatch.to_string();
    assert!(
        shown.contains("- fixture::shout: macro_rules! shout\n"),
        "{shown}"
    );
}

#[test]
fn a_private_change_passes_the_check() {
    let before = surface_of(&[("lib.rs", LIB), ("open.rs", OPEN)]);
    let changed = LIB
        .replace("fn internal(&self) {}", "fn internal(&self, x: u8) {}")
        .replace("pub struct Hidden;", "pub struct Hidden(u8);")
        .replace(
            "pub(crate) fn crate_only() {}",
            "pub(crate) fn crate_only(x: u8) {}",
        );
    let after = surface_of(&[("lib.rs", &changed), ("open.rs", OPEN)]);
    assert_eq!(compare(&after, &snapshot_text(&before)), Ok(()));
}

/// The check on a real crate: wasmod-route's sources copied, one public signature changed,
/// compared with route/api.txt as committed.
#[test]
fn the_committed_snapshot_of_a_real_crate_catches_a_changed_signature() {
    let route = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../route");
    let committed = fs::read_to_string(route.join("api.txt")).expect("route/api.txt");
    let dir = tempfile::tempdir().expect("temporary directory");
    for entry in fs::read_dir(route.join("src")).expect("route/src") {
        let path = entry.expect("entry").path();
        fs::copy(&path, dir.path().join(path.file_name().expect("name"))).expect("copy");
    }
    let root = dir.path().join("lib.rs");
    let unchanged = surface(&root, "wasmod_route").expect("surface");
    assert_eq!(
        compare(&unchanged, &committed),
        Ok(()),
        "route/api.txt is stale"
    );

    let lib = fs::read_to_string(&root).expect("lib.rs");
    let changed = lib.replace(
        "pub fn matches(&self, path: &str) -> bool",
        "pub fn matches(&self, path: &[u8]) -> bool",
    );
    assert_ne!(
        lib, changed,
        "the signature to change is in route/src/lib.rs"
    );
    fs::write(&root, changed).expect("write");
    let mismatch = compare(
        &surface(&root, "wasmod_route").expect("surface"),
        &committed,
    )
    .expect_err("a changed signature fails the check");
    assert_eq!(
        mismatch.added,
        ["wasmod_route::Pattern::matches: impl Pattern: pub fn matches(&self, path: &[u8]) -> bool"]
    );
    assert_eq!(mismatch.removed.len(), 1);
}

#[test]
fn internals_opened_to_benches_by_a_feature_are_not_listed_but_hidden_api_is() {
    let surface = surface_of(&[(
        "lib.rs",
        r#"
mod inner { pub struct Evaluator; }
#[cfg(feature = "bench")]
#[doc(hidden)]
pub mod bench { pub use crate::inner::Evaluator; }
#[doc(hidden)]
pub mod rt { pub fn for_macros() {} }
#[cfg(feature = "extra")]
pub mod extra { pub fn more() {} }
"#,
    )]);
    let listed = |path: &str| surface.iter().any(|line| line.starts_with(path));
    assert!(!listed("fixture::bench"), "{surface:#?}");
    assert!(listed("fixture::rt::for_macros"), "{surface:#?}");
    assert!(listed("fixture::extra::more"), "{surface:#?}");
}
