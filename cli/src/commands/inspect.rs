//! `wasmod inspect <module> [--json]`: the dispatch inspection report of `docs/inspect.md`.
//!
//! Exit status as `wasmod-inspect`'s: `0` clean, `1` at least one indirect call on a dispatch
//! path, `2` the module could not be read or inspected.

use crate::failure::{Failure, Result};
use crate::output;
use crate::source::Module;
use std::path::PathBuf;

/// `wasmod inspect`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// A compiled module (`.wasm`) or a module crate's directory (built first).
    module: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `wasmod inspect`.
pub fn run(args: Args) -> Result {
    let module = Module::open(&args.module)?;
    let report = wasmod_inspect::inspect(&module.wasm).map_err(|error| {
        Failure::usage(format!(
            "{} cannot be inspected: {error}",
            module.path.display()
        ))
    })?;
    if args.json {
        output::print(report.to_json() + "\n")?;
    } else {
        output::print(report.to_string())?;
    }
    if report.is_clean() {
        Ok(())
    } else {
        Err(Failure::failed())
    }
}
