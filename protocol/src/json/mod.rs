//! JSON ↔ encoded values, through a module's type description.
//!
//! Clients speak JSON (the HTTP API, `wasmod call`, a browser); modules speak the binary
//! encoding of `docs/abi.md`. Whoever sits between them knows a module's types only from its
//! description ([`ModuleDef`](wasmod_abi::ModuleDef)), at run time, so the conversion is driven
//! by an [`AlgebraicType`] and its [`Typespace`] rather than by Rust types:
//!
//! - [`args_from_json`]: a call's arguments, as a JSON array (positional) or an object keyed by
//!   parameter name, into the encoded product of the parameters that `__call_*__` expects;
//! - [`value_from_json`]: one value (a row, a key) into its encoding;
//! - [`write_value`], [`write_rows`]: encoded values (a procedure's return value, a view's
//!   rows, a table's rows) written as JSON text straight from their bytes, in one pass, with
//!   no intermediate tree; [`value_json`] and [`rows_json`] return the text as a
//!   [`RawValue`](serde_json::value::RawValue), ready to be embedded in a message.
//!
//! Both the JSON and the type are treated as hostile: nothing here panics, references are
//! resolved through [`Typespace::resolve`] (which cannot loop), and values may nest at most
//! [`MAX_DEPTH`](wasmod_abi::value::MAX_DEPTH) containers deep, the limit the module's own
//! decoder applies, so a self-referential type or a deeply nested document cannot exhaust the
//! stack. Errors ([`JsonError`]) name the argument, the path inside it and the type that was
//! expected, since they are shown to whoever wrote the JSON.
//!
//! # The mapping
//!
//! | type | JSON |
//! |---|---|
//! | `bool` | `true` / `false` |
//! | `i8` … `i32`, `u8` … `u32` | a number (an integral float such as `3.0` is accepted) |
//! | `i64`, `u64`, `i128`, `u128` | a number, or a decimal string such as `"18446744073709551615"`; written as a number when its magnitude is at most 2^53 − 1 (JavaScript's `Number.MAX_SAFE_INTEGER`), as a decimal string beyond, so that no client loses precision |
//! | `f32`, `f64` | a number; `"NaN"`, `"Infinity"` and `"-Infinity"` for the values JSON cannot write. An `f32` is written with its shortest decimal form (`0.1`, not `0.10000000149011612`) |
//! | `String` | a string |
//! | `Identity` | 64 hex digits (written in lower case, read in either case) |
//! | `ConnectionId` | 32 hex digits |
//! | `Timestamp` | microseconds since the Unix epoch, as an `i64` above; also read from an RFC 3339 date-time such as `"2024-05-01T12:30:00.25+02:00"` |
//! | `Vec<T>` | an array (a `Vec<u8>` too: an array of numbers) |
//! | `[T; N]` | an array of exactly `N` items |
//! | `Option<T>` | `null` for `None`, the value for `Some`; when `T` is itself an option, `Some(x)` is `{"some": x}` so that `Some(None)` and `None` differ |
//! | `Result<T, E>` | `{"ok": value}` or `{"err": error}` |
//! | struct (named fields) | an object keyed by field name, keys written in sorted order; an array of the fields in order is also read. Every field must be present and no other |
//! | tuple, tuple struct | an array of the fields in order |
//! | `()`, unit struct | `[]` (`{}` is also read) |
//! | enum | `{"Variant": payload}`; a unit variant is the bare string `"Variant"` (and `{"Variant": []}` is also read) |
//!
//! Named types ([`AlgebraicType::Ref`]) map as the type they name.
//!
//! # Errors
//!
//! Messages look like `` argument `text` of reducer `send`: expected a string, found 42 `` or
//! `` argument `pos`.x: expected u32 (0..=4294967295), found -1 ``: the argument, then the
//! path inside it (`.field`, `[index]`, `.Variant`, `.ok`), then what was expected and what was
//! found. [`JsonError::in_entry_point`] adds the entry point, which the functions here do not
//! know.

mod error;
mod from_json;
mod to_json;

pub use error::JsonError;
pub use from_json::{args_from_json, value_from_json};
pub use to_json::{rows_json, value_json, write_rows, write_value};

pub use wasmod_abi::json::MAX_SAFE_INTEGER;

use wasmod_abi::json::{is_option, is_unit, variant_name};
