//! What the property tests of the decoders share (`abi/tests/fuzz.rs`,
//! `datastore/tests/fuzz.rs`, `protocol/tests/fuzz.rs`): every decoder that takes bytes or
//! text from outside (a module, a client, a file) gets both arbitrary input and mutated valid
//! encodings, and must answer each without a panic, within a bounded allocation, and give
//! back what was encoded when the input is valid.
//!
//! Mutated valid encodings find far more than random bytes: random bytes rarely get past a
//! decoder's first length or tag, while a valid message with one count set to `u32::MAX`, one
//! bit flipped or its end cut off reaches the decoder's deepest paths. So this crate gives:
//!
//! - [`config`]: the number of cases, short by default (CI), long with `WASMOD_FUZZ_CASES`;
//! - [`mutate`]: mutations of valid encodings ([`Mutation`], [`mutations`]);
//! - [`alloc`]: a counting global allocator, to bound what a decode allocates;
//! - [`types`] and [`values`]: generators of [`AlgebraicType`](wasmod_abi::AlgebraicType)s
//!   (tame ones that values can be made for, and hostile ones) and of values of a type.
//!
//! This crate is for tests only; nothing ships it.

pub mod alloc;
pub mod mutate;
pub mod types;
pub mod values;

pub use mutate::{mutate, mutations, Mutation};

use proptest::test_runner::Config;

/// The environment variable that sets the number of cases of every property: unset, each
/// property runs its short default (all of them together take well under a minute in a debug
/// build on two cores); set (say to `100000`) for a long run.
pub const CASES_VARIABLE: &str = "WASMOD_FUZZ_CASES";

/// A configuration running `short` cases, or the number in [`CASES_VARIABLE`] if it is set.
///
/// Failures are not persisted to files in the source tree: a failing case is printed, shrunk,
/// and becomes a regression unit test next to the decoder it found a bug in.
pub fn config(short: u32) -> Config {
    let cases = std::env::var(CASES_VARIABLE)
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(short);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}
