//! `wasmod call <module | URL> <function> [JSON args…]`: runs a reducer, procedure or view and
//! prints the result as JSON.
//!
//! The function is found by name among the module's reducers, procedures and views. Each
//! argument is one JSON value, in parameter order (`'"hello"'`, `42`, `'{"x": 1}'`), or
//! `--json` gives them all at once as an array or an object keyed by parameter name.
//!
//! - Against a `.wasm` file or a crate directory, the call runs in-process, in a fresh
//!   host: the module's `init` runs, then `client_connected` for the caller (as the server
//!   does when it issues an identity), then the call. The caller is `--identity`, or a new
//!   random identity. The tables live in memory, or with `--data <dir>` in a commit log there
//!   (the layout of `wasmod serve --data`), so that state carries from one call to the next and
//!   `init` runs only on the first.
//! - Against `http://…` or `https://…`, the call goes to a server's API ([`remote`]).
//!
//! Either way the output is the API's JSON: `{"status": "committed" | "returned", ..}` with
//! exit status 0, or `{"error": {"code", "message"}}` with exit status 1.
//!
//! In-process, a function that is an HTTP method in capitals (`GET`, `POST`, …) calls the
//! module's HTTP handler for that method and the path given as the one argument
//! ([`http`]).

mod http;
mod remote;

use crate::check;
use crate::failure::{Context, Failure, Result};
use crate::output;
use crate::source::Module;
use crate::units;
use serde::Serialize;
use serde_json::Value;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;
use wasmod_abi::http::Method;
use wasmod_abi::Identity;
use wasmod_host::datastore::durability;
use wasmod_host::{InstanceEnv, Persistence, WasmConfig, WasmModule};
use wasmod_node::{Node, NodeConfig, NodeHandle};
use wasmod_protocol::http::CallResponse;
use wasmod_protocol::{ApiError, ErrorBody};

/// `wasmod call`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// A compiled module (`.wasm`), a module crate's directory (built first), or a server's
    /// URL (`http://127.0.0.1:3000`).
    target: String,
    /// The reducer, procedure or view to call; in-process also an HTTP method (`GET`, `POST`,
    /// …), which calls the module's HTTP handler for the path given as the argument.
    function: String,
    /// The arguments in parameter order, one JSON value each: '"hello"', 42, '{"x": 1}'; for
    /// an HTTP handler, the path with its query: '/accounts/ann?limit=2'.
    #[arg(allow_negative_numbers = true)]
    args: Vec<String>,
    /// All the arguments as one JSON array, or an object keyed by parameter name.
    #[arg(long, value_name = "JSON", conflicts_with = "args")]
    json: Option<String>,
    /// In-process only: the identity to call as, 64 hex digits (default: a new one).
    #[arg(long, value_name = "HEX", value_parser = units::identity)]
    identity: Option<Identity>,
    /// On a server only: the token to call with (default: a new identity, whose token is
    /// printed on stderr).
    #[arg(long, env = "WASMOD_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// In-process only: keep the tables in a commit log in this directory, so that they carry
    /// over to the next call with the same `--data` (default: in memory, for this call only).
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// In-process HTTP calls only: the request's body.
    #[arg(long, value_name = "TEXT")]
    body: Option<String>,
}

/// Runs `wasmod call`.
pub fn run(args: Args) -> Result {
    if let Some(method) = Method::parse(&args.function) {
        return http::run(&args, method);
    }
    if args.body.is_some() {
        return Err(Failure::usage(
            "--body is for HTTP handlers: call one as `wasmod call <module> GET /path`",
        ));
    }
    let json_args = arguments(&args)?;
    let answer = if is_url(&args.target) {
        if args.identity.is_some() || args.data.is_some() {
            return Err(Failure::usage(
                "--identity and --data are for in-process calls: a server's calls run as the identity of their --token, over its own data",
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
            None => wasmod_node::new_identity()
                .map_err(|error| Failure::usage(format!("no randomness: {error}")))?,
        };
        let loaded = load(Path::new(&args.target), args.data.as_deref())?;
        tracing::info!(identity = %caller, "calling `{}` in-process", args.function);
        let function = args.function.clone();
        on_node(loaded, |node| async move {
            node.admit(caller).await?;
            let caller = wasmod_node::Caller::new(Some(caller), None);
            let args = std::future::ready(Ok(json_args));
            node.call(None, &function, caller, args).await
        })?
    };
    print_answer(answer)
}

/// Prints `answer`: the response, or the error with exit status 1.
fn print_answer<T: Serialize>(answer: std::result::Result<T, ApiError>) -> Result {
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
    output::print(format!("{json:#}\n"))
}

/// Loads the module at `path` into a fresh host, its tables in memory or, with `data`, in
/// the commit log of that directory (recovered first, as `wasmod serve` does).
fn load(path: &Path, data: Option<&Path>) -> Result<WasmModule> {
    let module = Module::open(path)?;
    let compiled = check::compile(&module.wasm)?;
    let env = match data {
        Some(data) => InstanceEnv::unloaded().with_persistence(Persistence::new(
            data.join("db"),
            durability::Options::default(),
        )),
        None => InstanceEnv::unloaded(),
    };
    check::load(&compiled, WasmConfig::default(), env)
}

/// How long an in-process call's node may take to finish what it queued once answered.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// What `call` answers, run against a node of `loaded` (the same call pipeline as a
/// server's, [`wasmod_node::NodeHandle::call`]) on a runtime of its own; the node is shut
/// down after, its module's thread finishing what it queued.
fn on_node<T, F>(loaded: WasmModule, call: impl FnOnce(NodeHandle) -> F) -> Result<T>
where
    F: Future<Output = T>,
{
    let runtime = super::serving::runtime()?;
    runtime.block_on(async {
        let node = Node::builder(loaded, NodeConfig::default())
            .build()
            .context("starting the module's thread")?;
        let handle = node.handle().clone();
        let running = node.start().await;
        let answer = call(handle).await;
        running.stopper().stop().await;
        running.finish(SHUTDOWN_GRACE).await;
        Ok(answer)
    })
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
