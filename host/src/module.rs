//! A module loaded into a host: the one API every transport serves.
//!
//! [`NativeModule`](crate::NativeModule) and [`WasmModule`](crate::WasmModule) are this type
//! over their transports: loading (describe, create the tables, run `init`), calling entry
//! points by name, and looking at the tables and logs are written once, here, on top of the
//! orchestrator in [`call`](mod@crate::call). Each transport adds only its own constructors and
//! what is particular to it.

use crate::call::{self, Caller, LoadError, Outcome, Transport};
use crate::claims::Claims;
use crate::env::{InstanceEnv, LogRecord};
use std::sync::Arc;
use wasmod_abi::http::Request;
use wasmod_abi::{ConnectionId, Errno, Identity, ModuleDef};
use wasmod_datastore::{Database, Datastore, Tables};

/// A module loaded into a host over the transport `T`.
pub struct LoadedModule<T> {
    pub(crate) transport: T,
    pub(crate) module: Arc<ModuleDef>,
}

impl<T: Transport> LoadedModule<T> {
    /// Describes the module through `transport`, creates its tables, runs its `init`
    /// reducer, and disconnects the connections a crash left open (see
    /// [`call::disconnect_leftovers`]). A replica
    /// ([`InstanceEnv::with_replica`](crate::InstanceEnv::with_replica)) does neither: its
    /// tables are its primary's, which did both; nor does a standby until it is promoted
    /// ([`LoadedModule::take_over`]).
    pub(crate) fn start(mut transport: T) -> Result<Self, LoadError> {
        let module = call::load(&mut transport)?;
        let mut loaded = Self { transport, module };
        let database = loaded.transport.env_ref().database();
        if !database.is_replica() && !database.is_standby() {
            loaded.take_over().map_err(LoadError::Init)?;
        }
        Ok(loaded)
    }

    /// What a module does when it becomes the writer of its tables, at its start as a primary
    /// or when its standby is promoted: runs `init` if the tables have never been written (on
    /// this node or any primary before it), then disconnects the connections the last writer
    /// left open ([`call::disconnect_leftovers`]: a crash's, or a deposed primary's, whose
    /// clients are gone with it). `Err` with `init`'s outcome if it failed; nothing else ran.
    pub fn take_over(&mut self) -> Result<(), Outcome> {
        if let Some(outcome) = call::init(&mut self.transport) {
            if !outcome.is_success() {
                return Err(outcome);
            }
        }
        call::disconnect_leftovers(&mut self.transport);
        Ok(())
    }

    /// Calls reducer `name` as `sender` over `connection`, without claims
    /// ([`LoadedModule::call_reducer_as`] a [`Caller::new`]); `args` is the encoded product of
    /// its parameters.
    pub fn call_reducer(
        &mut self,
        name: &str,
        sender: Identity,
        connection: ConnectionId,
        args: &[u8],
    ) -> Outcome {
        self.call_reducer_as(name, &Caller::new(sender, connection), args)
    }

    /// Calls reducer `name` as `caller`: its identity, its connection, and its claims, which
    /// the module reads if it asks; `args` is the encoded product of its parameters.
    pub fn call_reducer_as(&mut self, name: &str, caller: &Caller, args: &[u8]) -> Outcome {
        self.write(|transport| call::call_reducer(transport, name, caller, args))
    }

    /// Calls the reducer of the schedule table `table` with its encoded row `row`, as the
    /// host: what the scheduler does when the row is due ([`call::call_scheduled`]: a one-shot
    /// row is deleted with the call). `None` if the table no longer holds exactly that row.
    pub fn call_scheduled(&mut self, table: u32, row: &[u8]) -> Option<Outcome> {
        self.write(|transport| call::call_scheduled(transport, table, row))
    }

    /// Calls view `name` (per-caller or anonymous) as `sender`, without claims
    /// ([`LoadedModule::call_view_as`]).
    pub fn call_view(&mut self, name: &str, sender: Identity, args: &[u8]) -> Outcome {
        self.call_view_as(name, &Caller::new(sender, ConnectionId::ZERO), args)
    }

    /// Calls view `name` as `caller`: a per-caller view sees its identity and claims, an
    /// anonymous one neither.
    pub fn call_view_as(&mut self, name: &str, caller: &Caller, args: &[u8]) -> Outcome {
        self.call(|transport| call::call_view(transport, name, caller, args))
    }

    /// Calls procedure `name` as `sender` over `connection`, without claims
    /// ([`LoadedModule::call_procedure_as`]).
    pub fn call_procedure(
        &mut self,
        name: &str,
        sender: Identity,
        connection: ConnectionId,
        args: &[u8],
    ) -> Outcome {
        self.call_procedure_as(name, &Caller::new(sender, connection), args)
    }

