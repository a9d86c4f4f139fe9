//! `wasmod describe <module> [--json]`: tables (columns, types, keys, indexes, visibility),
//! entry points with their ids per category, and named types.
//!
//! The module describes itself in a throwaway instance, and the host checks the description
//! as loading would (entry points and tables); nothing is created and its `init` does not run.
//! `--json` prints the same JSON as the server's `GET /v1/module`, private tables included.

use crate::check;
use crate::failure::{Failure, Result};
use crate::output;
use crate::render;
use crate::source::Module;
use std::path::PathBuf;
use wasmod_protocol::description::{describe, Tables};

/// `wasmod describe`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// A compiled module (`.wasm`) or a module crate's directory (built first).
    module: PathBuf,
    /// Print the description as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `wasmod describe`.
pub fn run(args: Args) -> Result {
    let module = Module::open(&args.module)?;
    let definition = check::compile_and_describe(&module.wasm)?;
    let description = describe(&definition, Tables::All);
    if args.json {
        let json = serde_json::to_string_pretty(&description).map_err(|error| {
            Failure::module(format!("the description cannot be printed: {error}"))
        })?;
        output::print(json + "\n")
    } else {
        output::print(format!(
            "module {} ({} bytes)\n{}",
            module.path.display(),
            module.wasm.len(),
            render::description(&description)
        ))
    }
}
