//! The macros' compile-time behaviour, pinned with trybuild.
//!
//! - `ui/fail/*.rs`: every error the macros give, with its `.stderr` (spans and messages). To
//!   accept a deliberate change of message: `TRYBUILD=overwrite cargo test -p wasmod --test ui`,
//!   then review the diff.
//! - `ui/pass/*.rs`: modules that must compile and whose `main` then runs, natively, against
//!   the real host: each checks that calling the entry point the description lists at position
//!   `i` runs exactly that function, across categories, nested modules, several files,
//!   lifecycle reducers, `cfg` and renamed imports.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/fail/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}
