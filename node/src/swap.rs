//! `wasmod publish`: a new build of the module takes over a running server between two calls,
//! without dropping a connection (`POST /v1/admin/module`, `docs/http-api.md`).
//!
//! # Steps
//!
//! 1. **Off the module's thread** (the blocking pool), the build is compiled by the engine the
//!    module runs in, described in a throwaway instance, and checked: its tables against the
//!    stored data's ([`Database::plan_replacement`]: the rules of an upgrade on start), its
//!    visibility filters ([`Catalog::new`]). A refused build never reaches the module's thread;
//!    the calls go on meanwhile. One publication runs at a time.
//! 2. The scheduler stops ([`Scheduling`]): its timers are the old build's.
//! 3. **On the module's thread**, as one job of its queue (so the calls queued before it run on
//!    the old build and those after it on the new one): [`WasmModule::replace`] carries the rows
//!    over and moves the commit log; the new [`Build`] takes over for every request that starts
//!    from then on ([`CurrentBuild`]), and then the real-time side is told where the new
//!    build's commits start ([`Realtime::rebuilt`](crate::realtime::Realtime::rebuilt)), in
//!    that order: the query sets the swap ends are ended by the real-time side, and a client
//!    told so finds the new build serving when it subscribes again. Nothing commits
//!    meanwhile: the module's thread is the only one that commits.
//! 4. The scheduler starts for whichever build serves now; with a data directory, the
//!    published build is kept there (`published.wasm`), so that the operator can serve it
//!    again after a restart.
//!
//! A refusal at any step leaves the old build serving, unchanged. Calls that were found in the
//! old build and reach the module's thread after the swap run only if the new build has the
//! same entry point ([`crate::invocation::Invocation::run`]). An edge (a replica) and a server that
//! publishes its commits to edges refuse new builds: the edges would need them too.

use crate::build::{Build, CurrentBuild};
use crate::health::LogHealth;
use crate::realtime::Realtime;
use crate::schedule::Scheduling;
use crate::worker::Worker;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use wasmod_abi::ModuleDef;
use wasmod_host::datastore::{Database, ReplaceError as TablesError};
use wasmod_host::{CompiledModule, ReplaceError, WasmConfig, WasmEngine, WasmModule};
use wasmod_protocol::errors::{ApiError, ErrorCode};
use wasmod_subscription::Catalog;

/// The name of the file, in a server's data directory, that keeps the last build published.
pub const PUBLISHED_FILE: &str = "published.wasm";

/// Publishes new builds to a server ([`Swap::publish`]).
#[derive(Debug)]
pub struct Swap {
    parts: SwapParts,
    /// One publication at a time.
    turn: tokio::sync::Mutex<()>,
}

/// What the parts of a [`Swap`] are.
#[derive(Debug)]
pub struct SwapParts {
    /// The engine the module runs in, and the budgets of its instances.
    pub engine: WasmEngine,
    /// The budgets of the module's instances.
    pub config: WasmConfig,
    /// The module's thread.
    pub worker: Worker,
    /// The build serving now.
    pub build: CurrentBuild,
    /// The real-time side, told of each new build.
    pub realtime: Arc<Realtime>,
    /// The scheduler, restarted for each new build.
    pub scheduling: Arc<Scheduling>,
    /// Whether the commit log failed.
    pub log_health: LogHealth,
    /// Where to keep the last build published, if anywhere.
    pub keep: Option<PathBuf>,
    /// Why this server takes no new build, if it does not (an edge, a publisher to edges).
    pub refusal: Option<&'static str>,
}

/// What a publication did: the answer of `POST /v1/admin/module`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Published {
    /// The build's number: 1 for the first build published after the server started.
    pub build: u64,
    /// The offset of the first commit of the new build.
    pub offset: u64,
    /// What changed in the tables, one line each (empty if nothing did).
    pub changes: Vec<String>,
    /// How many entry points the new build has.
    pub entry_points: usize,
    /// How many tables it has.
    pub tables: usize,
}

impl Swap {
    /// Publishes builds over `parts`.
    pub fn new(parts: SwapParts) -> Self {
        Self {
            parts,
            turn: tokio::sync::Mutex::new(()),
        }
    }

    /// Makes the module in `wasm` serve from the next call on (see the module docs), and says
    /// what changed. Errors, with the old build still serving: `invalid_module` (it cannot
    /// be loaded), `incompatible_build` (its tables cannot take the stored data, or this server
    /// takes no new builds), `degraded` (the commit log failed), `internal`.
    pub async fn publish(&self, wasm: Vec<u8>) -> Result<Published, ApiError> {
        if let Some(refusal) = self.parts.refusal {
            return Err(ApiError::new(ErrorCode::IncompatibleBuild, refusal));
        }
        self.parts.log_health.take_writes()?;
        let _turn = self.turn.lock().await;
        let serving = self.parts.build.get();
        let (engine, config, old) = (
            self.parts.engine.clone(),
            self.parts.config,
            serving.module.clone(),
        );
        let checked = tokio::task::spawn_blocking(move || check(&engine, config, &old, &wasm))
            .await
            .map_err(|error| internal(format!("the build's check failed: {error}")))??;
        let kept = self
            .parts
            .keep
            .as_ref()
            .map(|path| keep(path, &checked.wasm))
            .transpose()?;
        self.parts.scheduling.stop().await;
        let swapped = self
            .swap_on_module_thread(checked, serving.number + 1)
            .await;
        self.parts
            .scheduling
            .start(self.parts.build.get().module.clone())
            .await;
        let published = match swapped {
            Ok(published) => published,
            Err(refused) => {
                if let Some(kept) = &kept {
                    // Best effort: a leftover is overwritten by the next publication anyway.
                    let _ = std::fs::remove_file(kept);
                }
                return Err(refused);
            }
        };
        if let (Some(kept), Some(path)) = (kept, &self.parts.keep) {
            std::fs::rename(&kept, path).map_err(|error| {
                internal(format!(
                    "the build serves, but keeping it in {} failed: {error}",
                    path.display()
                ))
            })?;
        }
        tracing::info!(
            build = published.build,
            offset = published.offset,
            changes = ?published.changes,
            "a new build of the module serves from now on"
        );
        Ok(published)
    }

