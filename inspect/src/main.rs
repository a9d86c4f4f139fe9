//! `wasmod-inspect <file.wasm> [--json]`: prints the inspection report of a compiled module.
//!
//! Exit status: 0 when no dispatch path has an indirect call, 1 when one does, 2 when the file
//! cannot be read or inspected.

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;

/// Checks that a wasmod module's dispatch exports reach each entry point through a br_table
/// and direct calls only, and reports section sizes, imports and entry points.
#[derive(Parser)]
#[command(version)]
struct Cli {
    /// The compiled module (`.wasm`), built with its name section (not stripped).
    file: PathBuf,
    /// Print the report as JSON instead of text.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let report = std::fs::read(&cli.file)
        .map_err(|error| error.to_string())
        .and_then(|wasm| wasmod_inspect::inspect(&wasm).map_err(|error| error.to_string()));
    match report {
        Ok(report) => {
            if cli.json {
                println!("{}", report.to_json());
            } else {
                print!("{report}");
            }
            if report.is_clean() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(error) => {
            eprintln!("wasmod-inspect: {}: {error}", cli.file.display());
            ExitCode::from(2)
        }
    }
}
