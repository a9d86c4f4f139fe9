//! Module code called natively outside a host: its first import panics, and the message names
//! the test host to run it in. A test binary of its own, with no `TestModule` in it: a
//! `TestModule` installs the host for the whole process.

#[test]
#[should_panic(expected = "run it through `wasmod_testing::TestModule`")]
fn an_import_without_a_host_panics_naming_the_test_host() {
    let _ = wasmod::sys::table_row_count(0);
}
