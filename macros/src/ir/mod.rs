//! The parsed and validated form of what the macros are applied to.
//!
//! Parsing checks everything that can be checked from the tokens and reports every problem
//! with its span; code generation (in [`crate::codegen`]) then never fails.

pub mod entry;
pub mod kind;
pub mod module;
pub mod repr;
pub mod schema_type;
pub mod table;
