//! `wasmod generate --lang rust|typescript <module> --out <dir>`: typed client bindings of a
//! module, written to `<dir>/mod.rs` (include them with `mod <dir>;`) or
//! `<dir>/module_bindings.ts` (over the browser client's package).
//!
//! The module (a `.wasm` file, or a crate built first) describes itself as for `wasmod
//! describe`; the bindings are made from that description alone (`generate::model`, then the
//! language's writer), so the same module always gives the same file, whatever path it was
//! named by. The file is written only if its bytes change, which keeps a build that includes
//! it from rebuilding for nothing.

use crate::check;
use crate::failure::{Context, Failure, Result};
use crate::generate::{model::Bindings, rust, typescript};
use crate::output;
use crate::source::Module;
use std::path::PathBuf;

/// The languages bindings can be generated in.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Language {
    /// Rust, over the `wasmod-client` crate.
    Rust,
    /// TypeScript, over the browser client's package (`client/web`).
    Typescript,
}

/// `wasmod generate`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The language of the bindings.
    #[arg(long, value_enum)]
    lang: Language,
    /// A compiled module (`.wasm`) or a module crate's directory (built first).
    module: PathBuf,
    /// The directory to write the bindings to (created if missing): `mod.rs` or
    /// `module_bindings.ts`.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

/// Runs `wasmod generate`.
pub fn run(args: Args) -> Result {
    let module = Module::open(&args.module)?;
    let definition = check::compile_and_describe(&module.wasm)?;
    let name = module
        .path
        .file_stem()
        .map_or_else(|| "module".into(), |stem| stem.to_string_lossy());
    let bindings = Bindings::of(&definition);
    let (code, file) = match args.lang {
        Language::Rust => (rust::generate(&bindings, &name), "mod.rs"),
        Language::Typescript => (typescript::generate(&bindings, &name), "module_bindings.ts"),
    };
    let code = code.map_err(|why| Failure::module(format!("no bindings for {name}: {why}")))?;
    std::fs::create_dir_all(&args.out).context(args.out.display())?;
    let path = args.out.join(file);
    if std::fs::read(&path).ok().as_deref() != Some(code.as_bytes()) {
        std::fs::write(&path, &code).context(path.display())?;
    }
    output::print(format!("wrote {}\n", path.display()))
}
