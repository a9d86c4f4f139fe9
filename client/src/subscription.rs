//! Subscriptions as the application holds them: [`SubscriptionBuilder`] to set the callbacks
//! and subscribe, [`SubscriptionHandle`] to wait for the rows and to unsubscribe.
//!
//! The connection task owns each query set's state and reports it through a `watch` channel,
//! so a handle can be awaited from any task and the state survives reconnections (the task
//! subscribes the query set again; the handle does not change).

use crate::client::Client;
use crate::connection::{Command, Handlers, SubscriptionState};
use crate::error::Error;
use crate::new_build::NewBuild;
use crate::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::watch;

impl Client {
    /// Sets up a subscription; see [`SubscriptionBuilder::subscribe`].
    pub fn subscription(&self) -> SubscriptionBuilder {
        SubscriptionBuilder::new(self.clone())
    }
}

/// Sets a subscription's callbacks, then subscribes: from [`Client::subscription`].
pub struct SubscriptionBuilder {
    client: Client,
    handlers: Handlers,
}

impl SubscriptionBuilder {
    pub(crate) fn new(client: Client) -> Self {
        Self {
            client,
            handlers: Handlers::default(),
        }
    }

    /// Calls `callback` once the query set's rows are in the cache (after their row
    /// callbacks). Restoring the query set after a reconnection does not call it again.
    pub fn on_applied(mut self, callback: impl FnOnce() + Send + 'static) -> Self {
        self.handlers.on_applied = Some(Box::new(callback));
        self
    }

    /// Calls `callback` with the server's message if it refuses the query set.
    pub fn on_error(mut self, callback: impl FnOnce(&str) + Send + 'static) -> Self {
        self.handlers.on_error = Some(Box::new(callback));
        self
    }

    /// Calls `callback` each time a new build of the module (`wasmod publish`) ends the
    /// query set, with what became of it: subscribed again by the client, its rows those of
    /// the new build ([`NewBuild::Resubscribed`]), or ended for good, its rows gone from the
    /// cache ([`NewBuild::Ended`], the state then [`SubscriptionState::Failed`]). It runs
    /// where row callbacks run, after those of the new build's rows. A query set whose
    /// tables are the same in the new build carries on without it.
    pub fn on_new_build(mut self, callback: impl FnMut(&NewBuild) + Send + 'static) -> Self {
        self.handlers.on_new_build = Some(Arc::new(Mutex::new(callback)));
        self
    }

    /// Subscribes to the rows `queries` select, as one query set.
    pub fn subscribe<Q: Into<String>>(
        self,
        queries: impl IntoIterator<Item = Q>,
    ) -> SubscriptionHandle {
        let (state, watch) = watch::channel(SubscriptionState::Pending);
        let resumed = Arc::new(AtomicBool::new(false));
        let queries = queries.into_iter().map(Into::into).collect();
        let query_set_id = self.client.next_query_set_id();
        self.client.command(Command::Subscribe {
            query_set_id,
            queries,
            handlers: self.handlers,
            state,
            resumed: resumed.clone(),
        });
        SubscriptionHandle {
            client: self.client,
            query_set_id,
            watch,
            resumed,
        }
    }
}

/// A subscribed query set.
pub struct SubscriptionHandle {
    client: Client,
    /// The query set's id on the connection.
    query_set_id: u32,
    watch: watch::Receiver<SubscriptionState>,
    /// Whether its rows last came resumed; the connection task sets it.
    resumed: Arc<AtomicBool>,
}

impl SubscriptionHandle {
    /// The query set's id, as the protocol's messages name it.
    pub fn query_set_id(&self) -> u32 {
        self.query_set_id
    }

    /// Where the query set stands now.
    pub fn state(&self) -> SubscriptionState {
        self.watch.borrow().clone()
    }

    /// Whether the query set's rows last came resumed: after a reconnection, the server sent
    /// only what changed since the last offset the client applied (`resumed: true` in the
    /// protocol's `SubscribeApplied`), rather than every row. False until a reconnection, and
    /// after one the server could not resume from (its window of recent commits no longer
    /// held the client's offset, say, or it keeps no commit log). Set when the rows are in
    /// the cache, before the state says so.
    pub fn resumed(&self) -> bool {
        self.resumed.load(Ordering::Acquire)
    }

    /// Waits until the query set's rows are in the cache; an error if the server refused it
    /// ([`Error::Query`]) or the client ended first ([`Error::Disconnected`]).
    pub async fn applied(&self) -> Result<(), Error> {
        let mut watch = self.watch.clone();
        let state = watch
            .wait_for(|state| *state != SubscriptionState::Pending)
            .await
            .map_err(|_| Error::Disconnected)?
            .clone();
        match state {
            SubscriptionState::Applied => Ok(()),
            SubscriptionState::Failed(message) => Err(Error::Query(message)),
            SubscriptionState::Pending | SubscriptionState::Ended => Err(Error::Disconnected),
        }
    }

    /// Ends the query set: its rows leave the cache (with their delete callbacks) unless
    /// another query set holds them.
    pub fn unsubscribe(self) {
        self.client.command(Command::Unsubscribe {
            query_set_id: self.query_set_id,
        });
    }
}
