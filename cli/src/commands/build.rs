//! `wasmod build [<dir>]`: builds a module crate for wasm32 and checks the result.
//!
//! After cargo, three checks, each with its own line: the host compiles the module and its
//! imports and exports match the ABI; the module describes itself and its `init` runs in a
//! fresh in-memory host; the inspection finds no indirect call on any dispatch path. Then the
//! size and the entry points with their ids. A failed check exits with status 1 (with the full
//! inspection report for a dispatch violation).

use crate::check;
use crate::failure::{Failure, Result};
use crate::output;
use crate::render;
use crate::source::Module;
use std::path::PathBuf;
use wasmod_protocol::description::{describe, Tables};

/// `wasmod build`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The module crate's directory.
    #[arg(default_value = ".")]
    dir: PathBuf,
}

/// Runs `wasmod build`.
pub fn run(args: Args) -> Result {
    if !args.dir.is_dir() {
        return Err(Failure::usage(format!(
            "{} is not a directory: `wasmod build` takes a module crate's directory",
            args.dir.display()
        )));
    }
    let module = Module::open(&args.dir)?;
    output::print(format!(
        "built {} ({} bytes)\n",
        module.path.display(),
        module.wasm.len()
    ))?;
    let compiled = check::compile(&module.wasm)?;
    output::print("abi: ok (compiles; imports and exports match the wasmod ABI)\n")?;
    let loaded = check::load(
        &compiled,
        wasmod_host::WasmConfig::default(),
        wasmod_host::InstanceEnv::unloaded(),
    )?;
    output::print("description: ok (the module describes itself; init ran)\n")?;
    let report = check::inspect(&module.wasm)?;
    if !report.is_clean() {
        output::print(format!(
            "{report}dispatch: {} indirect call(s) on dispatch paths (see docs/inspect.md)\n",
            report.violations().count()
        ))?;
        return Err(Failure::failed());
    }
    let mut out = format!(
        "dispatch: clean ({} dispatch exports; no indirect call on any dispatch path)\n",
        report.exports.len()
    );
    render::entry_points(&describe(loaded.module(), Tables::All), &mut out);
    output::print(out)
}
