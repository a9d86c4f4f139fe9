//! `wasmod generate`'s code generation: typed client bindings from a module's description.
//!
//! It is split so that another language can follow the Rust one: [`model`] reads the
//! description into what every language's bindings have (the named types the clients see,
//! the public tables with their keys and lookups, the calls a client may make, each named),
//! and [`names`] converts the module's names between cases; [`rust`] writes Rust from the
//! model (over `wasmod-client` and `wasmod-abi` only), [`typescript`] TypeScript (over the
//! browser client's package, `client/web`).

pub mod model;
pub mod names;
pub mod rust;
pub mod typescript;
