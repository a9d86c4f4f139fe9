//! `wasmod build [<dir>]`: builds a module crate for wasm32 and checks the result.
//!
//! After cargo, three checks, each with its own line: the host compiles the module and its
//! imports and exports match the ABI; the module describes itself and its `init` runs in a
//! fresh in-memory host; the inspection finds no indirect call on any dispatch path. Then the
//! size and the entry points with their ids. A failed check exits with status 1 (with the full
//! inspection report for a dispatch violation).
//!
//! With `--data <dir>`, the built module's tables are then checked against a data directory,
//! read-only, by the same comparison the upgrade at `serve`'s start runs
//! ([`Database::check`]): a build that cannot serve the data is found here, before a start
//! is refused. The build's artifact is kept either way; a build that cannot serve the data
//! prints a warning naming every problem and exits with status 1.

use crate::check;
use crate::failure::{Failure, Result};
use crate::output;
use crate::render;
use crate::source::Module;
use std::path::{Path, PathBuf};
use wasmod_abi::ModuleDef;
use wasmod_host::datastore::Database;
use wasmod_protocol::description::{describe, Tables};

/// `wasmod build`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The module crate's directory.
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// A data directory, as `serve --data` takes it, to check the built module's tables
    /// against without changing it: prints what the upgrade on the next start will do, or a
    /// warning naming why the build cannot serve the data, and then exits with status 1.
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
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
    output::print(out)?;
    match &args.data {
        Some(data) => check_data(data, loaded.module()),
        None => Ok(()),
    }
}

/// Prints whether the module described by `def` can serve the tables in `data` (a directory
/// as `serve --data` takes it, whose log is in `db`), and what its start will do to them;
/// fails (status 1) if it cannot.
fn check_data(data: &Path, def: &ModuleDef) -> Result {
    match Database::check(&data.join("db"), def) {
        Ok(check) => output::print(format!("data {}: ok: {check}\n", data.display())),
        Err(error) => {
            output::print(format!(
                "warning: this build cannot serve the data in {}: {error}\n",
                data.display()
            ))?;
            Err(Failure::failed())
        }
    }
}
