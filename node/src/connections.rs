//! Live connections: who is connected, over which [`ConnectionId`], and the guarantee that the
//! module hears of each connection's start and end exactly once.
//!
//! A client that stays connected (the WebSocket endpoint) holds a [`Connection`]. Opening one
//! gives it a fresh random connection id and runs the module's `client_connected` reducer with
//! it, which the module may refuse. The connection ends in one of these ways, and each runs the
//! module's `client_disconnected` reducer once:
//!
//! - a clean close: [`Connection::close`], which waits for the reducer;
//! - a drop (the socket task ended, panicked or was cancelled): the [`Connection`]'s `Drop`
//!   queues the reducer, which waits for room in the module's queue rather than being refused;
//! - the server's shutdown: [`Connections::close_all`] closes whatever is still open;
//! - a crash of the process: the database recorded the connection in the same transaction as its
//!   `client_connected`, and the host disconnects it when the module next starts
//!   ([`wasmod_host::call::disconnect_leftovers`]).
//!
//! Exactly once holds twice over: whichever of these takes the connection out of the registry
//! first runs the reducer, and the host runs it only for a connection the database still has
//! open.
//!
//! Plain HTTP calls do not open connections: they run with [`ConnectionId::ZERO`].

use crate::runner::Runner;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use wasmod_abi::{ConnectionId, Identity};
use wasmod_host::Outcome;
use wasmod_protocol::errors::{ApiError, ErrorCode};

/// The registry of live connections. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Connections {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    runner: Runner,
    live: Mutex<HashMap<ConnectionId, Identity>>,
}

/// One live connection. Dropping it disconnects it (see the module docs).
#[derive(Debug)]
pub struct Connection {
    id: ConnectionId,
    identity: Identity,
    registry: Connections,
}

impl Connections {
    /// A registry whose connections' lifecycle reducers `runner` runs.
    pub fn new(runner: Runner) -> Self {
        Self {
            shared: Arc::new(Shared {
                runner,
                live: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Opens a connection for `identity`: a fresh connection id, and the module's
    /// `client_connected` reducer run with it. Fails with `connection_refused` (the module's
    /// reducer failed), `busy` or `shutting_down` (the module's queue), or `internal` (no
    /// randomness).
    pub async fn connect(&self, identity: Identity) -> Result<Connection, ApiError> {
        let id = new_connection_id().map_err(|error| {
            ApiError::new(
                ErrorCode::Internal,
                format!("no randomness for a connection id: {error}"),
            )
        })?;
        // Registered as soon as the module accepted it, so that a requester gone in between
        // leaves a connection that shutdown still closes.
        let registry = self.clone();
        self.shared
            .runner
            .connect(identity, id, move || {
                registry.live().insert(id, identity);
            })
            .await?;
        tracing::debug!(connection = %id.to_hex(), identity = %identity, "connected");
        Ok(Connection {
            id,
            identity,
            registry: self.clone(),
        })
    }

    /// How many connections are open.
    pub fn count(&self) -> usize {
        self.live().len()
    }

    /// Whether connection `id` is open.
    pub fn is_open(&self, id: ConnectionId) -> bool {
        self.live().contains_key(&id)
    }

    /// Closes every connection still open, each with its `client_disconnected`, and waits for
    /// them: what shutdown does before the module's thread stops. Returns how many it closed.
    pub async fn close_all(&self) -> usize {
        let open: Vec<(ConnectionId, Identity)> = self.live().drain().collect();
        for &(id, identity) in &open {
            self.disconnect(id, identity).await;
        }
        open.len()
    }

    /// Takes connection `id` out of the registry; whether it was there (and so whether the
    /// caller is the one to disconnect it).
    fn take(&self, id: ConnectionId) -> bool {
        self.live().remove(&id).is_some()
    }

    /// Runs `client_disconnected` for connection `id` of `identity`, waiting for room in the
    /// module's queue. A failure is logged: the connection is closed regardless.
    async fn disconnect(&self, id: ConnectionId, identity: Identity) {
        let ran = self.shared.runner.disconnect(identity, id).await;
        match ran {
            Ok(None) | Ok(Some(Outcome::Committed { .. })) => {
                tracing::debug!(connection = %id.to_hex(), "disconnected")
            }
            Ok(Some(outcome)) => tracing::warn!(
                connection = %id.to_hex(),
                "client_disconnected did not succeed: {outcome}"
            ),
            Err(error) => tracing::warn!(
                connection = %id.to_hex(),
                "client_disconnected could not run ({error}): it runs when the module next starts"
            ),
        }
    }

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<ConnectionId, Identity>> {
        self.shared
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Connection {
    /// The connection's id, as the module's contexts see it.
    pub fn id(&self) -> ConnectionId {
        self.id
    }

    /// The identity connected.
    pub fn identity(&self) -> Identity {
        self.identity
    }

    /// Closes the connection cleanly: runs the module's `client_disconnected` and waits for
    /// it.
    pub async fn close(self) {
        if self.registry.take(self.id) {
            self.registry.disconnect(self.id, self.identity).await;
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if !self.registry.take(self.id) {
            return;
        }
        let (registry, id, identity) = (self.registry.clone(), self.id, self.identity);
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move { registry.disconnect(id, identity).await });
            }
            // Outside a runtime nothing can wait for the module's queue; the database still
            // has the connection open, so it is disconnected when the module next starts.
            Err(_) => tracing::warn!(
                connection = %id.to_hex(),
                "a connection was dropped outside the server's runtime: it is disconnected at the next start"
            ),
        }
    }
}

/// A new identity: 32 bytes from the operating system's CSPRNG.
pub fn new_identity() -> std::io::Result<Identity> {
    let mut bytes = [0; 32];
    getrandom::fill(&mut bytes).map_err(std::io::Error::other)?;
    Ok(Identity::from_bytes(bytes))
}

/// A fresh connection id: 16 bytes from the operating system's CSPRNG, never all zero (which
/// means "no connection").
fn new_connection_id() -> std::io::Result<ConnectionId> {
    loop {
        let mut bytes = [0; 16];
        getrandom::fill(&mut bytes).map_err(std::io::Error::other)?;
        let id = ConnectionId::from_bytes(bytes);
        if id != ConnectionId::ZERO {
            return Ok(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_identities_differ() {
        assert_ne!(new_identity().ok(), new_identity().ok());
    }
}
