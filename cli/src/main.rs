//! `wasmod`: create, build, check, describe, call and serve wasmod modules; subscribe to a
//! served module's tables and query them.
//!
//! Each subcommand lives in its own file under `commands/`; what several share lives beside
//! them: [`cargo`] (building a crate for wasm32), [`source`] (a module given as a `.wasm` file
//! or a crate directory), [`check`] (the checks every built module goes through), [`render`]
//! (descriptions as text), [`generate`] (client bindings from a description), [`units`]
//! (durations, sizes and identities on the command line), [`api`] (a server's HTTP API) and
//! [`websocket`] (its WebSocket), [`signal`] (when to stop), [`output`] (JSON lines and text on
//! stdout), and [`failure`] (errors and exit codes).
//!
//! Exit status: `0` success; `1` the module or the call failed (an inspection violation, a
//! call that ended in an error); `2` the command could not run (bad arguments, a build that
//! failed, a file that cannot be read, a server that cannot start).

mod api;
mod cargo;
mod check;
mod commands;
mod failure;
mod generate;
mod output;
mod render;
mod signal;
mod source;
mod units;
mod websocket;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::LazyLock;
use tracing_subscriber::EnvFilter;

/// What `wasmod --version` prints after the name: the command's version and the ABI version
/// of the modules it builds and serves.
static VERSION: LazyLock<String> = LazyLock::new(|| {
    format!(
        "{} (ABI {}, imports from `{}`)",
        env!("CARGO_PKG_VERSION"),
        wasmod_abi::names::ABI_VERSION,
        wasmod_abi::names::IMPORT_MODULE
    )
});

/// Create, build, check, describe, call and serve wasmod modules; subscribe to a served
/// module's tables and query them.
#[derive(Parser)]
#[command(name = "wasmod", propagate_version = true)]
struct Cli {
    /// What to log, as a `tracing` filter: `info`, `debug`, `warn,wasmod::module=debug`, …
    /// Module logs have the target `wasmod::module`.
    #[arg(long, global = true, default_value = "info", value_name = "FILTER")]
    log: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create a module crate: a table, reducers, a view and a native test.
    New(commands::new::Args),
    /// Build a module crate for wasm32 and check the result.
    Build(commands::build::Args),
    /// Describe a module: tables, entry points and their ids, types.
    Describe(commands::describe::Args),
    /// Generate typed client bindings of a module.
    Generate(commands::generate::Args),
    /// Check that a module's dispatch reaches every entry point without indirect calls.
    Inspect(commands::inspect::Args),
    /// Call a reducer, procedure or view, in-process or on a server.
    Call(commands::call::Args),
    /// Serve a module over HTTP.
    Serve(Box<commands::serve::Args>),
    /// Serve a module as an edge node of a primary: reads from a copy fed by its Redis
    /// stream, writes forwarded to it.
    Edge(Box<commands::edge::Args>),
    /// Subscribe to queries on a server: print the initial rows and every update as JSON lines.
    Subscribe(commands::subscribe::Args),
    /// Run one query on a server, or offline over a module's data directory.
    Sql(commands::sql::Args),
    /// Stream a served module's logs (the operator's feed), one line each.
    Logs(commands::logs::Args),
    /// Make a new build of a module serve on a running server, between two calls.
    Publish(commands::publish::Args),
    /// How each server of a deployment is doing: its part, the lease, its lag (`/health`).
    Status(commands::status::Args),
}

fn main() -> ExitCode {
    let matches = Cli::command().version(VERSION.as_str()).get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    if let Err(error) = init_logging(&cli.log) {
        eprintln!("wasmod: {error}");
        return ExitCode::from(failure::USAGE);
    }
    let result = match cli.command {
        Command::New(args) => commands::new::run(args),
        Command::Build(args) => commands::build::run(args),
        Command::Describe(args) => commands::describe::run(args),
        Command::Generate(args) => commands::generate::run(args),
        Command::Inspect(args) => commands::inspect::run(args),
        Command::Call(args) => commands::call::run(args),
        Command::Serve(args) => commands::serve::run(*args),
        Command::Edge(args) => commands::edge::run(*args),
        Command::Subscribe(args) => commands::subscribe::run(args),
        Command::Sql(args) => commands::sql::run(args),
        Command::Logs(args) => commands::logs::run(args),
        Command::Publish(args) => commands::publish::run(args),
        Command::Status(args) => commands::status::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report(),
    }
}

/// Logs to stderr through `tracing`, filtered by `filter`.
fn init_logging(filter: &str) -> Result<(), String> {
    let filter = EnvFilter::try_new(filter)
        .map_err(|error| format!("--log {filter:?} is not a valid filter: {error}"))?;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    Ok(())
}
