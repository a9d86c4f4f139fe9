//! Encoded values → JSON text, for the host and for modules alike.
//!
//! Two sides write a module's values as JSON: the host, answering clients over HTTP and
//! WebSockets (through `wasmod_protocol::json`), and a module's own HTTP handlers
//! ([`Response::json`](crate::http::Response::json)). Both write through [`write_value`], so a
//! value reads the same whichever side wrote it: 64-bit integers beyond 2^53 − 1 as decimal
//! strings, identities as hex, struct keys in sorted order, and the rest of the mapping that
//! `docs/json.md` gives. The writer lives here, in the crate both sides depend on, and needs
//! no JSON library: it reads the type from a [`Typespace`] and the value from its bytes, and
//! writes text byte for byte as `serde_json` writes the same JSON (the host's tests compare
//! them).
//!
//! The reader (JSON into encoded values) is the host's alone and lives in
//! `wasmod_protocol::json`, which shares the mapping's rules from here: [`MAX_SAFE_INTEGER`],
//! [`variant_name`], [`is_unit`] and [`is_option`].

mod text;
mod write;

pub use write::write_value;

use crate::{AlgebraicType, Field, Typespace};
use std::borrow::Cow;

/// The largest magnitude every JSON reader holds exactly: 2^53 − 1 (JavaScript's
/// `Number.MAX_SAFE_INTEGER`). Wider integers beyond it are written as decimal strings.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// A variant's name in JSON: its name, or its position for a variant without one.
pub fn variant_name(index: usize, variant: &Field) -> Cow<'_, str> {
    match &variant.name {
        Some(name) => Cow::Borrowed(name),
        None => Cow::Owned(index.to_string()),
    }
}

/// Whether `ty` is the empty product: the payload of a unit variant, written as the bare
/// variant name.
pub fn is_unit(typespace: &Typespace, ty: &AlgebraicType) -> bool {
    matches!(typespace.resolve(ty), Some(AlgebraicType::Product(fields)) if fields.is_empty())
}

/// Whether `ty` is an option: then an option of it writes `Some` as `{"some": ..}`, so that
/// `Some(None)` and `None` differ.
pub fn is_option(typespace: &Typespace, ty: &AlgebraicType) -> bool {
    matches!(typespace.resolve(ty), Some(AlgebraicType::Option(_)))
}
