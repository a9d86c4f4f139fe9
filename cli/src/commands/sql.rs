//! `wasmod sql <url | module> "<query>"`: runs one query of the SQL subset
//! (`docs/subscriptions.md`) and prints the rows.
//!
//! - Against a server (`http://…`, or `ws://…`): a `OneOffQuery` over its WebSocket
//!   ([`remote`]), as the identity of `--token` (or `WASMOD_TOKEN`), or a new one whose token
//!   goes to stderr, as `wasmod call` prints it; `:sender` is that identity. The server answers for its public tables only. Opening the connection runs
//!   the module's `client_connected` (and closing it `client_disconnected`), as for every
//!   client.
//! - Against a module (a crate directory, built first, or a `.wasm` file): offline, over the
//!   module's data directory ([`offline`]: `--data`, the same default as `wasmod serve`), with
//!   the same parser and evaluation as the server. `:sender` is `--identity`.
//!
//! **Output**: a table of the rows, columns in the table's declared order, strings as they are
//! and other values in their JSON form, then the count (`(2 rows)`); or with `--json`, one
//! line per row, the row in the JSON mapping (`docs/json.md`), as the server sends it. Rows
//! come in no particular order (add `| sort` to compare outputs).
//!
//! Exit status: `1` for a query refused (outside the subset, an unknown table or column, a
//! private table on a server) or a server that closed the connection; `2` for a command that
//! could not run (a bad URL, a refused connection, a data directory that is missing or in use).

mod offline;
mod remote;
mod table;

use crate::failure::{Failure, Result};
use crate::output::{self, Printed};
use crate::units;
use crate::websocket;
use serde_json::value::RawValue;
use std::path::{Path, PathBuf};
use wasmod_abi::Identity;
use wasmod_protocol::ws::TableRows;
use wasmod_protocol::ModuleDescription;

/// What `wasmod sql --help` says after the options: the output, and the exit status.
const HELP: &str = "\
On a server, the query is a OneOffQuery over its WebSocket (GET /v1/subscribe), as the identity
of --token (or a new one, whose token is printed on stderr: the connection runs the module's
client_connected, as every client's does); :sender is that identity, and private tables are refused. On a module, the tables are
read from its data directory offline, as `wasmod serve` recovers them; it must not be served
meanwhile.

Output: a table (the columns in their declared order; strings bare, other values as JSON) and
the count of rows; or with --json one row per line, in the JSON mapping (docs/json.md). Rows
come in no particular order.

Exit status: 1 for a query refused (outside the SQL subset, an unknown table or column, a type
mismatch) or a server that closed the connection; 2 for a command that could not run (a bad
URL, a refused connection, a data directory missing or in use).";

/// `wasmod sql`'s arguments.
#[derive(clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    /// A server's URL (`http://127.0.0.1:3000`), or a module crate's directory (built first)
    /// or compiled module (`.wasm`) to query its data directory offline.
    target: String,
    /// The query: `"SELECT * FROM message WHERE sender = :sender"`.
    query: String,
    /// Print the rows as JSON lines, one row each, instead of a table.
    #[arg(long)]
    json: bool,
    /// On a server only: query as the identity of this token (default: a new identity).
    #[arg(long, env = "WASMOD_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Offline only: the data directory [default: `.wasmod` in the crate's directory, or
    /// beside the .wasm file, as for `wasmod serve`]. It must not be in use by a running
    /// `wasmod serve`. Offline, private tables can be queried too: whoever can read the
    /// directory can read every row in it anyway.
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// Offline only: the identity `:sender` stands for, 64 hex digits (a query that uses
    /// `:sender` needs it).
    #[arg(long, value_name = "HEX", value_parser = units::identity)]
    identity: Option<Identity>,
}

/// A query's answer: the rows of each table it returns, with the description that says their
/// columns.
#[derive(Debug)]
pub struct Answer {
    /// The module's description (of the tables the answer may name, at least).
    pub description: ModuleDescription,
    /// The rows, per table: each row one JSON object.
    pub tables: Vec<TableRows<Vec<Box<RawValue>>>>,
}

impl Answer {
    /// The answer of `tables`, each a table's rows as one JSON array.
    fn new(description: ModuleDescription, tables: Vec<TableRows<Box<RawValue>>>) -> Result<Self> {
        let tables = tables
            .into_iter()
            .map(|rows| {
                let split = serde_json::from_str(rows.rows.get()).map_err(|error| {
                    Failure::module(format!(
                        "the rows of `{}` are not a JSON array: {error}",
                        rows.table
                    ))
                })?;
                Ok(TableRows {
                    table: rows.table,
                    rows: split,
                })
            })
            .collect::<Result<_>>()?;
        Ok(Self {
            description,
            tables,
        })
    }
}

/// Runs `wasmod sql`.
pub fn run(args: Args) -> Result {
    let answer = if websocket::is_server_url(&args.target) {
        if args.data.is_some() || args.identity.is_some() {
            return Err(Failure::usage(
                "--data and --identity are for offline queries: a server's queries run as the identity of their --token",
            ));
        }
        remote::query(&args.target, &args.query, args.token.as_deref())?
    } else {
        if args.token.is_some() {
            return Err(Failure::usage("--token is for queries to a server"));
        }
        offline::query(
            Path::new(&args.target),
            args.data.as_deref(),
            &args.query,
            args.identity,
        )?
    };
    for rows in &answer.tables {
        let printed = if args.json {
            print_json_lines(&rows.rows)?
        } else {
            output::text(&table::render(&answer.description, rows)?)?
        };
        if printed == Printed::Closed {
            break;
        }
    }
    Ok(())
}

/// Prints `rows`, one JSON line each, until stdout closes.
fn print_json_lines(rows: &[Box<RawValue>]) -> Result<Printed> {
    for row in rows {
        if output::json_line(row.get())? == Printed::Closed {
            return Ok(Printed::Closed);
        }
    }
    Ok(Printed::Written)
}