    /// Calls procedure `name` as `caller` (identity, connection and claims).
    pub fn call_procedure_as(&mut self, name: &str, caller: &Caller, args: &[u8]) -> Outcome {
        self.write(|transport| call::call_procedure(transport, name, caller, args))
    }

    /// Sends `request` to the HTTP handler of its method and path; the handler reads `claims`,
    /// those of the request's verified token, if any.
    pub fn call_http(&mut self, request: &Request, claims: Option<Claims>) -> Outcome {
        self.write(|transport| call::call_http(transport, request, claims))
    }

    /// Sends `request` to HTTP handler `id`, which the caller found by routing the request
    /// against this module's description (`ModuleDef::http_routes`); the handler reads
    /// `claims`, as with [`LoadedModule::call_http`].
    pub fn call_http_handler(
        &mut self,
        id: u32,
        request: &Request,
        claims: Option<Claims>,
    ) -> Outcome {
        self.write(|transport| call::call_http_handler(transport, id, request, claims))
    }

    /// Runs the `ClientConnected` lifecycle reducer, if the module has one, without claims
    /// ([`LoadedModule::client_connected_as`]).
    pub fn client_connected(
        &mut self,
        sender: Identity,
        connection: ConnectionId,
    ) -> Option<Outcome> {
        self.client_connected_as(&Caller::new(sender, connection))
    }

    /// Runs the `ClientConnected` lifecycle reducer, if the module has one, for `caller`: the
    /// reducer may refuse the connection by what it reads of the caller's claims.
    pub fn client_connected_as(&mut self, caller: &Caller) -> Option<Outcome> {
        self.write(|transport| call::client_connected(transport, caller))
    }

    /// Runs the `ClientDisconnected` lifecycle reducer, if the module has one, without claims
    /// ([`LoadedModule::client_disconnected_as`]).
    pub fn client_disconnected(
        &mut self,
        sender: Identity,
        connection: ConnectionId,
    ) -> Option<Outcome> {
        self.client_disconnected_as(&Caller::new(sender, connection))
    }

    /// Runs the `ClientDisconnected` lifecycle reducer, if the module has one, for `caller`
    /// (the claims of the connection's token, when the caller still has them).
    pub fn client_disconnected_as(&mut self, caller: &Caller) -> Option<Outcome> {
        self.write(|transport| call::client_disconnected(transport, caller))
    }

    /// The module's description.
    pub fn module(&self) -> &ModuleDef {
        &self.module
    }

    /// The module's description, shared: the same `Arc` until a newer build replaces the
    /// module, so that comparing pointers tells whether it did.
    pub fn description(&self) -> &Arc<ModuleDef> {
        &self.module
    }

    /// The module's database: its tables, commit log and the feed of its commits.
    pub fn database(&self) -> &Arc<Database> {
        self.transport.env_ref().database()
    }

    /// The module's tables (those of the build that serves them now).
    pub fn datastore(&self) -> Arc<Datastore> {
        self.transport.env_ref().datastore()
    }

    /// Runs `f` on the committed state of the tables.
    pub fn read<R>(&self, f: impl FnOnce(&Tables) -> R) -> R {
        f(&self.datastore().begin_read())
    }

    /// The lines the last call logged, oldest first.
    pub fn logs(&self) -> Vec<LogRecord> {
        self.transport.env_ref().logs().cloned().collect()
    }

    /// The instance's environment, between calls.
    pub fn env_mut(&mut self) -> &mut InstanceEnv {
        self.transport.env()
    }

    /// Cleans up after a call that a panic in the host cut short (for a caller that caught
    /// it): the call's transaction, if one is open, is rolled back (releasing the tables), its
    /// handles are dropped, and the instance is replaced before the next call, as after a trap.
    pub fn recover_from_panic(&mut self) {
        self.transport.env().abandon_call();
        self.transport.distrust();
    }

    /// Runs `call`, which may write to the tables, like [`Self::call`]; on a replica, whose
    /// tables only its primary's commits change, refuses it with `NOT_ALLOWED` instead.
    fn write<R: From<Outcome>>(&mut self, call: impl FnOnce(&mut T) -> R) -> R {
        if self.database().is_replica() {
            return Outcome::refused(
                Errno::NOT_ALLOWED,
                "this host holds a replica: calls that may write run on its primary".to_owned(),
            )
            .into();
        }
        self.call(call)
    }

    /// Runs `call` once the transport is ready for it ([`Transport::prepare`]); if it cannot
    /// be, the call is aborted with the reason.
    fn call<R: From<Outcome>>(&mut self, call: impl FnOnce(&mut T) -> R) -> R {
        match self.transport.prepare() {
            Ok(()) => call(&mut self.transport),
            Err(trap) => Outcome::Aborted {
                reason: trap.message,
            }
            .into(),
        }
    }
}

impl<T: Transport> std::fmt::Debug for LoadedModule<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedModule")
            .field("env", self.transport.env_ref())
            .finish_non_exhaustive()
    }
}
