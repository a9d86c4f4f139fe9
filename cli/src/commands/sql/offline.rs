//! `wasmod sql <module>`: a query over a module's data directory, without a server.
//!
//! The tables are recovered from the commit log in `<data>/db/` exactly as `wasmod serve`
//! recovers them on start (the same [`Database::open`], so a torn tail left by a crash is
//! truncated here as it would be there), then the query is parsed, checked and evaluated by
//! `wasmod-subscription` as the server evaluates a `OneOffQuery`, and the rows are rendered in
//! the protocol's JSON mapping: the same rows, in the same JSON, as the server would answer.
//!
//! **A running server**: the log directory has an exclusive lock (`LOCK`, a `flock`) that a
//! serving process holds, and reading it beside a writer could see a half-written record, so
//! a directory in use is refused, naming the way around (query the server). The lock is held
//! here only while the tables are read.
//!
//! **Private tables** are readable here, unlike over the server: privacy is the server's
//! promise to its clients (only the module reads them), and someone who can open the data
//! directory can read every row in its files anyway. An operator looking at their own data is
//! the point of querying offline.
//!
//! The module is read (its description) but not loaded: no reducer runs, not even `init` (a
//! directory never served holds no rows). Opening is `serve`'s own, so it does what `serve`'s
//! next start would: a directory written by an older, compatible build of the module is
//! upgraded to this one's tables (`docs/durability.md`, "Module upgrades"); query with the build
//! you serve.

use super::Answer;
use crate::check;
use crate::failure::{Failure, Result};
use crate::source::Module;
use std::path::Path;
use std::sync::Arc;
use wasmod_abi::{Identity, ModuleDef};
use wasmod_host::datastore::durability::{DurabilityError, Mode, Options};
use wasmod_host::datastore::Database;
use wasmod_protocol::description::{describe, Tables};
use wasmod_protocol::ws::{RowList, RowTypes, TableRows};
use wasmod_subscription::{Catalog, Query};

/// Runs `query` over the tables of the module at `path`, stored in `data` (by default the
/// module's `.wasmod`), with `:sender` standing for `sender`.
pub fn query(
    path: &Path,
    data: Option<&Path>,
    query: &str,
    sender: Option<Identity>,
) -> Result<Answer> {
    let module = Module::open(path)?;
    let def = check::compile_and_describe(&module.wasm)?;
    let catalog = Catalog::new(&every_table_readable(&def))
        .map(Arc::new)
        .map_err(|error| Failure::module(error.to_string()))?;
    let parsed = Query::parse(&catalog, query)
        .map_err(|error| Failure::module(format!("{query}: {error}")))?;
    let sender =
        match sender {
            Some(sender) => sender,
            None if parsed.uses_sender() => return Err(Failure::usage(
                "the query uses :sender: say whose identity it stands for with --identity <hex>",
            )),
            None => Identity::ZERO,
        };
    let bound = parsed.bind(sender);
    let data = data.map_or_else(|| module.home.join(".wasmod"), Path::to_owned);
    let log = data.join("db");
    if !log.is_dir() {
        return Err(Failure::usage(format!(
            "{} holds no tables: no commit log in {} (serve the module with this data directory first, or give --data)",
            data.display(),
            log.display()
        )));
    }
    // Nothing is committed here: no sync to wait for, no snapshot to take.
    let mut options = Options::default().with_mode(Mode::Off);
    options.snapshot_every = None;
    let database = Database::open(&log, &def, options).map_err(|error| match error {
        DurabilityError::Locked { .. } => Failure::usage(format!(
            "{error}: a `wasmod serve` of the module holds it while it runs; query the server instead (wasmod sql http://…)"
        )),
        other => Failure::usage(other),
    })?;
    let rows = bound
        .evaluate(&database.begin_read())
        .map_err(|error| Failure::module(format!("{query}: {error}")))?;
    let table = def
        .tables
        .get(bound.table() as usize)
        .map(|table| table.name.clone())
        .ok_or_else(|| Failure::module("the query names a table the module does not have"))?;
    let list = RowList::from_rows(rows.iter().map(|row| &row[..]))
        .ok_or_else(|| Failure::module("the rows are more than 4 GiB"))?;
    let json = RowTypes::new(&def)
        .to_json(&table, &list)
        .map_err(|error| Failure::module(format!("the rows cannot be written as JSON: {error}")))?;
    Answer::new(
        describe(&def, Tables::All),
        vec![TableRows { table, rows: json }],
    )
}

/// `def` with every table public and no visibility filter, for the catalog that checks queries:
/// offline, private tables and every row may be read (see the module's documentation). The database keeps `def` itself, which its log
/// was written for.
fn every_table_readable(def: &ModuleDef) -> ModuleDef {
    let mut readable = def.clone();
    for table in &mut readable.tables {
        table.public = true;
        table.visibility = None;
    }
    readable
}
