//! Live connections: who is connected, over which [`ConnectionId`], and the guarantee that the
//! module hears of each connection's start and end exactly once.
//!
//! A client that stays connected (the WebSocket endpoint) holds a [`Connection`]. Opening one
//! gives it a fresh random connection id and runs the module's `client_connected` reducer with
//! it and the claims of the client's token, which the module may refuse it by. The claims are
//! kept with the connection, so that its `client_disconnected` has them too (except after a
//! crash: the host then disconnects it without them). The connection ends in one of these ways, and each runs the
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
use wasmod_host::{Caller, Claims, Outcome};
use wasmod_protocol::errors::{ApiError, ErrorCode};

/// The registry of live connections. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Connections {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    runner: Runner,
    live: Mutex<HashMap<ConnectionId, Caller>>,
}

/// One live connection. Dropping it disconnects it (see the module docs).
#[derive(Debug)]
pub struct Connection {
    id: ConnectionId,
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

    /// Opens a connection for `identity` with `claims` (those of its verified token): a fresh
    /// connection id, and the module's `client_connected` reducer run with it. Fails with
    /// `connection_refused` (the module's reducer failed), `busy` or `shutting_down` (the
    /// module's queue), or `internal` (no randomness).
    pub async fn connect(
        &self,
        identity: Identity,
        claims: Option<Claims>,
    ) -> Result<Connection, ApiError> {
        let id = new_connection_id().map_err(|error| {
            ApiError::new(
                ErrorCode::Internal,
                format!("no randomness for a connection id: {error}"),
            )
        })?;
        // Registered as soon as the module accepted it, so that a requester gone in between
        // leaves a connection that shutdown still closes.
        let registry = self.clone();
        let caller = Caller::new(identity, id).with_claims(claims);
        let opened = caller.clone();
        self.shared
            .runner
            .connect(caller, move || {
                registry.live().insert(id, opened);
            })
            .await?;
        tracing::debug!(connection = %id.to_hex(), identity = %identity, "connected");
        Ok(Connection {
            id,
            registry: self.clone(),
        })
    }

    /// How many connections are open.
    pub fn count(&self) -> usize {
        self.live().len()
    }

    /// Whether connection `id` is open.
    #[cfg(test)]
    pub fn is_open(&self, id: ConnectionId) -> bool {
        self.live().contains_key(&id)
    }

    /// Closes every connection still open, each with its `client_disconnected`, and waits for
    /// them: what shutdown does before the module's thread stops. Returns how many it closed.
    pub async fn close_all(&self) -> usize {
        let open: Vec<Caller> = self.live().drain().map(|(_, caller)| caller).collect();
        let count = open.len();
        for caller in open {
            self.disconnect(caller).await;
        }
        count
    }

    /// Takes connection `id` out of the registry: its caller if it was there (and so the
    /// caller of this is the one to disconnect it).
    fn take(&self, id: ConnectionId) -> Option<Caller> {
        self.live().remove(&id)
    }

    /// Runs `client_disconnected` for the connection of `caller`, waiting for room in the
    /// module's queue. A failure is logged: the connection is closed regardless.
    async fn disconnect(&self, caller: Caller) {
        let id = caller.connection_id;
        let ran = self.shared.runner.disconnect(caller).await;
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

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<ConnectionId, Caller>> {
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

    /// Closes the connection cleanly: runs the module's `client_disconnected` and waits for
    /// it.
    pub async fn close(self) {
        if let Some(caller) = self.registry.take(self.id) {
            self.registry.disconnect(caller).await;
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        let Some(caller) = self.registry.take(self.id) else {
            return;
        };
        let (registry, id) = (self.registry.clone(), self.id);
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move { registry.disconnect(caller).await });
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
    use crate::{Node, NodeConfig};
    use std::collections::HashSet;
    use std::time::Duration;
    use wasmod_host::datastore::{CommitReceiver, FeedError};

    const ALICE: Identity = Identity::from_bytes([0xa1; 32]);

    /// A node of the quickstart, in memory, not started.
    fn quickstart() -> Node {
        let module = crate::test_support::quickstart();
        Node::builder(module, NodeConfig::default())
            .build()
            .expect("built")
    }

    /// The connections whose lifecycle reducer `name` committed, from the commits in `feed` so
    /// far, waiting up to a few seconds for `expected` of them.
    async fn lifecycle_commits(
        feed: &mut CommitReceiver,
        name: &str,
        expected: usize,
    ) -> Vec<ConnectionId> {
        let mut found = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            match feed.try_recv() {
                Ok(commit) => {
                    let entry = commit.meta.entry.as_ref();
                    if entry.is_some_and(|entry| &*entry.name == name) {
                        found.push(commit.meta.connection_id);
                    }
                }
                Err(FeedError::Empty) if found.len() < expected => {
                    assert!(
                        tokio::time::Instant::now() < deadline,
                        "{name}: {found:?} of {expected}"
                    );
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Err(FeedError::Empty) => return found,
                Err(error) => panic!("the feed failed: {error}"),
            }
        }
    }

    #[tokio::test]
    async fn connections_get_fresh_ids_and_disconnect_once_when_closed_or_dropped() {
        let node = quickstart();
        let mut feed = node.handle().database().feed().subscribe();
        let connections = node.handle().connections().clone();

        let first = connections.connect(ALICE, None).await.expect("connected");
        let second = connections.connect(ALICE, None).await.expect("connected");
        let ids: HashSet<ConnectionId> = [first.id(), second.id()].into();
        assert_eq!(ids.len(), 2, "each connection has its own id");
        assert!(!ids.contains(&ConnectionId::ZERO));
        assert_eq!(connections.count(), 2);
        let connected = lifecycle_commits(&mut feed, "connected", 2).await;
        assert_eq!(connected, [first.id(), second.id()]);

        let (first_id, second_id) = (first.id(), second.id());
        first.close().await;
        assert!(!connections.is_open(first_id));
        drop(second);
        let disconnected = lifecycle_commits(&mut feed, "disconnected", 2).await;
        assert_eq!(disconnected, [first_id, second_id]);
        assert_eq!(connections.count(), 0);
        assert!(
            node.handle().database().recorded_connections().is_empty(),
            "the database forgot both"
        );
    }

    #[tokio::test]
    async fn issuing_an_identity_opens_no_connection() {
        let node = quickstart();
        node.handle().admit(ALICE).await.expect("admitted");
        assert_eq!(node.handle().connections().count(), 0);
        assert!(node.handle().database().recorded_connections().is_empty());
    }

    #[tokio::test]
    async fn shutdown_disconnects_the_connections_still_open_once() {
        let node = quickstart();
        let database = node.handle().database().clone();
        let mut feed = database.feed().subscribe();
        let open = node
            .handle()
            .connections()
            .connect(ALICE, None)
            .await
            .expect("connected");
        let running = node.start().await;
        running.stopper().stop().await;
        running.finish(Duration::from_secs(10)).await;
        assert!(database.recorded_connections().is_empty());
        let id = open.id();
        // The connection's holder lets go after shutdown: nothing runs twice.
        drop(open);
        let disconnected = lifecycle_commits(&mut feed, "disconnected", 1).await;
        assert_eq!(disconnected, [id]);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(feed.try_recv().unwrap_err(), FeedError::Empty);
    }

    #[test]
    fn new_identities_differ() {
        assert_ne!(new_identity().ok(), new_identity().ok());
    }
}
