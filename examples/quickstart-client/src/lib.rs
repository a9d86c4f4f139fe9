//! The quickstart's client side: the chat module's typed bindings, generated from its
//! description, and the chat's terminal client (`src/main.rs`) on them.
//!
//! Regenerate the bindings after changing the module (a test fails while they are stale):
//!
//! ```text
//! wasmod generate --lang rust examples/quickstart --out examples/quickstart-client/src/bindings
//! ```

// Laid out by the generator; `cargo fmt` would lay it out differently, and it would be stale.
#[rustfmt::skip]
pub mod bindings;
