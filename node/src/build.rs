//! The build that serves the module now: its description, its tables as queries see them, its
//! HTTP routes, and its tables. `wasmod publish` replaces it whole between two calls
//! ([`crate::swap`]).
//!
//! Everything that answers from the description (finding entry points, converting arguments,
//! table pages, binding queries, routing the module's HTTP handlers) takes the current
//! [`Build`] once per request from a [`CurrentBuild`] and keeps it for the whole request, so a
//! request sees one build from start to end. A call resolved against one build that reaches the
//! module's thread after a newer one took over is checked against the newer one before it runs
//! ([`crate::invocation::Invocation::run`]).

use parking_lot::RwLock;
use std::sync::Arc;
use wasmod_abi::http::Method;
use wasmod_abi::route::Routes;
use wasmod_abi::ModuleDef;
use wasmod_host::datastore::Datastore;
use wasmod_subscription::Catalog;

/// One build of the module, as served.
#[derive(Debug)]
pub struct Build {
    /// Which build this is: 0 for the one the server started with, then one more per
    /// build published.
    pub number: u64,
    /// The description: entry points, tables, types.
    pub module: Arc<ModuleDef>,
    /// The tables as queries see them (visibility filters included).
    pub catalog: Arc<Catalog>,
    /// The HTTP handlers by method and route pattern, for `/v1/http/...`.
    pub http_routes: Routes<Method>,
    /// The tables, read directly (off the module's thread) by table pages.
    pub datastore: Arc<Datastore>,
}

impl Build {
    /// Build `number` of the module described by `module`, whose tables `catalog` describes
    /// for queries ([`Catalog::new`], which refuses invalid visibility filters), over
    /// `datastore`.
    pub fn new(
        number: u64,
        module: Arc<ModuleDef>,
        catalog: Arc<Catalog>,
        datastore: Arc<Datastore>,
    ) -> Self {
        Self {
            number,
            http_routes: module.http_routes(),
            module,
            catalog,
            datastore,
        }
    }
}

/// The build serving now, shared by everything that answers from it. Cheap to clone.
#[derive(Clone, Debug)]
pub struct CurrentBuild {
    build: Arc<RwLock<Arc<Build>>>,
}

impl CurrentBuild {
    /// Serves `build`.
    pub fn new(build: Build) -> Self {
        Self {
            build: Arc::new(RwLock::new(Arc::new(build))),
        }
    }

    /// The build serving now; hold it for the whole of one request.
    pub fn get(&self) -> Arc<Build> {
        self.build.read().clone()
    }

    /// Makes `build` the one serving from now on.
    pub(crate) fn set(&self, build: Arc<Build>) {
        *self.build.write() = build;
    }
}