    /// The swap itself, as one job of the module's queue.
    async fn swap_on_module_thread(
        &self,
        checked: Checked,
        number: u64,
    ) -> Result<Published, ApiError> {
        let (current, realtime) = (self.parts.build.clone(), self.parts.realtime.clone());
        let Checked {
            compiled, catalog, ..
        } = checked;
        let job = move |module: &mut WasmModule| -> Result<Published, ApiError> {
            let replacement = module.replace(&compiled).map_err(refused)?;
            let tables = replacement.tables;
            let new = &replacement.module;
            let published = Published {
                build: number,
                offset: tables.offset,
                changes: tables.changes,
                entry_points: new.reducers.len()
                    + new.procedures.len()
                    + new.views.len()
                    + new.http_handlers.len(),
                tables: new.tables.len(),
            };
            let build = Arc::new(Build::new(
                number,
                replacement.module,
                catalog,
                tables.datastore,
            ));
            // The new build serves requests before the evaluation task hears of it: the task
            // ends the query sets that cannot carry on, and a client that subscribes again
            // when told so (or reads `GET /v1/module` then) must find the new build serving.
            current.set(build.clone());
            realtime.rebuilt(build, tables.offset);
            Ok(published)
        };
        self.parts.worker.run_when_room(job).await?
    }
}

/// A build compiled and checked off the module's thread.
struct Checked {
    compiled: CompiledModule,
    catalog: Arc<Catalog>,
    wasm: Vec<u8>,
}

/// Compiles `wasm` with `engine`, describes it with `config`'s budgets, and checks that its
/// tables can take those of `old` and that its visibility filters apply.
fn check(
    engine: &WasmEngine,
    config: WasmConfig,
    old: &ModuleDef,
    wasm: &[u8],
) -> Result<Checked, ApiError> {
    let invalid = |error: String| {
        ApiError::new(
            ErrorCode::InvalidModule,
            format!("the new build cannot be loaded: {error}"),
        )
    };
    let compiled = engine
        .compile(wasm)
        .map_err(|error| invalid(error.to_string()))?;
    let described = compiled
        .describe(config)
        .map_err(|error| invalid(error.to_string()))?;
    Database::plan_replacement(old, &described).map_err(tables_refused)?;
    let catalog = Catalog::new(&described).map_err(|error| invalid(error.to_string()))?;
    Ok(Checked {
        compiled,
        catalog: Arc::new(catalog),
        wasm: wasm.to_vec(),
    })
}

/// Writes `wasm` beside `path`, readable by the server's user only (`0600`, on Unix), to be
/// renamed over it once the build serves; returns the temporary file.
fn keep(path: &std::path::Path, wasm: &[u8]) -> Result<PathBuf, ApiError> {
    use std::io::Write as _;
    let temporary = path.with_extension("wasm.new");
    // A file left by an earlier attempt goes first: its mode would stay.
    let _ = std::fs::remove_file(&temporary);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options
        .open(&temporary)
        .and_then(|mut file| file.write_all(wasm));
    written.map_err(|error| {
        internal(format!(
            "the build could not be kept in {}: {error}; nothing was changed",
            temporary.display()
        ))
    })?;
    Ok(temporary)
}

/// The answer to a build the host refused.
fn refused(error: ReplaceError) -> ApiError {
    match error {
        ReplaceError::Describe(error) => ApiError::new(
            ErrorCode::InvalidModule,
            format!("the new build cannot be loaded: {error}"),
        ),
        ReplaceError::Tables(error) => tables_refused(error),
        other => internal(other.to_string()),
    }
}

/// The answer to a build whose tables cannot take over.
fn tables_refused(error: TablesError) -> ApiError {
    let code = match &error {
        TablesError::Schema(_) => ErrorCode::InvalidModule,
        TablesError::Incompatible(_) | TablesError::Replica => ErrorCode::IncompatibleBuild,
        TablesError::Log(_) => ErrorCode::Degraded,
        _ => ErrorCode::Internal,
    };
    ApiError::new(code, error.to_string())
}

fn internal(message: String) -> ApiError {
    ApiError::new(ErrorCode::Internal, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_kept_build_is_readable_by_the_servers_user_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("a directory");
        let path = dir.path().join(PUBLISHED_FILE);
        // A file an earlier attempt left, open to everyone, is not reused as it is.
        let left = path.with_extension("wasm.new");
        std::fs::write(&left, b"old").expect("write");
        std::fs::set_permissions(&left, std::fs::Permissions::from_mode(0o666)).expect("chmod");
        let kept = keep(&path, b"\0asm").expect("kept");
        assert_eq!(std::fs::read(&kept).expect("read"), b"\0asm");
        let mode = std::fs::metadata(&kept)
            .expect("exists")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
