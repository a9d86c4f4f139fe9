//! `wasmod call <module | URL> <function> [JSON args…]`: runs a reducer, procedure or view and
//! prints the result as JSON.
//!
//! The function is found by name among the module's reducers, procedures and views. Each
//! argument is one JSON value, in parameter order (`'"hello"'`, `42`, `'{"x": 1}'`), or
//! `--json` gives them all at once as an array or an object keyed by parameter name.
//!
//! - Against a `.wasm` file or a crate directory, the call runs in-process, in a fresh
//!   in-memory host: the module's `init` runs, then `client_connected` for the caller (as the
//!   server does when it issues an identity), then the call. The caller is `--identity`, or a
//!   new random identity.
//! - Against `http://…` or `https://…`, the call goes to a server's API ([`remote`]).
//!
//! Either way the output is the API's JSON: `{"status": "committed" | "returned", ..}` with
//! exit status 0, or `{"error": {"code", "message"}}` with exit status 1.

mod remote;

use crate::check;
use crate::failure::{Failure, Result};
use crate::source::Module;
use crate::units;
use serde::Serialize;
use serde_json::Value;
use std::path::Path;
use wasmod_abi::{ConnectionId, Identity};
use wasmod_protocol::http::CallResponse;
use wasmod_protocol::{ApiError, ErrorBody};
use wasmod_server::connections;
use wasmod_server::entry;

/// `wasmod call`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// A compiled module (`.wasm`), a module crate's directory (built first), or a server's
    /// URL (`http://127.0.0.1:3000`).
    target: String,
    /// The reducer, procedure or view to call.
    function: String,
    /// The arguments in parameter order, one JSON value each: '"hello"', 42, '{"x": 1}'.
    #[arg(allow_negative_numbers = true)]
    args: Vec<String>,
    /// All the arguments as one JSON array, or an object keyed by parameter name.
    #[arg(long, value_name = "JSON", conflicts_with = "args")]
    json: Option<String>,
    /// In-process only: the identity to call as, 64 hex digits (default: a new one).
    #[arg(long, value_name = "HEX", value_parser = units::identity)]
    identity: Option<Identity>,
    /// On a server only: the token to call with (default: a new identity's).
    #[arg(long, env = "WASMOD_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

/// Runs `wasmod call`.
pub fn run(args: Args) -> Result {
    let json_args = arguments(&args)?;
    let answer = if is_url(&args.target) {
        if args.identity.is_some() {
            return Err(Failure::usage(
                "--identity is for in-process calls: a server's calls run as the identity of their --token",
            ));
        }
        remote::call(
            &args.target,
            &args.function,
            &json_args,
            args.token.as_deref(),
        )?
    } else {
        if args.token.is_some() {
            return Err(Failure::usage("--token is for calls to a server"));
        }
        let caller = match args.identity {
            Some(identity) => identity,
            None => wasmod_server::auth::new_identity()
                .map_err(|error| Failure::usage(format!("no randomness: {error}")))?,
        };
        in_process(Path::new(&args.target), &args.function, &json_args, caller)?
    };
    match answer {
        Ok(response) => print_json(&response),
        Err(error) => {
            print_json(&ErrorBody::from(error))?;
            Err(Failure::failed())
        }
    }
}

/// The API's answer to a call: its result, or the error it was refused with.
pub type Answer = std::result::Result<CallResponse, ApiError>;

/// Prints `message` as indented JSON, the module's values included.
fn print_json(message: &impl Serialize) -> Result {
    let json = serde_json::to_value(message)
        .map_err(|error| Failure::module(format!("the answer cannot be printed: {error}")))?;
    println!("{json:#}");
    Ok(())
}

/// Runs the call in a fresh in-memory host.
fn in_process(path: &Path, function: &str, args: &Value, caller: Identity) -> Result<Answer> {
    let module = Module::open(path)?;
    let mut loaded = check::compile_and_load(&module.wasm)?;
    let description = loaded.module().clone();
    tracing::info!(identity = %caller, "calling `{function}` in-process");
    Ok((|| {
        let entry = entry::find(&description, function, &entry::CALLED_BY_NAME)?;
        let encoded = entry.encode_args(args)?;
        if entry.point.kind.takes_caller() {
            connections::accepted(loaded.client_connected(caller, ConnectionId::ZERO))?;
        }
        let outcome = entry
            .invocation()
            .run(&mut loaded, caller, ConnectionId::ZERO, &encoded);
        entry.answer(outcome)
    })())
}

/// The JSON arguments: `--json`, or each positional argument parsed as JSON.
fn arguments(args: &Args) -> Result<Value> {
    if let Some(json) = &args.json {
        return serde_json::from_str(json)
            .map_err(|error| Failure::usage(format!("--json is not valid JSON: {error}")));
    }
    let values = args
        .args
        .iter()
        .enumerate()
        .map(|(index, text)| {
            serde_json::from_str(text).map_err(|error| {
                Failure::usage(format!(
                    "argument {} ({text}) is not JSON: {error} (a string is written in quotes: '\"{text}\"')",
                    index + 1
                ))
            })
        })
        .collect::<Result<Vec<Value>>>()?;
    Ok(Value::Array(values))
}

fn is_url(target: &str) -> bool {
    target.starts_with("http://") || target.starts_with("https://")
}
