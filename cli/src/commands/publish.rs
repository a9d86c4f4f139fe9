//! `wasmod publish <url> <module> [--operator-token-file F] [--json]`: makes a new build of a module
//! serve on a running server, between two calls, without dropping its connections.
//!
//! The module (a crate directory is built first, or a `.wasm` file) is described and checked
//! here first, as `wasmod build` checks it (it loads; no indirect call on its dispatch paths),
//! so that such a build is refused before it is sent; then it goes to
//! `POST /v1/admin/module` with the operator token that `wasmod serve` printed at start
//! (`--operator-token-file`, `WASMOD_OPERATOR_TOKEN` or `--operator-token`). The server checks the new build's tables
//! against its data by the rules of an upgrade on start (`docs/upgrading.md`): a build that
//! cannot take the data is refused, naming every table and column at fault, and the old build
//! goes on serving, unchanged.
//!
//! **Output**: `published build 1 to http://…: serving from commit 42`, then one line per
//! change to the tables; with `--json`, the server's answer. The server keeps the build in its
//! data directory (`published.wasm`): serve that file after a restart.
//!
//! Exit status: `1` for a build the server (or the check here) refused; `2` for a command that
//! could not run (a bad URL, a refused token, a server without an admin side).

use super::credential::OperatorCredential;
use crate::check;
use crate::failure::{Context, Failure, Result};
use crate::source::Module;
use crate::websocket;
use serde::Deserialize;
use std::path::PathBuf;

/// `wasmod publish`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The server's URL: `http://127.0.0.1:3000`.
    url: String,
    /// The new build: a module crate's directory (built first) or a compiled module (`.wasm`).
    module: PathBuf,
    /// The operator token.
    #[command(flatten)]
    operator: OperatorCredential,
    /// Print the server's answer as JSON rather than as text.
    #[arg(long)]
    json: bool,
}

/// The server's answer (`wasmod_node::Published`).
#[derive(Debug, Deserialize)]
struct Published {
    build: u64,
    offset: u64,
    changes: Vec<String>,
}

/// Runs `wasmod publish`.
pub fn run(args: Args) -> Result {
    let authorization = args.operator.authorization()?;
    let base = websocket::http_base(&args.url)?;
    let module = Module::open(&args.module)?;
    let report = check::inspect(&module.wasm)?;
    if !report.is_clean() {
        return Err(Failure::module(format!(
            "{report}dispatch: {} indirect call(s) on dispatch paths (see docs/inspect.md): the \
             build was not published",
            report.violations().count()
        )));
    }
    let described = check::compile_and_describe(&module.wasm)?;
    tracing::info!(
        module = %module.path.display(),
        tables = described.tables.len(),
        "checked the new build"
    );
    let url = format!("{base}/v1/admin/module");
    let mut response = crate::api::agent(&url)
        .post(&url)
        .content_type("application/wasm")
        .header("authorization", authorization)
        .send(&module.wasm[..])
        .context(format!("POST {url}"))?;
    let status = response.status().as_u16();
    let text = response
        .body_mut()
        .read_to_string()
        .context(format!("reading the answer to POST {url}"))?;
    match status {
        200 => {}
        409 | 413 | 422 => {
            return Err(Failure::module(format!(
                "{base} refused the build ({status}); the old build goes on serving: {}",
                message(&text)
            )))
        }
        _ => {
            return Err(Failure::usage(format!(
                "{base} did not take the build ({status}): {}",
                message(&text)
            )))
        }
    }
    if args.json {
        println!("{text}");
        return Ok(());
    }
    let published: Published = crate::api::parse(&text, "a publication's answer")?;
    println!(
        "published build {} to {base}: serving from commit {}",
        published.build, published.offset
    );
    for change in &published.changes {
        println!("  {change}");
    }
    Ok(())
}

/// The message of the server's error answer `text`, or `text` itself.
fn message(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|answer| {
            let error = &answer["error"];
            Some(format!(
                "{}: {}",
                error["code"].as_str()?,
                error["message"].as_str()?
            ))
        })
        .unwrap_or_else(|| text.to_owned())
}
