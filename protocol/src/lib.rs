//! The wasmod protocol: what clients and servers say to each other, and nothing that runs a
//! module. It depends on `wasmod-abi` (and serde) only, so that the server, the `wasmod`
//! command and client SDKs (native or in a browser) can all share it.
//!
//! - [`json`]: the JSON mapping of values, driven by a module's description, streaming from
//!   encoded bytes to JSON text;
//! - [`errors`]: the API's error codes and the error body ([`ApiError`], [`ErrorCode`]);
//! - [`http`]: the HTTP API's answers (a call's result, a new identity, a table's rows);
//! - [`description`]: the module description as clients read it ([`ModuleDescription`]);
//! - [`call`]: finding an entry point by name, encoding its JSON arguments, rendering its
//!   result ([`EntryPoint`]);
//! - [`ws`]: the WebSocket protocol's messages, in binary and in JSON.

pub mod call;
pub mod description;
pub mod errors;
mod hex;
pub mod http;
pub mod json;
pub mod ws;

pub use call::EntryPoint;
pub use description::ModuleDescription;
pub use errors::{ApiError, ErrorBody, ErrorCode};
