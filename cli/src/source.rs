//! A module as the commands take it: a compiled `.wasm` file, or a module crate's directory
//! (built for wasm32 first; cargo makes that a no-op when nothing changed).

use crate::cargo;
use crate::failure::{Context, Failure, Result};
use std::path::{Path, PathBuf};

/// A module's bytes and where they came from.
#[derive(Debug)]
pub struct Module {
    /// The compiled module.
    pub wasm: Vec<u8>,
    /// The `.wasm` file it was read from.
    pub path: PathBuf,
    /// The crate's directory, or the `.wasm` file's directory: where the module "lives".
    pub home: PathBuf,
}

impl Module {
    /// Reads the module at `path`, building it first if `path` is a crate's directory.
    pub fn open(path: &Path) -> Result<Self> {
        let (wasm_path, home) = if path.is_dir() {
            (cargo::build(path)?, path.to_owned())
        } else if path.is_file() {
            let home = path
                .parent()
                .filter(|parent| !parent.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from("."), Path::to_owned);
            (path.to_owned(), home)
        } else {
            return Err(Failure::usage(format!(
                "{}: no such .wasm file or crate directory",
                path.display()
            )));
        };
        let wasm = std::fs::read(&wasm_path).context(wasm_path.display())?;
        Ok(Self {
            wasm,
            path: wasm_path,
            home,
        })
    }
}
