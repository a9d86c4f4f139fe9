//! Prints the tables of `benches/RESULTS.md` from the saved results of the last measuring run
//! (criterion's estimates, the encoding bench's allocation counts).
//!
//! `cargo bench -p wasmod-benches --bench results`, after `cargo bench -p wasmod-benches`
//! (which leaves it out: `bench = false`). A bench target rather than a binary so that it is
//! built with the benches' profile: a binary would build the whole dependency graph a second
//! time with the release profile's `panic = "abort"`.

fn main() {
    print!("{}", wasmod_benches::results::render());
}
